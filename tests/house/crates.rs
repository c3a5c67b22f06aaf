//! The crates' own dependencies, read from their Cargo.toml.

/// The package name and the dependencies (`[dependencies]`, `[target.'..'.dependencies]` and
/// `[dependencies.x]` tables; not dev- or build-dependencies) of a Cargo.toml.
pub fn dependencies(toml: &str) -> (String, Vec<String>) {
    let (mut name, mut deps) = (String::new(), Vec::new());
    let mut section = String::new();
    for line in toml.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.trim_matches(|c| c == '[' || c == ']').to_owned();
            if let Some(dep) = section.strip_prefix("dependencies.") {
                deps.push(dep.trim_matches('"').to_owned());
            }
            continue;
        }
        let key = line.split(['=', '.']).next().unwrap_or("").trim().trim_matches('"');
        if key.is_empty() || line.starts_with('#') {
            continue;
        }
        if section == "package" && key == "name" {
            name = line.split('=').nth(1).unwrap_or("").trim().trim_matches('"').to_owned();
        } else if section == "dependencies" || (section.starts_with("target.") && section.ends_with(".dependencies")) {
            deps.push(key.to_owned());
        }
    }
    (name, deps)
}

/// Every dependency of a crate of `allowed` (crate, the crates it may depend on) on another
/// crate of `allowed` that its list leaves out, and every manifest whose crate is not listed;
/// `manifests` are (path, text).
pub fn crate_violations(allowed: &[(&str, &[&str])], manifests: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (path, text) in manifests {
        let (name, deps) = dependencies(text);
        let Some((_, may)) = allowed.iter().find(|(c, _)| *c == name) else {
            out.push(format!("{path}: crate {name} has no place in the crates' layers"));
            continue;
        };
        for dep in deps {
            if allowed.iter().any(|(c, _)| *c == dep) && !may.contains(&dep.as_str()) {
                out.push(format!("{path}: crate {name} depends on {dep}, which it may not (it may on {may:?})"));
            }
        }
    }
    out
}

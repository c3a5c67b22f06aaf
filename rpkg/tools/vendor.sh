#!/bin/sh
# Makes the package source self-contained for an offline install: writes src/rust/vendor.tar.xz
# with every crates.io dependency of the glue crate (cargo vendor, as locked by
# src/rust/Cargo.lock) and the core crate rust/credence (cargo package: its workspace-inherited
# settings resolved). Run it in a repository checkout before `R CMD build rpkg`; src/Makevars
# builds from the archive, offline, when it is present and from the repository otherwise.
#
#   rpkg/tools/vendor.sh [PKGDIR]   (PKGDIR defaults to the package holding this script)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
pkg=$(cd "${1:-$here}" && pwd)
repo=$(cd "$here/.." && pwd)
[ -f "$repo/rust/credence/Cargo.toml" ] || { echo "vendor.sh: no rust/credence next to $here" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/vendor"

# crates.io dependencies, exactly as locked.
cargo vendor --quiet --locked --versioned-dirs --manifest-path "$here/src/rust/Cargo.toml" \
  "$stage/vendor/crates" >/dev/null

# The core crate as it would be published (Cargo.toml normalised, files outside it dropped).
(cd "$repo" && cargo package --quiet -p credence --no-verify --allow-dirty --offline --target-dir "$stage/pkg")
tar -xzf "$stage"/pkg/package/credence-*.crate -C "$stage/vendor"
mv "$stage"/vendor/credence-* "$stage/vendor/credence"
rm -f "$stage/vendor/credence/Cargo.lock" "$stage/vendor/credence/.cargo_vcs_info.json"

# Source replacement, read by cargo from src/rust/vendored/.cargo (see src/Makevars).
cat > "$stage/vendor/config.toml" <<'TOML'
[source.crates-io]
replace-with = "vendored-sources"

[source.vendored-sources]
directory = "../vendor/crates"

[net]
offline = true
TOML

tar -cJf "$pkg/src/rust/vendor.tar.xz" -C "$stage" vendor
echo "wrote $pkg/src/rust/vendor.tar.xz ($(du -h "$pkg/src/rust/vendor.tar.xz" | cut -f1))"

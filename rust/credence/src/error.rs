//! Typed errors. Every failure on user input is one of these, with a message that names the
//! array (or file), the offending index and what was expected; nothing in the crate panics on bad
//! input.

use std::path::PathBuf;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong when turning user input into metrics.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be opened or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating-system error.
        #[source]
        source: std::io::Error,
    },

    /// The file was read but its content is not what the format promises (a broken `.npy`
    /// header, a CSV cell that is not a number, an unsupported dtype, ...).
    #[error("{}: {message}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line/column or array name where known.
        message: String,
    },

    /// An array has the wrong number of dimensions or a length that does not match another.
    #[error("{array}: shape {found:?}, expected {expected}")]
    Shape {
        /// Role of the array (`probs`, `labels`, `sd`, ...).
        array: String,
        /// The shape that was given.
        found: Vec<usize>,
        /// What the shape should have been.
        expected: String,
    },

    /// One element of an array is invalid (NaN, a negative probability, a label out of range,
    /// a non-positive standard deviation, ...).
    #[error("{array}[{index}] = {value}: expected {expected}")]
    Value {
        /// Role of the array.
        array: String,
        /// Multi-index of the element, e.g. `3, 17, 2`.
        index: String,
        /// The value found, formatted.
        value: String,
        /// What the value should have been.
        expected: String,
    },

    /// A scalar option (level, number of bins, fraction, ...) is out of its domain.
    #[error("invalid {name} = {value}: expected {expected}")]
    Argument {
        /// Name of the option.
        name: String,
        /// Its value, formatted.
        value: String,
        /// The valid domain.
        expected: String,
    },

    /// The MCMC sampler failed unrecoverably (e.g. no finite log density at the start).
    #[error("sampler, chain {chain}: {message}")]
    Sampler {
        /// The chain.
        chain: u64,
        /// What nuts-rs reported.
        message: String,
    },

    /// The GPU backend was asked for but cannot run (no driver, no device, no NVRTC), or a
    /// CUDA call failed.
    #[error("GPU backend: {message}")]
    Backend {
        /// What is missing or what failed, with what to do about it.
        message: String,
    },

    /// An option of a request that does not apply to what was asked for, or conflicts with
    /// another (a NUTS option with ChEES, a single-data-set option across data sets); named
    /// in the request's own terms, which each face renders in its syntax.
    #[error("{}", Refusal { option, value, reason, instead: instead.as_ref() }.render(|o| o.to_owned(), |o, v| format!("{o} = {v}")))]
    Refused {
        /// The request field, e.g. `student_t`.
        option: String,
        /// Its value, formatted.
        value: String,
        /// Why it does not apply.
        reason: String,
        /// The field and value to set instead, if there is one.
        instead: Option<(String, String)>,
    },

    /// The work was asked to stop from outside ([`crate::interrupt::request`]: Ctrl-C in R)
    /// and stopped at a sampler's iteration; nothing it computed is kept.
    #[error("interrupted")]
    Interrupted,

    /// An error about an array that came from a file; the file name is prepended.
    #[error("{}: {source}", path.display())]
    InFile {
        /// The file the array was read from.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: Box<Error>,
    },
}

impl Error {
    /// Attaches the file an array came from, so the message names it.
    pub fn in_file(self, path: impl Into<PathBuf>) -> Self {
        Error::InFile { path: path.into(), source: Box::new(self) }
    }

    /// An [`Error::Shape`]: `array` has shape `found`, not what was `expected`.
    pub fn shape(array: &str, found: &[usize], expected: impl Into<String>) -> Self {
        Error::Shape { array: array.to_owned(), found: found.to_vec(), expected: expected.into() }
    }

    /// An [`Error::Value`]: `array`'s element at `index` is `value`, not what was `expected`.
    pub fn value(array: &str, index: &[usize], value: impl std::fmt::Display, expected: impl Into<String>) -> Self {
        let index = index.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
        Error::Value { array: array.to_owned(), index, value: value.to_string(), expected: expected.into() }
    }

    /// An [`Error::Argument`]: option `name` is `value`, not what was `expected`.
    pub fn argument(name: &str, value: impl std::fmt::Display, expected: impl Into<String>) -> Self {
        Error::Argument { name: name.to_owned(), value: value.to_string(), expected: expected.into() }
    }
}

/// A refused option ([`Error::Refused`]) to render in a face's syntax.
#[derive(Debug, Clone, Copy)]
pub struct Refusal<'a> {
    /// The request field.
    pub option: &'a str,
    /// Its value.
    pub value: &'a str,
    /// Why it does not apply.
    pub reason: &'a str,
    /// What to set instead.
    pub instead: Option<&'a (String, String)>,
}

impl Refusal<'_> {
    /// The message, with `name(option)` for an option that is set, and `set(option, value)` for
    /// the one to set instead: `student_t: the across-data-sets model has no Student-t
    /// likelihood; use interaction = student_t`.
    pub fn render(&self, name: impl Fn(&str) -> String, set: impl Fn(&str, &str) -> String) -> String {
        let given = if self.value == "true" { name(self.option) } else { set(self.option, self.value) };
        let mut out = format!("{given}: {}", self.reason);
        if let Some((o, v)) = self.instead {
            out.push_str(&format!("; use {}", set(o, v)));
        }
        out
    }
}

impl Error {
    /// An [`Error::Refused`].
    pub fn refused(option: &str, value: impl std::fmt::Display, reason: impl Into<String>) -> Self {
        Error::Refused { option: option.into(), value: value.to_string(), reason: reason.into(), instead: None }
    }

    /// This [`Error::Refused`] with what to set instead.
    pub fn instead(self, option: &str, value: &str) -> Self {
        match self {
            Error::Refused { option: o, value: v, reason, .. } => {
                Error::Refused { option: o, value: v, reason, instead: Some((option.into(), value.into())) }
            }
            other => other,
        }
    }
}

/// The first item of `items` that repeats an earlier one, as (earlier, later) indices; items
/// for which `counts` is false are never a repeat (an empty column name, say). One check for
/// every list given by a user that must name each thing once (methods, metrics, columns).
pub fn first_repeat<T: PartialEq>(items: &[T], counts: impl Fn(&T) -> bool) -> Option<(usize, usize)> {
    (0..items.len()).find_map(|j| (0..j).find(|&i| counts(&items[j]) && items[i] == items[j]).map(|i| (i, j)))
}

/// Parses `value` as one of the snake_case `choices` (for option enums parsed from strings by
/// the CLI and the R package); `-` is read as `_`, so kebab-case works too. The error lists the
/// valid names.
pub fn parse_choice<T: Copy>(option: &str, value: &str, choices: &[(&str, T)]) -> Result<T> {
    let wanted = value.replace('-', "_");
    choices.iter().find(|(name, _)| *name == wanted).map(|&(_, v)| v).ok_or_else(|| {
        let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
        Error::argument(option, value, format!("one of {}", names.join(", ")))
    })
}

/// `FromStr` for an option enum from its table of snake_case names, through
/// [`parse_choice`] (so `-` reads as `_` and the error lists the names):
/// `choice_from_str!(Backend, "backend", [("auto", Backend::Auto), ("cpu", Backend::Cpu)]);`.
macro_rules! choice_from_str {
    ($t:ty, $option:literal, [$(($name:literal, $value:expr)),+ $(,)?]) => {
        impl std::str::FromStr for $t {
            type Err = $crate::error::Error;
            #[doc = concat!("Parses one of: ", $("`", $name, "` ",)+ "(`-` reads as `_`).")]
            fn from_str(s: &str) -> $crate::error::Result<Self> {
                $crate::error::parse_choice($option, s, &[$(($name, $value)),+])
            }
        }
    };
}
pub(crate) use choice_from_str;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_array_index_and_expectation() {
        let e = Error::value("probs", &[3, 17, 2], -0.5, "a probability in [0, 1]").in_file("P.npy");
        assert_eq!(e.to_string(), "P.npy: probs[3, 17, 2] = -0.5: expected a probability in [0, 1]");
        let e = parse_choice("colour", "mauve", &[("red", 1), ("blue", 2)]).unwrap_err();
        assert_eq!(e.to_string(), "invalid colour = mauve: expected one of red, blue");
        assert_eq!(parse_choice("colour", "blue", &[("red", 1), ("blue", 2)]).unwrap(), 2);
        assert_eq!(parse_choice("colour", "dark-red", &[("dark_red", 1)]).unwrap(), 1);
        let e = Error::shape("sd", &[4, 2], "the shape of mean, [4]");
        assert_eq!(e.to_string(), "sd: shape [4, 2], expected the shape of mean, [4]");
    }

    #[test]
    fn the_first_repeat_is_found_and_skipped_items_never_repeat() {
        assert_eq!(first_repeat(&["a", "b", "a", "b"], |_| true), Some((0, 2)));
        assert_eq!(first_repeat(&["a", "b", "c"], |_| true), None);
        assert_eq!(first_repeat(&["", "x", "", "x"], |s| !s.is_empty()), Some((1, 3)));
        assert_eq!(first_repeat::<u8>(&[], |_| true), None);
    }
}

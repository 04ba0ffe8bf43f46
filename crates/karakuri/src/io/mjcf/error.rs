//! The loader's one error type: file, line, element and reason.

use std::fmt;

/// An MJCF loading error: where it is and what is wrong.
///
/// Displayed as `"{file}:{line}: <{element}>: {reason}"` (parts left out when unknown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MjcfError {
    /// The file (or the source name given to [`super::parse_str`]).
    pub file: String,
    /// The 1-based line of the offending element, if known.
    pub line: Option<u32>,
    /// The tag of the offending element.
    pub element: String,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for MjcfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if !self.element.is_empty() {
            write!(f, ": <{}>", self.element)?;
        }
        write!(f, ": {}", self.reason)
    }
}

impl std::error::Error for MjcfError {}

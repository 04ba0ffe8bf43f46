//! Model loaders, and the error type the XML loaders (URDF, MJCF) share.

use std::fmt;

pub mod body;
pub mod mjcf;
pub mod urdf;
pub(crate) mod xml_depth;

/// A model file's loading error: where it is and what is wrong (and how to fix it).
///
/// [`urdf::UrdfError`] and [`mjcf::MjcfError`] are this type. Displayed as
/// `"{file}:{line}: <{element}>: {reason}"`, without `:{line}` when the position is unknown and
/// without `<{element}>: ` when no element is concerned (e.g. an unreadable file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XmlFileError {
    /// The file (or the source name given to the loader's `parse_str`).
    pub file: String,
    /// The 1-based line of the offending element, if known.
    pub line: Option<u32>,
    /// The tag of the offending element (e.g. `joint`, `origin`, `geom`).
    pub element: String,
    /// What is wrong and how to fix it.
    pub reason: String,
}

impl fmt::Display for XmlFileError {
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

impl std::error::Error for XmlFileError {}

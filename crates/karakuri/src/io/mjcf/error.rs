//! The loader's one error type: file, line, element and reason.

/// An MJCF loading error: where it is and what is wrong (the XML loaders' one error type).
pub type MjcfError = crate::io::XmlFileError;

//! Model loaders.

pub mod body;
pub mod mjcf;
pub mod urdf;
pub(crate) mod xml_depth;

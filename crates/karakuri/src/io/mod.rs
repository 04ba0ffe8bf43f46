//! Model loaders.

pub mod body;
pub mod mjcf;
pub mod urdf;

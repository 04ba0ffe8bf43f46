//! Model loaders.

pub mod mjcf;
pub mod urdf;

//! Model loaders.

pub mod urdf;

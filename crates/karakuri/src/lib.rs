//! # karakuri — rigid-body dynamics
//!
//! Featherstone's spatial algebra and recursive algorithms over a kinematic tree, in
//! Pinocchio's conventions (see `docs/CONVENTIONS.md`): a [`Model`] (immutable description,
//! built by [`ModelBuilder`] or loaded from URDF) and a [`Data`] (every buffer, allocated once),
//! and free functions over `(&Model, &mut Data, ...)`.
//!
//! ```
//! use karakuri::{algorithms::*, io::urdf, Data};
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/ur5.urdf");
//! let model = urdf::load(path, urdf::Root::Fixed).unwrap();
//! let mut data = Data::new(&model);
//! let q = neutral(&model);
//! let v = nalgebra::DVector::zeros(model.nv);
//! let tau = inverse_dynamics(&model, &mut data, &q, &v, &v).clone(); // gravity compensation
//! let qdd = forward_dynamics(&model, &mut data, &q, &v, &tau);
//! assert!(qdd.amax() < 1e-9);
//! ```
#![warn(missing_docs)]

pub mod algorithms;
pub mod batch;
pub mod constraints;
pub mod data;
pub mod io;
pub mod linalg;
pub mod model;
pub mod spatial;

pub use data::{Data, Fresh, Stale};
pub use model::{FrameId, JointId, Model, ModelBuilder};

/// Errors from building a model.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ModelError {
    /// A joint names a parent that does not exist.
    #[error("joint '{joint}': parent joint {parent} does not exist (add parents before children)")]
    UnknownParent {
        /// The joint being added.
        joint: String,
        /// The missing parent id.
        parent: usize,
    },
    /// Two joints or frames share a name.
    #[error("duplicate {what} name '{name}'")]
    DuplicateName {
        /// "joint" or "frame".
        what: &'static str,
        /// The name.
        name: String,
    },
    /// A body's inertia is not physical.
    #[error("body '{body}': {reason}")]
    BadInertia {
        /// The body.
        body: String,
        /// Why.
        reason: String,
    },
    /// Anything else.
    #[error("{0}")]
    Invalid(String),
}

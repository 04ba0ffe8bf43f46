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

/// Compiles a function twice on x86-64, once for AVX2 (chosen at run time by
/// `is_x86_feature_detected!`) and once portable: the same operations in the same order (AVX2
/// has no FMA and Rust never fuses a multiply and an add), so the same bits either way, four
/// `f64` an instruction where the portable build has two (0064, 0109). The function is written
/// as any other (arguments may be tuple patterns, with or without a return type, no generics);
/// the dispatch is the crate's only `unsafe` (0103, 0118):
///
/// * `twice! { fn f(x: &[f64]) -> f64 { body } }`: one body, compiled into both copies;
/// * `twice! { fn f(x: &[f64]) { portable body } avx2 { AVX2 body } }`: the AVX2 copy has its
///   own body, for what only it can do (AVX stores, stores streamed past the caches), with the
///   same results.
///
/// The simulator's solver uses it too (through a forwarding `twice!` in its `solver/mod.rs`).
#[doc(hidden)]
#[macro_export]
macro_rules! twice {
    ($(#[$doc:meta])* $vis:vis fn $name:ident($($arg:tt: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block avx2 $avx2:block) => {
        $(#[$doc])*
        #[inline]
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                #[target_feature(enable = "avx2")]
                fn avx2($($arg: $ty),*) $(-> $ret)? $avx2
                // SAFETY: the CPU has AVX2, checked on the line above.
                #[allow(unsafe_code)]
                return unsafe { avx2($($arg),*) };
            }
            #[inline(always)]
            fn portable($($arg: $ty),*) $(-> $ret)? $body
            portable($($arg),*)
        }
    };
    ($(#[$doc:meta])* $vis:vis fn $name:ident($($arg:tt: $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $crate::twice! { $(#[$doc])* $vis fn $name($($arg: $ty),*) $(-> $ret)? $body avx2 $body }
    };
}

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

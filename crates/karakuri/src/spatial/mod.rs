//! Spatial algebra (Featherstone, *Rigid Body Dynamics Algorithms*, ch. 2) in Pinocchio's
//! conventions: spatial vectors are `[linear; angular]`, an [`Se3`] maps child coordinates to
//! parent coordinates (`x_parent = R x_child + p`).
//!
//! Nothing here builds a 6x6 matrix in a hot path: transforms act on vectors through their
//! rotation and translation.

mod articulated;
mod force;
mod inertia;
mod lie;
mod motion;
pub(crate) mod quarter_turn;
mod se3;
mod trig;

pub(crate) use articulated::ArticulatedInertia;
pub use force::Force;
pub use inertia::{Inertia, OriginInertia, Solid};
pub use lie::{exp3, exp6, left_jacobian3, log3, log6, quat_from_xyzw, quat_to_xyzw, rotation_about, rotation_about_sin_cos, skew};
pub use motion::Motion;
pub use se3::Se3;
pub use trig::sin_cos;

/// 3-vector of `f64`.
pub type Vec3 = nalgebra::Vector3<f64>;
/// 3x3 matrix of `f64`.
pub type Mat3 = nalgebra::Matrix3<f64>;
/// 6x6 matrix of `f64` (articulated-body inertias), acting on `[linear; angular]` vectors.
pub type Mat6 = nalgebra::Matrix6<f64>;
/// 6-vector of `f64`, a flattened spatial vector `[linear; angular]`.
pub type Vec6 = nalgebra::Vector6<f64>;

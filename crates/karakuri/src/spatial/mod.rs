//! Spatial algebra (Featherstone, *Rigid Body Dynamics Algorithms*, ch. 2) in Pinocchio's
//! conventions: spatial vectors are `[linear; angular]`, an [`Se3`] maps child coordinates to
//! parent coordinates (`x_parent = R x_child + p`).
//!
//! Nothing here builds a 6x6 matrix in a hot path: transforms act on vectors through their
//! rotation and translation.

/// What [`Motion`] and [`Force`] share as six numbers `[linear; angular]`: the constructors,
/// the flattened form, and the vector-space operations (sum, difference, negation, scaling),
/// each part by part.
macro_rules! spatial_vector {
    ($t:ident, $what:literal, $parts:literal) => {
        impl $t {
            #[doc = concat!("The zero ", $what, ".")]
            #[inline]
            pub fn zero() -> Self {
                Self { linear: $crate::spatial::Vec3::zeros(), angular: $crate::spatial::Vec3::zeros() }
            }
            #[doc = concat!("A ", $what, " from its linear and angular parts.")]
            #[inline]
            pub fn new(linear: $crate::spatial::Vec3, angular: $crate::spatial::Vec3) -> Self {
                Self { linear, angular }
            }
            #[doc = concat!("From the first six entries of a slice, ", $parts, ".")]
            #[inline]
            pub fn from_slice(s: &[f64]) -> Self {
                Self { linear: $crate::spatial::Vec3::new(s[0], s[1], s[2]), angular: $crate::spatial::Vec3::new(s[3], s[4], s[5]) }
            }
            #[doc = concat!("Flattened ", $parts, ".")]
            #[inline]
            pub fn to_vec6(&self) -> $crate::spatial::Vec6 {
                $crate::spatial::Vec6::new(self.linear.x, self.linear.y, self.linear.z, self.angular.x, self.angular.y, self.angular.z)
            }
            #[doc = concat!("From a flattened ", $parts, " vector.")]
            #[inline]
            pub fn from_vec6(v: &$crate::spatial::Vec6) -> Self {
                Self { linear: v.fixed_rows::<3>(0).into(), angular: v.fixed_rows::<3>(3).into() }
            }
        }
        impl std::ops::Add for $t {
            type Output = $t;
            #[inline]
            fn add(self, o: $t) -> $t {
                $t { linear: self.linear + o.linear, angular: self.angular + o.angular }
            }
        }
        impl std::ops::Sub for $t {
            type Output = $t;
            #[inline]
            fn sub(self, o: $t) -> $t {
                $t { linear: self.linear - o.linear, angular: self.angular - o.angular }
            }
        }
        impl std::ops::AddAssign for $t {
            #[inline]
            fn add_assign(&mut self, o: $t) {
                self.linear += o.linear;
                self.angular += o.angular;
            }
        }
        impl std::ops::SubAssign for $t {
            #[inline]
            fn sub_assign(&mut self, o: $t) {
                self.linear -= o.linear;
                self.angular -= o.angular;
            }
        }
        impl std::ops::Neg for $t {
            type Output = $t;
            #[inline]
            fn neg(self) -> $t {
                $t { linear: -self.linear, angular: -self.angular }
            }
        }
        impl std::ops::Mul<f64> for $t {
            type Output = $t;
            #[inline]
            fn mul(self, s: f64) -> $t {
                $t { linear: self.linear * s, angular: self.angular * s }
            }
        }
    };
}

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

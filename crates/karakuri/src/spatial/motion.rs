use super::{Force, Vec3};

/// A spatial motion vector (twist, spatial velocity or acceleration): `linear` is the velocity
/// of the point at the frame origin, `angular` the angular velocity, both in the same frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Motion {
    /// Linear part (velocity of the point at the origin).
    pub linear: Vec3,
    /// Angular part.
    pub angular: Vec3,
}

spatial_vector!(Motion, "motion", "`[linear; angular]`");

impl Motion {
    /// Motion cross product `self ×ₘ m` (Featherstone's crm): the derivative of `m` in a frame
    /// moving with velocity `self`.
    #[inline]
    pub fn cross(&self, m: &Motion) -> Motion {
        Motion {
            linear: self.angular.cross(&m.linear) + self.linear.cross(&m.angular),
            angular: self.angular.cross(&m.angular),
        }
    }
    /// Force cross product `self ×* f` (Featherstone's crf).
    #[inline]
    pub fn cross_force(&self, f: &Force) -> Force {
        Force {
            linear: self.angular.cross(&f.linear),
            angular: self.angular.cross(&f.angular) + self.linear.cross(&f.linear),
        }
    }
    /// Power pairing `self · f`.
    #[inline]
    pub fn dot(&self, f: &Force) -> f64 {
        self.linear.dot(&f.linear) + self.angular.dot(&f.angular)
    }
    /// Largest absolute entry.
    pub fn amax(&self) -> f64 {
        self.linear.amax().max(self.angular.amax())
    }
}

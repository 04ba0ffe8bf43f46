use super::{Force, Vec3, Vec6};
use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

/// A spatial motion vector (twist, spatial velocity or acceleration): `linear` is the velocity
/// of the point at the frame origin, `angular` the angular velocity, both in the same frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Motion {
    /// Linear part (velocity of the point at the origin).
    pub linear: Vec3,
    /// Angular part.
    pub angular: Vec3,
}

impl Motion {
    /// The zero motion.
    #[inline]
    pub fn zero() -> Self {
        Self { linear: Vec3::zeros(), angular: Vec3::zeros() }
    }
    /// A motion from its linear and angular parts.
    #[inline]
    pub fn new(linear: Vec3, angular: Vec3) -> Self {
        Self { linear, angular }
    }
    /// From a flattened `[linear; angular]` vector.
    #[inline]
    pub fn from_vec6(v: &Vec6) -> Self {
        Self { linear: v.fixed_rows::<3>(0).into(), angular: v.fixed_rows::<3>(3).into() }
    }
    /// From the first six entries of a slice, `[linear; angular]`.
    #[inline]
    pub fn from_slice(s: &[f64]) -> Self {
        Self { linear: Vec3::new(s[0], s[1], s[2]), angular: Vec3::new(s[3], s[4], s[5]) }
    }
    /// Flattened `[linear; angular]`.
    #[inline]
    pub fn to_vec6(&self) -> Vec6 {
        Vec6::new(self.linear.x, self.linear.y, self.linear.z, self.angular.x, self.angular.y, self.angular.z)
    }
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

impl Add for Motion {
    type Output = Motion;
    #[inline]
    fn add(self, o: Motion) -> Motion {
        Motion { linear: self.linear + o.linear, angular: self.angular + o.angular }
    }
}
impl Sub for Motion {
    type Output = Motion;
    #[inline]
    fn sub(self, o: Motion) -> Motion {
        Motion { linear: self.linear - o.linear, angular: self.angular - o.angular }
    }
}
impl AddAssign for Motion {
    #[inline]
    fn add_assign(&mut self, o: Motion) {
        self.linear += o.linear;
        self.angular += o.angular;
    }
}
impl SubAssign for Motion {
    #[inline]
    fn sub_assign(&mut self, o: Motion) {
        self.linear -= o.linear;
        self.angular -= o.angular;
    }
}
impl Neg for Motion {
    type Output = Motion;
    #[inline]
    fn neg(self) -> Motion {
        Motion { linear: -self.linear, angular: -self.angular }
    }
}
impl Mul<f64> for Motion {
    type Output = Motion;
    #[inline]
    fn mul(self, s: f64) -> Motion {
        Motion { linear: self.linear * s, angular: self.angular * s }
    }
}

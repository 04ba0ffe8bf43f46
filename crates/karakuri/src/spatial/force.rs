use super::{Vec3, Vec6};
use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

/// A spatial force (wrench): `linear` is the force, `angular` the moment about the frame origin.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Force {
    /// Force.
    pub linear: Vec3,
    /// Moment about the origin.
    pub angular: Vec3,
}

impl Force {
    /// The zero force.
    #[inline]
    pub fn zero() -> Self {
        Self { linear: Vec3::zeros(), angular: Vec3::zeros() }
    }
    /// A force from its linear and angular parts.
    #[inline]
    pub fn new(linear: Vec3, angular: Vec3) -> Self {
        Self { linear, angular }
    }
    /// From the first six entries of a slice, `[force; moment]`.
    #[inline]
    pub fn from_slice(s: &[f64]) -> Self {
        Self { linear: Vec3::new(s[0], s[1], s[2]), angular: Vec3::new(s[3], s[4], s[5]) }
    }
    /// Flattened `[force; moment]`.
    #[inline]
    pub fn to_vec6(&self) -> Vec6 {
        Vec6::new(self.linear.x, self.linear.y, self.linear.z, self.angular.x, self.angular.y, self.angular.z)
    }
    /// From a flattened `[force; moment]` vector.
    #[inline]
    pub fn from_vec6(v: &Vec6) -> Self {
        Self { linear: v.fixed_rows::<3>(0).into(), angular: v.fixed_rows::<3>(3).into() }
    }
}

impl Add for Force {
    type Output = Force;
    #[inline]
    fn add(self, o: Force) -> Force {
        Force { linear: self.linear + o.linear, angular: self.angular + o.angular }
    }
}
impl Sub for Force {
    type Output = Force;
    #[inline]
    fn sub(self, o: Force) -> Force {
        Force { linear: self.linear - o.linear, angular: self.angular - o.angular }
    }
}
impl AddAssign for Force {
    #[inline]
    fn add_assign(&mut self, o: Force) {
        self.linear += o.linear;
        self.angular += o.angular;
    }
}
impl SubAssign for Force {
    #[inline]
    fn sub_assign(&mut self, o: Force) {
        self.linear -= o.linear;
        self.angular -= o.angular;
    }
}
impl Neg for Force {
    type Output = Force;
    #[inline]
    fn neg(self) -> Force {
        Force { linear: -self.linear, angular: -self.angular }
    }
}
impl Mul<f64> for Force {
    type Output = Force;
    #[inline]
    fn mul(self, s: f64) -> Force {
        Force { linear: self.linear * s, angular: self.angular * s }
    }
}

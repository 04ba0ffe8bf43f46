use super::{Force, Mat3, Motion, Vec3};

/// A rigid transform `parent_from_child`: `x_parent = rotation * x_child + translation`.
///
/// Stored as (R, p), never as a 6x6 matrix; its actions on motions and forces cost two 3x3
/// products and a cross product.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Se3 {
    /// Rotation of the child frame's axes in the parent frame.
    pub rotation: Mat3,
    /// Position of the child origin in the parent frame.
    pub translation: Vec3,
}

impl Default for Se3 {
    fn default() -> Self {
        Self::identity()
    }
}

impl Se3 {
    /// The identity transform.
    #[inline]
    pub fn identity() -> Self {
        Self { rotation: Mat3::identity(), translation: Vec3::zeros() }
    }
    /// A transform from a rotation and a translation.
    #[inline]
    pub fn new(rotation: Mat3, translation: Vec3) -> Self {
        Self { rotation, translation }
    }
    /// A pure translation.
    #[inline]
    pub fn from_translation(translation: Vec3) -> Self {
        Self { rotation: Mat3::identity(), translation }
    }
    /// `self * other` (a_from_b * b_from_c = a_from_c).
    #[inline]
    pub fn compose(&self, other: &Se3) -> Se3 {
        Se3 {
            rotation: self.rotation * other.rotation,
            translation: self.rotation * other.translation + self.translation,
        }
    }
    /// `self⁻¹ * other` without forming the inverse.
    #[inline]
    pub fn inv_compose(&self, other: &Se3) -> Se3 {
        let rt = self.rotation.transpose();
        Se3 { rotation: rt * other.rotation, translation: rt * (other.translation - self.translation) }
    }
    /// The inverse transform (`child_from_parent`).
    #[inline]
    pub fn inverse(&self) -> Se3 {
        let rt = self.rotation.transpose();
        Se3 { rotation: rt, translation: -(rt * self.translation) }
    }
    /// Maps a point given in child coordinates to parent coordinates.
    #[inline]
    pub fn transform_point(&self, x: &Vec3) -> Vec3 {
        self.rotation * x + self.translation
    }
    /// Expresses in the parent frame a motion given in the child frame (Featherstone's X⁻¹ m).
    #[inline]
    pub fn act_motion(&self, m: &Motion) -> Motion {
        let angular = self.rotation * m.angular;
        Motion { linear: self.rotation * m.linear + self.translation.cross(&angular), angular }
    }
    /// Expresses in the child frame a motion given in the parent frame (Featherstone's X m).
    #[inline]
    pub fn inv_act_motion(&self, m: &Motion) -> Motion {
        let rt = self.rotation.transpose();
        Motion {
            linear: rt * (m.linear - self.translation.cross(&m.angular)),
            angular: rt * m.angular,
        }
    }
    /// Expresses in the parent frame a force given in the child frame (Featherstone's X* f).
    #[inline]
    pub fn act_force(&self, f: &Force) -> Force {
        let linear = self.rotation * f.linear;
        Force { linear, angular: self.rotation * f.angular + self.translation.cross(&linear) }
    }
    /// Expresses in the child frame a force given in the parent frame.
    #[inline]
    pub fn inv_act_force(&self, f: &Force) -> Force {
        let rt = self.rotation.transpose();
        Force {
            linear: rt * f.linear,
            angular: rt * (f.angular - self.translation.cross(&f.linear)),
        }
    }
    /// Largest absolute difference of rotation and translation entries.
    pub fn max_abs_diff(&self, o: &Se3) -> f64 {
        (self.rotation - o.rotation).amax().max((self.translation - o.translation).amax())
    }
}

impl std::ops::Mul for Se3 {
    type Output = Se3;
    #[inline]
    fn mul(self, o: Se3) -> Se3 {
        self.compose(&o)
    }
}

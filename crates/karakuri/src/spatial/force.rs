use super::Vec3;

/// A spatial force (wrench): `linear` is the force, `angular` the moment about the frame origin.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Force {
    /// Force.
    pub linear: Vec3,
    /// Moment about the origin.
    pub angular: Vec3,
}

spatial_vector!(Force, "force", "`[force; moment]`");

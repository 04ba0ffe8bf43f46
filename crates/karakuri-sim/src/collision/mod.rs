//! Collision detection with `parry3d-f64`: shapes attached to the joints of the world model,
//! a sweep-and-prune broad phase and parry's contact manifolds as narrow phase.
//!
//! Parry speaks glam (through glamx); karakuri speaks nalgebra. Poses are converted here, at the
//! boundary, and nothing of parry's types leaves this module. Contact points are the vertices
//! of the contact region, as Springhead does (a box on a plane gives up to four points): parry's
//! manifolds give exactly those, and where two faces overlap in a
//! polygon of more corners, four of them are kept (`four_of`). Two boxes are karakuri's own
//! (`box_box`): the same points without parry's generic path.

use karakuri::spatial::{Se3, Vec3};
use parry3d_f64::shape::SharedShape;

use crate::scene::{ContactMode, Material};

mod ball_mesh;
mod box_box;
mod collider;
mod detect;
mod pairs;
mod reject;
mod shapes;

pub use box_box::{box_box, BoxManifold, BoxPoint};
pub use collider::{Collider, SMALL_WORLD_PAIRS};
pub use detect::CollisionWork;
pub use shapes::{joint_frame_bounds, make_shape, to_parry};

/// The material of a contact between two shapes: the mean of theirs (Springhead's rule).
pub fn mean_material(a: &Material, b: &Material) -> Material {
    Material {
        static_friction: 0.5 * (a.static_friction + b.static_friction),
        dynamic_friction: 0.5 * (a.dynamic_friction + b.dynamic_friction),
        restitution: 0.5 * (a.restitution + b.restitution),
    }
}

/// A collision shape attached to a joint of the world model.
#[derive(Clone)]
pub struct ColShape {
    /// The simulated body it belongs to (index into the world's bodies).
    pub body: usize,
    /// The model joint that moves it (0: static).
    pub joint: usize,
    /// Its placement in the joint frame.
    pub placement: Se3,
    /// The parry shape.
    pub shape: SharedShape,
    /// Its material.
    pub material: Material,
    /// Infinite (a plane): always passes the broad phase.
    pub unbounded: bool,
}

/// A contact point found by the narrow phase.
#[derive(Clone, Copy, Debug)]
pub struct RawContact {
    /// First shape.
    pub shape_a: usize,
    /// Second shape.
    pub shape_b: usize,
    /// Contact point (world), midway between the two surfaces.
    pub point: Vec3,
    /// Unit normal (world), pointing from shape A to shape B.
    pub normal: Vec3,
    /// Penetration depth (m): positive when overlapping, negative for a gap.
    pub depth: f64,
    /// Features of the two shapes (to recognise the same contact in the next step).
    pub features: (u32, u32),
    /// Contact mode of the pair.
    pub mode: ContactMode,
}

//! Free bodies and track surfaces (conveyors, crawlers).

use serde::{Deserialize, Serialize};

use super::basics::Pose;
use super::shapes::ShapeSpec;
use super::joints::JointSpec;

/// A rigid body of the scene tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodySpec {
    /// Unique name.
    pub name: String,
    /// `world` or an earlier body.
    #[serde(default = "world")]
    pub parent: String,
    /// Body frame in the parent frame at zero joint positions.
    #[serde(default)]
    pub pose_in_parent: Pose,
    /// Joints, applied in order.
    #[serde(default)]
    pub joints: Vec<JointSpec>,
    /// Mass (kg).
    #[serde(default)]
    pub mass: f64,
    /// Centre of mass, body frame.
    #[serde(default)]
    pub com: [f64; 3],
    /// Rotational inertia about the centre of mass, body axes.
    #[serde(default)]
    pub inertia: [[f64; 3]; 3],
    /// Density (kg/m³) of homogeneous shapes: with it, and no `mass`, `com` or `inertia`, the
    /// body's mass properties are its shapes' ([`BodySpec::mass_properties`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub density: Option<f64>,
    /// Shapes.
    #[serde(default)]
    pub shapes: Vec<ShapeSpec>,
    /// Redundant initial world pose, for cross-checking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_world_pose: Option<Pose>,
    /// A track surface (conveyor belt, crawler): its contacts get a tangential surface
    /// velocity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub track: Option<TrackSpec>,
}

/// `bodies[].track`, `robots[].tracks[]`: a track surface (Choreonoid's pseudo continuous
/// track: crawlers and conveyors). Its surface turns about `axis` like a wheel's rim: at each
/// contact, with `n` the surface's outward normal, it moves at `speed` along `axis × n`
/// (normalised), which is friction direction 1; direction 2 (`n × (axis × n)`, across the
/// belt) has the friction coefficient `lateral_friction`. A contact whose normal is along the
/// axis (a belt's side) has ordinary friction.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrackSpec {
    /// The axis the surface turns about, in the body's (link's) axes (unit): `[0, 1, 0]` for a
    /// belt running along x (its top moves +x at a positive speed, its bottom −x).
    pub axis: [f64; 3],
    /// Surface speed (m/s) at the start; a command ([`crate::World::set_track_speed`],
    /// controllers) replaces it.
    #[serde(default)]
    pub speed: f64,
    /// Friction coefficient across the belt (direction 2), replacing the contact's static
    /// coefficient there (the dynamic one scaled alike); `None`: the contact's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lateral_friction: Option<f64>,
}

/// `robots[].tracks[]`: a robot link whose collision shapes are a track surface, named
/// `robot/link`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobotTrackSpec {
    /// The link (URDF link, MJCF body, `.body` link).
    pub link: String,
    /// The axis in the link's axes (unit); for a `.body` link of `jointType:
    /// pseudo_continuous_track` it defaults to its `jointAxis`, else it is required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axis: Option<[f64; 3]>,
    /// Surface speed (m/s) at the start.
    #[serde(default)]
    pub speed: f64,
    /// Friction coefficient across the belt (as [`TrackSpec::lateral_friction`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lateral_friction: Option<f64>,
}

fn world() -> String {
    "world".into()
}

impl BodySpec {
    /// The mass properties in the body frame: `mass`, `com`, `inertia` as given, or, with a
    /// `density`, the sum of its shapes' as homogeneous solids (sphere, box, capsule,
    /// cylinder, cone; overlapping shapes count twice). An error names the shape that has no
    /// volume formula.
    pub fn mass_properties(&self) -> Result<karakuri::spatial::Inertia, String> {
        use karakuri::spatial::{quat_from_xyzw, Inertia, Mat3, Se3, Vec3};
        let Some(density) = self.density else {
            let i = Mat3::from_fn(|r, c| self.inertia[r][c]);
            return Ok(Inertia::new(self.mass, Vec3::from(self.com), i));
        };
        let mut sum = Inertia::zero();
        for (k, s) in self.shapes.iter().enumerate() {
            let solid = s.geometry.solid().ok_or_else(|| {
                format!("shapes[{k}]: density gives the mass of spheres, boxes, capsules, cylinders and cones only: give mass, com and inertia")
            })?;
            let x = Se3::new(quat_from_xyzw(&s.pose.orientation), Vec3::from(s.pose.position));
            sum = sum.combined(&solid.inertia(density).transformed(&x));
        }
        Ok(sum)
    }

    /// No joints and parent `world`.
    pub fn is_static(&self) -> bool {
        self.joints.is_empty() && self.parent == "world"
    }
}

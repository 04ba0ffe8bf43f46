//! Free bodies and conveyor tracks.

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

/// `bodies[].track`: the body's surface moves at `speed · direction` relative to the body
/// (Choreonoid's crawlers and conveyors): at each of its contacts, the direction (body axes,
/// rotated with the body) projected onto the contact plane times the speed is the surface's
/// tangential velocity, which friction carries the other body along.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrackSpec {
    /// Direction of the surface's motion in the body's axes (unit).
    pub direction: [f64; 3],
    /// Speed (m/s) at the start; a command ([`crate::World::set_track_speed`], controllers)
    /// replaces it.
    #[serde(default)]
    pub speed: f64,
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

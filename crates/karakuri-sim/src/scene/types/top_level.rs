//! The whole scene: its top-level keys, their defaults, and the controllers section.

use serde::{Deserialize, Serialize};

use super::basics::Named;
use super::engine::{EngineParams, WorldParams};
use super::contact::{ContactParams, PairSpec};
use super::shapes::{DEFAULT_MATERIAL, Material};
use super::bodies::BodySpec;
use super::robots::{LoopConstraint, RobotSpec};
use super::sensors::{PerturbationSpec, SensorSpec};

/// A whole scene. Top-level keys other than these fields are kept in `extra` as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scene {
    /// `karakuri-validation-scene` or `karakuri-scene`.
    #[serde(default = "default_schema")]
    pub schema: String,
    /// Schema version.
    #[serde(default = "one")]
    pub schema_version: u64,
    /// Short name.
    #[serde(default = "default_name")]
    pub name: String,
    /// World parameters.
    #[serde(default)]
    pub world: WorldParams,
    /// Contact model.
    #[serde(default)]
    pub contact: ContactParams,
    /// Engine.
    #[serde(default)]
    pub engine: EngineParams,
    /// Materials by name (in the order of the file's mapping as read: sorted by name).
    #[serde(default, with = "Named")]
    pub materials: Vec<(String, Material)>,
    /// Used by shapes with no material.
    #[serde(default = "default_material")]
    pub default_material: Material,
    /// Bodies, parents first.
    #[serde(default)]
    pub bodies: Vec<BodySpec>,
    /// Robots from URDF.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub robots: Vec<RobotSpec>,
    /// Loop closures.
    #[serde(default)]
    pub loop_constraints: Vec<LoopConstraint>,
    /// Body pairs that never collide.
    #[serde(default)]
    pub collision_exclude_pairs: Vec<[String; 2]>,
    /// Per-pair contact modes.
    #[serde(default)]
    pub contact_pairs: Vec<PairSpec>,
    /// Sensors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sensors: Vec<SensorSpec>,
    /// External wrenches on bodies over time windows (pushes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub perturbations: Vec<PerturbationSpec>,
    /// Built-in controllers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub controllers: Vec<ControllerSpec>,
    /// Every other top-level key (title, description, conventions, expected values, ...),
    /// kept as written (read and written beside the fields above, see `Scene::from_value`).
    #[serde(skip)]
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// The file it was read from, or the name given to `Scene::from_str` (relative mesh and
    /// URDF paths are resolved against its directory).
    #[serde(skip)]
    pub source: Option<std::path::PathBuf>,
}

/// The top-level keys of a scene (the fields of [`Scene`] that files hold).
pub const TOP_KEYS: &[&str] = &[
    "schema",
    "schema_version",
    "name",
    "world",
    "contact",
    "engine",
    "materials",
    "default_material",
    "bodies",
    "robots",
    "loop_constraints",
    "collision_exclude_pairs",
    "contact_pairs",
    "sensors",
    "perturbations",
    "controllers",
];

fn default_schema() -> String {
    "karakuri-scene".into()
}

fn one() -> u64 {
    1
}

fn default_name() -> String {
    "scene".into()
}

fn default_material() -> Material {
    DEFAULT_MATERIAL
}

/// `controllers[]`: a built-in controller (see `docs/SCENE_FORMAT.md`, Controllers), called
/// every `period` seconds (default: every step) before the step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ControllerSpec {
    /// A PD law holding joints at their initial positions: each commands the torque
    /// `kp (q0 − q) − kd dq` (clamped to its actuator's effort limit) to its `torque` actuator.
    HoldPosture {
        /// Every 1-dof joint of this robot.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        robot: Option<String>,
        /// These joints (world names: `robot/joint` for robots).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        joints: Option<Vec<String>>,
        /// Position gain (N·m/rad or N/m).
        kp: f64,
        /// Velocity gain (N·m·s/rad or N·s/m).
        #[serde(default)]
        kd: f64,
        /// Control period (s; `None`: the time step).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        period: Option<f64>,
    },
    /// Plays a joint trajectory table (`time` and one column per joint): each period, each
    /// joint's actuator target is set to the table's value one period ahead.
    Trajectory {
        /// The table file (relative to the scene file).
        table: crate::scene::table::TableFile,
        /// The joints of its columns, in order (world names).
        joints: Vec<String>,
        /// Control period (s; `None`: the time step).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        period: Option<f64>,
    },
}

impl Scene {
    /// The material of a shape (its own or the default).
    pub fn material(&self, name: Option<&str>) -> Material {
        name.and_then(|n| self.materials.iter().find(|(k, _)| k == n))
            .map(|(_, m)| *m)
            .unwrap_or(self.default_material)
    }

    /// Index of a body by name.
    pub fn body_index(&self, name: &str) -> Option<usize> {
        self.bodies.iter().position(|b| b.name == name)
    }
}

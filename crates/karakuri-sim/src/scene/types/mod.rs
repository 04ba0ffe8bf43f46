//! The scene's types: what a scene file holds, with its defaults, one file a topic. Each type
//! reads and writes itself through serde; the few whose file layout differs from their shape
//! in memory go through one layout struct each, beside the type, used both to read
//! (`TryFrom<Layout>`) and to write (`From<Type>`), so the two directions cannot drift apart:
//!
//! * a shape: `type` beside the geometry's keys and the common ones (`ShapeFile`, in
//!   `shapes.rs`); in `robots[].shapes` also the `link`;
//! * a contact mode: `mode`, with `stiffness` and `damping` beside it for `penalty`
//!   (`ContactFile`, `PairFile`, in `contact.rs`);
//! * a joint: `type: free | revolute | prismatic`, `q0`/`qd0` a pose and twist or numbers
//!   (`JointFile`, in `joints.rs`);
//! * a material: `dynamic_friction` defaulting to `static_friction` (`MaterialFile`);
//! * name-keyed mappings read into ordered lists (`Named`, in `basics.rs`).
//!
//! Conversion errors start with the key they concern in backticks (`` `radius`: missing ``):
//! `Scene::from_value` appends that key to the path serde reports, so errors stay located.
//! Semantic checks (ranges, names, units) are in [`super::validate`].

mod basics;
mod engine;
mod contact;
mod shapes;
mod joints;
mod bodies;
mod actuators;
mod robots;
mod sensors;
mod top_level;

pub use basics::{Pose, Twist};
pub use engine::{EngineKind, EngineParams, Integrator, SleepParams, SolverKind, WorldParams};
pub use contact::{ContactMode, ContactParams, ModeKind, PairSpec};
pub use shapes::{Geometry, Material, MeshFile, ShapeKind, ShapeSpec, DEFAULT_MATERIAL};
pub use joints::{JointKind, JointSpec};
pub use bodies::{BodySpec, RobotTrackSpec, TrackSpec};
pub use actuators::{ActuatorMode, ActuatorSpec, JointSelection, Ramp, RobotActuatorSpec, Sine, Target};
pub use robots::{LoopConstraint, LoopKind, RobotCollision, RobotRoot, RobotSpec};
pub use sensors::{PerComponent, PerturbationSpec, SensorKind, SensorNoise, SensorSpec};
pub use top_level::{ControllerSpec, Scene, TOP_KEYS};

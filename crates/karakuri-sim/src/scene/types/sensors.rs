//! Sensors, their noise, and scheduled perturbations (pushes).

use serde::{Deserialize, Serialize};

use super::basics::Pose;

/// What a sensor measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SensorKind {
    /// Proper acceleration of the sensor point (classical acceleration minus gravity) in sensor
    /// axes: +9.81 up at rest on the floor, 0 in free fall.
    Accelerometer,
    /// Angular velocity of its body in sensor axes.
    RateGyro,
    /// The wrench the parent side exerts on the child side through a joint, at the sensor
    /// origin, in sensor axes.
    Force,
    /// The force part of [`SensorKind::Force`] alone (MJCF's `force`).
    #[serde(rename = "force3")]
    Force3,
    /// The torque part of [`SensorKind::Force`] alone, about the sensor origin (MJCF's `torque`).
    Torque,
    /// Linear velocity of the sensor point in sensor axes (MJCF's `velocimeter`).
    Velocimeter,
    /// A one-dof joint's position (MJCF's `jointpos`).
    JointPosition,
    /// A one-dof joint's velocity (MJCF's `jointvel`).
    JointVelocity,
    /// The torque (force) the joint's actuator applied over the last step (MJCF's
    /// `actuatorfrc`: divided by the gear).
    ActuatorForce,
    /// The sum of the normal forces of the contacts on its body (MJCF's `touch`).
    Touch,
    /// World position of the sensor frame (MJCF's `framepos`).
    FramePosition,
    /// World orientation of the sensor frame as a unit quaternion `x, y, z, w`, `w ≥ 0`
    /// (MJCF's `framequat`, in karakuri's order).
    FrameQuaternion,
    /// World velocity of the sensor frame's origin, world axes (MJCF's `framelinvel`).
    FrameLinearVelocity,
    /// World angular velocity of the sensor's body, world axes (MJCF's `frameangvel`).
    FrameAngularVelocity,
}

impl SensorKind {
    /// The names of a reading's components, in order: `x, y, z` (accelerometer, rate gyro, ...),
    /// `fx, fy, fz, tx, ty, tz` (force), `x, y, z, w` (frame quaternion), one value for joint,
    /// actuator and touch sensors. The one place a reading's layout is defined.
    pub fn component_names(self) -> &'static [&'static str] {
        match self {
            SensorKind::Force => &["fx", "fy", "fz", "tx", "ty", "tz"],
            SensorKind::Force3 => &["fx", "fy", "fz"],
            SensorKind::Torque => &["tx", "ty", "tz"],
            SensorKind::FrameQuaternion => &["x", "y", "z", "w"],
            SensorKind::JointPosition => &["q"],
            SensorKind::JointVelocity => &["v"],
            SensorKind::ActuatorForce => &["tau"],
            SensorKind::Touch => &["fn"],
            SensorKind::Accelerometer
            | SensorKind::RateGyro
            | SensorKind::Velocimeter
            | SensorKind::FramePosition
            | SensorKind::FrameLinearVelocity
            | SensorKind::FrameAngularVelocity => &["x", "y", "z"],
        }
    }

    /// How many values a reading has (1 to 6).
    pub fn width(self) -> usize {
        self.component_names().len()
    }

    /// Whether it reads a joint (`joint`: force, force3, torque, joint position and velocity,
    /// actuator force) rather than a body (`body`: the others).
    pub fn on_joint(self) -> bool {
        matches!(
            self,
            SensorKind::Force
                | SensorKind::Force3
                | SensorKind::Torque
                | SensorKind::JointPosition
                | SensorKind::JointVelocity
                | SensorKind::ActuatorForce
        )
    }

    /// Whether it measures the wrench through a joint (force, force3, torque).
    pub fn is_wrench(self) -> bool {
        matches!(self, SensorKind::Force | SensorKind::Force3 | SensorKind::Torque)
    }
}

/// `sensors[]`: a sensor on a body (accelerometer, rate gyro, velocimeter, touch, frame
/// sensors: `body`) or a joint (force, force3, torque, joint position and velocity, actuator
/// force: `joint`); robot parts as `robot/name`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SensorSpec {
    /// Unique name (the CSV's column prefix).
    pub name: String,
    /// What it measures.
    #[serde(rename = "type")]
    pub kind: SensorKind,
    /// The body it is mounted on (the kinds that are not on a joint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The joint it measures (force, force3, torque, joint position and velocity, actuator
    /// force).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joint: Option<String>,
    /// Pose in the body's frame (body sensors) or in the joint's frame (force, force3, torque:
    /// origin at the joint, axes of the child side; unused by the other joint sensors).
    #[serde(default)]
    pub pose: Pose,
    /// Gaussian noise and bias added to its readings (`None`: exact readings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<SensorNoise>,
}

/// A number for every component of a reading, or one per component (as many as the kind's
/// [`SensorKind::width`]: 3 for accelerometers and gyros, 6 for force sensors: `fx, fy, fz,
/// tx, ty, tz`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PerComponent {
    /// The same for every component.
    All(f64),
    /// One per component.
    Each(Vec<f64>),
}

impl Default for PerComponent {
    fn default() -> Self {
        PerComponent::All(0.0)
    }
}

impl PerComponent {
    /// Component `k`'s value (`Each` lists are checked to have the reading's length).
    pub fn get(&self, k: usize) -> f64 {
        match self {
            PerComponent::All(x) => *x,
            PerComponent::Each(v) => v.get(k).copied().unwrap_or(0.0),
        }
    }
}

/// `sensors[].noise`: each reading component becomes `exact + bias + std · N(0, 1)`, the
/// normal numbers drawn from the sensor's own seeded stream (deterministic for a seed).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SensorNoise {
    /// Standard deviation (the reading's units), ≥ 0.
    pub std: PerComponent,
    /// Constant offset (the reading's units).
    pub bias: PerComponent,
    /// Seed of the noise; each sensor draws from its own stream of it (the stream numbered by
    /// its index in `sensors`), so sensors sharing a seed draw independent numbers.
    pub seed: u64,
}

/// `perturbations[]`: an external wrench on a body (or robot link, `robot/link`) from `start`
/// for `duration` seconds (both rounded to whole time steps; at least one step). `force` and
/// `torque` are in world axes; the force acts at the body-fixed `point` (body frame; default
/// the body frame's origin), so a force off the origin also turns the body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerturbationSpec {
    /// The body pushed (`robot/link` for a robot's link); not a static body.
    pub body: String,
    /// Force (N), world axes.
    #[serde(default)]
    pub force: [f64; 3],
    /// Torque (N·m), world axes.
    #[serde(default)]
    pub torque: [f64; 3],
    /// Where the force acts, body frame (m).
    #[serde(default)]
    pub point: [f64; 3],
    /// When it starts (s).
    #[serde(default)]
    pub start: f64,
    /// How long it lasts (s).
    pub duration: f64,
}

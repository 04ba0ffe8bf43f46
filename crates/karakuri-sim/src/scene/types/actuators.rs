//! Actuators: what drives a joint (mode, target signal: sines, ramps, tables) and which joints of a
//! robot an actuator block covers.

use serde::{Deserialize, Serialize};

/// How an actuator drives its joint (Choreonoid's actuation modes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActuatorMode {
    /// The target is the joint torque (N·m) or force (N), clamped to the effort limit.
    #[default]
    Torque,
    /// PD servo `kp (target − q) + kd (target_v − dq)` integrated implicitly, effort-limited
    /// (`target_v`: the target's rate).
    Position,
    /// The joint is held at the target speed by a constraint row whose force is bounded by
    /// the effort limit.
    Velocity,
    /// Choreonoid's high-gain mode: the joint follows the target position exactly (a bilateral
    /// velocity row reaching the target at the step's end); the torque that makes it so is
    /// reported. The effort limit is not applied.
    Prescribed,
}

/// A sinusoidal target `offset + amplitude · sin(2π · frequency · t + phase)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Sine {
    /// Amplitude (joint units).
    pub amplitude: f64,
    /// Frequency (Hz).
    pub frequency: f64,
    /// Offset (joint units).
    pub offset: f64,
    /// Phase (rad).
    pub phase: f64,
}

/// A smooth move from `from` to `to` over `[start, start + duration]`, held before and after:
/// `from + (to − from) s(τ)`, `τ = (t − start) / duration`, with the minimum-jerk profile
/// `s = 10τ³ − 15τ⁴ + 6τ⁵` (zero speed and acceleration at both ends).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Ramp {
    /// Value before `start` (joint units).
    pub from: f64,
    /// Value from `start + duration` on (joint units).
    pub to: f64,
    /// When the move starts (s).
    pub start: f64,
    /// How long it takes (s; 0: a step).
    pub duration: f64,
}

/// An actuator's target: a constant, `{sine: {...}}`, `{ramp: {...}}` or `{table: FILE.csv}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Target {
    /// A constant.
    Value(f64),
    /// A sine of time.
    Sine {
        /// Its parameters.
        sine: Sine,
    },
    /// A minimum-jerk move between two values.
    Ramp {
        /// Its parameters.
        ramp: Ramp,
    },
    /// A `time, value` table, linearly interpolated, clamped outside its time range.
    Table {
        /// The table file (read when the scene is loaded).
        table: crate::scene::table::TableFile,
    },
}

impl Default for Target {
    fn default() -> Self {
        Target::Value(0.0)
    }
}

impl Target {
    /// The smallest and largest value the target takes (a table's: over its rows).
    pub fn range(&self) -> (f64, f64) {
        match self {
            Target::Value(x) => (*x, *x),
            Target::Sine { sine: s } => (s.offset - s.amplitude.abs(), s.offset + s.amplitude.abs()),
            // the minimum-jerk profile stays between its ends
            Target::Ramp { ramp: r } => (r.from.min(r.to), r.from.max(r.to)),
            Target::Table { table } => {
                let column = table.values.iter().step_by(table.columns.max(1));
                column.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)))
            }
        }
    }

    /// The target at time `t` and its rate (a table's: the slope of its segment at `t`).
    pub fn at(&self, t: f64) -> (f64, f64) {
        match *self {
            Target::Value(x) => (x, 0.0),
            Target::Sine { sine: s } => {
                let w = 2.0 * std::f64::consts::PI * s.frequency;
                let (sn, cs) = (w * t + s.phase).sin_cos();
                (s.offset + s.amplitude * sn, s.amplitude * w * cs)
            }
            Target::Ramp { ramp: r } => {
                let tau = if r.duration > 0.0 {
                    ((t - r.start) / r.duration).clamp(0.0, 1.0)
                } else if t < r.start {
                    0.0
                } else {
                    1.0
                };
                let d = r.to - r.from;
                let s = tau * tau * tau * (10.0 + tau * (-15.0 + 6.0 * tau));
                let ds = if r.duration > 0.0 { 30.0 * tau * tau * (1.0 - tau) * (1.0 - tau) / r.duration } else { 0.0 };
                (r.from + d * s, d * ds)
            }
            Target::Table { ref table } => table.at(t, 0),
        }
    }
}

/// `bodies[].joints[].actuator`: the actuator of a 1-dof joint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ActuatorSpec {
    /// Actuation mode.
    pub mode: ActuatorMode,
    /// Position gain (N·m/rad or N/m), `position` mode.
    pub kp: f64,
    /// Velocity gain (N·m·s/rad or N·s/m), `position` mode.
    pub kd: f64,
    /// Torque, position or speed, by mode.
    pub target: Target,
    /// Largest torque or force the actuator applies (`None`: the URDF's, else unlimited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effort_limit: Option<f64>,
    /// Largest target speed (`None`: the URDF's, else unlimited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub velocity_limit: Option<f64>,
}

/// Which joints of a robot an actuator entry covers: a list of names or `"*"` (every 1-dof
/// joint).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JointSelection {
    /// Joint names (URDF names, without the robot prefix).
    Names(Vec<String>),
    /// `"*"`.
    All(String),
}

/// `robots[].actuators[]`: actuators for some of a robot's joints. Entries apply in order: a
/// later entry replaces an earlier one on the joints they share (`"*"` first, then exceptions).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobotActuatorSpec {
    /// The joints.
    pub joints: JointSelection,
    /// Actuation mode.
    #[serde(default)]
    pub mode: ActuatorMode,
    /// Position gain.
    #[serde(default)]
    pub kp: f64,
    /// Velocity gain.
    #[serde(default)]
    pub kd: f64,
    /// Target (one for every joint of the entry).
    #[serde(default)]
    pub target: Target,
    /// Effort limit (`None`: each joint's URDF limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort_limit: Option<f64>,
    /// Velocity limit (`None`: each joint's URDF limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub velocity_limit: Option<f64>,
}

impl RobotActuatorSpec {
    /// The actuator each selected joint gets.
    pub fn actuator(&self) -> ActuatorSpec {
        ActuatorSpec {
            mode: self.mode,
            kp: self.kp,
            kd: self.kd,
            target: self.target.clone(),
            effort_limit: self.effort_limit,
            velocity_limit: self.velocity_limit,
        }
    }
}

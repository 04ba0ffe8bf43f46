//! Controllers (Choreonoid's controller I/O): a [`Controller`] registered on a
//! `World` with `World::add_controller` is called every control period
//! (a whole number of steps) before the step, reads time, joint states and sensor readings,
//! and writes joint commands (each actuator's target, by its mode) and track surface speeds. A
//! command that is not
//! finite or is outside its joint's limits stops the run with [`crate::SimError::BadCommand`]
//! naming the joint and the time.

use crate::engine::{ActuatorInfo, JointState};
use crate::layout::Layout;
use crate::scene::ActuatorMode;
use crate::SimError;

/// What a controller reads and writes in one call.
pub struct ControlIo<'a> {
    /// Simulated time (s).
    pub time: f64,
    /// The world's arrays by name (`layout.joints`: the one-dof joints, `robot/joint` for
    /// robots; `layout.sensors`; `layout.tracks`, their bodies' names): the orders of the
    /// slices below.
    pub layout: &'a Layout,
    /// The joints' states after the last step (order of `layout.joints`).
    pub states: &'a [JointState],
    /// The sensors' readings after the last step (order of `layout.sensors`; see
    /// [`crate::Engine::readings`]).
    pub readings: &'a [[f64; 6]],
    /// Commands to write, per one-dof joint (order of `layout.joints`): `Some(target)` sets the
    /// joint's actuator target, `None` (every entry on entry) leaves it as it is.
    pub commands: &'a mut [Option<f64>],
    /// The tracks' current surface speed commands (m/s, order of `layout.tracks`).
    pub track_speeds: &'a [f64],
    /// Speed commands to write, per track (order of `layout.tracks`): `Some(speed)` sets it,
    /// `None` (every entry on entry) leaves it.
    pub track_commands: &'a mut [Option<f64>],
}

impl ControlIo<'_> {
    /// The index of a joint by name.
    pub fn joint(&self, name: &str) -> Option<usize> {
        self.layout.joint(name)
    }

    /// The index of a track surface by name.
    pub fn track(&self, name: &str) -> Option<usize> {
        self.layout.track(name)
    }

    /// A sensor's reading by name.
    pub fn sensor(&self, name: &str) -> Option<&[f64; 6]> {
        self.readings.get(self.layout.sensor(name)?)
    }
}

/// A controller: called every control period with the world's state, writes commands.
pub trait Controller: Send {
    /// One control update at `io.time`.
    fn update(&mut self, io: &mut ControlIo<'_>);

    /// The controller's own state for a checkpoint (`World::snapshot`): everything
    /// its next updates depend on, as a value with exact numbers (`serde_json::to_value` of
    /// its fields; `Value::Null` for a controller without state). The default says the
    /// controller cannot be checkpointed, and the snapshot fails naming it: a checkpoint never
    /// silently drops a controller's state.
    fn save_state(&self) -> Result<serde_json::Value, String> {
        Err(NOT_CHECKPOINTABLE.into())
    }

    /// Sets the controller's state from what [`Controller::save_state`] gave.
    fn load_state(&mut self, _state: &serde_json::Value) -> Result<(), String> {
        Err(NOT_CHECKPOINTABLE.into())
    }
}

/// What the default [`Controller::save_state`] and [`Controller::load_state`] say.
pub const NOT_CHECKPOINTABLE: &str =
    "this controller cannot be checkpointed (implement Controller::save_state and load_state; a stateless one returns Value::Null)";

/// A registered controller and its buffers (sized once: a control call allocates nothing).
pub(crate) struct Registered {
    pub(crate) controller: Box<dyn Controller>,
    /// Control period in steps.
    pub(crate) every: u64,
    pub(crate) states: Vec<JointState>,
    pub(crate) commands: Vec<Option<f64>>,
    pub(crate) track_commands: Vec<Option<f64>>,
}

/// Checks a command to the actuator of joint `joint` (every engine's, before it takes the
/// target): finite, and within the effort limit (torque mode), the velocity limit (velocity
/// mode) or the joint's position `limits` (position and prescribed modes). The error,
/// [`SimError::BadCommand`], names the joint, `time` and the bound.
pub(crate) fn check_command(
    joint: &str,
    act: &ActuatorInfo,
    limits: Option<[f64; 2]>,
    target: f64,
    time: f64,
) -> Result<(), SimError> {
    let bad = |reason: String| SimError::BadCommand {
        joint: joint.to_string(),
        time,
        reason,
    };
    if !target.is_finite() {
        return Err(bad(format!("command {target} is not finite")));
    }
    match act.mode {
        ActuatorMode::Torque if target.abs() > act.effort_limit => {
            return Err(bad(format!("torque command {target} exceeds the effort limit {}", act.effort_limit)));
        }
        ActuatorMode::Velocity if target.abs() > act.velocity_limit => {
            return Err(bad(format!("speed command {target} exceeds the velocity limit {}", act.velocity_limit)));
        }
        ActuatorMode::Position | ActuatorMode::Prescribed => {
            if let Some([lo, hi]) = limits {
                if target < lo || target > hi {
                    return Err(bad(format!("position command {target} is outside the joint's limits [{lo}, {hi}]")));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

//! The built-in controllers a scene's `controllers` list names, as [`Controller`]s: each is
//! built against a world's engine (joint names resolved to [`ControlIo`] indices, buffers
//! sized once) and registered on the `World` like a user's controller.

use crate::control::{ControlIo, Controller};
use crate::engine::Engine;
use crate::layout::Layout;
use crate::scene::table::TableFile;
use crate::scene::{scene_error, ActuatorMode, ControllerSpec, Scene};
use crate::SimError;

/// `hold_posture`: each joint's torque `kp (q0 − q) − kd dq`, clamped to its actuator's effort
/// limit, `q0` its position when the controller was built (the scene's initial posture).
pub struct HoldPosture {
    /// The joints' indices in [`ControlIo::layout`]'s joints.
    joints: Vec<usize>,
    /// Their positions to hold.
    q0: Vec<f64>,
    /// Their actuators' effort limits.
    limits: Vec<f64>,
    kp: f64,
    kd: f64,
}

impl Controller for HoldPosture {
    fn update(&mut self, io: &mut ControlIo<'_>) {
        for (i, &k) in self.joints.iter().enumerate() {
            let s = io.states[k];
            let tau = self.kp * (self.q0[i] - s.q) - self.kd * s.dq;
            io.commands[k] = Some(tau.clamp(-self.limits[i], self.limits[i]));
        }
    }

    // everything it holds is built from the scene (a restoring world is built from the same
    // scene): nothing to carry in a checkpoint
    fn save_state(&self) -> Result<serde_json::Value, String> {
        Ok(serde_json::Value::Null)
    }

    fn load_state(&mut self, _state: &serde_json::Value) -> Result<(), String> {
        Ok(())
    }
}

/// `trajectory`: each period, joint `j`'s actuator target (or track `j`'s surface speed) is
/// column `j` of the table at `t + period` (the value to reach by the next call, as a scene
/// target is evaluated at the step's end); linear interpolation, clamped outside the table's
/// time range.
pub struct Trajectory {
    /// What each column commands.
    joints: Vec<Column>,
    table: TableFile,
    period: f64,
}

/// What a [`Trajectory`] column commands.
#[derive(Clone, Copy)]
enum Column {
    /// A joint (index in [`ControlIo::layout`]'s joints): its actuator's target.
    Joint(usize),
    /// A track (index in the layout's tracks): its surface speed.
    Track(usize),
}

impl Controller for Trajectory {
    fn update(&mut self, io: &mut ControlIo<'_>) {
        let t = io.time + self.period;
        for (c, column) in self.joints.iter().enumerate() {
            let x = self.table.at(t, c).0;
            match *column {
                Column::Joint(k) => io.commands[k] = Some(x),
                Column::Track(k) => io.track_commands[k] = Some(x),
            }
        }
    }

    // everything it holds is built from the scene (a restoring world is built from the same
    // scene): nothing to carry in a checkpoint
    fn save_state(&self) -> Result<serde_json::Value, String> {
        Ok(serde_json::Value::Null)
    }

    fn load_state(&mut self, _state: &serde_json::Value) -> Result<(), String> {
        Ok(())
    }
}

/// A built-in controller and its period (s).
pub type BuiltIn = (Box<dyn Controller>, f64);

/// The scene's built-in controllers for `engine` (its arrays by name: `layout`), each with its period (s). Errors
/// name the scene path of the joint or robot that does not resolve or lacks the actuator it
/// needs.
pub fn from_scene(scene: &Scene, engine: &dyn Engine, layout: &Layout) -> Result<Vec<BuiltIn>, SimError> {
    let file = scene.source.as_ref().map_or("scene".to_string(), |p| p.display().to_string());
    let names = &layout.joints;
    let index = |at: &str, name: &str| {
        layout.joint(name).ok_or_else(|| {
            scene_error(&file, at, format!("no 1-dof joint named '{name}' (robot joints are 'robot/joint'; a trajectory may also name a track)"))
        })
    };
    let mut out: Vec<BuiltIn> = Vec::with_capacity(scene.controllers.len());
    for (ci, c) in scene.controllers.iter().enumerate() {
        let at = format!("controllers[{ci}]");
        match c {
            ControllerSpec::HoldPosture { robot, joints, kp, kd, period } => {
                let selected: Vec<usize> = match (robot, joints) {
                    (Some(r), _) => {
                        let prefix = format!("{r}/");
                        let ks: Vec<usize> = (0..names.len()).filter(|&k| names[k].starts_with(&prefix)).collect();
                        if ks.is_empty() {
                            return Err(scene_error(&file, &format!("{at}.robot"), format!("no robot '{r}' with 1-dof joints")));
                        }
                        ks
                    }
                    (None, Some(js)) => js.iter().map(|n| index(&format!("{at}.joints"), n)).collect::<Result<_, _>>()?,
                    (None, None) => unreachable!("validated: robot or joints"),
                };
                let mut limits = Vec::with_capacity(selected.len());
                for &k in &selected {
                    match layout.joint_infos[k].actuator {
                        Some(a) if a.mode == ActuatorMode::Torque => limits.push(a.effort_limit),
                        other => {
                            let has = other.map_or("no actuator".to_string(), |a| format!("a {:?} actuator", a.mode));
                            let reason = format!(
                                "joint '{}' has {has}; hold_posture commands torques (give it `actuator: {{mode: torque}}` or a robot's `actuators` entry with mode torque)",
                                names[k]
                            );
                            return Err(scene_error(&file, &at, reason));
                        }
                    }
                }
                let q0 = selected.iter().map(|&k| engine.joint_state(k).q).collect();
                let ctl = HoldPosture { joints: selected, q0, limits, kp: *kp, kd: *kd };
                out.push((Box::new(ctl), period.unwrap_or(engine.dt())));
            }
            ControllerSpec::Trajectory { table, joints, period } => {
                let mut ks = Vec::with_capacity(joints.len());
                for n in joints {
                    // a track by its name (its surface speed), else a joint (its actuator)
                    if let Some(k) = layout.track(n).filter(|_| layout.joint(n).is_none()) {
                        ks.push(Column::Track(k));
                        continue;
                    }
                    let k = index(&format!("{at}.joints"), n)?;
                    if layout.joint_infos[k].actuator.is_none() {
                        let reason = format!("joint '{}' has no actuator for the trajectory to command", names[k]);
                        return Err(scene_error(&file, &format!("{at}.joints"), reason));
                    }
                    ks.push(Column::Joint(k));
                }
                let period = period.unwrap_or(engine.dt());
                out.push((Box::new(Trajectory { joints: ks, table: table.clone(), period }), period));
            }
        }
    }
    Ok(out)
}

//! The [`World`] facade: a scene, an engine and the bodies' states.

use std::path::Path;
use std::sync::Arc;

use karakuri::spatial::Vec3;

use crate::control::{ControlIo, Controller, Registered};
use crate::derivatives::StepDerivatives;
use crate::engine::{unsupported, BodyInfo, BodyState, Capabilities, ContactInfo, Engine, JointState, RobotInfo, StageTimes};
use crate::layout::Layout;
use crate::native::NativeEngine;
use crate::scene::{EngineKind, Scene};
use crate::snapshot::{self, Snapshot};
use crate::SimError;

pub use crate::scene::validate::{step_count, MAX_STEPS};

mod settings;

/// A simulated world.
///
/// A world is [`Send`] (its engine is a `Box<dyn Engine + Send>`), so independent worlds can
/// be stepped on other threads: [`crate::Batch`] steps many at once.
///
/// ```no_run
/// let mut world = karakuri_sim::World::from_file("scene.yaml")?;
/// world.run(1.0)?;
/// println!("{} contacts", world.contacts().len());
/// # Ok::<(), karakuri_sim::SimError>(())
/// ```
pub struct World {
    scene: Scene,
    engine: Box<dyn Engine + Send>,
    /// The joint, sensor and track arrays by name, resolved once from the engine.
    layout: Layout,
    /// What the engine can do beyond stepping.
    caps: Capabilities,
    bodies: Vec<BodyInfo>,
    /// The scene's robots as compiled (their own models and geometry).
    robots: Arc<[RobotInfo]>,
    /// The engine's remarks on building the world.
    warnings: Vec<String>,
    states: Vec<BodyState>,
    times: StageTimes,
    controllers: Vec<Registered>,
    /// Whether the engine times its stages ([`World::time_stages`]).
    timing: bool,
    /// Gravity now (the scene's, or the last [`World::set_gravity`]).
    gravity: Vec3,
    /// The contact parameters now (the scene's, then those set while running).
    contact: crate::scene::ContactParams,
    /// The bodies' states before the last step (the accelerations difference them).
    prev_states: Vec<BodyState>,
    /// The one-dof joints' velocities before the last step.
    prev_dq: Vec<f64>,
    /// `prev_*` hold the start of the step that led to the state now (false before the first
    /// step and after a restore).
    accel_ready: bool,
}

impl World {
    /// Reads a scene file and builds the world with the native engine.
    pub fn from_file(path: impl AsRef<Path>) -> Result<World, SimError> {
        World::new(Scene::from_file(path)?)
    }

    /// Builds the world of a scene with the engine it names (`engine.type`).
    pub fn new(scene: Scene) -> Result<World, SimError> {
        let engine: Box<dyn Engine + Send> = match scene.engine.kind {
            EngineKind::Native => Box::new(NativeEngine::new(&scene)?),
            #[cfg(feature = "rapier")]
            EngineKind::Rapier => Box::new(crate::rapier::RapierEngine::new(&scene)?),
            #[cfg(not(feature = "rapier"))]
            EngineKind::Rapier => {
                let file = scene.source.as_ref().map_or("scene".to_string(), |p| p.display().to_string());
                return Err(SimError::Scene {
                    file,
                    path: "engine.type".into(),
                    reason: "this build has no rapier engine: rebuild with the `rapier` feature \
                             (`cargo build --release -p karakuri-cli --features rapier`, or karakuri-sim's \
                             `features = [\"rapier\"]`)"
                        .into(),
                });
            }
        };
        World::with_engine(scene, engine)
    }

    /// Builds the world of a scene with an engine already built from it, with the scene's
    /// built-in controllers (`controllers`) registered.
    pub fn with_engine(scene: Scene, engine: Box<dyn Engine + Send>) -> Result<World, SimError> {
        let d = engine.describe();
        let mut states = vec![BodyState::default(); d.bodies.len()];
        engine.write_states(&mut states);
        let layout = Layout::of(&d);
        let builtin = crate::controllers::from_scene(&scene, &*engine, &layout)?;
        let (g, contact) = (scene.world.gravity, scene.contact.clone());
        let mut world = World {
            gravity: Vec3::new(g[0], g[1], g[2]),
            contact,
            prev_states: states.clone(),
            prev_dq: vec![0.0; layout.joints.len()],
            accel_ready: false,
            scene,
            caps: engine.capabilities(),
            engine,
            layout,
            bodies: d.bodies,
            robots: d.robots,
            warnings: d.warnings,
            states,
            times: StageTimes::default(),
            controllers: Vec::new(),
            timing: false,
        };
        // the scene's built-in controllers, first, in their order
        for (c, period) in builtin {
            world.add_controller(c, period)?;
        }
        Ok(world)
    }

    /// Registers a controller called every `period` seconds (a whole number of time steps),
    /// first before the next step; controllers run in the order they were added.
    pub fn add_controller(&mut self, controller: Box<dyn Controller>, period: f64) -> Result<(), SimError> {
        let dt = self.engine.dt();
        let every = (period / dt).round();
        if !(every >= 1.0 && (every * dt - period).abs() <= 1e-9 * period.abs().max(dt)) {
            return Err(SimError::BadControlPeriod { period, dt });
        }
        let n = self.layout.joints.len();
        self.controllers.push(Registered {
            controller,
            every: every as u64,
            states: vec![JointState::default(); n],
            commands: vec![None; n],
            track_commands: vec![None; self.layout.tracks.len()],
        });
        Ok(())
    }

    /// Calls the controllers whose period falls on this step and applies their commands.
    fn control(&mut self) -> Result<(), SimError> {
        let steps = self.engine.steps();
        for r in &mut self.controllers {
            if !steps.is_multiple_of(r.every) {
                continue;
            }
            for (k, s) in r.states.iter_mut().enumerate() {
                *s = self.engine.joint_state(k);
            }
            r.commands.fill(None);
            r.track_commands.fill(None);
            let mut io = ControlIo {
                time: self.engine.time(),
                layout: &self.layout,
                states: &r.states,
                readings: self.engine.readings(),
                commands: &mut r.commands,
                track_speeds: self.engine.track_speeds(),
                track_commands: &mut r.track_commands,
            };
            r.controller.update(&mut io);
            for k in 0..r.commands.len() {
                if let Some(x) = r.commands[k] {
                    // the engine checks the command (finite, within limits) and names the joint
                    self.engine.set_target(k, x)?;
                }
            }
            for k in 0..r.track_commands.len() {
                if let Some(x) = r.track_commands[k] {
                    self.engine.set_track_speed(k, x)?;
                }
            }
        }
        Ok(())
    }

    /// Advances one time step (the controllers first, on their periods).
    pub fn step(&mut self) -> Result<(), SimError> {
        if !self.controllers.is_empty() {
            self.control()?;
        }
        self.engine.write_joint_speeds(&mut self.prev_dq);
        // the states now become the step's start (no copy: the buffers swap)
        std::mem::swap(&mut self.states, &mut self.prev_states);
        if let Err(e) = self.engine.step() {
            // the engine is back at the step's start
            std::mem::swap(&mut self.states, &mut self.prev_states);
            self.accel_ready = false;
            return Err(e);
        }
        self.engine.write_states(&mut self.states);
        self.accel_ready = true;
        if self.timing {
            self.times.add(&self.engine.report().stage_times);
        }
        Ok(())
    }

    /// Turns the timing of the engine's stages on or off ([`World::stage_times`]; off by
    /// default, since reading the clock between stages is a good part of a small world's
    /// step). Fails, naming it, for an engine that cannot time its stages.
    pub fn time_stages(&mut self, on: bool) -> Result<(), SimError> {
        self.require(self.caps.stage_timing, "stage timing (time_stages)")?;
        self.engine.time_stages(on)?;
        self.timing = on;
        Ok(())
    }

    /// Advances by `duration` seconds (rounded to whole steps, at most [`MAX_STEPS`]).
    pub fn run(&mut self, duration: f64) -> Result<(), SimError> {
        let n = step_count(duration, self.engine.dt())?;
        for _ in 0..n {
            self.step()?;
        }
        Ok(())
    }

    /// The world's full state now ([`crate::snapshot`]): the engine's state and every
    /// controller's, with the world's fingerprint. Fails, naming it, when a controller cannot
    /// be checkpointed ([`Controller::save_state`]) or the engine does not support it.
    pub fn snapshot(&self) -> Result<Snapshot, SimError> {
        self.require(self.caps.checkpoints, "checkpoints (save_state)")?;
        let state = self.engine.save_state()?;
        let controllers = self
            .controllers
            .iter()
            .enumerate()
            .map(|(i, r)| r.controller.save_state().map_err(|e| controller_error(i, "saved", e)))
            .collect::<Result<_, _>>()?;
        Ok(Snapshot {
            format: snapshot::FORMAT.into(),
            version: snapshot::VERSION,
            scene: self.scene.name.clone(),
            fingerprint: self.fingerprint(),
            engine: self.engine.name().into(),
            time: self.engine.time(),
            steps: self.engine.steps(),
            state,
            controllers,
        })
    }

    /// Sets the world to a snapshot of the same world (same scene and time step, same engine,
    /// the same number of controllers registered in the same order); the next steps are
    /// then bit for bit those that followed the snapshot. On an error the world is as it was.
    pub fn restore(&mut self, snap: &Snapshot) -> Result<(), SimError> {
        let mine = self.fingerprint();
        if snap.fingerprint != mine {
            return Err(SimError::Checkpoint(format!(
                "taken from scene '{}' (fingerprint {}), this world is scene '{}' (fingerprint {mine}): a checkpoint resumes only the scene, time step and robots it was taken from",
                snap.scene, snap.fingerprint, self.scene.name
            )));
        }
        if snap.engine != self.engine.name() {
            return Err(SimError::Checkpoint(format!(
                "taken with the {} engine, this world runs the {} engine",
                snap.engine,
                self.engine.name()
            )));
        }
        if snap.controllers.len() != self.controllers.len() {
            return Err(SimError::Checkpoint(format!(
                "it holds {} controller state(s), this world has {} controller(s) registered",
                snap.controllers.len(),
                self.controllers.len()
            )));
        }
        self.require(self.caps.checkpoints, "checkpoints (restore_state)")?;
        // what to go back to if a part refuses its state
        let before: Vec<serde_json::Value> = self
            .controllers
            .iter()
            .enumerate()
            .map(|(i, r)| r.controller.save_state().map_err(|e| controller_error(i, "saved", e)))
            .collect::<Result<_, _>>()?;
        let undo = |controllers: &mut [Registered], n: usize| {
            for (r, v) in controllers.iter_mut().zip(&before).take(n) {
                // it loaded a state of its own making a moment ago
                let _ = r.controller.load_state(v);
            }
        };
        for i in 0..self.controllers.len() {
            if let Err(e) = self.controllers[i].controller.load_state(&snap.controllers[i]) {
                undo(&mut self.controllers, i);
                return Err(controller_error(i, "restored", e));
            }
        }
        if let Err(e) = self.engine.restore_state(&snap.state) {
            undo(&mut self.controllers, before.len());
            return Err(e);
        }
        self.engine.write_states(&mut self.states);
        self.accel_ready = false;
        Ok(())
    }

    /// Sets every one-dof joint's position (rad or m), over [`World::one_dof_joints`]; the
    /// velocities and the rest of the state are kept, the next step starts from it.
    pub fn set_joint_positions(&mut self, q: &[f64]) -> Result<(), SimError> {
        self.set_joint_states(Some(q), None)
    }

    /// Sets every one-dof joint's velocity (rad/s or m/s), over [`World::one_dof_joints`].
    pub fn set_joint_velocities(&mut self, dq: &[f64]) -> Result<(), SimError> {
        self.set_joint_states(None, Some(dq))
    }

    fn set_joint_states(&mut self, q: Option<&[f64]>, dq: Option<&[f64]>) -> Result<(), SimError> {
        let n = self.layout.joints.len();
        for (what, x) in [("positions", q), ("velocities", dq)] {
            let Some(x) = x else { continue };
            if x.len() != n {
                return Err(SimError::Input(format!("joint {what}: {} values given, the world has {n} one-dof joints", x.len())));
            }
            if let Some(k) = x.iter().position(|v| !v.is_finite()) {
                return Err(SimError::Input(format!("joint {what}: joint '{}' is given {}", self.layout.joints[k], x[k])));
            }
        }
        self.engine.set_joint_states(q, dq)?;
        self.engine.write_states(&mut self.states);
        self.accel_ready = false;
        Ok(())
    }

    /// `(nv, nu)`: the sizes of this world's step derivatives ([`StepDerivatives::new`]):
    /// velocity coordinates (one-dof joints, then 6 per free body, 3 per ball joint) and
    /// actuated joints.
    pub fn step_derivative_sizes(&self) -> (usize, usize) {
        let l = &self.layout;
        (l.joints.len() + l.other_joints.iter().map(|o| o.1).sum::<usize>(), l.actuated.len())
    }

    /// The derivatives of the next step at the state now (the engine's step, without the
    /// controllers), into `out` (sized by [`World::step_derivative_sizes`]; no allocation
    /// after the first call): `A = ∂(q⁺, v⁺)/∂(q, v)`, `B = ∂(q⁺, v⁺)/∂u` in the order of
    /// [`crate::derivatives`]. The world does not change. A step the derivatives do not go
    /// through (loops, equalities, other constraint rows; the rapier engine) is
    /// [`SimError::Unsupported`] naming what (decision record 0069). Through contacts they are
    /// those of the solve's active set; at a change of the set (a contact landing, sticking
    /// at its cone, separating), those of a stated side: [`crate::derivatives`], "At a
    /// change of the active set".
    pub fn step_derivatives(&mut self, out: &mut StepDerivatives) -> Result<(), SimError> {
        self.engine.step_derivatives(out)
    }

    /// The world's fingerprint ([`snapshot::fingerprint`]): a snapshot restores only into a
    /// world with the same one.
    pub fn fingerprint(&self) -> String {
        snapshot::fingerprint(&self.scene, self.engine.name(), &self.bodies, &self.layout.joints)
    }

    /// An [`SimError::Unsupported`] error naming the engine and `what`, unless `can`.
    fn require(&self, can: bool, what: &str) -> Result<(), SimError> {
        if can {
            Ok(())
        } else {
            Err(unsupported(self.engine.name(), what))
        }
    }

    /// Non-fatal remarks of the engine's load (e.g. a URDF's repaired inertias).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// What the engine can do beyond stepping (checkpoints, pushes, ...): the world's methods
    /// for what it cannot fail with [`SimError::Unsupported`].
    pub fn capabilities(&self) -> Capabilities {
        self.caps
    }

    /// The scene's robots as compiled, in scene order: each one's own model and URDF geometry
    /// (visual and collision elements, mesh files located) and the world body of each of its
    /// links (what a viewer draws, without loading the files again).
    pub fn robots(&self) -> &[RobotInfo] {
        &self.robots
    }

    /// The scene.
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// The engine (read only: everything that changes the simulation goes through the world,
    /// which keeps its body states in step with the engine).
    pub fn engine(&self) -> &dyn Engine {
        &*self.engine
    }

    /// The time step (s).
    pub fn dt(&self) -> f64 {
        self.engine.dt()
    }

    /// Position of a one-dof joint by name (rad or m).
    pub fn joint_position(&self, joint: &str) -> Result<f64, SimError> {
        Ok(self.engine.joint_state(self.layout.one_dof(joint)?).q)
    }

    /// Velocity of a one-dof joint by name (rad/s or m/s).
    pub fn joint_velocity(&self, joint: &str) -> Result<f64, SimError> {
        Ok(self.engine.joint_state(self.layout.one_dof(joint)?).dq)
    }

    /// The torque (force) set on a one-dof joint by name.
    pub fn joint_torque(&self, joint: &str) -> Result<f64, SimError> {
        Ok(self.engine.joint_torque(self.layout.one_dof(joint)?))
    }

    /// Sets the torque (force) of a one-dof joint by name, applied from the next step on.
    pub fn set_joint_torque(&mut self, joint: &str, torque: f64) -> Result<(), SimError> {
        let k = self.layout.one_dof(joint)?;
        self.engine.set_joint_torque(k, torque);
        Ok(())
    }

    /// Sets the target of a joint's actuator by name (torque, position or speed, by its mode),
    /// used from the next step on.
    pub fn set_joint_target(&mut self, joint: &str, target: f64) -> Result<(), SimError> {
        let k = self.layout.one_dof(joint)?;
        self.engine.set_target(k, target)
    }

    /// Pushes body `body` (by name, `robot/link` for a robot's link) for `duration` seconds
    /// (rounded to whole steps, at least one) from the next step on: `force` (N) at the body
    /// frame's origin and `torque` (N·m), both in world axes. A force `F` at a point `p`
    /// (world) is the same push with torque `(p − o) × F`, `o` the body's origin
    /// ([`World::state`]'s `pose.translation`). Pushes add up; the scene's `perturbations`
    /// are the same thing from a file.
    pub fn apply_wrench(&mut self, body: &str, force: Vec3, torque: Vec3, duration: f64) -> Result<(), SimError> {
        self.require(self.caps.wrenches, "external wrenches (apply_wrench)")?;
        let b = self.body_index(body).ok_or_else(|| SimError::Input(format!("no body named '{body}'")))?;
        self.engine.apply_wrench(b, force, torque, duration)
    }

    /// Registers extra joint forces ([`crate::JointForces`], Choreonoid's BodyCustomizer) on
    /// the named one-dof joints (`out[i]` of the forces is joint `joints[i]`'s), applied from
    /// the next step on, after the scene's springs and dampers and earlier registrations.
    /// A robot's joints: [`World::robot_joints`].
    pub fn add_joint_forces(&mut self, joints: &[&str], forces: Box<dyn crate::JointForces>) -> Result<(), SimError> {
        self.require(self.caps.joint_forces, "custom joint forces (add_joint_forces)")?;
        let ks = joints.iter().map(|n| self.layout.one_dof(n)).collect::<Result<Vec<_>, _>>()?;
        self.engine.add_joint_forces(&ks, forces)
    }

    /// The one-dof joints of a robot (`robot/joint` names, in model order).
    pub fn robot_joints(&self, robot: &str) -> Vec<String> {
        let prefix = format!("{robot}/");
        self.layout.joints.iter().filter(|n| n.starts_with(&prefix)).cloned().collect()
    }

    /// The track surfaces (bodies with `track`) by name.
    pub fn tracks(&self) -> &[String] {
        &self.layout.tracks
    }

    /// A track surface's speed command (m/s) by name.
    pub fn track_speed(&self, track: &str) -> Result<f64, SimError> {
        let k = self.track_index(track)?;
        Ok(self.engine.track_speeds()[k])
    }

    /// Sets a track surface's speed (m/s) by name, used from the next step on.
    pub fn set_track_speed(&mut self, track: &str, speed: f64) -> Result<(), SimError> {
        let k = self.track_index(track)?;
        self.engine.set_track_speed(k, speed)
    }

    fn track_index(&self, track: &str) -> Result<usize, SimError> {
        self.layout.track(track).ok_or_else(|| SimError::UnknownTrack {
            track: track.to_string(),
        })
    }

    /// Every sensor's reading after the last step, in the order of the layout's sensors
    /// ([`Layout::sensors`]; see [`Engine::readings`]).
    pub fn readings(&self) -> &[[f64; 6]] {
        self.engine.readings()
    }

    /// A sensor's reading by name: 3 values (accelerometer, gyro: x, y, z) or 6 (force: fx, fy,
    /// fz, tx, ty, tz), sensor axes.
    pub fn sensor(&self, name: &str) -> Result<&[f64], SimError> {
        let i = self.layout.sensor(name).ok_or_else(|| SimError::UnknownSensor {
            sensor: name.to_string(),
        })?;
        Ok(&self.engine.readings()[i][..self.layout.sensors[i].width])
    }

    /// The joint, actuator and sensor arrays by name (resolved once when the world was built).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Index of a one-dof joint by name, in the order of [`World::one_dof_joints`].
    pub fn joint_index(&self, name: &str) -> Option<usize> {
        self.layout.joint(name)
    }

    /// The names of the one-dof joints, in the order of [`World::write_joint_states`].
    pub fn one_dof_joints(&self) -> &[String] {
        &self.layout.joints
    }

    /// Writes position, velocity and driving torque of every one-dof joint (as many as `out`
    /// holds).
    pub fn write_joint_states(&self, out: &mut [JointState]) {
        let n = out.len().min(self.layout.joints.len());
        self.engine.write_joint_states(&mut out[..n]);
    }

    /// Writes each one-dof joint's commanded position now (`None`: no position servo), in the
    /// order of [`World::one_dof_joints`] (see [`Engine::position_target`]).
    pub fn write_position_targets(&self, out: &mut [Option<f64>]) {
        let n = out.len().min(self.layout.joints.len());
        self.engine.write_position_targets(&mut out[..n]);
        out[n..].fill(None);
    }

    /// The bodies, in the order of [`World::states`].
    pub fn bodies(&self) -> &[BodyInfo] {
        &self.bodies
    }

    /// Index of a body by name.
    pub fn body_index(&self, name: &str) -> Option<usize> {
        self.bodies.iter().position(|b| b.name == name)
    }

    /// Current state of every body.
    pub fn states(&self) -> &[BodyState] {
        &self.states
    }

    /// Current state of a body by name.
    pub fn state(&self, name: &str) -> Option<&BodyState> {
        self.body_index(name).map(|i| &self.states[i])
    }

    /// Simulated time (s).
    pub fn time(&self) -> f64 {
        self.engine.time()
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.engine.steps()
    }

    /// Contacts of the last step, with their forces.
    pub fn contacts(&self) -> &[ContactInfo] {
        self.engine.contacts()
    }

    /// Net contact wrench on each body over the last step: (force, torque about the body-frame
    /// origin), world axes. The one implementation (engines report contacts, the world sums).
    pub fn contact_wrenches(&self) -> Vec<(Vec3, Vec3)> {
        let mut out = vec![(Vec3::zeros(), Vec3::zeros()); self.bodies.len()];
        for c in self.engine.contacts() {
            for (b, f) in [(c.body_b, c.force), (c.body_a, -c.force)] {
                let o = self.states[b].pose.translation;
                out[b].0 += f;
                out[b].1 += (c.point - o).cross(&f);
            }
        }
        out
    }

    /// Total mechanical energy (J).
    pub fn energy(&self) -> f64 {
        self.engine.energy()
    }

    /// Numerical trouble met so far (unconverged solves, bodies moving more than their size
    /// in a step); [`crate::engine::Diagnostics::warnings`] words it.
    pub fn diagnostics(&self) -> crate::engine::Diagnostics {
        self.engine.report().diagnostics
    }

    /// The last step's constraint solve (sweeps, final residual).
    pub fn last_solve(&self) -> crate::solver::SolveStats {
        self.engine.report().last_solve
    }

    /// How many bodies sleep after the last step (`engine.sleep`; an error when the engine
    /// does not report it).
    pub fn sleeping_bodies(&self) -> Result<usize, SimError> {
        self.require(self.caps.sleep, "sleeping bodies (sleeping_bodies)")?;
        self.engine.report().sleeping.ok_or_else(|| unsupported(self.engine.name(), "sleeping bodies (sleeping_bodies)"))
    }

    /// Stage times accumulated over every step taken while [`World::time_stages`] was on
    /// (zeros otherwise).
    pub fn stage_times(&self) -> StageTimes {
        self.times
    }

    /// Each one-dof joint's limits and actuator, in the order of [`World::one_dof_joints`].
    pub fn joint_infos(&self) -> &[crate::engine::JointInfo] {
        &self.layout.joint_infos
    }

    /// [`World::set_joint_target`] for the `k`-th joint of [`World::one_dof_joints`] (no name
    /// lookup: for callers that command every actuator each step).
    pub fn set_one_dof_target(&mut self, k: usize, target: f64) -> Result<(), SimError> {
        if k >= self.layout.joints.len() {
            return Err(SimError::Input(format!(
                "joint index {k} is out of range: the world has {} one-dof joints",
                self.layout.joints.len()
            )));
        }
        self.engine.set_target(k, target)
    }

    /// [`World::set_joint_torque`] for the `k`-th joint of [`World::one_dof_joints`].
    pub fn set_one_dof_torque(&mut self, k: usize, torque: f64) -> Result<(), SimError> {
        if k >= self.layout.joints.len() {
            return Err(SimError::Input(format!(
                "joint index {k} is out of range: the world has {} one-dof joints",
                self.layout.joints.len()
            )));
        }
        self.engine.set_joint_torque(k, torque);
        Ok(())
    }
}

/// A controller's checkpoint error, naming it by its registration order.
fn controller_error(i: usize, what: &str, reason: String) -> SimError {
    SimError::Checkpoint(format!("controller {i} (registration order) cannot be {what}: {reason}"))
}

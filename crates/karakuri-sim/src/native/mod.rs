//! The native engine: one karakuri [`Model`] for the whole world, velocity-level time stepping
//! in joint space with Springhead's contact model.
//!
//! As MuJoCo's `mjModel` / `mjData`, the engine is [`SimModel`] (the description, built once
//! by [`SimModel::from_scene`], never written afterwards: worlds may share it through an
//! [`Arc`]), [`SimState`] (what a step starts from and carries on, and the run's counters),
//! [`StepData`] (the workspace the stages hand results through, sized at load, and what was
//! registered on the world after it was built) and [`StepOutput`] (what the last step reports).
//! A step is the fixed list of stage functions of [`step`], each over those four; RK4
//! (contact-free steps) is one of them and calls the same functions at its four evaluation
//! points.
//!
//! Layers, each importing only those below it: the model's parts ([`parts`]) → the model
//! ([`build`]) → the dynamics terms ([`dynamics`]) → state, outputs and workspace ([`state`],
//! [`output`], [`work`]) → the row writers and stage helpers → the stages → the step.

pub mod actuators;
pub mod build;
mod checkpoint;
pub mod contact;
pub mod derivatives;
pub mod dynamics;
pub mod external;
pub mod impact;
pub mod integrate;
pub mod joint_forces;
pub mod joint_rows;
pub mod limits;
pub mod loop_drift;
pub mod loops;
pub mod noise;
pub mod output;
pub mod parts;
pub mod plan;
pub mod rk4;
pub mod sensors;
pub mod settings;
pub mod slack;
pub mod sleep;
pub mod split;
pub mod stages;
pub mod state;
pub mod step;
pub mod tracks;
pub mod work;

use std::sync::Arc;

use karakuri::algorithms;
use karakuri::model::JointType;
use karakuri::spatial::{Se3, Vec3};
use karakuri::Model;
use nalgebra::DVector;

pub use build::{SimBody, SimModel};
pub use output::StepOutput;
pub use state::SimState;
pub use work::StepData;

use crate::engine::{BodyState, Capabilities, ContactInfo, Description, Engine, JointState, Report, StageTimes};
use crate::scene::{ActuatorMode, Scene, Target};
use crate::solver::SolveStats;
use crate::SimError;

/// The reduced-coordinate engine (Featherstone + contact LCP). See the crate docs.
///
/// The four parts are read through [`NativeEngine::sim_model`], [`NativeEngine::state`],
/// [`NativeEngine::work`] and [`NativeEngine::output`]; only the engine's own methods change
/// them, so the kinematics in the workspace always belong to the state.
pub struct NativeEngine {
    /// The world's description (shared, never written).
    model: Arc<SimModel>,
    /// The state.
    state: SimState,
    /// The step's workspace (kinematics of the state, contacts, rows, solver buffers) and the
    /// world's registrations.
    work: StepData,
    /// What the last step reported.
    out: StepOutput,
    /// Whether the step times its stages into `out.times` ([`Engine::time_stages`]).
    timing: bool,
    /// The step derivatives' workspace, made at the first [`Engine::step_derivatives`].
    deriv: Option<Box<derivatives::DerivWork>>,
    /// How [`Engine::write_states`] places each body (`(nbodies)`, decided at load: a body's
    /// frame and its joint's type never change).
    body_frames: Vec<BodyFrame>,
}

/// How a body's world state follows from its joint's ([`Engine::write_states`]).
#[derive(Clone, Copy, PartialEq)]
enum BodyFrame {
    /// The body's frame is its joint's (the usual case): the joint's placement, no product by
    /// the identity (exact: the same bits).
    Own,
    /// Its own frame on a free flyer: the origin's velocity is the integrated world velocity.
    Free,
    /// A frame placed on its joint: the product.
    Placed,
}

impl BodyFrame {
    /// The frames of `model`'s bodies.
    fn of(model: &SimModel) -> Vec<BodyFrame> {
        let types = &model.model.joint_types;
        let of = |b: &SimBody| match (b.placement == Se3::identity(), b.joint) {
            (false, _) => BodyFrame::Placed,
            (true, j) if j != 0 && types[j] == JointType::FreeFlyer => BodyFrame::Free,
            (true, _) => BodyFrame::Own,
        };
        model.bodies.iter().map(of).collect()
    }
}

impl NativeEngine {
    /// Builds the engine of a scene, at the scene's initial state with its kinematics fresh.
    pub fn new(scene: &Scene) -> Result<NativeEngine, SimError> {
        NativeEngine::from_model(Arc::new(SimModel::from_scene(scene)?)).map_err(|e| match e {
            // an initial state the step would refuse (q0 / qd0 not finite, faster than
            // engine.max_speed) is refused at load, naming the body
            SimError::Diverged { body, reason, .. } => SimError::Scene {
                file: scene.source.as_ref().map_or(String::new(), |p| p.display().to_string()),
                path: format!("bodies['{body}']"),
                reason: format!("initial state: {reason} (lower its q0 / qd0, or raise engine.max_speed)"),
            },
            e => e,
        })
    }

    /// An engine of a built model (shared with other engines: a step never writes it), at the
    /// model's initial state with its kinematics fresh. An initial state the step would refuse
    /// is [`SimError::Diverged`].
    pub fn from_model(model: Arc<SimModel>) -> Result<NativeEngine, SimError> {
        let mut state = SimState::new(&model);
        stages::guard(&model, &state)?;
        let mut work = StepData::new(&model);
        let mut out = StepOutput::new(&model);
        work.reserve(&model, &mut state, &mut out, 0);
        dynamics::compute_terms(&model, &state.q, &state.v, &mut work.data);
        let body_frames = BodyFrame::of(&model);
        Ok(NativeEngine { model, state, work, out, timing: false, deriv: None, body_frames })
    }

    /// The world's description.
    pub fn sim_model(&self) -> &SimModel {
        &self.model
    }

    /// The world's description, to build more engines of it ([`NativeEngine::from_model`]).
    pub fn shared_model(&self) -> Arc<SimModel> {
        Arc::clone(&self.model)
    }

    /// What the last step reported (readings, applied torques, contacts, solve statistics).
    pub fn output(&self) -> &StepOutput {
        &self.out
    }

    /// The state.
    pub fn state(&self) -> &SimState {
        &self.state
    }

    /// The workspace of the last step (and the kinematics of the state).
    pub fn work(&self) -> &StepData {
        &self.work
    }

    /// The world's multibody model.
    pub fn model(&self) -> &Model {
        &self.model.model
    }

    /// Joint positions.
    pub fn q(&self) -> &DVector<f64> {
        &self.state.q
    }

    /// Joint velocities (free flyers: `[linear; angular]` in the body frame).
    pub fn v(&self) -> &DVector<f64> {
        &self.state.v
    }

    /// Simulated bodies.
    pub fn bodies(&self) -> &[SimBody] {
        &self.model.bodies
    }

    /// Statistics of the last constraint solve.
    pub fn last_solve(&self) -> SolveStats {
        self.out.last_solve
    }

    /// Sets actuator `a`'s target after checking it: finite, and within the effort limit
    /// (torque), the velocity limit (velocity) or the joint's position limits (position).
    fn command(&mut self, a: usize, target: f64) -> Result<(), SimError> {
        crate::compile::check_command(&self.model.actuators, &self.model.limits, a, target, self.state.time)?;
        self.state.targets[a] = Target::Value(target);
        Ok(())
    }
}

impl Engine for NativeEngine {
    fn name(&self) -> &str {
        "native"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            checkpoints: true,
            wrenches: true,
            joint_forces: true,
            stage_timing: true,
            sleep: true,
            tracks: true,
            position_targets: true,
            contact_friction: true,
        }
    }

    fn describe(&self) -> Description {
        let m = &self.model;
        Description {
            bodies: m.infos.clone(),
            joints: m.one_dof_names.clone(),
            joint_infos: crate::compile::joint_infos(&m.model, &m.one_dof, &m.one_dof_actuator, &m.actuators, &m.limits),
            other_joints: crate::compile::other_joints(&m.model),
            sensors: m.sensor_infos.clone(),
            tracks: m.track_names.clone(),
            robots: Arc::clone(&m.robots),
            warnings: m.warnings.clone(),
        }
    }

    fn step(&mut self) -> Result<(), SimError> {
        step::step(&self.model, &mut self.state, &mut self.work, &mut self.out, self.timing)
    }

    fn write_states(&self, out: &mut [BodyState]) {
        let (model, data) = (&self.model.model, &self.work.data);
        // `new` and every `step` end with the kinematics stage at the state; a step that fails
        // does so before it writes `data` (the checked reads after the step's own writes, in
        // SHAKE and RK4, follow the algorithm that makes them fresh)
        let o_m_i = data.joint_placements().expect("the kinematics stage ends new and step");
        let vel = data.joint_velocities().expect("the kinematics stage ends new and step");
        for ((o, b), frame) in out.iter_mut().zip(&self.model.bodies).zip(&self.body_frames) {
            let x = &o_m_i[b.joint];
            let v = &vel[b.joint];
            *o = match frame {
                BodyFrame::Free => {
                    // exactly the integrated world velocity of the origin
                    let iv = model.idx_v[b.joint];
                    let lin = Vec3::new(self.state.v[iv], self.state.v[iv + 1], self.state.v[iv + 2]);
                    BodyState { pose: *x, linear: x.rotation * lin, angular: x.rotation * v.angular }
                }
                BodyFrame::Own | BodyFrame::Placed => {
                    let pose = if *frame == BodyFrame::Own { *x } else { x.compose(&b.placement) };
                    let vw = x.act_motion(v);
                    BodyState { pose, linear: vw.linear + vw.angular.cross(&pose.translation), angular: vw.angular }
                }
            };
        }
    }

    fn joint_state(&self, k: usize) -> JointState {
        let (model, s) = (&self.model.model, &self.state);
        let j = self.model.one_dof[k];
        let (iq, iv) = (model.idx_q[j], model.idx_v[j]);
        JointState {
            q: s.q[iq],
            dq: s.v[iv],
            tau: s.tau_user[iv] + self.model.one_dof_actuator[k].map_or(0.0, |a| self.out.act_tau[a]),
        }
    }

    fn write_joint_speeds(&self, out: &mut [f64]) {
        let (idx_v, v) = (&self.model.model.idx_v, &self.state.v);
        for (o, &j) in out.iter_mut().zip(&self.model.one_dof) {
            *o = v[idx_v[j]];
        }
    }

    fn time(&self) -> f64 {
        self.state.time
    }

    fn steps(&self) -> u64 {
        self.state.steps
    }

    fn dt(&self) -> f64 {
        self.model.dt
    }

    fn contacts(&self) -> &[ContactInfo] {
        &self.out.contacts
    }

    fn readings(&self) -> &[[f64; 6]] {
        &self.out.readings
    }

    fn report(&self) -> Report {
        let (of_joint, sl) = (&self.model.sleep.trees.of_joint, &self.state.sleep);
        let sleeping = self.model.bodies.iter().filter(|b| b.joint != 0 && sl.asleep(of_joint[b.joint])).count();
        Report {
            diagnostics: self.state.diagnostics,
            last_solve: self.out.last_solve,
            stage_times: self.out.times,
            sleeping: Some(sleeping),
        }
    }

    /// Kinetic plus gravitational energy. Not part of the step: it evaluates on a copy of
    /// the kinematics buffers.
    fn energy(&self) -> f64 {
        let (m, s) = (&self.model.model, &self.state);
        let mut d = self.work.data.clone();
        algorithms::kinetic_energy(m, &mut d, &s.q, &s.v)
            + algorithms::potential_energy(m, &mut d, &s.q)
    }

    fn joint_torque(&self, k: usize) -> f64 {
        self.state.tau_user[self.model.model.idx_v[self.model.one_dof[k]]]
    }

    fn set_joint_torque(&mut self, k: usize, torque: f64) {
        let iv = self.model.model.idx_v[self.model.one_dof[k]];
        self.state.tau_user[iv] = torque;
    }

    fn set_target(&mut self, k: usize, target: f64) -> Result<(), SimError> {
        match self.model.one_dof_actuator[k] {
            Some(a) => self.command(a, target),
            None => Err(SimError::NoActuator {
                joint: self.model.one_dof_names[k].clone(),
            }),
        }
    }

    fn position_target(&self, k: usize) -> Option<f64> {
        self.model.one_dof_actuator[k]
            .filter(|&a| self.model.actuators[a].mode == ActuatorMode::Position)
            .map(|a| self.state.targets[a].at(self.state.time).0)
    }

    fn track_speeds(&self) -> &[f64] {
        &self.state.track_speeds
    }

    fn set_track_speed(&mut self, k: usize, speed: f64) -> Result<(), SimError> {
        let Some(name) = self.model.track_names.get(k) else {
            return Err(SimError::UnknownTrack { track: format!("#{k}") });
        };
        if !speed.is_finite() {
            return Err(SimError::BadTrackSpeed {
                track: name.clone(),
                time: self.state.time,
                reason: format!("speed command {speed} is not finite"),
            });
        }
        self.state.track_speeds[k] = speed;
        // a moving surface carries what rests on it
        self.state.sleep.wake_all();
        Ok(())
    }

    fn apply_wrench(&mut self, body: usize, force: Vec3, torque: Vec3, duration: f64) -> Result<(), SimError> {
        let name = || self.model.bodies.get(body).map_or(format!("#{body}"), |b| b.name.clone());
        if body >= self.model.bodies.len() {
            return Err(SimError::Input(format!("no body {}", name())));
        }
        if !(force.iter().chain(torque.iter()).all(|x| x.is_finite()) && duration > 0.0 && duration.is_finite()) {
            return Err(SimError::Input(format!(
                "a wrench on '{}' needs a finite force and torque and a positive duration (got {force:?}, {torque:?}, {duration} s)",
                name()
            )));
        }
        let s = &mut self.state;
        let window = (s.steps, s.steps + external::window_steps(duration, self.model.dt));
        let push = external::push_on(&self.model.bodies, body, force, torque, Vec3::zeros(), window)
            .ok_or_else(|| SimError::Input(format!("body '{}' is static: nothing to push", name())))?;
        // pushes that ended are dropped here, outside the step
        s.pushes.retain(|p| p.to_step > s.steps);
        s.pushes.push(push);
        Ok(())
    }

    fn add_joint_forces(&mut self, joints: &[usize], forces: Box<dyn crate::JointForces>) -> Result<(), SimError> {
        let m = &self.model.model;
        let iq = joints.iter().map(|&k| m.idx_q[self.model.one_dof[k]]).collect();
        let dof = joints.iter().map(|&k| m.idx_v[self.model.one_dof[k]]).collect();
        // beside the model, which stays as built: the workspace's registrations
        self.work.force_work.fit(joints.len());
        let set = joint_forces::JointForceSet { iq, dof, forces };
        self.work.registered.add(set, &self.model.sleep.trees);
        self.state.sleep.wake_all();
        Ok(())
    }

    fn save_state(&self) -> Result<serde_json::Value, SimError> {
        self.save()
    }

    fn restore_state(&mut self, state: &serde_json::Value) -> Result<(), SimError> {
        self.restore(state)
    }

    fn change(&mut self, setting: &crate::engine::Setting) -> Result<usize, SimError> {
        use crate::engine::Setting;
        let pairs = matches!(setting, Setting::ContactMode { .. } | Setting::SelfCollision { .. });
        if pairs && self.model.engine.integrator == crate::scene::Integrator::Rk4 {
            // an rk4 world was accepted because nothing can touch; its pairs stay as loaded
            return Err(crate::engine::unsupported("native (engine.integrator: rk4, which steps no contacts; use auto)", &format!("changing {} while running", setting.what())));
        }
        // the model is shared with the worlds of `Batch::copies`: this world's first change
        // copies it (the joint-force sets stay shared)
        let m = Arc::make_mut(&mut self.model);
        let reached = settings::apply(
            settings::Changeable {
                model: &mut m.model,
                collider: &mut m.collider,
                contact: &mut m.contact,
                plan: &mut m.plan,
                loops: !m.loops.is_empty(),
            },
            setting,
        );
        // what the next step reads of the state's side: the bias forces (gravity) at the
        // state, buffers for contacts the plan may now run, every island awake
        dynamics::compute_terms(&self.model, &self.state.q, &self.state.v, &mut self.work.data);
        self.work.reserve(&self.model, &mut self.state, &mut self.out, 0);
        self.state.sleep.wake_all();
        Ok(reached)
    }

    fn set_joint_states(&mut self, q: Option<&[f64]>, dq: Option<&[f64]>) -> Result<(), SimError> {
        let (m, s) = (&self.model, &mut self.state);
        for (k, &j) in m.one_dof.iter().enumerate() {
            if let Some(q) = q {
                s.q[m.model.idx_q[j]] = q[k];
            }
            if let Some(dq) = dq {
                s.v[m.model.idx_v[j]] = dq[k];
            }
        }
        // a state set by hand: no loop prediction from the last step, every island awake
        s.loop_predicted.clear();
        s.sleep.wake_all();
        dynamics::compute_terms(m, &s.q, &s.v, &mut self.work.data);
        Ok(())
    }

    fn step_derivatives(&mut self, out: &mut crate::derivatives::StepDerivatives) -> Result<(), SimError> {
        let dw = self.deriv.get_or_insert_with(|| Box::new(derivatives::DerivWork::new(&self.model)));
        derivatives::step_derivatives(&self.model, &self.state, &self.work, dw, out)
    }

    fn time_stages(&mut self, on: bool) -> Result<(), SimError> {
        self.timing = on;
        // an untimed step leaves the times alone: zeros from now on
        self.out.times = StageTimes::default();
        Ok(())
    }
}

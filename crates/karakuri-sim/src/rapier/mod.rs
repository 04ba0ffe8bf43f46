//! The second engine: [rapier](https://rapier.rs) (`rapier3d-f64`) behind the [`Engine`]
//! trait, as Choreonoid plugs in ODE (feature `rapier`; `engine.type: rapier` in a scene,
//! `karakuri simulate --engine rapier`).
//!
//! Built once from the compiled scene ([`RapierEngine::new`], `build.rs`): free bodies are rapier rigid
//! bodies; hinges, sliders and URDF robots are rapier multibodies (reduced coordinates, one per
//! tree; a floating base is the multibody's free root); loop closures are impulse joints;
//! shapes are the parry shapes the compile step makes (same parry, rapier's colliders take
//! them as they are), with the pair table (`contact_pairs: none`, exclusions, parent/child) as a
//! contact-pair filter; materials give friction and restitution (averaged, as the native
//! engine does). Actuators: torque mode is a force pair on the joint's two bodies, position mode
//! a rapier motor with `kp`, `kd` (force-based) and the effort limit, velocity mode a stiff
//! velocity motor bounded by the effort limit. What rapier cannot express is refused at load
//! (see `check.rs`).
//!
//! A step: user and torque-mode actuator forces, motor targets, `PhysicsPipeline::step`, then
//! the guard (non-finite or runaway velocities), the contacts with their forces, and the
//! sensors from the bodies' velocities before and after the step (finite difference).
//!
//! Reported contact forces ([`ContactInfo::force`], the world's contact wrenches) are the normal
//! part only: the normal impulse of each contact point over the step / dt. Friction is left
//! out: rapier 0.36 keeps a point's total friction impulse (`ContactData::tangent_impulse`) in
//! its solver's tangent basis, chosen per step from the bodies' velocities and not kept, and
//! gives in world axes only the last substep's friction impulse (`warmstart_tangent_world`);
//! rebuilding the basis from that one fails whenever the last substep has no friction. So on
//! rapier a sliding or sticking contact's reported force lacks its tangential part (the motion
//! has it: friction acts in the solve).

mod build;
mod check;

use std::time::Instant;

use karakuri::spatial::Vec3;
use rapier3d_f64::math::Vector;
use rapier3d_f64::prelude::*;

use build::{se3_from, vec_from, vec_to, Dof};

use crate::engine::{BodyState, Capabilities, ContactInfo, Description, Engine, JointState, Report, StageTimes};
use crate::compile::{compile, CompiledWorld};
use crate::joint_forces::JointForces;
use crate::scene::{ActuatorMode, Scene, SensorKind, Target};
use crate::SimError;

/// Contact-pair filter: the native engine's pair table (which shape pairs may touch).
struct PairFilter {
    /// Shapes.
    n: usize,
    /// `allowed[i * n + j]`.
    allowed: Vec<bool>,
}

impl PhysicsHooks for PairFilter {
    fn filter_contact_pair(&self, c: &PairFilterContext) -> Option<SolverFlags> {
        let i = c.colliders[c.collider1].user_data as usize;
        let j = c.colliders[c.collider2].user_data as usize;
        self.allowed[i * self.n + j].then_some(SolverFlags::COMPUTE_RIGID_IMPULSES)
    }
}

/// rapier's world and what the step needs beside it.
struct Physics {
    gravity: Vector,
    params: IntegrationParameters,
    pipeline: PhysicsPipeline,
    islands: IslandManager,
    broad_phase: BroadPhaseBvh,
    narrow_phase: NarrowPhase,
    bodies: RigidBodySet,
    colliders: ColliderSet,
    impulse_joints: ImpulseJointSet,
    multibody_joints: MultibodyJointSet,
    soft_bodies: SoftBodySet,
    ccd: CCDSolver,
    hooks: PairFilter,
}

/// The rapier engine (see the module docs).
pub struct RapierEngine {
    /// The compiled world (read only).
    model: CompiledWorld,
    physics: Physics,
    /// Rigid body of each world-model joint `(njoints)`.
    joint_body: Vec<Option<RigidBodyHandle>>,
    /// The body on each joint's parent side `(njoints)`.
    parent_body: Vec<Option<RigidBodyHandle>>,
    /// The one-dof joints (order of `model.one_dof`).
    dofs: Vec<Dof>,
    /// World body of each collider's shape.
    shape_body: Vec<usize>,
    /// User torques per one-dof joint.
    tau_user: Vec<f64>,
    /// The torques applied in this step per one-dof joint (user's plus torque-mode actuators').
    tau_work: Vec<f64>,
    /// Actuator targets (the scene's, or commands).
    targets: Vec<Target>,
    /// Index into `dofs` of each velocity index of the model (one-dof joints only).
    dof_of_v: Vec<usize>,
    /// Each actuator's applied torque over the last step (estimated for motors).
    act_tau: Vec<f64>,
    /// Positions, velocities and forces of one set of the model's joint forces while it is
    /// evaluated, sized at load to the largest set (a step allocates nothing).
    force_q: Vec<f64>,
    force_dq: Vec<f64>,
    force_out: Vec<crate::joint_forces::JointForce>,
    /// Index into `dofs` of each actuator.
    act_dof: Vec<usize>,
    steps: u64,
    time: f64,
    contacts: Vec<ContactInfo>,
    readings: Vec<[f64; 6]>,
    /// World velocity of each accelerometer's point at the step's start.
    sensor_start: Vec<Vec3>,
    times: StageTimes,
    warnings: Vec<String>,
}

impl RapierEngine {
    /// Builds the engine of a scene; a scene rapier cannot express is an error naming the key.
    pub fn new(scene: &Scene) -> Result<RapierEngine, SimError> {
        let model = compile(scene)?;
        let mut warnings = model.warnings.clone();
        warnings.extend(check::check(scene, &model)?);
        let b = build::build(scene, &model)?;
        let mut params = IntegrationParameters {
            dt: model.dt,
            normalized_prediction_distance: scene.contact.prediction_distance,
            normalized_max_corrective_velocity: scene.contact.max_depenetration_speed,
            // one manifold per pair, as parry gives it (contacts are reported per manifold point)
            contact_clustering: false,
            ..IntegrationParameters::default()
        };
        params.warmstart_joints = true;
        let n = model.collider.shapes.len();
        let physics = Physics {
            gravity: vec_to(&model.model.gravity_vector()),
            params,
            pipeline: PhysicsPipeline::new(),
            islands: IslandManager::new(),
            broad_phase: BroadPhaseBvh::new(),
            narrow_phase: NarrowPhase::new(),
            bodies: b.bodies,
            colliders: b.colliders,
            impulse_joints: b.impulse_joints,
            multibody_joints: b.multibody_joints,
            soft_bodies: SoftBodySet::new(),
            ccd: CCDSolver::new(),
            hooks: PairFilter { n, allowed: b.allowed },
        };
        let act_dof = model
            .actuators
            .iter()
            .map(|a| {
                b.dofs
                    .iter()
                    .position(|d| model.model.idx_v[d.joint] == a.dof)
                    .expect("actuated joints are one-dof")
            })
            .collect();
        let na = model.actuators.len();
        let nforce = model.springs.dof.len();
        let mut e = RapierEngine {
            targets: model.actuators.iter().map(|a| a.target.clone()).collect(),
            act_tau: vec![0.0; na],
            force_q: vec![0.0; nforce],
            force_dq: vec![0.0; nforce],
            force_out: vec![crate::joint_forces::JointForce::default(); nforce],
            act_dof,
            tau_user: vec![0.0; b.dofs.len()],
            tau_work: vec![0.0; b.dofs.len()],
            dof_of_v: {
                let mut map = vec![usize::MAX; model.model.nv];
                for (k, d) in b.dofs.iter().enumerate() {
                    map[model.model.idx_v[d.joint]] = k;
                }
                map
            },
            joint_body: b.joint_body,
            parent_body: b.parent_body,
            dofs: b.dofs,
            shape_body: b.shape_body,
            physics,
            steps: 0,
            time: 0.0,
            contacts: Vec::new(),
            readings: vec![[0.0; 6]; model.sensors.len()],
            sensor_start: vec![Vec3::zeros(); model.sensors.len()],
            times: StageTimes::default(),
            warnings,
            model,
        };
        e.set_motors();
        Ok(e)
    }

    /// The rigid body of a world-model joint's frame.
    fn body(&self, joint: usize) -> Option<&RigidBody> {
        self.joint_body[joint].map(|h| &self.physics.bodies[h])
    }

    /// World velocity of the point `p` (world) of the body of `joint`.
    fn point_velocity(&self, joint: usize, p: &Vec3) -> Vec3 {
        match self.body(joint) {
            Some(rb) => {
                let w = vec_from(rb.angvel());
                vec_from(rb.linvel()) + w.cross(&(p - vec_from(rb.center_of_mass())))
            }
            None => Vec3::zeros(),
        }
    }

    /// World placement of a world-model joint's frame.
    fn joint_pose(&self, joint: usize) -> karakuri::spatial::Se3 {
        self.body(joint)
            .map_or(karakuri::spatial::Se3::identity(), |rb| se3_from(rb.position()))
    }

    /// A one-dof joint's (position, velocity) from its multibody.
    fn dof_state(&self, d: &Dof) -> (f64, f64) {
        let (mb, link) = self.physics.multibody_joints.get(d.handle).expect("built");
        let l = mb.link(link).expect("its link");
        (l.joint().coords()[d.coord], mb.joint_velocity(l)[0])
    }

    /// Sets each position / velocity actuator's rapier motor for the coming step (targets at
    /// its end time, as the native engine).
    fn set_motors(&mut self) {
        let t = self.time + self.model.dt;
        for (a, act) in self.model.actuators.iter().enumerate() {
            let d = self.dofs[self.act_dof[a]];
            let (x, rate) = self.targets[a].at(t);
            let (mb, link) = self.physics.multibody_joints.get_mut(d.handle).expect("built");
            let data = &mut mb.link_mut(link).expect("its link").joint.data;
            match act.mode {
                // prescribed actuators are refused at load
                ActuatorMode::Torque | ActuatorMode::Prescribed => continue,
                ActuatorMode::Position => {
                    let rate = rate.clamp(-act.velocity_limit, act.velocity_limit);
                    data.set_motor(d.axis, x, rate, act.kp, act.kd);
                }
                // a stiff velocity servo: its time constant (1 µs) far below any step
                ActuatorMode::Velocity => {
                    data.set_motor_velocity(d.axis, x, 1e6);
                }
            }
            let model = if act.mode == ActuatorMode::Position {
                MotorModel::ForceBased
            } else {
                MotorModel::AccelerationBased
            };
            data.set_motor_model(d.axis, model);
            data.set_motor_max_force(
                d.axis,
                if act.effort_limit.is_finite() {
                    act.effort_limit
                } else {
                    f64::MAX
                },
            );
        }
    }

    /// Applies the user torques and torque-mode actuators as force pairs on each joint's two
    /// bodies (torques about the joint axis; for sliders forces along it at the joint origin).
    fn apply_joint_forces(&mut self) {
        let t = self.time + self.model.dt;
        for rb in self.physics.bodies.iter_mut() {
            rb.1.reset_forces(false);
            rb.1.reset_torques(false);
        }
        let mut tau = std::mem::take(&mut self.tau_work);
        tau.copy_from_slice(&self.tau_user);
        for (a, act) in self.model.actuators.iter().enumerate() {
            if act.mode == ActuatorMode::Torque {
                let x = self.targets[a].at(t).0.clamp(-act.effort_limit, act.effort_limit);
                self.act_tau[a] = x;
                tau[self.act_dof[a]] += x;
            }
        }
        // the model's joint forces (the scene's springs and dampers, URDF damping, forces
        // registered in Rust), explicit at the step's start state
        let mut q = std::mem::take(&mut self.force_q);
        let mut dq = std::mem::take(&mut self.force_dq);
        let mut out = std::mem::take(&mut self.force_out);
        let set = &self.model.springs;
        if !set.dof.is_empty() {
            let n = set.dof.len();
            for (i, &iv) in set.dof.iter().enumerate() {
                (q[i], dq[i]) = self.dof_state(&self.dofs[self.dof_of_v[iv]]);
            }
            set.forces.forces(self.time, &q[..n], &dq[..n], &mut out[..n]);
            for (i, &iv) in set.dof.iter().enumerate() {
                tau[self.dof_of_v[iv]] += out[i].tau;
            }
        }
        (self.force_q, self.force_dq, self.force_out) = (q, dq, out);
        for (k, d) in self.dofs.iter().enumerate() {
            if tau[k] == 0.0 {
                continue;
            }
            let x = self.joint_pose(d.joint);
            let axis = vec_to(&(x.rotation * d.local_axis)) * tau[k];
            let o = vec_to(&x.translation);
            let (child, parent) = (
                self.joint_body[d.joint].expect("a hinge's body"),
                self.parent_body[d.joint].expect("its parent"),
            );
            for (h, s) in [(child, 1.0), (parent, -1.0)] {
                let rb = &mut self.physics.bodies[h];
                if d.prismatic {
                    rb.add_force_at_point(axis * s, o, true);
                } else {
                    rb.add_torque(axis * s, true);
                }
            }
        }
        self.tau_work = tau;
    }

    /// The divergence guard: a non-finite or faster-than-`engine.max_speed` body.
    fn check_state(&self) -> Result<(), SimError> {
        let max = self.model.engine.max_speed;
        for (i, b) in self.model.bodies.iter().enumerate() {
            let Some(rb) = self.body(b.joint) else { continue };
            let (v, w) = (rb.linvel(), rb.angvel());
            let p = rb.position().translation;
            let bad = if !(v.is_finite() && w.is_finite() && p.is_finite()) {
                Some("non-finite state".to_string())
            } else if v.length().max(w.length()) > max {
                Some(format!(
                    "speed {:.3e} above engine.max_speed {max:e}",
                    v.length().max(w.length())
                ))
            } else {
                None
            };
            if let Some(reason) = bad {
                return Err(SimError::Diverged {
                    step: self.steps,
                    time: self.time,
                    body: self.model.bodies[i].name.clone(),
                    reason,
                });
            }
        }
        Ok(())
    }

    /// The contacts of the step with their forces (normal impulse / dt along the normal;
    /// friction is not included, see the module docs).
    fn collect_contacts(&mut self) {
        self.contacts.clear();
        let p = &self.physics;
        for pair in p.narrow_phase.contact_pairs() {
            if !pair.has_any_active_contact() {
                continue;
            }
            let (c1, c2) = (&p.colliders[pair.collider1], &p.colliders[pair.collider2]);
            let (a, b) = (
                self.shape_body[c1.user_data as usize],
                self.shape_body[c2.user_data as usize],
            );
            for mf in pair.manifolds() {
                let n = vec_from(mf.data.normal);
                for pt in &mf.points {
                    let p1 = vec_from(c1.position() * pt.local_p1);
                    let p2 = vec_from(c2.position() * pt.local_p2);
                    self.contacts.push(ContactInfo {
                        body_a: a,
                        body_b: b,
                        point: (p1 + p2) / 2.0,
                        normal: n,
                        depth: -pt.dist,
                        force: n * (pt.data.impulse / self.model.dt),
                    });
                }
            }
        }
    }

    /// World velocity of each accelerometer's point (the start of the finite difference).
    fn sensor_velocities(&mut self) {
        for (i, s) in self.model.sensors.iter().enumerate() {
            if s.kind == SensorKind::Accelerometer {
                let p = self.joint_pose(s.joint).transform_point(&s.placement.translation);
                self.sensor_start[i] = self.point_velocity(s.joint, &p);
            }
        }
    }

    /// Sensor readings: accelerometers `Rᵀ ((v⁺_p − v_p) / dt − g)` (the velocity change of the
    /// sensor point over the step: contact and joint impulses are in it), rate gyros `Rᵀ ω`.
    fn sensor_readings(&mut self) {
        let g = self.model.model.gravity_vector();
        for (i, s) in self.model.sensors.iter().enumerate() {
            let x = self.joint_pose(s.joint).compose(&s.placement);
            let rt = x.rotation.transpose();
            let r = match s.kind {
                SensorKind::Accelerometer => {
                    let v1 = self.point_velocity(s.joint, &x.translation);
                    rt * ((v1 - self.sensor_start[i]) / self.model.dt - g)
                }
                SensorKind::RateGyro => rt * self.body(s.joint).map_or(Vec3::zeros(), |rb| vec_from(rb.angvel())),
                _ => unreachable!("refused at load"),
            };
            self.readings[i] = [r.x, r.y, r.z, 0.0, 0.0, 0.0];
        }
    }

    /// Takes a command to actuator `a` once checked as every engine does
    /// ([`crate::compile::check_command`]).
    fn command(&mut self, a: usize, target: f64) -> Result<(), SimError> {
        crate::compile::check_command(&self.model.actuators, &self.model.limits, a, target, self.time)?;
        self.targets[a] = Target::Value(target);
        Ok(())
    }
}

impl Engine for RapierEngine {
    fn name(&self) -> &str {
        "rapier"
    }

    /// Stage timing only (accepted either way: rapier's step takes its four laps always, they
    /// are small beside its pipeline); contact forces are their normal part (module docs).
    fn capabilities(&self) -> Capabilities {
        Capabilities { stage_timing: true, ..Capabilities::default() }
    }

    fn describe(&self) -> Description {
        let m = &self.model;
        Description {
            bodies: m.infos.clone(),
            joints: m.one_dof_names.clone(),
            joint_infos: m.joint_infos(),
            other_joints: m.other_joints(),
            sensors: m.sensor_infos.clone(),
            tracks: Vec::new(),
            robots: std::sync::Arc::clone(&m.robots),
            warnings: self.warnings.clone(),
        }
    }

    fn step(&mut self) -> Result<(), SimError> {
        let start = Instant::now();
        self.sensor_velocities();
        self.set_motors();
        self.apply_joint_forces();
        let a = Instant::now();
        let p = &mut self.physics;
        p.pipeline.step(
            p.gravity,
            &p.params,
            &mut p.islands,
            &mut p.broad_phase,
            &mut p.narrow_phase,
            &mut p.bodies,
            &mut p.colliders,
            &mut p.impulse_joints,
            &mut p.multibody_joints,
            &mut p.soft_bodies,
            &mut p.ccd,
            &p.hooks,
            &(),
        );
        let b = Instant::now();
        self.steps += 1;
        self.time = self.steps as f64 * self.model.dt;
        self.check_state()?;
        let c = Instant::now();
        self.collect_contacts();
        for (i, act) in self.model.actuators.iter().enumerate() {
            let (q, dq) = self.dof_state(&self.dofs[self.act_dof[i]]);
            let (x, rate) = self.targets[i].at(self.time);
            let e = act.effort_limit;
            self.act_tau[i] = match act.mode {
                ActuatorMode::Torque => self.act_tau[i],
                // the force-based motor's law at the step's end state (its implicit solve)
                ActuatorMode::Position => (act.kp * (x - q)
                    + act.kd * (rate.clamp(-act.velocity_limit, act.velocity_limit) - dq))
                    .clamp(-e, e),
                ActuatorMode::Velocity | ActuatorMode::Prescribed => 0.0,
            };
        }
        self.sensor_readings();
        let d = Instant::now();
        self.times = StageTimes {
            actuation: a - start,
            integrate: b - a,
            check_state: c - b,
            sensor_readings: d - c,
            ..StageTimes::default()
        };
        Ok(())
    }

    fn write_states(&self, out: &mut [BodyState]) {
        for (o, b) in out.iter_mut().zip(&self.model.bodies) {
            *o = match self.body(b.joint) {
                None => BodyState {
                    pose: b.placement,
                    ..BodyState::default()
                },
                Some(rb) => {
                    let pose = se3_from(rb.position()).compose(&b.placement);
                    BodyState {
                        pose,
                        linear: self.point_velocity(b.joint, &pose.translation),
                        angular: vec_from(rb.angvel()),
                    }
                }
            };
        }
    }

    fn time(&self) -> f64 {
        self.time
    }

    fn steps(&self) -> u64 {
        self.steps
    }

    fn dt(&self) -> f64 {
        self.model.dt
    }

    fn contacts(&self) -> &[ContactInfo] {
        &self.contacts
    }

    fn readings(&self) -> &[[f64; 6]] {
        &self.readings
    }

    fn report(&self) -> Report {
        Report { stage_times: self.times, ..Report::default() }
    }

    fn time_stages(&mut self, _on: bool) -> Result<(), SimError> {
        Ok(())
    }

    /// Kinetic plus gravitational energy of the bodies as rapier holds them.
    fn energy(&self) -> f64 {
        let m = &self.model.model;
        let g = m.gravity_vector();
        let mut e = 0.0;
        for j in 1..m.njoints {
            let Some(rb) = self.body(j) else { continue };
            let inertia = &m.inertias[j];
            let x = se3_from(rb.position());
            let (v, w) = (vec_from(rb.linvel()), vec_from(rb.angvel()));
            let wl = x.rotation.transpose() * w;
            let c = x.transform_point(&inertia.com);
            e += 0.5 * inertia.mass * v.norm_squared() + 0.5 * wl.dot(&(inertia.inertia_com * wl))
                - inertia.mass * g.dot(&c);
        }
        e
    }

    fn joint_state(&self, k: usize) -> JointState {
        let (q, dq) = self.dof_state(&self.dofs[k]);
        let act = self.model.one_dof_actuator[k].map_or(0.0, |a| self.act_tau[a]);
        JointState {
            q,
            dq,
            tau: self.tau_user[k] + act,
        }
    }

    fn joint_torque(&self, k: usize) -> f64 {
        self.tau_user[k]
    }

    fn set_joint_torque(&mut self, k: usize, torque: f64) {
        self.tau_user[k] = torque;
    }

    fn set_target(&mut self, k: usize, target: f64) -> Result<(), SimError> {
        match self.model.one_dof_actuator[k] {
            Some(a) => self.command(a, target),
            None => Err(SimError::NoActuator {
                joint: self.model.one_dof_names[k].clone(),
            }),
        }
    }
}

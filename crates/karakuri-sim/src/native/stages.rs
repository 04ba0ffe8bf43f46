//! The stages of a step, each a function over the model (read only), the state and the step's
//! workspace, in the order [`super::NativeEngine`] runs them. Each says what it reads and
//! writes; `docs/ARCHITECTURE.md` draws the whole flow.

use karakuri::algorithms;
use karakuri::linalg::Factorization;
use karakuri::model::JointType;
use karakuri::spatial::{Force, Motion, Se3, Vec3};
use karakuri::Data;
use nalgebra::DVector;

use super::build::SimModel;
use super::contact;
use super::integrate::integrate_world_with;
use super::limits::limit_rows;
use super::loop_drift;
use super::loops;
use super::tracks;
use super::state::{SimState, StepData};
use crate::engine::ContactInfo;
use crate::scene::{ActuatorMode, SensorKind};
use super::settings::solver_settings;
use crate::solver::{RowKind, SolveStats};
use crate::SimError;

/// Check state: the NaN / divergence guard on the state a step has just produced, before
/// anything reads it (the kinematics stage, the world's states, the CLI's CSV rows). The
/// error gives the step and time of that state and the joint's body. Reads `s.q`, `s.v`,
/// `engine.max_speed`.
pub fn check_state(m: &SimModel, s: &SimState) -> Result<(), SimError> {
    // the common case in one pass without branches (it vectorises); the joint-by-joint search
    // below only names the culprit
    let max_speed = m.engine.max_speed;
    let q_ok = s.q.as_slice().iter().fold(true, |ok, x| ok & x.is_finite());
    let v_ok = s.v.as_slice().iter().fold(true, |ok, x| ok & x.is_finite() & (x.abs() <= max_speed));
    if q_ok && v_ok {
        return Ok(());
    }
    let model = &m.model;
    for j in 1..model.njoints {
        let (iq, nq, iv, nv) = (model.idx_q[j], model.nqs[j], model.idx_v[j], model.nvs[j]);
        let bad_q = s.q.as_slice()[iq..iq + nq].iter().any(|x| !x.is_finite());
        let bad_v = s.v.as_slice()[iv..iv + nv].iter().any(|x| !x.is_finite());
        let fast = s.v.as_slice()[iv..iv + nv]
            .iter()
            .map(|x| x.abs())
            .fold(0.0, f64::max);
        if bad_q || bad_v || fast > m.engine.max_speed {
            let reason = if bad_q {
                format!("joint '{}' position is not finite", model.joint_names[j])
            } else if bad_v {
                format!("joint '{}' velocity is not finite", model.joint_names[j])
            } else {
                format!(
                    "joint '{}' speed {fast:.3e} exceeds engine.max_speed {:.3e}",
                    model.joint_names[j], m.engine.max_speed
                )
            };
            return Err(SimError::Diverged {
                step: s.steps,
                time: s.time,
                body: m.body_of_joint(j).to_string(),
                reason,
            });
        }
    }
    Ok(())
}

/// Kinematics and dynamics terms at `(q, v)`, one `compute_all_terms` call (CRBA, then one
/// RNEA sweep with q̈ = 0): writes into `data` the world placements and body velocities (what
/// the world reports), the world Jacobian columns, `M(q)` and the bias forces `h = C v + g`.
/// Runs at load and as the last stage of every step, so the next step starts from it (the
/// state does not change between steps). A world of lone roots (`m.plan.lone_roots`) takes
/// the one-pass path, the same numbers.
pub fn kinematics(m: &SimModel, q: &DVector<f64>, v: &DVector<f64>, data: &mut Data) {
    match &m.plan.lone_roots {
        Some(lone) => algorithms::compute_all_terms_of_lone_roots(&m.model, lone, data, q, v),
        None => algorithms::compute_all_terms(&m.model, data, q, v),
    }
}

/// Iteration matrix: the LᵀDL of `qH = M + diag(armature + forces + servo)` into `qh`, `M`
/// untouched (`factorize_shifted`). `forces` is what the joint forces add to be implicit
/// (`w.force_diag`: `dt d + dt² k` of a spring-damper), `servo` the position servos' `dt (kd +
/// dt kp)` (`w.servo_diag`); empty slices: none (RK4, explicit). When every entry the
/// factorisation reads is bit for bit the one `last` says `qh` was factorised from, `qh` is
/// kept as it is (a free body's `M` is constant: a pile's or a stack's qH never changes).
/// Reads `data`'s mass matrix (fresh from the kinematics stage), `m.dofs`; writes `qh`,
/// `last`.
pub fn factorize_qh(
    m: &SimModel,
    data: &Data,
    (qh, last): (&mut Factorization, &mut QhInputs),
    forces: &[f64],
    servo: &[f64],
) -> Result<(), SimError> {
    let d = &m.dofs;
    let shift = |k: usize| {
        d.armature[k] + forces.get(k).copied().unwrap_or(0.0) + servo.get(k).copied().unwrap_or(0.0)
    };
    let h = data.mass_matrix()?;
    if !last.record(h, shift) {
        qh.factorize_shifted(h, shift);
    }
    Ok(())
}

/// What the factorisation in `StepData::qh` was formed from: each entry of `M` it reads (the
/// chain of each dof, the factor's pattern) and each diagonal shift, as bits. Workspace, not
/// state: it only says whether `qh` is already the factorisation of this step's inputs (a
/// restored or new workspace starts invalid).
#[derive(Clone, Debug, Default)]
pub struct QhInputs {
    /// The entries of `M` read, as contiguous runs of its column-major storage `(start,
    /// length)` (a free body's chains are one run per column), for an `n x n` matrix.
    runs: Vec<(usize, usize)>,
    /// Size of the matrix the runs index.
    n: usize,
    /// The bits of the runs' entries, run after run.
    m_bits: Vec<u64>,
    /// The bits of the shifts `(n)`.
    shift_bits: Vec<u64>,
    /// The bits describe the factorisation held.
    valid: bool,
}

impl QhInputs {
    /// Room for the inputs of the pattern of `model`'s qH (invalid until the first
    /// factorisation). A model without a free body (a tree of one free joint) and with some
    /// tree of more than one joint, whose qH then changes with q, records nothing and always
    /// refactorises.
    pub fn new(model: &karakuri::Model) -> QhInputs {
        let lone = |j: usize| algorithms::is_lone_root(model, j);
        let free_body = (1..model.njoints).any(|j| lone(j) && model.joint_types[j] == JointType::FreeFlyer);
        // a world of lone roots (pendulums, sliders: CRBA reads their blocks in their own
        // frames, the same bits at every q) has a constant M too
        let all_lone = model.njoints > 1 && (1..model.njoints).all(|j| model.parents[j] != 0 || lone(j));
        if !(free_body || all_lone) {
            return QhInputs::default();
        }
        let qh = Factorization::new(model);
        let n = qh.n();
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for k in 0..n {
            // the chain of k: its ancestors (increasing), then k; rows of column k
            for &a in qh.row(k).0.iter().chain([&k]) {
                let at = k * n + a;
                match runs.last_mut() {
                    Some((s, l)) if *s + *l == at => *l += 1,
                    _ => runs.push((at, 1)),
                }
            }
        }
        let len = runs.iter().map(|r| r.1).sum();
        QhInputs {
            runs,
            n,
            m_bits: vec![0; len],
            shift_bits: vec![0; n],
            valid: false,
        }
    }

    /// Records the inputs `h`, `shift` of a factorisation on `qh`'s pattern; returns whether
    /// they are the ones already recorded (then `qh` is their factorisation).
    fn record(&mut self, h: &nalgebra::DMatrix<f64>, shift: impl Fn(usize) -> f64) -> bool {
        if self.runs.is_empty() || h.nrows() != self.n || h.ncols() != self.n {
            self.valid = false;
            return false;
        }
        let hs = h.as_slice();
        let mut same = self.valid;
        let mut bits = &mut self.m_bits[..];
        for &(start, len) in &self.runs {
            let (out, rest) = std::mem::take(&mut bits).split_at_mut(len);
            bits = rest;
            for (o, x) in out.iter_mut().zip(&hs[start..start + len]) {
                let b = x.to_bits();
                same &= *o == b;
                *o = b;
            }
        }
        for (k, o) in self.shift_bits.iter_mut().enumerate() {
            let b = shift(k).to_bits();
            same &= *o == b;
            *o = b;
        }
        self.valid = true;
        same
    }
}

/// Actuator commands, before the iteration matrix: each actuator's command at the step's end
/// time `t + dt` from `s.targets`. A torque command is clamped to the effort limit. A
/// position servo is the spring-damper `kp (target − q⁺) + kd (target_v − v⁺)` at the step's
/// end state (`q⁺ = q + dt v⁺`), made implicit as the passive springs are: `dt (kd + dt kp)`
/// on qH's diagonal, `kp (target − q) + kd target_v − (kd + dt kp) v` explicit. When that
/// torque predicted at `v⁺ = v` exceeds the effort limit, the servo applies the limit (with
/// the sign of the prediction) explicitly for this step. A velocity servo is a row of the
/// constraint stage. Reads `s.q`, `s.v`, `s.targets`, `m.actuators`; writes `w.servo_diag`,
/// `w.act_base`, `w.act_gain`.
pub fn actuator_commands(m: &SimModel, s: &SimState, w: &mut StepData) {
    let t = s.time + m.dt;
    w.servo_diag.fill(0.0);
    for (i, a) in m.actuators.iter().enumerate() {
        let (x, rate) = s.targets[i].at(t);
        let e = a.effort_limit;
        let (base, gain) = match a.mode {
            ActuatorMode::Torque => (x.clamp(-e, e), 0.0),
            ActuatorMode::Position => {
                let rate = rate.clamp(-a.velocity_limit, a.velocity_limit);
                let gain = a.kd + m.dt * a.kp;
                let base = a.kp * (x - s.q[a.iq]) + a.kd * rate;
                let predicted = base - gain * s.v[a.dof];
                if predicted.abs() > e {
                    (e.copysign(predicted), 0.0)
                } else {
                    (base, gain)
                }
            }
            ActuatorMode::Velocity | ActuatorMode::Prescribed => (0.0, 0.0),
        };
        w.act_base[i] = base;
        w.act_gain[i] = gain;
        w.servo_diag[a.dof] += m.dt * gain;
    }
}

/// Position: the iteration matrix with implicit joint forces and servos into `w.qh`, the world
/// motion columns `w.s_world` (the columns of `w.data`'s Jacobian), and collision detection
/// into `w.raw` (a world whose shapes never touch, `m.plan.contacts` off, leaves it empty).
/// Reads `w.data` (fresh at `s.q` from the kinematics stage), `w.force_diag`, `w.servo_diag`.
pub fn position(m: &SimModel, w: &mut StepData) -> Result<(), SimError> {
    factorize_qh(m, &w.data, (&mut w.qh, &mut w.qh_inputs), &w.force_diag, &w.servo_diag)?;
    let jac = w.data.jacobians()?;
    for (k, sk) in w.s_world.iter_mut().enumerate() {
        *sk = Motion::from_slice(jac.column(k).as_slice());
    }
    if m.plan.contacts {
        m.collider.detect(
            &mut w.collision,
            w.data.joint_placements()?,
            m.contact.prediction_distance,
            &mut w.raw,
        );
    }
    Ok(())
}

/// Actuation: `τ += τ_user` (the joint forces set by the user). Reads `s.tau_user`.
pub fn actuation(s: &SimState, tau: &mut DVector<f64>) {
    *tau += &s.tau_user;
}

/// Actuator torques: `τ += base − gain · v` of each torque actuator and position servo (see
/// [`actuator_commands`]). Reads `w.act_base`, `w.act_gain`, `s.v`; writes `w.tau`.
pub fn actuator_torques(m: &SimModel, s: &SimState, w: &mut StepData) {
    for (i, a) in m.actuators.iter().enumerate() {
        w.tau[a.dof] += w.act_base[i] - w.act_gain[i] * s.v[a.dof];
    }
}

/// Actuator rows: a velocity servo's `v⁺_k = target` (clamped to the velocity limit) with the
/// impulse bounded by `± effort_limit · dt`; a prescribed joint's bilateral `v⁺_k = (x(t + dt)
/// − q_k) / dt`, so that the integrated `q⁺ = q + dt v⁺` is the target at the step's end
/// (its impulse / dt is the torque that makes it so). Reads `m.actuators`, `s.targets`, `s.q`,
/// the warm impulses `s.warm_other[*other..]`; writes rows into `w.rows` and their indices into
/// `w.act_row`, and advances `*other` past them.
pub fn servo_rows(m: &SimModel, s: &SimState, w: &mut StepData, other: &mut usize) {
    let t = s.time + m.dt;
    for (i, a) in m.actuators.iter().enumerate() {
        let (kind, speed) = match a.mode {
            ActuatorMode::Velocity => {
                let speed = s.targets[i].at(t).0.clamp(-a.velocity_limit, a.velocity_limit);
                let bound = a.effort_limit * m.dt;
                (RowKind::Bounded { lo: -bound, hi: bound }, speed)
            }
            ActuatorMode::Prescribed => (RowKind::Bilateral, (s.targets[i].at(t).0 - s.q[a.iq]) / m.dt),
            ActuatorMode::Torque | ActuatorMode::Position => {
                w.act_row[i] = usize::MAX;
                continue;
            }
        };
        let mut warm = s.warm_other.get(*other).copied().unwrap_or(0.0);
        if let RowKind::Bounded { lo, hi } = kind {
            warm = warm.clamp(lo, hi);
        }
        *other += 1;
        let ranges = [contact::tree_range(&m.model, m.model.dof_joint[a.dof]), (0, 0)];
        let r = w.rows.push_ranged(kind, speed, warm, ranges);
        w.rows.j_row_mut(r)[a.dof] = 1.0;
        w.act_row[i] = r;
    }
}

/// Applied actuator torques after the constraint solve: torque commands and saturated servos
/// their command, position servos `base − gain · v⁺` (the PD at the step's end state), velocity
/// servos and prescribed joints their row's impulse / dt. Reads `w.act_*`, `s.v` (v⁺), `w.rows.lambda`; writes
/// `w.act_tau`.
pub fn actuator_report(m: &SimModel, s: &SimState, w: &mut StepData) {
    for (i, a) in m.actuators.iter().enumerate() {
        w.act_tau[i] = match w.act_row[i] {
            usize::MAX => w.act_base[i] - w.act_gain[i] * s.v[a.dof],
            r => w.rows.lambda[r] / m.dt,
        };
    }
}

/// Smooth acceleration `q̈ = qH⁻¹ (τ - h)` into `w.qacc`. Reads `w.tau`, the bias forces `h`
/// of `w.data`, `w.qh`.
pub fn smooth_acceleration(w: &mut StepData) -> Result<(), SimError> {
    w.qacc.copy_from(&w.tau);
    w.qacc -= w.data.nonlinear_effects()?;
    w.qh.solve(w.qacc.as_mut_slice());
    Ok(())
}

/// Free velocity: `v_free = v + dt q̈`; free-flyer linear velocities keep their world
/// direction (the world-frame Euler step). Reads `s.v`, `w.qacc`; writes `w.v_free`.
pub fn free_velocity(m: &SimModel, s: &SimState, w: &mut StepData) {
    let (model, dt) = (&m.model, m.dt);
    w.v_free.copy_from(&s.v);
    w.v_free.axpy(dt, &w.qacc, 1.0);
    for j in 1..model.njoints {
        if model.joint_types[j] == JointType::FreeFlyer {
            let iv = model.idx_v[j];
            let lin = Vec3::new(s.v[iv], s.v[iv + 1], s.v[iv + 2]);
            let om = Vec3::new(s.v[iv + 3], s.v[iv + 4], s.v[iv + 5]);
            let corr = dt * om.cross(&lin);
            for c in 0..3 {
                w.v_free[iv + c] += corr[c];
            }
        }
    }
}

/// Constraints: the tracks' surface velocities (`w.track_velocity`), contact blocks (and
/// penalty impulses on `w.v_free`) into `w.problem`, loop, limit, servo and joint-friction
/// rows into `w.rows` and from there into `w.problem`, then the solve island by island (see
/// [`crate::solver`]) and `v⁺ = v_free + qH⁻¹ Jᵀ λ` into `s.v`. Reads the contacts `w.raw`,
/// the columns `w.s_world`, the placements of `w.data`, `w.qh`, the warm start in `s`; writes
/// `w.problem`, `w.rows` (their impulses too), `w.contact_rows`, `w.dv`, `w.last_solve`, the
/// loop rows' impulses `w.loop_impulse`, the warm start in `s`, and `s.v`.
pub fn constraints(m: &SimModel, s: &mut SimState, w: &mut StepData) -> Result<(), SimError> {
    let nv = m.model.nv;
    if w.raw.len() > w.reserved_contacts {
        w.reserve(m, s, w.raw.len());
    }
    w.rows.clear(nv);
    w.problem.clear();
    w.contact_rows.clear();
    if m.plan.tracks {
        tracks::track_velocities(m, s, w)?;
    }
    contact::contact_rows(m, s, w);
    w.other_row_start = w.rows.len();
    let mut other = 0;
    if !m.loops.is_empty() {
        loops::loop_constraint_rows(m, s, w, &mut other)?;
        loop_drift::feed_forward(m, s, w);
    }
    limit_rows(m, s, w, &mut other);
    servo_rows(m, s, w, &mut other);
    super::joint_forces::friction_rows(m, s, w, &mut other);
    let first_other = w.problem.push_rows(&w.rows);
    w.last_solve = if w.problem.rows() == 0 {
        w.solution.no_impulse(0, w.v_free.as_slice());
        SolveStats::default()
    } else if !(m.plan.contacts && super::split::needs_pass(m, w)) && super::slack::slack(&w.problem, w.v_free.as_slice()) {
        // no row asks for an impulse at v_free: λ = 0 is the solution (not prepared: a step
        // whose split-impulse pass reuses the prepared problem goes the usual way)
        w.solution.no_impulse(w.problem.rows(), w.v_free.as_slice());
        SolveStats::default()
    } else {
        w.problem.prepare(&w.qh, &mut w.solver);
        let settings = solver_settings(&m.engine);
        w.problem.solve(w.v_free.as_slice(), &settings, &mut w.solver, &mut w.solution)
    };
    let n_other = w.rows.len();
    w.rows.lambda[..n_other].copy_from_slice(&w.solution.lambda[first_other..first_other + n_other]);
    contact::remember_impulses(s, w);
    let loop_rows = w.other_row_start..w.other_row_start + w.loop_err.len();
    w.loop_impulse.clear();
    w.loop_impulse.extend_from_slice(&w.rows.lambda[loop_rows]);
    s.warm_other.clear();
    s.warm_other
        .extend_from_slice(&w.rows.lambda[w.other_row_start..]);
    for k in 0..nv {
        s.v[k] = w.solution.vel[k];
        w.dv[k] = w.solution.vel[k] - w.v_free[k];
    }
    Ok(())
}

/// Integrate: the loop projection (if asked, and only when the loop error at the step's start
/// exceeds `engine.loop_tolerance`: the drift feed-forward keeps it below otherwise), the
/// loops' first-order prediction for the next step's feed-forward, then `q ← q ⊕ dt v⁺` (see
/// [`integrate_world_with`]; `q ⊕ dt (v⁺ + v_p)` when the split-impulse pass gave a pseudo-velocity,
/// `v⁺` kept). Reads `w.split`; reads and writes `s.q`, `s.v`, `s.loop_predicted`.
pub fn integrate(m: &SimModel, s: &mut SimState, w: &mut StepData) -> Result<(), SimError> {
    if !m.loops.is_empty() {
        if m.engine.loop_projection && loop_drift::largest_error(w) > m.engine.loop_tolerance {
            loops::shake(m, s, w)?;
        }
        loop_drift::predict(m, s, w);
    }
    let pseudo = w.split.active.then_some(w.split.solution.vel.as_slice());
    integrate_world_with(&m.model, &mut s.q, &mut s.v, pseudo, m.dt);
    Ok(())
}

/// Sensors: each contact with the mean force it carried over the step (penalty force plus
/// `Σ dirs λ / dt`). Reads `w.raw`, `w.contact_rows`, `w.solution.lambda`; writes `w.contacts`.
pub fn sensors(m: &SimModel, w: &mut StepData) {
    w.contacts.clear();
    for cr in &w.contact_rows {
        let c = &w.raw[cr.raw];
        let mut f = cr.penalty_force;
        for k in 0..cr.nrows {
            f += cr.dirs[k] * (w.solution.lambda[cr.row + k] / m.dt);
        }
        w.contacts.push(ContactInfo {
            body_a: m.collider.shapes[c.shape_a].body,
            body_b: m.collider.shapes[c.shape_b].body,
            point: c.point,
            normal: c.normal,
            depth: c.depth,
            force: f,
        });
    }
}

/// The world velocity of the body-fixed point `p` (joint frame) of a joint placed at `x` moving
/// with `v` (joint frame).
fn point_velocity(x: &Se3, v: &Motion, p: &Vec3) -> Vec3 {
    let vw = x.act_motion(v);
    vw.linear + vw.angular.cross(&x.transform_point(p))
}

/// The spatial momentum (world axes, about the world origin) of the bodies of `subtree`.
fn subtree_momentum(m: &SimModel, o_m_i: &[Se3], vel: &[Motion], subtree: &[bool]) -> Force {
    let mut h = Force::zero();
    for (k, _) in subtree.iter().enumerate().filter(|(_, &inside)| inside) {
        let hk = o_m_i[k].act_force(&m.model.inertias[k].mul_motion(&vel[k]));
        h.linear += hk.linear;
        h.angular += hk.angular;
    }
    h
}

/// Sensor start: what the readings difference over the step, from the kinematics of the
/// step's start state: each accelerometer's point velocity and each force sensor's child-side
/// momentum. Reads `w.data` (placements, velocities), `m.sensors`; writes `w.sensor_start`.
pub fn sensor_start(m: &SimModel, w: &mut StepData) -> Result<(), SimError> {
    let (o_m_i, vel) = (w.data.joint_placements()?, w.data.joint_velocities()?);
    for (i, sn) in m.sensors.iter().enumerate() {
        w.sensor_start[i] = match sn.kind {
            SensorKind::Accelerometer => {
                let j = sn.joint;
                Force {
                    linear: point_velocity(&o_m_i[j], &vel[j], &sn.placement.translation),
                    angular: Vec3::zeros(),
                }
            }
            SensorKind::RateGyro => Force::zero(),
            SensorKind::Force => subtree_momentum(m, o_m_i, vel, &sn.subtree),
        };
    }
    Ok(())
}

/// Sensor readings, after the kinematics and contact-force stages, from the step's velocity
/// change (so contact and constraint impulses are in them):
/// * accelerometer: `Rᵀ ((v⁺_p − v_p) / dt − g)`, `v_p` the world velocity of the sensor's
///   body-fixed point at the step's start and end, `R` the sensor's world rotation;
/// * rate gyro: the body's angular velocity in sensor axes;
/// * force: Newton–Euler on the child side: the wrench through the joint is the child side's
///   momentum change over the step minus gravity on it, the contact forces on it
///   (`w.contacts`) and the forces of the loop closures joining it to the rest of the world
///   (each loop row's `wrench · impulse / dt`, the step's solve and SHAKE's corrections; a
///   loop with both bodies on the child side is internal), moved to the sensor origin and
///   expressed in sensor axes.
///
/// Reads `w.data`, `w.sensor_start`, `w.contacts`, `w.loop_wrench`, `w.loop_impulse`,
/// `m.sensors`, `m.loops`; writes `w.readings`.
pub fn sensor_readings(m: &SimModel, w: &mut StepData) -> Result<(), SimError> {
    let (o_m_i, vel) = (w.data.joint_placements()?, w.data.joint_velocities()?);
    let g = m.model.gravity_vector();
    for (i, sn) in m.sensors.iter().enumerate() {
        let x = o_m_i[sn.joint].compose(&sn.placement);
        let rt = x.rotation.transpose();
        w.readings[i] = match sn.kind {
            SensorKind::Accelerometer => {
                let j = sn.joint;
                let v1 = point_velocity(&o_m_i[j], &vel[j], &sn.placement.translation);
                let a = rt * ((v1 - w.sensor_start[i].linear) / m.dt - g);
                [a.x, a.y, a.z, 0.0, 0.0, 0.0]
            }
            SensorKind::RateGyro => {
                let om = sn.placement.rotation.transpose() * vel[sn.joint].angular;
                [om.x, om.y, om.z, 0.0, 0.0, 0.0]
            }
            SensorKind::Force => {
                let h1 = subtree_momentum(m, o_m_i, vel, &sn.subtree);
                let mut f = (h1.linear - w.sensor_start[i].linear) / m.dt;
                let mut n = (h1.angular - w.sensor_start[i].angular) / m.dt;
                for (k, _) in sn.subtree.iter().enumerate().filter(|(_, &inside)| inside) {
                    let body = &m.model.inertias[k];
                    let weight = body.mass * g;
                    let c = o_m_i[k].transform_point(&body.com);
                    f -= weight;
                    n -= c.cross(&weight);
                }
                for c in &w.contacts {
                    let on_b = sn.subtree[m.bodies[c.body_b].joint];
                    let on_a = sn.subtree[m.bodies[c.body_a].joint];
                    let fc = match (on_a, on_b) {
                        (false, true) => c.force,
                        (true, false) => -c.force,
                        _ => continue,
                    };
                    f -= fc;
                    n -= c.point.cross(&fc);
                }
                let mut r = 0;
                for l in &m.loops {
                    let (on_a, on_b) = (sn.subtree[l.ja], sn.subtree[l.jb]);
                    let rows = r..r + l.rows();
                    r = rows.end;
                    if on_a == on_b {
                        continue;
                    }
                    for k in rows {
                        let [on_body_b, on_body_a] = w.loop_wrench[k];
                        let unit = if on_b { on_body_b } else { on_body_a };
                        let lambda = w.loop_impulse[k] / m.dt;
                        f -= unit.linear * lambda;
                        n -= unit.angular * lambda;
                    }
                }
                // moment about the sensor origin, then sensor axes
                let n = n - x.translation.cross(&f);
                let (f, n) = (rt * f, rt * n);
                [f.x, f.y, f.z, n.x, n.y, n.z]
            }
        };
    }
    Ok(())
}

/// Watch: counts the step's numerical trouble into `w.diagnostics`: an iterative solve that
/// stopped above `engine.tolerance` (its residual; "sinking" when `residual · dt` exceeds
/// `contact.penetration_tolerance` or a contact of the step is deeper than twice it), and a body whose shapes' centre moved more
/// than their smallest extent in the step (`|v_c| dt`, v_c its velocity at the state's end: it
/// may have passed through something thin). Reads `w.last_solve`, `w.raw`, `w.data`'s body velocities
/// (fresh from the kinematics stage), `m.bodies[..].bounds`, `s.steps`; writes
/// `w.diagnostics`.
pub fn watch(m: &SimModel, s: &SimState, w: &mut StepData) -> Result<(), SimError> {
    let d = &mut w.diagnostics;
    let solve = w.last_solve;
    if !solve.direct && solve.iterations > 0 && solve.residual > m.engine.tolerance {
        d.unconverged_steps += 1;
        // with the split impulse the velocity problem carries no push-out, so a solve that
        // gives up shows as depth rather than as a large residual
        let tol = m.contact.penetration_tolerance;
        let deep = w.raw.iter().any(|c| c.depth > 2.0 * tol);
        d.sinking_steps += u64::from(solve.residual * m.dt > tol || deep);
        if d.worst_residual.is_none_or(|(r, _)| solve.residual > r) {
            d.worst_residual = Some((solve.residual, s.steps));
        }
    }
    let vel = w.data.joint_velocities()?;
    let mut fast = false;
    for (bi, b) in m.bodies.iter().enumerate() {
        let Some((c, size)) = b.bounds else { continue };
        if b.joint == 0 {
            continue;
        }
        let v = &vel[b.joint];
        // squared first: the root only for a body that is fast
        let moved_sq = (v.linear + v.angular.cross(&c)).norm_squared() * (m.dt * m.dt);
        if moved_sq > size * size {
            fast = true;
            if d.first_fast.is_none() {
                let moved = (v.linear + v.angular.cross(&c)).norm() * m.dt;
                d.first_fast = Some((s.steps, bi, moved, size));
            }
        }
    }
    d.fast_steps += u64::from(fast);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;

    #[test]
    fn the_recorded_inputs_say_when_a_factorisation_would_be_the_same() {
        // a pendulum of two hinges (dof 1 a child of dof 0) and a free body (dofs 2..8)
        use karakuri::model::{Axis, JointId, ModelBuilder};
        use karakuri::spatial::{Inertia, Mat3};
        let inertia = || Inertia::new(1.0, Vec3::new(0.0, 0.0, -0.5), Mat3::identity() * 0.1);
        let hinge = || JointType::Revolute { axis: Axis::X };
        let pendulum = |b: &mut ModelBuilder| {
            let j1 = b.add_joint(JointId::UNIVERSE, "a", hinge(), Se3::identity()).unwrap();
            b.add_body(j1, "a", inertia()).unwrap();
            j1
        };
        let mut b = ModelBuilder::new("mixed");
        let j1 = pendulum(&mut b);
        let j2 = b.add_joint(j1, "b", hinge(), Se3::identity()).unwrap();
        b.add_body(j2, "b", inertia()).unwrap();
        let j3 = b.add_joint(JointId::UNIVERSE, "c", JointType::FreeFlyer, Se3::identity()).unwrap();
        b.add_body(j3, "c", inertia()).unwrap();
        let mut last = QhInputs::new(&b.build().unwrap());
        let mut h = DMatrix::identity(8, 8);
        h[(0, 1)] = 0.5;
        h[(1, 0)] = 0.5;
        let shift = |k: usize| 0.1 * k as f64;
        assert!(!last.record(&h, shift), "nothing recorded yet");
        assert!(last.record(&h, shift));
        // an entry off the pattern is not read
        h[(2, 0)] = 7.0;
        assert!(last.record(&h, shift));
        // one on it, a shift, a zero's sign: each a new factorisation
        h[(0, 1)] = 0.25;
        assert!(!last.record(&h, shift));
        assert!(last.record(&h, shift));
        assert!(!last.record(&h, |k| 0.2 * k as f64));
        h[(0, 1)] = 0.0;
        assert!(!last.record(&h, shift));
        h[(0, 1)] = -0.0;
        assert!(!last.record(&h, shift));
        // the free body's block
        h[(3, 5)] = 0.125;
        assert!(!last.record(&h, shift));
        assert!(last.record(&h, shift));
        // the double pendulum alone: nothing kept
        let mut b = ModelBuilder::new("double pendulum");
        let j1 = pendulum(&mut b);
        let j2 = b.add_joint(j1, "b", hinge(), Se3::identity()).unwrap();
        b.add_body(j2, "b", inertia()).unwrap();
        let mut none = QhInputs::new(&b.build().unwrap());
        let h = DMatrix::identity(2, 2);
        assert!(!none.record(&h, shift));
        assert!(!none.record(&h, shift));
        // two lone pendulums (a cradle): kept
        let mut b = ModelBuilder::new("two pendulums");
        pendulum(&mut b);
        let j = b.add_joint(JointId::UNIVERSE, "d", hinge(), Se3::identity()).unwrap();
        b.add_body(j, "d", inertia()).unwrap();
        let mut kept = QhInputs::new(&b.build().unwrap());
        assert!(!kept.record(&h, shift));
        assert!(kept.record(&h, shift));
    }
}

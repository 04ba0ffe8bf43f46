//! The stages of a step that are neither a constraint kind's, an actuator's, a sensor's nor
//! sleep's own, each a function over the model (read only), the state, the step's workspace
//! and its outputs, in the order of the step's list (`step.rs`). Each says what it reads and
//! writes, and returns at once when the world or the step has nothing for it (the stage plan
//! `m.plan`, an RK4 step `w.rk4.taken`); `docs/ARCHITECTURE.md` draws the whole flow.

use karakuri::model::JointType;
use karakuri::spatial::{Motion, Vec3};

use super::actuators::{actuator_torques, servo_rows};
use super::build::SimModel;
use super::contact;
use super::dynamics::{compute_terms, factorize_qh};
use super::external::external_forces;
use super::integrate::integrate_world_with;
use super::limits::limit_rows;
use super::loop_drift;
use super::loops;
use super::output::StepOutput;
use super::sleep;
use super::state::SimState;
use super::tracks;
use super::settings::solver_settings;
use super::work::StepData;
use crate::solver::SolveStats;
use crate::SimError;

/// Start: the state the step starts from into `w.q_start`, `w.v_start` (what a failing step
/// restores), and the sleeping islands an action wakes (a push on one of their bodies, a user
/// torque on one of their dofs: [`sleep::wake_on_actions`]). Reads `s.q`, `s.v`; writes
/// `w.q_start`, `w.v_start`, `s.sleep`.
#[inline]
pub fn start(m: &SimModel, s: &mut SimState, w: &mut StepData, _out: &mut StepOutput) -> Result<(), SimError> {
    w.q_start.copy_from(&s.q);
    w.v_start.copy_from(&s.v);
    sleep::wake_on_actions(m, s);
    Ok(())
}

/// Position: the iteration matrix with implicit joint forces and servos into `w.qh`, the world
/// motion columns `w.s_world` (the columns of `w.data`'s Jacobian), and collision detection
/// into `w.raw` (a world whose shapes never touch, `m.plan.contacts` off, leaves it empty),
/// sleeping shapes frozen and an island a contact reaches woken ([`sleep::freeze_shapes`],
/// [`sleep::wake_on_contact`]). Reads `w.data` (fresh at `s.q` from the kinematics stage),
/// `w.force_diag`, `w.servo_diag`; writes `s.sleep` too.
#[inline]
pub fn position(m: &SimModel, s: &mut SimState, w: &mut StepData, _out: &mut StepOutput) -> Result<(), SimError> {
    sleep::freeze_shapes(m, s, w);
    factorize_qh(m, &w.data, (&mut w.qh, &mut w.qh_inputs), &w.force_diag, &w.servo_diag)?;
    let jac = w.data.jacobians()?;
    for (k, sk) in w.s_world.iter_mut().enumerate() {
        *sk = Motion::from_slice(jac.column(k).as_slice());
    }
    if m.plan.contacts {
        let g = m.model.gravity_vector().norm();
        m.collider.set_motion(&mut w.collision, w.data.joint_velocities()?, m.dt, g);
        m.collider.detect(
            &mut w.collision,
            w.data.joint_placements()?,
            m.contact.prediction_distance,
            &mut w.raw,
        );
    }
    sleep::wake_on_contact(m, s, w)
}

/// Actuation, in an Euler step: `τ += τ_user` (the joint forces set by the user), the
/// actuators' torques ([`actuator_torques`]) and the pushes acting in this step
/// ([`external_forces`]: the scene's perturbations, the API's). Reads `s.tau_user`, `w.act_*`,
/// `s.v`, the pushes, `w.data`; writes `w.tau` (which holds the joint forces).
#[inline]
pub fn actuation(m: &SimModel, s: &mut SimState, w: &mut StepData, _out: &mut StepOutput) -> Result<(), SimError> {
    if w.rk4.taken {
        return Ok(());
    }
    w.tau += &s.tau_user;
    actuator_torques(m, s, w);
    if m.plan.perturbations || !s.pushes.is_empty() {
        external_forces(m, s, &w.data, &mut w.tau)?;
    }
    Ok(())
}

/// Acceleration, in an Euler step: the smooth acceleration ([`smooth_acceleration`]).
#[inline]
pub fn acceleration(_m: &SimModel, _s: &mut SimState, w: &mut StepData, _out: &mut StepOutput) -> Result<(), SimError> {
    if w.rk4.taken {
        return Ok(());
    }
    smooth_acceleration(w)
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
/// direction (the world-frame Euler step); a sleeping tree's is 0 ([`sleep::hold_velocity`]).
/// Reads `s.v`, `w.qacc`, `s.sleep`; writes `w.v_free`. In an Euler step.
#[inline]
pub fn free_velocity(m: &SimModel, s: &mut SimState, w: &mut StepData, _out: &mut StepOutput) -> Result<(), SimError> {
    if w.rk4.taken {
        return Ok(());
    }
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
    sleep::hold_velocity(m, s, w);
    Ok(())
}

/// Constraint, in an Euler step: the tracks' world axes (`w.track_axis`), contact blocks (and
/// penalty impulses on `w.v_free`), then the loop, limit, servo and joint-friction rows as
/// one-row blocks, all into `w.problem`, then the solve island by island (see
/// [`crate::solver`]) and `v⁺ = v_free + qH⁻¹ Jᵀ λ` into `s.v`. Reads the contacts `w.raw`,
/// the columns `w.s_world`, the placements of `w.data`, `w.qh`, the warm start in `s`; writes
/// `w.problem`, `w.solution`, `w.contact_rows`, `w.dv`, `out.last_solve`, the
/// loop rows' impulses `w.loop_impulse`, the warm start in `s` (with `s.warm_try_first`), and `s.v`. A world without
/// rows (`m.plan.rows` off) only sets `v⁺ = v_free`.
#[inline]
pub fn constraint(m: &SimModel, s: &mut SimState, w: &mut StepData, out: &mut StepOutput) -> Result<(), SimError> {
    if w.rk4.taken {
        return Ok(());
    }
    if !m.plan.rows {
        // nothing to hold: v⁺ = v_free (what the solve gives for no rows)
        s.v.copy_from(&w.v_free);
        return Ok(());
    }
    let nv = m.model.nv;
    if w.raw.len() > w.reserved_contacts {
        w.reserve(m, s, out, w.raw.len());
    }
    w.problem.clear();
    w.contact_rows.clear();
    if m.plan.tracks {
        tracks::track_axes(m, w)?;
    }
    contact::contact_rows(m, s, w);
    // the rows after the contacts' (loops first), and their warm impulses, in one order
    (w.other_row_start, w.loop_block) = (w.problem.rows(), w.problem.blocks.len());
    let mut other = 0;
    if !m.loops.is_empty() {
        loops::loop_constraint_rows(m, s, w, &mut other)?;
        loop_drift::feed_forward(m, s, w);
    }
    limit_rows(m, s, w, &mut other);
    super::joint_rows::linear_rows(m, s, w, &mut other);
    super::joint_rows::tendon_rows(m, s, w, &mut other)?;
    servo_rows(m, s, w, &mut other);
    super::joint_forces::friction_rows(m, s, w, &mut other);
    out.last_solve = if w.problem.rows() == 0 {
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
        w.problem.try_first = s.warm_try_first;
        let mut st = w.problem.solve(w.v_free.as_slice(), &settings, &mut w.solver, &mut w.solution);
        s.warm_try_first = w.solution.try_first;
        w.problem.contact_measures(&w.solution, &mut st);
        st
    };
    contact::remember_impulses(s, w);
    let loop_rows = w.other_row_start..w.other_row_start + w.loop_err.len();
    w.loop_impulse.clear();
    w.loop_impulse.extend_from_slice(&w.solution.lambda[loop_rows]);
    s.warm_other.clear();
    s.warm_other
        .extend_from_slice(&w.solution.lambda[w.other_row_start..w.problem.rows()]);
    for k in 0..nv {
        s.v[k] = w.solution.vel[k];
        w.dv[k] = w.solution.vel[k] - w.v_free[k];
    }
    Ok(())
}

/// Split impulse, in an Euler step of a world with contacts: the pseudo-velocity that removes
/// penetration ([`super::split::pseudo_velocity`]). Reads `s.v` (v⁺), `w.raw`,
/// `w.contact_rows`, `w.problem`; writes `w.split`.
#[inline]
pub fn split_impulse(m: &SimModel, s: &mut SimState, w: &mut StepData, _out: &mut StepOutput) -> Result<(), SimError> {
    if w.rk4.taken || !m.plan.contacts {
        return Ok(());
    }
    super::split::pseudo_velocity(m, s.v.as_slice(), w)
}

/// Integrate: the loop projection (if asked, and only when the loop error at the step's start
/// exceeds `engine.loop_tolerance`: the drift feed-forward keeps it below otherwise), the
/// loops' first-order prediction for the next step's feed-forward, then `q ← q ⊕ dt v⁺` (see
/// [`integrate_world_with`]; `q ⊕ dt (v⁺ + v_p)` when the split-impulse pass gave a pseudo-velocity,
/// `v⁺` kept), a sleeping tree held where it was ([`sleep::hold_state`]). Reads `w.split`,
/// `w.q_start`; reads and writes `s.q`, `s.v`, `s.loop_predicted`. In an Euler step.
#[inline]
pub fn integrate(m: &SimModel, s: &mut SimState, w: &mut StepData, _out: &mut StepOutput) -> Result<(), SimError> {
    if w.rk4.taken {
        return Ok(());
    }
    if !m.loops.is_empty() {
        if m.engine.loop_projection && loop_drift::largest_error(w) > m.engine.loop_tolerance {
            loops::shake(m, s, w)?;
        }
        loop_drift::predict(m, s, w);
    }
    let pseudo = w.split.active.then_some(w.split.solution.vel.as_slice());
    integrate_world_with(&m.model, &mut s.q, &mut s.v, pseudo, m.dt);
    sleep::hold_state(m, s, w);
    Ok(())
}

/// Check state: the step is taken (`s.steps`, `s.time` advance), and the guard ([`guard`])
/// runs on its result before anything reads it; a failing step leaves the world at its last
/// good state (`s.q`, `s.v` from `w.q_start`, `w.v_start`, the step count and time back;
/// `w.data` is not refreshed) and returns the error.
#[inline]
pub fn check_state(m: &SimModel, s: &mut SimState, w: &mut StepData, _out: &mut StepOutput) -> Result<(), SimError> {
    s.steps += 1;
    s.time = s.steps as f64 * m.dt;
    if let Err(e) = guard(m, s) {
        s.q.copy_from(&w.q_start);
        s.v.copy_from(&w.v_start);
        s.steps -= 1;
        s.time = s.steps as f64 * m.dt;
        return Err(e);
    }
    Ok(())
}

/// The NaN / divergence guard on a state (the check_state stage's, and the initial state's at
/// load), before anything reads it (the kinematics stage, the world's states, the CLI's CSV rows). The
/// error gives the step and time of that state and the joint's body. Reads `s.q`, `s.v`,
/// `engine.max_speed`.
pub fn guard(m: &SimModel, s: &SimState) -> Result<(), SimError> {
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

/// Kinematics: the dynamics terms at the step's end state ([`compute_terms`]: placements,
/// velocities, Jacobian, `M`, `h`), which the world reports and the next step starts from, then
/// the islands that fall asleep ([`sleep::update`]); in a step every tree slept through, the
/// terms are those of the step before, kept ([`sleep::kinematics_unchanged`]). Reads `s.q`,
/// `s.v`; writes `w.data`, `s.sleep` (and `s.v` of a tree that falls asleep).
#[inline]
pub fn kinematics(m: &SimModel, s: &mut SimState, w: &mut StepData, _out: &mut StepOutput) -> Result<(), SimError> {
    if !sleep::kinematics_unchanged(m, s, w) {
        compute_terms(m, &s.q, &s.v, &mut w.data);
    }
    sleep::update(m, s, w)
}

/// Watch: counts the step's numerical trouble into `s.diagnostics`: an iterative solve that
/// stopped above `engine.tolerance` (its residual; "sinking" when `residual · dt` exceeds
/// `contact.penetration_tolerance` or a contact of the step is deeper than twice it), and a body whose shapes' centre moved more
/// than their smallest extent in the step (`|v_c| dt`, v_c its velocity at the state's end: it
/// may have passed through something thin). Reads `out.last_solve`, `w.raw`, `w.data`'s body velocities
/// (fresh from the kinematics stage), `m.bodies[..].bounds`, `s.steps`; writes
/// `s.diagnostics`.
#[inline]
pub fn watch(m: &SimModel, s: &mut SimState, w: &mut StepData, out: &mut StepOutput) -> Result<(), SimError> {
    let d = &mut s.diagnostics;
    let solve = out.last_solve;
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


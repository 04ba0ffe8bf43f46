//! Classical RK4 for smooth worlds (decision records 0014, 0061): the rk4 stage takes the whole
//! step of a world the stage plan gave to RK4 (`m.plan.rk4`: `engine.integrator: rk4`, or
//! `auto` in a world with nothing the constraint solve holds and no spring or damper); the
//! Euler stages after it then have nothing to do (`w.rk4.taken`). Its evaluations call the same
//! functions as the Euler step's stages. The step is cut into sub-steps so that no body turns
//! more than [`MAX_TURN`] in one: RK4's error grows as the fifth power of the angle a step
//! turns, and a whipping chain's tip turns 0.2 rad in a millisecond.

use karakuri::algorithms;

use super::build::SimModel;
use super::dynamics::{compute_terms, factorize_qh};
use super::external::external_forces;
use super::joint_forces::forces_at;
use super::output::StepOutput;
use super::sleep;
use super::stages::smooth_acceleration;
use super::state::SimState;
use super::work::StepData;
use crate::scene::Integrator;
use crate::SimError;

/// The largest angle (rad) a body may turn in one RK4 sub-step, at the angular speed it has
/// at the step's start: `n = ⌈max |ω| dt / MAX_TURN⌉` sub-steps of `dt / n`. On the 20-link
/// chain (tests/scenes/chain20.yaml) 0.1 rad keeps the energy within 0.2 % over 10 s at
/// dt = 1 ms, where one RK4 step per millisecond loses 10 % (decision record 0061).
pub const MAX_TURN: f64 = 0.1;

/// The most sub-steps of one step (a body turning faster than `MAX_SUBSTEPS · MAX_TURN / dt`
/// takes larger sub-steps; the speed guard stops a world that runs away).
pub const MAX_SUBSTEPS: usize = 64;

/// RK4, the stage: whether this step is an RK4 step (`m.plan.rk4`, and for `auto` no joint
/// force registered on the world: those stay implicit) into `w.rk4.taken`, and takes it:
/// `s.q`, `s.v` at the step's end (see `rk4_step`), in as many sub-steps as [`MAX_TURN`]
/// asks, a sleeping tree held where it was ([`sleep::hold_state`]). Reads the body
/// velocities of `w.data` (fresh at the state), `s.sleep`; uses `w.rk4`, `w.data`, `w.qh`.
#[inline]
pub fn rk4(m: &SimModel, s: &mut SimState, w: &mut StepData, _out: &mut StepOutput) -> Result<(), SimError> {
    w.rk4.taken = m.plan.rk4 && (m.engine.integrator == Integrator::Rk4 || w.registered.joint_forces.is_empty());
    if !w.rk4.taken {
        return Ok(());
    }
    let n = substeps(w.data.joint_velocities()?, m.dt);
    let h = m.dt / n as f64;
    for i in 0..n {
        rk4_step(m, s, w, s.time + i as f64 * h, h, i == 0)?;
    }
    sleep::hold_state(m, s, w);
    w.raw.clear();
    w.contact_rows.clear();
    Ok(())
}

/// The sub-steps of a step of `dt` from the bodies' velocities `vel` (a joint frame's turning
/// rate is its body's): `⌈max |ω| dt / MAX_TURN⌉`, at least 1, at most [`MAX_SUBSTEPS`].
pub fn substeps(vel: &[karakuri::spatial::Motion], dt: f64) -> usize {
    let fastest = vel.iter().map(|v| v.angular.norm()).fold(0.0, f64::max);
    let n = (fastest * dt / MAX_TURN).ceil();
    if n.is_finite() && n >= 1.0 {
        (n as usize).min(MAX_SUBSTEPS)
    } else {
        1
    }
}

/// The smooth acceleration at `(w.rk4.q, w.rk4.v)` into `w.rk4.kv[i]` (and the velocity into
/// `w.rk4.kq[i]`): the kinematics, iteration-matrix, passive, actuation and acceleration
/// stages with explicit damping and springs (`qH = M + armature`).
fn evaluate(
    m: &SimModel,
    s: &SimState,
    w: &mut StepData,
    (i, t): (usize, f64),
    kinematics_fresh: bool,
) -> Result<(), SimError> {
    let (q, v) = (&w.rk4.q, &w.rk4.v);
    if !kinematics_fresh {
        compute_terms(m, q, v, &mut w.data);
    }
    factorize_qh(m, &w.data, (&mut w.qh, &mut w.qh_inputs), &[], &[])?;
    let sets = (&m.joint_forces[..], &w.registered.joint_forces[..]);
    forces_at(sets, t, q, v, 0.0, (&mut w.tau, &mut w.force_diag), &mut w.force_work);
    w.tau += &s.tau_user;
    external_forces(m, s, &w.data, &mut w.tau)?;
    smooth_acceleration(w)?;
    w.rk4.kv[i].copy_from(&w.qacc);
    w.rk4.kq[i].copy_from(&w.rk4.v);
    Ok(())
}

/// One classical RK4 step of `h` from the time `t0` (no contacts, loops or limits); the first
/// evaluation reuses `w.data` when `fresh` (the state's kinematics, from the kinematics
/// stage). Reads and writes `s.q`, `s.v`; uses `w.rk4`, `w.data`, `w.qh` (the kinematics stage
/// after the step refreshes `w.data` at the new state).
fn rk4_step(m: &SimModel, s: &mut SimState, w: &mut StepData, t0: f64, h: f64, fresh: bool) -> Result<(), SimError> {
    let model = &m.model;
    w.rk4.q0.copy_from(&s.q);
    w.rk4.v0.copy_from(&s.v);
    w.rk4.q.copy_from(&s.q);
    w.rk4.v.copy_from(&s.v);
    evaluate(m, s, w, (0, t0), fresh)?;
    for (i, f) in [(1, 0.5), (2, 0.5), (3, 1.0)] {
        let r = &mut w.rk4;
        // the slope of the previous evaluation, scaled, from the start
        for k in 0..model.nv {
            r.dq[k] = r.kq[i - 1][k] * (f * h);
        }
        algorithms::integrate_into(model, &r.q0, &r.dq, &mut r.q);
        for k in 0..model.nv {
            r.v[k] = r.v0[k] + r.kv[i - 1][k] * (f * h);
        }
        evaluate(m, s, w, (i, t0 + f * h), false)?;
    }
    let r = &mut w.rk4;
    let sixth = h / 6.0;
    for k in 0..model.nv {
        r.dq[k] = (r.kq[0][k] + r.kq[1][k] * 2.0 + r.kq[2][k] * 2.0 + r.kq[3][k]) * sixth;
    }
    algorithms::integrate_into(model, &r.q0, &r.dq, &mut s.q);
    for k in 0..model.nv {
        s.v[k] = r.v0[k] + (r.kv[0][k] + r.kv[1][k] * 2.0 + r.kv[2][k] * 2.0 + r.kv[3][k]) * sixth;
    }
    Ok(())
}

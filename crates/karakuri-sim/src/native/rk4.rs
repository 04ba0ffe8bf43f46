//! Classical RK4 for contact-free smooth systems: the rk4 stage takes the whole step when the
//! world integrates with RK4 and this step has nothing only the Euler step handles (contacts,
//! loops, limits, actuators, joint friction); the Euler stages after it then have nothing to do
//! (`w.rk4.taken`). Its four evaluations call the same functions as the Euler step's stages.

use karakuri::algorithms;

use super::build::SimModel;
use super::dynamics::{compute_terms, factorize_qh};
use super::external::external_forces;
use super::joint_forces::forces_at;
use super::output::StepOutput;
use super::stages::smooth_acceleration;
use super::state::SimState;
use super::work::StepData;
use crate::scene::Integrator;
use crate::SimError;

/// RK4, the stage: decides whether this step is an RK4 step (`engine.integrator: rk4`, no
/// contact found by the position stage, no loop, limit, actuator or joint friction: servos and
/// friction are rows or implicit terms, which only the Euler step has) into `w.rk4.taken`,
/// and takes it: `s.q`, `s.v` at the step's end (see `rk4_step`), the step's contact lists
/// emptied. Reads `w.raw`; uses `w.rk4`, `w.data`, `w.qh`.
#[inline]
pub fn rk4(m: &SimModel, s: &mut SimState, w: &mut StepData, _out: &mut StepOutput) -> Result<(), SimError> {
    w.rk4.taken = m.engine.integrator == Integrator::Rk4 && smooth(m, w);
    if !w.rk4.taken {
        return Ok(());
    }
    rk4_step(m, s, w)?;
    w.raw.clear();
    w.contact_rows.clear();
    Ok(())
}

/// Whether this step may use RK4 (no contacts, no loops, no limits, no actuators, no joint
/// friction: servos are implicit or constraint rows and friction is a row, which only the
/// Euler step has).
fn smooth(m: &SimModel, w: &StepData) -> bool {
    w.raw.is_empty()
        && m.loops.is_empty()
        && m.limits.is_empty()
        && m.actuators.is_empty()
        && m.frictions.is_empty()
}

/// The smooth acceleration at `(w.rk4.q, w.rk4.v)` into `w.rk4.kv[i]` (and the velocity into
/// `w.rk4.kq[i]`): the kinematics, iteration-matrix, passive, actuation and acceleration
/// stages with explicit damping and springs (`qH = M + armature`).
fn evaluate(
    m: &SimModel,
    s: &SimState,
    w: &mut StepData,
    i: usize,
    kinematics_fresh: bool,
) -> Result<(), SimError> {
    let (q, v) = (&w.rk4.q, &w.rk4.v);
    if !kinematics_fresh {
        compute_terms(m, q, v, &mut w.data);
    }
    factorize_qh(m, &w.data, (&mut w.qh, &mut w.qh_inputs), &[], &[])?;
    let t = s.time + [0.0, 0.5, 0.5, 1.0][i] * m.dt;
    let sets = (&m.joint_forces[..], &w.registered.joint_forces[..]);
    forces_at(sets, t, q, v, 0.0, (&mut w.tau, &mut w.force_diag), &mut w.force_work);
    w.tau += &s.tau_user;
    external_forces(m, s, &w.data, &mut w.tau)?;
    smooth_acceleration(w)?;
    w.rk4.kv[i].copy_from(&w.qacc);
    w.rk4.kq[i].copy_from(&w.rk4.v);
    Ok(())
}

/// One classical RK4 step of the smooth dynamics (no contacts, loops or limits). Reads and
/// writes `s.q`, `s.v`; uses `w.rk4`, `w.data`, `w.qh` (the kinematics stage after the step
/// refreshes `w.data` at the new state).
fn rk4_step(m: &SimModel, s: &mut SimState, w: &mut StepData) -> Result<(), SimError> {
    let (model, dt) = (&m.model, m.dt);
    w.rk4.q0.copy_from(&s.q);
    w.rk4.v0.copy_from(&s.v);
    w.rk4.q.copy_from(&s.q);
    w.rk4.v.copy_from(&s.v);
    // k1 at the state, whose kinematics and bias forces are fresh
    evaluate(m, s, w, 0, true)?;
    for (i, h) in [(1, dt / 2.0), (2, dt / 2.0), (3, dt)] {
        let r = &mut w.rk4;
        // the slope of the previous evaluation, scaled, from the start
        for k in 0..model.nv {
            r.dq[k] = r.kq[i - 1][k] * h;
        }
        algorithms::integrate_into(model, &r.q0, &r.dq, &mut r.q);
        for k in 0..model.nv {
            r.v[k] = r.v0[k] + r.kv[i - 1][k] * h;
        }
        evaluate(m, s, w, i, false)?;
    }
    let r = &mut w.rk4;
    let sixth = dt / 6.0;
    for k in 0..model.nv {
        r.dq[k] = (r.kq[0][k] + r.kq[1][k] * 2.0 + r.kq[2][k] * 2.0 + r.kq[3][k]) * sixth;
    }
    algorithms::integrate_into(model, &r.q0, &r.dq, &mut s.q);
    for k in 0..model.nv {
        s.v[k] = r.v0[k] + (r.kv[0][k] + r.kv[1][k] * 2.0 + r.kv[2][k] * 2.0 + r.kv[3][k]) * sixth;
    }
    Ok(())
}

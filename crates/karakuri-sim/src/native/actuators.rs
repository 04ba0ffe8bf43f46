//! The actuators' stages: each actuator's command (an explicit torque, an implicit servo on
//! qH's diagonal, or a row), its torque on `τ`, its row in the constraint solve and the torque it
//! applied. A world without actuators (`m.plan.actuators` off) skips them.

use super::build::{Actuator, SimModel};
use super::output::StepOutput;
use super::sleep;
use super::state::SimState;
use super::work::StepData;
use crate::scene::ActuatorMode;
use crate::solver::RowKind;
use crate::SimError;

/// Actuator commands, before the iteration matrix: each actuator's command at the step's end
/// time `t + dt` from `s.targets`. A torque command is clamped to the effort limit. A
/// position servo is the spring-damper `kp (target − q⁺) + kd (target_v − v⁺)` (plus its constant
/// `bias`) at the step's
/// end state (`q⁺ = q + dt v⁺`), made implicit as the passive springs are: `dt (kd + dt kp)`
/// on qH's diagonal, `kp (target − q) + kd target_v − (kd + dt kp) v` explicit. When that
/// torque predicted at `v⁺ = v` exceeds the effort limit, the servo applies the limit (with
/// the sign of the prediction) explicitly for this step. A command that differs from the last
/// step's wakes its tree's island or restarts its still count ([`sleep::note_command`]). A
/// velocity servo is a row of the constraint stage. Reads `s.q`, `s.v`, `s.targets`,
/// `m.actuators`; writes `w.servo_diag`, `w.act_base`, `w.act_gain`, `s.sleep`. A world
/// without actuators (`m.plan.actuators` off) skips it.
#[inline]
pub fn actuator_commands(m: &SimModel, s: &mut SimState, w: &mut StepData, _out: &mut StepOutput) -> Result<(), SimError> {
    if !m.plan.actuators {
        return Ok(());
    }
    let t = s.time + m.dt;
    w.servo_diag.fill(0.0);
    for (i, a) in m.actuators.iter().enumerate() {
        let (x, rate) = s.targets[i].at(t);
        sleep::note_command(m, &mut s.sleep, i, a.dof, [x, rate]);
        let c = command(a, (x, rate), (s.q[a.iq], s.v[a.dof]), m.dt);
        w.act_base[i] = c.base;
        w.act_gain[i] = c.gain;
        w.servo_diag[a.dof] += m.dt * c.gain;
    }
    Ok(())
}

/// An actuator's command in a step of `dt`: its torque is `base − gain · v⁺` (see
/// [`actuator_commands`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Command {
    /// The explicit part.
    pub base: f64,
    /// The implicit velocity gain (`kd + dt kp` of an unsaturated position servo, else 0).
    pub gain: f64,
}

/// The command of actuator `a` for the target `(x, rate)` at the joint's `(q, v)` (see
/// [`actuator_commands`]; the step derivatives differentiate the same function).
pub fn command(a: &Actuator, (x, rate): (f64, f64), (q, v): (f64, f64), dt: f64) -> Command {
    let e = a.effort_limit;
    let (base, gain) = match a.mode {
        ActuatorMode::Torque => (x.clamp(-e, e), 0.0),
        ActuatorMode::Position => {
            let rate = rate.clamp(-a.velocity_limit, a.velocity_limit);
            let gain = a.kd + dt * a.kp;
            let base = a.kp * (x - q) + a.kd * rate + a.bias;
            let predicted = base - gain * v;
            if predicted.abs() > e {
                (e.copysign(predicted), 0.0)
            } else {
                (base, gain)
            }
        }
        ActuatorMode::Velocity | ActuatorMode::Prescribed => (0.0, 0.0),
    };
    Command { base, gain }
}

/// Actuator torques: `τ += base − gain · v` of each torque actuator and position servo (see
/// [`actuator_commands`]). Reads `w.act_base`, `w.act_gain`, `s.v`; writes `w.tau`.
pub fn actuator_torques(m: &SimModel, s: &SimState, w: &mut StepData) {
    if !m.plan.actuators {
        return;
    }
    for (i, a) in m.actuators.iter().enumerate() {
        w.tau[a.dof] += w.act_base[i] - w.act_gain[i] * s.v[a.dof];
    }
}

/// Actuator rows: a velocity servo's `v⁺_k = target` (clamped to the velocity limit) with the
/// impulse bounded by `± effort_limit · dt`; a prescribed joint's bilateral `v⁺_k = (x(t + dt)
/// − q_k) / dt`, so that the integrated `q⁺ = q + dt v⁺` is the target at the step's end
/// (its impulse / dt is the torque that makes it so). Reads `m.actuators`, `s.targets`, `s.q`,
/// the warm impulses `s.warm_other[*other..]`; writes one-row blocks into `w.problem` and their
/// rows into `w.act_row`, and advances `*other` past them.
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
        w.act_row[i] = w.problem.push_dof_row(kind, speed, warm, (a.dof, 1.0));
    }
}

/// Applied actuator torques after the constraint solve: torque commands and saturated servos
/// their command, position servos `base − gain · v⁺` (the PD at the step's end state), velocity
/// servos and prescribed joints their row's impulse / dt. Reads `w.act_*`, `s.v` (v⁺), `w.solution.lambda`; writes
/// `out.act_tau`. Skipped without actuators and in an RK4 step (which has none).
#[inline]
pub fn actuator_report(m: &SimModel, s: &mut SimState, w: &mut StepData, out: &mut StepOutput) -> Result<(), SimError> {
    if !m.plan.actuators || w.rk4.taken {
        return Ok(());
    }
    for (i, a) in m.actuators.iter().enumerate() {
        out.act_tau[i] = match w.act_row[i] {
            usize::MAX => w.act_base[i] - w.act_gain[i] * s.v[a.dof],
            r => w.solution.lambda[r] / m.dt,
        };
    }
    Ok(())
}

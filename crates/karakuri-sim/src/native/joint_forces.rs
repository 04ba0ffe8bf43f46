//! The joint-force stage (registered [`crate::JointForces`], the scene's springs and dampers among
//! them) and the Coulomb friction rows of joints with `friction`.

use nalgebra::DVector;

use super::build::SimModel;
use super::output::StepOutput;
pub use super::parts::{JointForceSet, JointFriction};
use super::state::SimState;
pub use super::work::JointForceWork;
use super::work::StepData;
use crate::joint_forces::JointForce;
use crate::solver::RowKind;
use crate::SimError;

/// Joint forces, the stage: every joint-force set of the model (the scene's springs and
/// dampers) and of the world (`w.registered`, after them) at the step's start state, made
/// implicit (see [`forces_at`]). Reads `s.time`, `s.q`, `s.v`; writes `w.tau` (overwritten),
/// `w.force_diag`, `w.force_work`. A world without joint forces (`m.plan.joint_forces` off,
/// none registered) only zeroes `w.tau`.
#[inline]
pub fn joint_forces(m: &SimModel, s: &mut SimState, w: &mut StepData, _out: &mut StepOutput) -> Result<(), SimError> {
    if !m.plan.joint_forces && w.registered.joint_forces.is_empty() {
        w.tau.fill(0.0);
        return Ok(());
    }
    let sets = (&m.joint_forces[..], &w.registered.joint_forces[..]);
    forces_at(sets, s.time, &s.q, &s.v, m.dt, (&mut w.tau, &mut w.force_diag), &mut w.force_work);
    Ok(())
}

/// Joint forces at `(t, q, v)`: every set of `sets` (the model's, then the world's), into `tau`
/// (`(nv)`, overwritten) and the
/// iteration matrix's diagonal `diag` (`(nv)`, overwritten). With `c = dt` a force is made
/// implicit by linearising it at the step's end state (`q + dt v⁺`, `v⁺`): `diag += −dt ∂τ/∂dq
/// − dt² ∂τ/∂q` and `τ + dt (∂τ/∂q) v` explicit (a spring-damper: `−k (q − r) − d v − dt k v`
/// with `dt d + dt² k` in qH), unless that would take from the diagonal (then explicit). With
/// `c = 0` (RK4) every force is explicit and `diag` is left zero. Writes `tau`, `diag`, `work`.
pub fn forces_at(
    (model_sets, world_sets): (&[JointForceSet], &[JointForceSet]),
    t: f64,
    q: &DVector<f64>,
    v: &DVector<f64>,
    c: f64,
    (tau, diag): (&mut DVector<f64>, &mut [f64]),
    work: &mut JointForceWork,
) {
    tau.fill(0.0);
    diag.fill(0.0);
    for set in model_sets.iter().chain(world_sets) {
        for (&k, &f) in set.dof.iter().zip(evaluate(set, t, q, v, work)) {
            let d = -c * f.dtau_ddq - c * c * f.dtau_dq;
            if c > 0.0 && d >= 0.0 {
                tau[k] += f.tau + c * f.dtau_dq * v[k];
                diag[k] += d;
            } else {
                tau[k] += f.tau;
            }
        }
    }
}

/// One set's forces at `(t, q, v)`: its joints' positions and velocities gathered into `work`
/// (sized for the set: [`JointForceWork::fit`]), the set called, its forces returned in the
/// order of `set.dof`. For the stage ([`forces_at`]) and the step derivatives.
pub fn evaluate<'w>(set: &JointForceSet, t: f64, q: &DVector<f64>, v: &DVector<f64>, work: &'w mut JointForceWork) -> &'w [JointForce] {
    let n = set.dof.len();
    for i in 0..n {
        work.q[i] = q[set.iq[i]];
        work.dq[i] = v[set.dof[i]];
        work.out[i] = JointForce::default();
    }
    set.forces.forces(t, &work.q[..n], &work.dq[..n], &mut work.out[..n]);
    &work.out[..n]
}

/// Coulomb friction rows: `v⁺_k = 0` with the impulse bounded by `± friction · dt`, so a
/// joint whose other torques stay within its friction sticks exactly and one pushed beyond
/// slides against `± friction`. Reads `m.frictions`, the warm impulses `s.warm_other[*other..]`;
/// writes one-row blocks into `w.problem` and advances `*other` past them.
pub fn friction_rows(m: &SimModel, s: &SimState, w: &mut StepData, other: &mut usize) {
    for f in &m.frictions {
        let bound = f.friction * m.dt;
        let warm = s.warm_other.get(*other).copied().unwrap_or(0.0).clamp(-bound, bound);
        *other += 1;
        w.problem.push_dof_row(RowKind::Bounded { lo: -bound, hi: bound }, 0.0, warm, (f.dof, 1.0));
    }
}

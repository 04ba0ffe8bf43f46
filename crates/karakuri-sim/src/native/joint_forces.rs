//! The joint-force stage (registered [`JointForces`], the scene's springs and dampers among
//! them) and the Coulomb friction rows of joints with `friction`.

use nalgebra::DVector;

use super::build::SimModel;
use super::contact;
use super::state::{SimState, StepData};
use crate::joint_forces::{JointForce, JointForces};
use crate::solver::RowKind;

/// A [`JointForces`] registered for some one-dof joints.
pub struct JointForceSet {
    /// The joints' configuration indices.
    pub iq: Vec<usize>,
    /// Their velocity indices.
    pub dof: Vec<usize>,
    /// The forces.
    pub forces: Box<dyn JointForces>,
}

/// A joint's Coulomb friction: `|τ| ≤ friction`, sticking below it.
#[derive(Clone, Copy, Debug)]
pub struct JointFriction {
    /// Its velocity index.
    pub dof: usize,
    /// The largest friction torque (N·m) or force (N).
    pub friction: f64,
}

/// Scratch of the joint-force stage, sized for the largest set.
#[derive(Clone, Debug, Default)]
pub struct JointForceWork {
    /// The set's positions.
    pub q: Vec<f64>,
    /// The set's velocities.
    pub dq: Vec<f64>,
    /// The set's forces.
    pub out: Vec<JointForce>,
}

impl JointForceWork {
    /// Room for a set of `n` joints.
    pub fn fit(&mut self, n: usize) {
        if self.q.len() < n {
            self.q.resize(n, 0.0);
            self.dq.resize(n, 0.0);
            self.out.resize(n, JointForce::default());
        }
    }
}

/// Joint forces: every registered set at `(t, q, v)`, into `tau` (`(nv)`, overwritten) and the
/// iteration matrix's diagonal `diag` (`(nv)`, overwritten). With `c = dt` a force is made
/// implicit by linearising it at the step's end state (`q + dt v⁺`, `v⁺`): `diag += −dt ∂τ/∂dq
/// − dt² ∂τ/∂q` and `τ + dt (∂τ/∂q) v` explicit (a spring-damper: `−k (q − r) − d v − dt k v`
/// with `dt d + dt² k` in qH), unless that would take from the diagonal (then explicit). With
/// `c = 0` (RK4) every force is explicit and `diag` is left zero. Reads `m.joint_forces`;
/// writes `tau`, `diag`, `work`.
#[allow(clippy::too_many_arguments)]
pub fn joint_forces(
    m: &SimModel,
    t: f64,
    q: &DVector<f64>,
    v: &DVector<f64>,
    c: f64,
    tau: &mut DVector<f64>,
    diag: &mut [f64],
    work: &mut JointForceWork,
) {
    tau.fill(0.0);
    diag.fill(0.0);
    for set in &m.joint_forces {
        let n = set.dof.len();
        for i in 0..n {
            work.q[i] = q[set.iq[i]];
            work.dq[i] = v[set.dof[i]];
            work.out[i] = JointForce::default();
        }
        set.forces.forces(t, &work.q[..n], &work.dq[..n], &mut work.out[..n]);
        for i in 0..n {
            let (k, f) = (set.dof[i], work.out[i]);
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

/// Coulomb friction rows: `v⁺_k = 0` with the impulse bounded by `± friction · dt`, so a
/// joint whose other torques stay within its friction sticks exactly and one pushed beyond
/// slides against `± friction`. Reads `m.frictions`, the warm impulses `s.warm_other[*other..]`;
/// writes rows into `w.rows` and advances `*other` past them.
pub fn friction_rows(m: &SimModel, s: &SimState, w: &mut StepData, other: &mut usize) {
    for f in &m.frictions {
        let bound = f.friction * m.dt;
        let warm = s.warm_other.get(*other).copied().unwrap_or(0.0).clamp(-bound, bound);
        *other += 1;
        let ranges = [contact::tree_range(&m.model, m.model.dof_joint[f.dof]), (0, 0)];
        let r = w.rows.push_ranged(RowKind::Bounded { lo: -bound, hi: bound }, 0.0, warm, ranges);
        w.rows.j_row_mut(r)[f.dof] = 1.0;
    }
}

//! The RK4 step's derivatives (a world of one-dof joints, as `auto` gives RK4): the stages'
//! Jacobians chained through the classical scheme, sub-step by sub-step, as the rk4 stage
//! takes them (`native/rk4.rs`, the same sub-step count). With `x = (q, v)`, `k(x) = (v, q̈)`
//! and `X = ∂x/∂x₀` at a sub-step's start: `∂x_i = X + c_i h ∂k_{i−1}`,
//! `∂k_i = [[0, I], [∂q̈/∂q, ∂q̈/∂v]] ∂x_i`, and `X ← X + h/6 (∂k₀ + 2 ∂k₁ + 2 ∂k₂ + ∂k₃)`.

use nalgebra::{DMatrix, DVector};

use super::super::build::SimModel;
use super::super::rk4::substeps;
use super::super::state::SimState;
use super::super::work::StepData;
use super::smooth::Eval;
use crate::engine::unsupported;
use crate::SimError;

/// The RK4 chain's buffers (model order; the world has `nq = nv = n`).
pub struct Rk4Work {
    q0: DVector<f64>,
    v0: DVector<f64>,
    q: DVector<f64>,
    v: DVector<f64>,
    kq: [DVector<f64>; 4],
    kv: [DVector<f64>; 4],
    /// `∂x_i/∂x₀` of the stage `(2n x 2n)`.
    dx: DMatrix<f64>,
    /// `∂k_i/∂x₀` `(2n x 2n)` each.
    dk: [DMatrix<f64>; 4],
}

impl Rk4Work {
    /// Buffers for `n` dofs.
    pub fn new(n: usize) -> Rk4Work {
        let z = || DVector::zeros(n);
        let zm = || DMatrix::zeros(2 * n, 2 * n);
        Rk4Work { q0: z(), v0: z(), q: z(), v: z(), kq: [z(), z(), z(), z()], kv: [z(), z(), z(), z()], dx: zm(), dk: [zm(), zm(), zm(), zm()] }
    }
}

/// `A` of the RK4 step from `(s.q, s.v)` into `a` (model order; an RK4 world has no
/// actuators: `B` has no columns). Refuses a world with a joint of more than one dof.
pub fn derivatives(
    m: &SimModel,
    s: &SimState,
    w: &StepData,
    (ev, rw): (&mut Eval, &mut Rk4Work),
    a: &mut DMatrix<f64>,
) -> Result<(), SimError> {
    let (model, n) = (&m.model, m.model.nv);
    if let Some(j) = (1..model.njoints).find(|&j| model.nqs[j] != 1 || model.nvs[j] != 1) {
        return Err(unsupported("native", &format!(
            "step derivatives of an RK4 step with joint '{}' of more than one dof (engine.integrator: rk4 with a free or ball joint)",
            model.joint_names[j]
        )));
    }
    let nsub = substeps(w.data.joint_velocities()?, m.dt);
    let h = m.dt / nsub as f64;
    rw.q0.copy_from(&s.q);
    rw.v0.copy_from(&s.v);
    a.fill(0.0);
    a.fill_diagonal(1.0);
    for i in 0..nsub {
        let t0 = s.time + i as f64 * h;
        rw.q.copy_from(&rw.q0);
        rw.v.copy_from(&rw.v0);
        rw.dx.copy_from(a);
        stage(m, s, w, ev, rw, (0, t0))?;
        for (st, f) in [(1, 0.5), (2, 0.5), (3, 1.0)] {
            // the rk4 stage's arithmetic: q0 + (k f h), v0 + k (f h)
            for k in 0..n {
                rw.q[k] = rw.q0[k] + rw.kq[st - 1][k] * (f * h);
                rw.v[k] = rw.v0[k] + rw.kv[st - 1][k] * (f * h);
            }
            rw.dx.copy_from(a);
            axpy(&mut rw.dx, f * h, &rw.dk[st - 1]);
            stage(m, s, w, ev, rw, (st, t0 + f * h))?;
        }
        let sixth = h / 6.0;
        for k in 0..n {
            rw.q0[k] += (rw.kq[0][k] + rw.kq[1][k] * 2.0 + rw.kq[2][k] * 2.0 + rw.kq[3][k]) * sixth;
            rw.v0[k] += (rw.kv[0][k] + rw.kv[1][k] * 2.0 + rw.kv[2][k] * 2.0 + rw.kv[3][k]) * sixth;
        }
        let [d0, d1, d2, d3] = &rw.dk;
        for (d, k) in [(d0, sixth), (d1, 2.0 * sixth), (d2, 2.0 * sixth), (d3, sixth)] {
            axpy(a, k, d);
        }
    }
    Ok(())
}

/// `y += k x` (same shapes).
fn axpy(y: &mut DMatrix<f64>, k: f64, x: &DMatrix<f64>) {
    for (yi, xi) in y.as_mut_slice().iter_mut().zip(x.as_slice()) {
        *yi += k * xi;
    }
}

/// Evaluation `st` at `(rw.q, rw.v)`, time `t`: `k = (v, q̈)` and `∂k = J ∂x` from `rw.dx`.
fn stage(m: &SimModel, s: &SimState, w: &StepData, ev: &mut Eval, rw: &mut Rk4Work, (st, t): (usize, f64)) -> Result<(), SimError> {
    let n = m.model.nv;
    ev.applied(m, s, &w.registered.joint_forces, (&rw.q, &rw.v), (t, 0.0, false))?;
    ev.acceleration(m, &rw.q, &rw.v, None)?;
    ev.unpack();
    rw.kq[st].copy_from(&rw.v);
    rw.kv[st].copy_from(&ev.qdd);
    let dk = &mut rw.dk[st];
    dk.view_mut((0, 0), (n, 2 * n)).copy_from(&rw.dx.view((n, 0), (n, 2 * n)));
    dk.view_mut((n, 0), (n, 2 * n)).gemm(1.0, &ev.aq, &rw.dx.view((0, 0), (n, 2 * n)), 0.0);
    dk.view_mut((n, 0), (n, 2 * n)).gemm(1.0, &ev.av, &rw.dx.view((n, 0), (n, 2 * n)), 1.0);
    Ok(())
}

//! The semi-implicit Euler step's derivatives without constraint rows (model order):
//! `v_free = v + dt q̈ (+ dt ω × l for a free flyer: its world-frame step)`, `v⁺ = v_free`,
//! `q⁺ = q ⊕ dt v⁺` with the free flyer's linear velocity re-expressed ([`super::tangent`]).
//! With `F = ∂v_free/∂(q, v)` and `Fu = ∂v_free/∂u`, each joint's rows are
//! `∂q⁺ = Pq [I 0] + Pv F`, `∂v⁺ = Vv F` (and `Pv Fu`, `Vv Fu` for `B`).

use karakuri::model::JointType;
use karakuri::spatial::{skew, Vec3};
use nalgebra::{DMatrix, DVector};

use super::super::build::SimModel;
use super::super::state::SimState;
use super::super::work::StepData;
use super::smooth::Eval;
use super::tangent::blocks;
use crate::engine::unsupported;
use crate::SimError;

/// The Euler step's buffers (model order).
pub struct EulerWork {
    /// `v_free` `(n)`.
    v_free: DVector<f64>,
    /// `∂v_free/∂(q, v)` `(n x 2n)`.
    f: DMatrix<f64>,
    /// `∂v_free/∂u` `(n x nu)`.
    fu: DMatrix<f64>,
}

impl EulerWork {
    /// Buffers for `n` dofs and `nu` actuated joints.
    pub fn new(n: usize, nu: usize) -> EulerWork {
        EulerWork { v_free: DVector::zeros(n), f: DMatrix::zeros(n, 2 * n), fu: DMatrix::zeros(n, nu) }
    }
}

/// `A`, `B` of the Euler step from `(s.q, s.v)` into `a`, `b` (model order). Refuses a joint
/// limit that the step would hold (its row is active).
pub fn derivatives(
    m: &SimModel,
    s: &SimState,
    w: &StepData,
    (ev, ew): (&mut Eval, &mut EulerWork),
    (a, b): (&mut DMatrix<f64>, &mut DMatrix<f64>),
) -> Result<(), SimError> {
    let (model, dt, n) = (&m.model, m.dt, m.model.nv);
    ev.applied(m, s, &w.registered.joint_forces, (&s.q, &s.v), (s.time, dt, m.plan.actuators))?;
    ev.acceleration(m, &s.q, &s.v)?;
    free_velocity(m, s, ev, ew);
    for lim in &m.limits {
        // the limit stage's test: a row is written when the free velocity could reach it
        let (qk, vk) = (s.q[lim.iq], ew.v_free[lim.dof]);
        let reach = vk.abs() * dt + 1e-9;
        if qk - lim.lo <= reach || lim.hi - qk <= reach {
            let joint = &model.joint_names[model.dof_joint[lim.dof]];
            return Err(unsupported("native", &format!(
                "step derivatives through joint '{joint}''s limit, which this step holds (not built yet)"
            )));
        }
    }
    a.fill(0.0);
    b.fill(0.0);
    for j in 1..model.njoints {
        let (iv, nv) = (model.idx_v[j], model.nvs[j]);
        let bl = blocks(&model.joint_types[j], &ew.v_free.as_slice()[iv..iv + nv], dt).ok_or_else(|| {
            unsupported("native", &format!("step derivatives of joint '{}' (a planar joint)", model.joint_names[j]))
        })?;
        for r in 0..nv {
            for c in 0..nv {
                a[(iv + r, iv + c)] += bl.pq[(r, c)];
                let (pv, vv) = (bl.pv[(r, c)], bl.vv[(r, c)]);
                if pv != 0.0 {
                    add_row(a, iv + r, pv, &ew.f, iv + c);
                    add_row(b, iv + r, pv, &ew.fu, iv + c);
                }
                if vv != 0.0 {
                    add_row(a, n + iv + r, vv, &ew.f, iv + c);
                    add_row(b, n + iv + r, vv, &ew.fu, iv + c);
                }
            }
        }
    }
    Ok(())
}

/// `dst[r, :] += k src[s, :]`.
fn add_row(dst: &mut DMatrix<f64>, r: usize, k: f64, src: &DMatrix<f64>, s: usize) {
    for c in 0..src.ncols() {
        dst[(r, c)] += k * src[(s, c)];
    }
}

/// `v_free` and its derivatives `F`, `Fu`, as the free-velocity stage: `v + dt q̈`, and a free
/// flyer's `dt ω × l` (`∂/∂l = dt [ω]×`, `∂/∂ω = −dt [l]×`).
fn free_velocity(m: &SimModel, s: &SimState, ev: &Eval, ew: &mut EulerWork) {
    let (model, dt, n) = (&m.model, m.dt, m.model.nv);
    ew.v_free.copy_from(&s.v);
    ew.v_free.axpy(dt, &ev.qdd, 1.0);
    ew.f.view_mut((0, 0), (n, n)).copy_from(&ev.aq);
    ew.f.view_mut((0, n), (n, n)).copy_from(&ev.av);
    ew.f.scale_mut(dt);
    for k in 0..n {
        ew.f[(k, n + k)] += 1.0;
    }
    ew.fu.copy_from(&ev.au);
    ew.fu.scale_mut(dt);
    for j in 1..model.njoints {
        if model.joint_types[j] != JointType::FreeFlyer {
            continue;
        }
        let iv = model.idx_v[j];
        let l = Vec3::new(s.v[iv], s.v[iv + 1], s.v[iv + 2]);
        let om = Vec3::new(s.v[iv + 3], s.v[iv + 4], s.v[iv + 5]);
        let corr = dt * om.cross(&l);
        let (dl, dw) = (skew(&om) * dt, skew(&l) * -dt);
        for r in 0..3 {
            ew.v_free[iv + r] += corr[r];
            for c in 0..3 {
                ew.f[(iv + r, n + iv + c)] += dl[(r, c)];
                ew.f[(iv + r, n + iv + 3 + c)] += dw[(r, c)];
            }
        }
    }
}

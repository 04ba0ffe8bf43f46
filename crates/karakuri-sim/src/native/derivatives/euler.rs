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
use super::contact::{self, ContactWork};
use super::smooth::Eval;
use super::tangent::{blocks, Blocks};
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
    /// Each joint's update blocks `(njoints)`.
    blocks: Vec<Blocks>,
}

impl EulerWork {
    /// Buffers for `n` dofs and `nu` actuated joints.
    pub fn new(model: &karakuri::Model, nu: usize) -> EulerWork {
        let n = model.nv;
        let blocks = (0..model.njoints).map(|_| Blocks::default()).collect();
        EulerWork { v_free: DVector::zeros(n), f: DMatrix::zeros(n, 2 * n), fu: DMatrix::zeros(n, nu), blocks }
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
    mut contacts: Option<&mut ContactWork>,
) -> Result<(), SimError> {
    let (model, dt, n) = (&m.model, m.dt, m.model.nv);
    ev.applied(m, s, &w.registered.joint_forces, (&s.q, &s.v), (s.time, dt, m.plan.actuators))?;
    if let Some(cw) = contacts.as_deref_mut() {
        // the contact impulses as a force at fixed λ: q̈ below is the step's whole (v⁺ − v)/dt
        let (tau, dtau) = ev.applied_mut();
        contact::contact_forces(m, cw, tau, dtau);
    }
    ev.acceleration(m, &s.q, &s.v)?;
    free_velocity(m, s, ev, ew);
    if let Some(cw) = contacts {
        contact::add_impulse_derivatives(m, cw, &mut ew.f, &mut ew.fu)?;
    }
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
    for j in 1..model.njoints {
        let (iv, nv) = (model.idx_v[j], model.nvs[j]);
        ew.blocks[j] = blocks(&model.joint_types[j], &ew.v_free.as_slice()[iv..iv + nv], dt).ok_or_else(|| {
            unsupported("native", &format!("step derivatives of joint '{}' (a planar joint)", model.joint_names[j]))
        })?;
    }
    // column by column (contiguous): A's = [Pq e_c (c < n)] + the update of F's column, B's of Fu's
    for c in 0..2 * n {
        let col = &mut a.as_mut_slice()[c * 2 * n..(c + 1) * 2 * n];
        update(m, &ew.blocks, &ew.f.as_slice()[c * n..(c + 1) * n], col);
        if c < n {
            let j = model.dof_joint[c];
            let (iv, nv) = (model.idx_v[j], model.nvs[j]);
            for r in 0..nv {
                col[iv + r] += ew.blocks[j].pq[(r, c - iv)];
            }
        }
    }
    for c in 0..b.ncols() {
        update(m, &ew.blocks, &ew.fu.as_slice()[c * n..(c + 1) * n], &mut b.as_mut_slice()[c * 2 * n..(c + 1) * 2 * n]);
    }
    Ok(())
}

/// `out = [Pv f; Vv f]` joint by joint for a column `f` of `∂v_free` (`n`), `out` `(2n)`.
fn update(m: &SimModel, blocks: &[Blocks], f: &[f64], out: &mut [f64]) {
    let (model, n) = (&m.model, m.model.nv);
    let (oq, ov) = out.split_at_mut(n);
    for j in 1..model.njoints {
        let (iv, nv, b) = (model.idx_v[j], model.nvs[j], &blocks[j]);
        if nv == 1 {
            oq[iv] = b.pv[(0, 0)] * f[iv];
            ov[iv] = f[iv];
            continue;
        }
        for r in 0..nv {
            let (mut q, mut v) = (0.0, 0.0);
            for k in 0..nv {
                q += b.pv[(r, k)] * f[iv + k];
                v += b.vv[(r, k)] * f[iv + k];
            }
            oq[iv + r] = q;
            ov[iv + r] = v;
        }
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

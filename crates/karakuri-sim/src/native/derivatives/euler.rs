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
    /// `[A | B]ᵀ` `((2n + nu) x 2n)`: column r is row r of `A` and `B` (positions, then
    /// velocities); the velocity half holds `[F | Fu]ᵀ` until [`assemble`].
    pub abt: DMatrix<f64>,
    /// A joint of more than one dof: its columns of `[F | Fu]ᵀ` `((2n + nu) x 6)`.
    tmp: DMatrix<f64>,
    /// Each joint's update blocks `(njoints)`.
    blocks: Vec<Blocks>,
}

impl EulerWork {
    /// Buffers for `n` dofs and `nu` actuated joints.
    pub fn new(model: &karakuri::Model, nu: usize) -> EulerWork {
        let n = model.nv;
        let blocks = (0..model.njoints).map(|_| Blocks::default()).collect();
        EulerWork { v_free: DVector::zeros(n), abt: DMatrix::zeros(2 * n + nu, 2 * n), tmp: DMatrix::zeros(2 * n + nu, 6), blocks }
    }
}

/// `[A | B]ᵀ` of the Euler step from `(s.q, s.v)` into `ew.abt` (model order; `w.data` holds
/// the terms at the state, as after every step). Refuses a joint limit that the step would
/// hold (its row is active).
pub fn derivatives(
    m: &SimModel,
    s: &SimState,
    w: &StepData,
    (ev, ew): (&mut Eval, &mut EulerWork),
    mut contacts: Option<&mut ContactWork>,
) -> Result<(), SimError> {
    let (model, dt, n) = (&m.model, m.dt, m.model.nv);
    ev.applied(m, s, &w.registered.joint_forces, (&s.q, &s.v), (s.time, dt, m.plan.actuators))?;
    if let Some(cw) = contacts.as_deref_mut() {
        // the contact impulses as a force at fixed λ: q̈ below is the step's whole (v⁺ − v)/dt
        let (tau, dtau) = ev.applied_mut();
        contact::contact_forces(m, cw, tau, dtau);
    }
    ev.acceleration(m, &s.q, &s.v, Some(&w.data))?;
    free_velocity(m, s, ev, ew);
    if let Some(cw) = contacts {
        contact::add_impulse_derivatives(m, cw, ew.abt.columns_mut(n, n))?;
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
        if nv == 1 {
            continue;
        }
        ew.blocks[j] = blocks(&model.joint_types[j], &ew.v_free.as_slice()[iv..iv + nv], dt).ok_or_else(|| {
            unsupported("native", &format!("step derivatives of joint '{}' (a planar joint)", model.joint_names[j]))
        })?;
    }
    assemble(m, ew);
    Ok(())
}

/// The configuration update joint by joint on the columns of `[F | Fu]ᵀ` (each a contiguous
/// row of `F`, `Fu` over every input): position rows `Pq [I 0] + Pv F`, velocity rows `Vv F`;
/// a one-dof joint's are `[e_k 0] + dt F_k` and `F_k` as they stand.
fn assemble(m: &SimModel, ew: &mut EulerWork) {
    let (model, n, dt) = (&m.model, m.model.nv, m.dt);
    let rows = ew.abt.nrows();
    let (pos, vel) = ew.abt.as_mut_slice().split_at_mut(n * rows);
    for j in 1..model.njoints {
        let (iv, nv, b) = (model.idx_v[j], model.nvs[j], &ew.blocks[j]);
        if nv == 1 {
            let (p, f) = (&mut pos[iv * rows..(iv + 1) * rows], &vel[iv * rows..(iv + 1) * rows]);
            p.iter_mut().zip(f).for_each(|(p, f)| *p = dt * f);
            p[iv] += 1.0;
            continue;
        }
        let tmp = &mut ew.tmp.as_mut_slice()[..nv * rows];
        tmp.copy_from_slice(&vel[iv * rows..(iv + nv) * rows]);
        for r in 0..nv {
            let p = &mut pos[(iv + r) * rows..(iv + r + 1) * rows];
            combine(p, tmp, rows, |k| b.pv[(r, k)]);
            for c in 0..nv {
                p[iv + c] += b.pq[(r, c)];
            }
            combine(&mut vel[(iv + r) * rows..(iv + r + 1) * rows], tmp, rows, |k| b.vv[(r, k)]);
        }
    }
}

/// `out = Σ_k coef(k) tmp_k` over the `rows`-long columns of `tmp`, skipping zero coefficients.
fn combine(out: &mut [f64], tmp: &[f64], rows: usize, coef: impl Fn(usize) -> f64) {
    out.fill(0.0);
    for (k, col) in tmp.chunks_exact(rows).enumerate() {
        let c = coef(k);
        if c != 0.0 {
            out.iter_mut().zip(col).for_each(|(o, x)| *o += c * x);
        }
    }
}

/// `v_free` and `[F | Fu]ᵀ` into the velocity half of `ew.abt`, as the free-velocity stage:
/// `F = dt [∂q̈/∂q, ∂q̈/∂v] + [0 I]`, `Fu = dt ∂q̈/∂u`, and a free flyer's `dt ω × l`
/// (`∂/∂l = dt [ω]×`, `∂/∂ω = −dt [l]×`).
fn free_velocity(m: &SimModel, s: &SimState, ev: &Eval, ew: &mut EulerWork) {
    let (model, dt, n) = (&m.model, m.dt, m.model.nv);
    ew.v_free.copy_from(&s.v);
    ew.v_free.axpy(dt, &ev.qdd, 1.0);
    let rows = ew.abt.nrows();
    let vel = &mut ew.abt.as_mut_slice()[n * rows..];
    vel.iter_mut().zip(ev.x.as_slice()).for_each(|(f, x)| *f = dt * x);
    for k in 0..n {
        vel[k * rows + n + k] += 1.0;
    }
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
                vel[(iv + r) * rows + n + iv + c] += dl[(r, c)];
                vel[(iv + r) * rows + n + iv + 3 + c] += dw[(r, c)];
            }
        }
    }
}

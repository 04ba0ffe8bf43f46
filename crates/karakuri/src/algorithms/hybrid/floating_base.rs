//! Floating-base inverse dynamics (RBDA Table 9.6), the fast path of the articulated-body route
//! of [`hybrid_dynamics`](super::hybrid_dynamics) when the only forward joint is a
//! free-flyer hanging from the universe (a floating robot whose base is driven by a known wrench
//! and whose other joints follow known accelerations).
//!
//! With `a = a⁰ + δa` as in the articulated-body route, every body below the free-flyer moves
//! rigidly with the base's offset `δa` (the other joints' accelerations are all known), so the
//! articulated inertia of each subtree is its composite rigid-body inertia. Three passes:
//!
//! 1. forward, as RNEA with the base acceleration zero (gravity folded in): placements,
//!    velocities, `a⁰_i` and body forces `f⁰_i = I_i a⁰_i + v_i ×* I_i v_i` in the body frames;
//! 2. backward: `τ_i = S_iᵀ f⁰_i`, `f⁰_λ(i) += λX_i* f⁰_i` as RNEA, the composite inertias
//!    `I^c_λ(i) += λX_i* I^c_i` in joint frames as CRBA (an elementary rotation and a shift for
//!    the usual URDF joint), and `F_k = I^c_i S_k` moved to world coordinates once;
//! 3. the base: `I^c_base δa = τ_base - f⁰_base` solved in its own frame in closed form (shift to
//!    the centre of mass, a 3x3 Cholesky), `q̈_base = δa`; then every other moved dof gets
//!    `τ_k += S_kᵀ I^c_i δa_i = F_k · δa` with `δa` in world coordinates, so `δa` is never carried
//!    frame by frame.
//!
//! Composites in joint frames rather than summed in world coordinates, and pass 1 shared with
//! the general route: why, with the measurements, in `docs/PERFORMANCE.md` (hybrid).

use super::bias::bias_pass;
use super::workspace::HybridWorkspace;
use crate::algorithms::{add_inertia_to_parent, dof_dot, inertia_times_dof, is_floating_root};
use crate::data::Data;
use crate::model::Model;
use crate::spatial::{Force, Motion, OriginInertia, Vec3};
use nalgebra::DVector;

/// The forward joint if it is the only one and is a free-flyer child of the universe.
pub(super) fn single_floating_root(model: &Model, is_forward: &[bool]) -> Option<usize> {
    let mut root = None;
    for (i, &f) in is_forward.iter().enumerate().skip(1) {
        if f {
            if root.is_some() {
                return None;
            }
            root = Some(i);
        }
    }
    let r = root?;
    is_floating_root(model, r).then_some(r)
}

/// Solves `Y a = f` for a spatial inertia `Y` (m, h, I_O) through its centre of mass:
/// `α = I_c⁻¹ (f_a − c × f_l)`, `a_l = f_l / m + c × α`, `I_c = I_O − m [c]ₓᵀ[c]ₓ` (3x3 Cholesky).
/// NaN if `I_c` is not positive definite.
#[inline]
fn solve_inertia(y: &OriginInertia, f: &Force) -> Motion {
    let m = y.mass;
    let c = y.h / m;
    let b = f.angular - c.cross(&f.linear);
    // I_c = I_O + h hᵀ / m − (|h|²/m) 1 = I_O + m (c cᵀ − |c|² 1)
    let io = &y.i_o;
    let cc = c.norm_squared();
    let a00 = io[(0, 0)] + m * (c.x * c.x - cc);
    let a11 = io[(1, 1)] + m * (c.y * c.y - cc);
    let a22 = io[(2, 2)] + m * (c.z * c.z - cc);
    let a10 = io[(1, 0)] + m * c.y * c.x;
    let a20 = io[(2, 0)] + m * c.z * c.x;
    let a21 = io[(2, 1)] + m * c.z * c.y;
    let sqrt = |x: f64| if x > 0.0 { x.sqrt() } else { f64::NAN };
    let l00 = sqrt(a00);
    let l10 = a10 / l00;
    let l20 = a20 / l00;
    let l11 = sqrt(a11 - l10 * l10);
    let l21 = (a21 - l20 * l10) / l11;
    let l22 = sqrt(a22 - l20 * l20 - l21 * l21);
    // L z = b, Lᵀ α = z
    let z0 = b.x / l00;
    let z1 = (b.y - l10 * z0) / l11;
    let z2 = (b.z - l20 * z0 - l21 * z1) / l22;
    let w2 = z2 / l22;
    let w1 = (z1 - l21 * w2) / l11;
    let w0 = (z0 - l10 * w1 - l20 * w2) / l00;
    let alpha = Vec3::new(w0, w1, w2);
    Motion::new(f.linear / m + c.cross(&alpha), alpha)
}

/// The fast path (see the module documentation); `root` is the free-flyer, the only forward
/// joint. Writes `ws.qdd`, `ws.tau`, placements and velocities.
#[allow(clippy::too_many_arguments)]
pub(super) fn floating_base_inverse(
    model: &Model,
    data: &mut Data,
    ws: &mut HybridWorkspace,
    q: &DVector<f64>,
    v: &DVector<f64>,
    known: &DVector<f64>,
    is_forward: &[bool],
    root: usize,
) {
    let ks = known.as_slice();
    let nj = model.njoints;
    // 1. forward: RNEA with the base acceleration zero; composite inertias start as body inertias
    bias_pass(model, data, ws, q, v, known, is_forward);
    ws.moved_by_forward[0] = false;
    for i in 1..nj {
        let moved = i == root || ws.moved_by_forward[model.parents[i]];
        ws.moved_by_forward[i] = moved;
        if moved {
            ws.ic[i] = model.origin_inertias[i];
        }
    }
    // 2. backward: τ_i = S_iᵀ f⁰_i and f⁰_λ(i) += λX_i* f⁰_i as RNEA; I^c_λ(i) += λX_i* I^c_i;
    //    F_k = I^c_i S_k in world coordinates for the moved joints below the base
    let tau = ws.tau.as_mut_slice();
    for i in (1..nj).rev() {
        let iv = model.idx_v[i];
        for k in iv..iv + model.nvs[i] {
            tau[k] = dof_dot(model, k, &ws.pa[i]);
        }
        let p = model.parents[i];
        if p > 0 {
            let li = &data.li_m_i[i];
            let fp = li.act_force(&ws.pa[i]);
            ws.pa[p] += fp;
            if ws.moved_by_forward[i] {
                let o_m_i = &data.o_m_i[i];
                for k in iv..iv + model.nvs[i] {
                    ws.f_world[k] = o_m_i.act_force(&inertia_times_dof(model, k, &ws.ic[i]));
                }
                let (ic_lo, ic_hi) = ws.ic.split_at_mut(i);
                add_inertia_to_parent(model, i, li, &ic_hi[0], &mut ic_lo[p]);
            }
        }
    }
    // 3. the base, in its own frame (where S = 1): I^c δa = τ - f⁰, q̈_base = δa
    let ir = model.idx_v[root];
    let rhs = Force::new(
        Vec3::new(ks[ir], ks[ir + 1], ks[ir + 2]) - ws.pa[root].linear,
        Vec3::new(ks[ir + 3], ks[ir + 4], ks[ir + 5]) - ws.pa[root].angular,
    );
    let da = solve_inertia(&ws.ic[root], &rhs);
    ws.qdd.copy_from(known);
    let qdd = ws.qdd.as_mut_slice();
    qdd[ir..ir + 3].copy_from_slice(da.linear.as_slice());
    qdd[ir + 3..ir + 6].copy_from_slice(da.angular.as_slice());
    tau[ir..ir + 6].copy_from_slice(&ks[ir..ir + 6]);
    // the other moved dofs: τ_k += S_kᵀ I^c_i (iX_O δa) = F_k · δa, all in world coordinates
    let da = data.o_m_i[root].act_motion(&da);
    for i in root + 1..nj {
        if ws.moved_by_forward[i] {
            let iv = model.idx_v[i];
            for k in iv..iv + model.nvs[i] {
                tau[k] += da.dot(&ws.f_world[k]);
            }
        }
    }
}

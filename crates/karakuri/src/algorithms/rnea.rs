//! Inverse dynamics by the recursive Newton–Euler algorithm (RBDA Table 5.1), in each body's
//! own frame as Pinocchio's LOCAL convention.

use super::jcalc::{joint_velocity, project_force_fast};
use super::{check_len, dof_in_frame, force_to_parent, joint_motion, motion_to_joint, place_joints, place_joints_after_crba, project_force};
use crate::data::{Data, Fresh};
use crate::model::Model;
use crate::spatial::{Force, Motion, Vec3};
use nalgebra::DVector;

/// τ = M(q) q̈ + C(q, q̇) q̇ + g(q): the joint forces that produce acceleration `a`. Fresh
/// after: placements, velocities, accelerations (with and without gravity).
#[doc(alias = "rnea")]
pub fn inverse_dynamics<'a>(
    model: &Model,
    data: &'a mut Data,
    q: &DVector<f64>,
    v: &DVector<f64>,
    a: &DVector<f64>,
) -> &'a DVector<f64> {
    rnea_impl(model, data, q, v, Some(a), None, Placement::Fresh)
}

/// Inverse dynamics with external forces `f_ext` acting on each body, expressed in the body's
/// joint frame (`njoints` entries; the universe's is ignored).
pub fn inverse_dynamics_with_forces<'a>(
    model: &Model,
    data: &'a mut Data,
    q: &DVector<f64>,
    v: &DVector<f64>,
    a: &DVector<f64>,
    f_ext: &[Force],
) -> &'a DVector<f64> {
    assert_eq!(f_ext.len(), model.njoints, "f_ext needs one force per joint (njoints)");
    rnea_impl(model, data, q, v, Some(a), Some(f_ext), Placement::Fresh)
}

/// C(q, q̇) q̇ + g(q): Coriolis, centrifugal and gravity terms (RNEA with q̈ = 0).
pub fn nonlinear_effects<'a>(model: &Model, data: &'a mut Data, q: &DVector<f64>, v: &DVector<f64>) -> &'a DVector<f64> {
    rnea_impl(model, data, q, v, None, None, Placement::Fresh)
}

/// [`nonlinear_effects`] right after [`mass_matrix`](super::mass_matrix) at the same `q`: the
/// joints are not placed again ([`place_joints_after_crba`]). For
/// [`compute_all_terms`](super::compute_all_terms).
pub(crate) fn nonlinear_effects_after_crba(model: &Model, data: &mut Data, q: &DVector<f64>, v: &DVector<f64>) {
    rnea_impl(model, data, q, v, None, None, Placement::AfterCrba);
}

/// g(q): the generalised gravity (RNEA with q̇ = q̈ = 0). Fresh after: placements.
///
/// Not RNEA's passes: at rest every body's acceleration is −g, so the force joint i transmits
/// is the weight of its subtree, `F = (−m g, −h × g)` at the world origin (mass `m`, first
/// moment `h = Σ m_b c_b` in world coordinates), and `τ_k = S_kᵀ F` with `S_k` in the world.
/// One backward pass of plain sums over four numbers per joint (no velocity terms, no 6x6
/// products); a revolute about a unit axis takes `τ = w · (g × (h − m p))`, its axis `w` and
/// origin `p` read off the world placement. The same torques as RNEA to rounding.
pub fn gravity_torques<'a>(model: &Model, data: &'a mut Data, q: &DVector<f64>) -> &'a DVector<f64> {
    check_len("q", q, model.nq);
    if model.gravity.angular != Vec3::zeros() {
        return gravity_torques_rnea(model, data, q);
    }
    place_joints(model, data, q.as_slice(), |_, _| {});
    data.fresh = Fresh::PLACEMENTS;
    let g = model.gravity.linear;
    let (mass, moment) = (&mut data.subtree_mass[..], &mut data.subtree_moment[..]);
    (mass[0], moment[0]) = (0.0, Vec3::zeros());
    for i in 1..model.njoints {
        let b = &model.inertias[i];
        mass[i] = b.mass;
        moment[i] = b.mass * data.o_m_i[i].transform_point(&b.com);
    }
    let tau = data.tau.as_mut_slice();
    for i in (1..model.njoints).rev() {
        let (m, h) = (mass[i], moment[i]);
        let p = model.parents[i];
        mass[p] += m;
        moment[p] += h;
        let x = &data.o_m_i[i];
        let v0 = model.idx_v[i];
        for k in v0..v0 + model.nvs[i] {
            tau[k] = match model.dof_axis[k] {
                // S = (p × w, w): S · (−m g, −h × g) = w · (g × (h − m p))
                Some(c) if c >= 3 => x.rotation.column(c - 3).dot(&g.cross(&(h - m * x.translation))),
                // S = (w, 0)
                Some(c) => -m * x.rotation.column(c).dot(&g),
                None => dof_in_frame(model, k, x).dot(&Force::new(-m * g, -h.cross(&g))),
            };
        }
    }
    &data.tau
}

/// [`gravity_torques`] by RNEA's passes (a model whose gravity has an angular part).
fn gravity_torques_rnea<'a>(model: &Model, data: &'a mut Data, q: &DVector<f64>) -> &'a DVector<f64> {
    // forward pass: placements, a_i = X_i a_λ(i) with a_0 = -g (q̇ = q̈ = 0), f_i = I_i a_i
    data.a_gf[0] = -model.gravity;
    place_joints(model, data, q.as_slice(), |data, i| {
        data.a_gf[i] = data.li_m_i[i].inv_act_motion(&data.a_gf[model.parents[i]]);
        data.f[i] = model.inertias[i].mul_motion(&data.a_gf[i]);
    });
    // the velocities and accelerations without gravity were not computed
    data.fresh = Fresh::PLACEMENTS;
    backward_pass::<false>(model, data);
    &data.tau
}

fn rnea_impl<'a>(
    model: &Model,
    data: &'a mut Data,
    q: &DVector<f64>,
    v: &DVector<f64>,
    a: Option<&DVector<f64>>,
    f_ext: Option<&[Force]>,
    placement: Placement,
) -> &'a DVector<f64> {
    check_len("q", q, model.nq);
    check_len("v", v, model.nv);
    if let Some(a) = a {
        check_len("a", a, model.nv);
    }
    let (qs, vs, as_) = (q.as_slice(), v.as_slice(), a.map(|a| a.as_slice()));
    passes_twice(model, data, (qs, vs, as_), f_ext, placement);
    // a at the given q̈ (zero for nonlinear_effects)
    data.fresh = Fresh::PLACEMENTS | Fresh::VELOCITIES | Fresh::ACCELERATIONS | Fresh::ACCELERATIONS_WITH_GRAVITY;
    if let Some(a) = a {
        // armature · q̈ (skipped where zero: the same bits as without armature)
        for (k, &arm) in model.armature.iter().enumerate() {
            if arm != 0.0 {
                data.tau[k] += arm * a[k];
            }
        }
    }
    &data.tau
}

crate::twice! {
    /// [`rnea_passes`] compiled twice (AVX2 chosen at run time, portable): the same operations
    /// in the same order, the same bits (`twice!`); `FAST` for placements from `q`.
    fn passes_twice(model: &Model, data: &mut Data, (qs, vs, a): (&[f64], &[f64], Option<&[f64]>), f_ext: Option<&[Force]>, placement: Placement) {
        match placement {
            Placement::Fresh => rnea_passes::<true>(model, data, qs, vs, a, f_ext, placement),
            Placement::AfterCrba => rnea_passes::<false>(model, data, qs, vs, a, f_ext, placement),
        }
    }
}

/// RNEA's two passes. `FAST` (the public calls, record 0094): plane turns and one-component
/// joint motions ([`joint_velocity`], [`force_to_parent`], [`project_force_fast`]): the same
/// numbers as the general products but for the sign of an exact zero. Not `FAST`
/// ([`compute_all_terms`](super::compute_all_terms), which the simulator steps on): the
/// general products, bit for bit as before.
#[inline(always)]
fn rnea_passes<const FAST: bool>(
    model: &Model,
    data: &mut Data,
    qs: &[f64],
    vs: &[f64],
    a: Option<&[f64]>,
    f_ext: Option<&[Force]>,
    placement: Placement,
) {
    data.a_gf[0] = -model.gravity;
    data.v[0] = Motion::zero();
    data.a[0] = Motion::zero();
    // the placements first, then the forward steps in a loop of their own: the same numbers
    // as one loop (a step reads the placements of its joint and its ancestors only), and the
    // steps are inlined into both copies of [`passes_twice`] (a closure passed to the
    // placement loop was called out of line, without AVX2)
    match placement {
        Placement::Fresh => place_joints(model, data, qs, |_, _| {}),
        Placement::AfterCrba => place_joints_after_crba(model, data, qs, |_, _| {}),
    }
    for i in 1..model.njoints {
        forward_step::<FAST>(model, data, i, vs, a, f_ext);
    }
    backward_pass::<FAST>(model, data);
}

/// The forward pass on joint `i` (RBDA Table 5.1): v_i, a_i, f_i = I_i a_i + v_i ×* I_i v_i - f_ext_i.
/// Inlined, so that the AVX2 copy of [`passes_twice`] has its own.
#[inline(always)]
fn forward_step<const FAST: bool>(model: &Model, data: &mut Data, i: usize, vs: &[f64], a: Option<&[f64]>, f_ext: Option<&[Force]>) {
    let p = model.parents[i];
    let x = data.li_m_i[i];
    if FAST && p != 0 {
        let (vi, bias) = joint_velocity::<true>(model, i, &x, &data.v[p], vs, a);
        data.v[i] = vi;
        data.a[i] = motion_to_joint(model, i, &x, &data.a[p]) + bias;
        data.a_gf[i] = motion_to_joint(model, i, &x, &data.a_gf[p]) + bias;
    } else if p == 0 {
        // a root: v_λ = a_λ = 0, so v_i = S_i q̇_i and v_i × S_i q̇_i = 0 (a motion crossed
        // with itself, exactly zero in floating point too): the transforms of zeros and
        // the cross product are skipped
        let v_j = joint_motion(model, i, vs);
        data.v[i] = v_j;
        let a_j = a.map_or(Motion::zero(), |a| joint_motion(model, i, a));
        data.a[i] = a_j;
        data.a_gf[i] = x.inv_act_motion(&data.a_gf[0]) + a_j;
    } else {
        let v_j = joint_motion(model, i, vs);
        data.v[i] = x.inv_act_motion(&data.v[p]) + v_j;
        // joint bias S_i q̈_i + v_i × S_i q̇_i, shared by a_i and a_i - g
        let mut bias = data.v[i].cross(&v_j);
        if let Some(a) = a {
            bias += joint_motion(model, i, a);
        }
        data.a[i] = x.inv_act_motion(&data.a[p]) + bias;
        data.a_gf[i] = x.inv_act_motion(&data.a_gf[p]) + bias;
    }
    let inertia = &model.inertias[i];
    let h = inertia.mul_motion(&data.v[i]);
    data.f[i] = inertia.mul_motion(&data.a_gf[i]) + data.v[i].cross_force(&h);
    if let Some(fe) = f_ext {
        data.f[i] -= fe[i];
    }
}

/// How the forward pass of [`rnea_impl`] places the joints.
#[derive(Clone, Copy)]
enum Placement {
    /// From `q` ([`place_joints`]).
    Fresh,
    /// CRBA just placed them at the same `q` ([`place_joints_after_crba`]).
    AfterCrba,
}

/// Backward pass: τ_i = S_iᵀ f_i, f_λ(i) += X_iᵀ f_i (`FAST`: as in [`rnea_passes`]).
#[inline(always)]
fn backward_pass<const FAST: bool>(model: &Model, data: &mut Data) {
    for i in (1..model.njoints).rev() {
        if FAST {
            project_force_fast(model, i, &data.f[i], data.tau.as_mut_slice());
        } else {
            project_force(model, i, &data.f[i], data.tau.as_mut_slice());
        }
        let p = model.parents[i];
        if p > 0 {
            let fp = if FAST { force_to_parent(model, i, &data.li_m_i[i], &data.f[i]) } else { data.li_m_i[i].act_force(&data.f[i]) };
            data.f[p] += fp;
        }
    }
}

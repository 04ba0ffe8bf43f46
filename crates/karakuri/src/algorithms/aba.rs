//! Forward dynamics by the articulated-body algorithm (RBDA Table 7.1), in local frames.

use super::{check_len, joint_motion, place_joints};
use crate::data::{Data, Fresh};
use crate::linalg::dense::spd_inverse_small;
use crate::model::Model;
use crate::spatial::{skew, Force, Mat3, Mat6, Motion, Se3, Vec6};
use nalgebra::DVector;

/// q̈ = M⁻¹ (τ - C q̇ - g): the accelerations produced by joint forces `tau`, in `data.ddq`.
/// Fresh after: placements, velocities, accelerations with gravity (the body accelerations
/// ABA propagates have gravity folded in; [`Data::joint_accelerations`] then says so).
#[doc(alias = "aba")]
pub fn forward_dynamics<'a>(
    model: &Model,
    data: &'a mut Data,
    q: &DVector<f64>,
    v: &DVector<f64>,
    tau: &DVector<f64>,
) -> &'a DVector<f64> {
    aba_impl(model, data, q, v, tau, None)
}

/// Forward dynamics with external forces on each body, in the body's joint frame (`njoints`).
pub fn forward_dynamics_with_forces<'a>(
    model: &Model,
    data: &'a mut Data,
    q: &DVector<f64>,
    v: &DVector<f64>,
    tau: &DVector<f64>,
    f_ext: &[Force],
) -> &'a DVector<f64> {
    assert_eq!(f_ext.len(), model.njoints, "f_ext needs one force per joint (njoints)");
    aba_impl(model, data, q, v, tau, Some(f_ext))
}

fn aba_impl<'a>(
    model: &Model,
    data: &'a mut Data,
    q: &DVector<f64>,
    v: &DVector<f64>,
    tau: &DVector<f64>,
    f_ext: Option<&[Force]>,
) -> &'a DVector<f64> {
    check_len("q", q, model.nq);
    check_len("v", v, model.nv);
    check_len("tau", tau, model.nv);
    let (qs, vs) = (q.as_slice(), v.as_slice());
    // pass 1: kinematics, c_i = v_i × v_J, IA_i = I_i, pA_i = v_i ×* I_i v_i - f_ext_i
    place_joints(model, data, qs, |data, i| {
        let p = model.parents[i];
        let v_j = joint_motion(model, i, vs);
        data.v[i] = data.li_m_i[i].inv_act_motion(&data.v[p]) + v_j;
        data.c[i] = data.v[i].cross(&v_j);
        let inertia = &model.inertias[i];
        data.ia[i] = inertia.to_matrix();
        data.pa[i] = data.v[i].cross_force(&inertia.mul_motion(&data.v[i]));
        if let Some(fe) = f_ext {
            data.pa[i] -= fe[i];
        }
    });
    // pass 2: U_i = IA_i S_i, D_i = S_iᵀ U_i, u_i = τ_i - S_iᵀ pA_i; articulated inertia to parent
    for i in (1..model.njoints).rev() {
        let (iv, nv) = (model.idx_v[i], model.nvs[i]);
        let pa = data.pa[i].to_vec6();
        for k in 0..nv {
            let s = model.motion_subspace[iv + k].to_vec6();
            data.u_cols[iv + k] = data.ia[i] * s;
            data.u[iv + k] = tau[iv + k] - s.dot(&pa);
        }
        data.d_inv[i] = invert_d(model, &data.u_cols, i);
        let p = model.parents[i];
        if p == 0 {
            continue;
        }
        // Ia = IA - U D⁻¹ Uᵀ, pa = pA + Ia c + U D⁻¹ u
        let mut ia = data.ia[i];
        let mut pa_i = pa + data.ia[i] * data.c[i].to_vec6();
        let d_inv = &data.d_inv[i];
        for r in 0..nv {
            let mut udinv = Vec6::zeros();
            let mut udinv_u = 0.0;
            for k in 0..nv {
                udinv += data.u_cols[iv + k] * d_inv[(k, r)];
                udinv_u += d_inv[(r, k)] * data.u[iv + k];
            }
            ia -= udinv * data.u_cols[iv + r].transpose();
            pa_i -= ia_correction_c(&udinv, &data.u_cols[iv + r], &data.c[i]);
            pa_i += data.u_cols[iv + r] * udinv_u;
        }
        let x = data.li_m_i[i];
        let ia_parent = transform_inertia_matrix(&x, &ia);
        data.ia[p] += ia_parent;
        let fp = x.act_force(&Force::from_vec6(&pa_i));
        data.pa[p] += fp;
    }
    // pass 3: a'_i = X_i a_λ(i) + c_i, q̈_i = D⁻¹(u_i - Uᵀ a'_i), a_i = a'_i + S_i q̈_i
    // (gravity folded in as a base acceleration -g: the accelerations are a_gf, not a)
    data.a_gf[0] = -model.gravity;
    for i in 1..model.njoints {
        let p = model.parents[i];
        let a_prime = data.li_m_i[i].inv_act_motion(&data.a_gf[p]) + data.c[i];
        joint_acceleration(model, i, &data.d_inv[i], data.u.as_slice(), &data.u_cols, &a_prime, data.ddq.as_mut_slice());
        data.a_gf[i] = a_prime + joint_motion(model, i, data.ddq.as_slice());
    }
    data.fresh = Fresh::PLACEMENTS | Fresh::VELOCITIES | Fresh::ACCELERATIONS_WITH_GRAVITY;
    &data.ddq
}

/// The term `U D⁻¹ Uᵀ c` is folded into `Ia c` by using the corrected `Ia`; since `pa_i` was
/// started with the uncorrected `IA c`, subtract `(U D⁻¹)_r (U_rᵀ c)` for each column r.
#[inline]
fn ia_correction_c(udinv_r: &Vec6, u_r: &Vec6, c: &Motion) -> Vec6 {
    udinv_r * u_r.dot(&c.to_vec6())
}

/// D⁻¹ = (Sᵀ U)⁻¹ of joint i (top-left nv x nv): D formed here, inverted by
/// [`spd_inverse_small`] (D is symmetric positive definite). NaN if it is not.
pub(crate) fn invert_d(model: &Model, u_cols: &[Vec6], i: usize) -> Mat6 {
    let (iv, nv) = (model.idx_v[i], model.nvs[i]);
    let mut d = [[0.0; 6]; 6];
    for r in 0..nv {
        let s = &model.motion_subspace[iv + r];
        for k in 0..=r {
            let u = &u_cols[iv + k];
            d[r][k] = s.linear.x * u[0] + s.linear.y * u[1] + s.linear.z * u[2] + s.angular.x * u[3] + s.angular.y * u[4] + s.angular.z * u[5];
        }
        // armature on D's diagonal (Pinocchio's), skipped where zero (the same bits)
        let arm = model.armature[iv + r];
        if arm != 0.0 {
            d[r][r] += arm;
        }
    }
    spd_inverse_small(&mut d, nv)
}

/// q̈_i = D_i⁻¹ (u_i − U_iᵀ a) for the joint's dofs into `out[idx_v..idx_v + nv]` (RBDA Table 7.1,
/// pass 3), `a` the acceleration the joint's parent side imposes (`X_i a_λ(i) + c_i`).
#[inline]
pub(crate) fn joint_acceleration(model: &Model, i: usize, d_inv: &Mat6, u: &[f64], u_cols: &[Vec6], a: &Motion, out: &mut [f64]) {
    let (iv, nv) = (model.idx_v[i], model.nvs[i]);
    let a6 = a.to_vec6();
    let mut rhs = [0.0; 6];
    for k in 0..nv {
        rhs[k] = u[iv + k] - u_cols[iv + k].dot(&a6);
    }
    for r in 0..nv {
        let mut s = 0.0;
        for k in 0..nv {
            s += d_inv[(r, k)] * rhs[k];
        }
        out[iv + r] = s;
    }
}

/// Expresses in the parent frame a 6x6 spatial inertia given in the child frame of
/// `x` (parent_from_child): X* I X⁻¹ in block form, never a 6x6 product.
pub(crate) fn transform_inertia_matrix(x: &Se3, m: &Mat6) -> Mat6 {
    let r = &x.rotation;
    let rt = r.transpose();
    let a: Mat3 = r * m.fixed_view::<3, 3>(0, 0) * rt;
    let b: Mat3 = r * m.fixed_view::<3, 3>(0, 3) * rt;
    let c: Mat3 = r * m.fixed_view::<3, 3>(3, 3) * rt;
    let px = skew(&x.translation);
    // [[I,0],[P,I]] [[A,B],[Bᵀ,C]] [[I,Pᵀ],[0,I]] with Pᵀ = -P
    let a_pt = -(a * px);
    let b_new = a_pt + b;
    let c_new = px * a_pt + px * b + (px * b).transpose() + c;
    let mut out = Mat6::zeros();
    out.fixed_view_mut::<3, 3>(0, 0).copy_from(&a);
    out.fixed_view_mut::<3, 3>(0, 3).copy_from(&b_new);
    out.fixed_view_mut::<3, 3>(3, 0).copy_from(&b_new.transpose());
    out.fixed_view_mut::<3, 3>(3, 3).copy_from(&c_new);
    out
}

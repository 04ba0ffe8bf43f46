//! Forward dynamics by the articulated-body algorithm (RBDA Table 7.1), in local frames.

use super::jcalc::{joint_velocity, plus_axis, signed_unit_dof};
use super::{add_articulated_to_parent, check_len, force_to_parent, joint_motion, motion_to_joint, place_joints};
use crate::data::{Data, Fresh};
use crate::linalg::dense::spd_inverse_small;
use crate::model::Model;
use crate::spatial::{skew, ArticulatedInertia, Force, Mat3, Mat6, Motion, Se3, Vec6};
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
        let (vi, c) = joint_velocity::<true>(model, i, &data.li_m_i[i], &data.v[p], vs, None);
        data.v[i] = vi;
        data.c[i] = c;
        let inertia = &model.origin_inertias[i];
        data.ia[i] = ArticulatedInertia::from_origin(inertia);
        data.pa[i] = vi.cross_force(&inertia.mul_motion(&vi));
        if let Some(fe) = f_ext {
            data.pa[i] -= fe[i];
        }
    });
    // pass 2: U_i = IA_i S_i, D_i = S_iᵀ U_i, u_i = τ_i - S_iᵀ pA_i; articulated inertia to parent
    for i in (1..model.njoints).rev() {
        let (ia_lo, ia_hi) = data.ia.split_at_mut(i);
        let ia = &mut ia_hi[0];
        let pa = six(&data.pa[i]);
        let p = model.parents[i];
        // Ia = IA - U D⁻¹ Uᵀ (in place), pa = pA + Ia c + U D⁻¹ u
        let udu = match signed_unit_dof(model, i) {
            Some((e, sigma)) => {
                // S = σ e_e: U = σ (a column of IA), D one entry (σ² = 1), Sᵀ pA one entry;
                // U D⁻¹ Uᵀ = col D⁻¹ colᵀ and U D⁻¹ u = col D⁻¹ (σ u), negations exact
                let iv = model.idx_v[i];
                let col = ia.column(e);
                let dinv = 1.0 / (col[e] + model.armature[iv]);
                data.d_inv[i][(0, 0)] = dinv;
                data.u_cols[iv] = Vec6::from(col) * sigma;
                let uu = tau[iv] - sigma * pa[e];
                data.u[iv] = uu;
                if p == 0 {
                    continue;
                }
                let mut w = col;
                for x in w.iter_mut() {
                    *x *= dinv;
                }
                ia.sub_outer(&w, &col);
                let su = sigma * uu;
                for x in w.iter_mut() {
                    *x *= su;
                }
                w
            }
            None => {
                project_general(model, i, ia, &pa, tau.as_slice(), &mut data.u_cols, data.u.as_mut_slice(), &mut data.d_inv[i]);
                if p == 0 {
                    continue;
                }
                update_general(model, i, ia, &data.u_cols, data.u.as_slice(), &data.d_inv[i])
            }
        };
        let iac = ia.mul6(&six_m(&data.c[i]));
        let pa_i = Force::from_slice(&std::array::from_fn::<f64, 6, _>(|e| (pa[e] + iac[e]) + udu[e]));
        let x = &data.li_m_i[i];
        add_articulated_to_parent(model, i, x, ia, &mut ia_lo[p]);
        let fp = force_to_parent(model, i, x, &pa_i);
        data.pa[p] += fp;
    }
    forward_accelerations(model, data);
    data.fresh = Fresh::PLACEMENTS | Fresh::VELOCITIES | Fresh::ACCELERATIONS_WITH_GRAVITY;
    &data.ddq
}

/// Pass 3: a'_i = X_i a_λ(i) + c_i, q̈_i = D⁻¹(u_i - Uᵀ a'_i), a_i = a'_i + S_i q̈_i, into
/// `data.ddq` and `data.a_gf` (gravity folded in as a base acceleration -g).
#[inline(always)]
fn forward_accelerations(model: &Model, data: &mut Data) {
    data.a_gf[0] = -model.gravity;
    for i in 1..model.njoints {
        let p = model.parents[i];
        let a_prime = motion_to_joint(model, i, &data.li_m_i[i], &data.a_gf[p]) + data.c[i];
        match signed_unit_dof(model, i) {
            Some((e, sigma)) => {
                let iv = model.idx_v[i];
                let a6 = six_m(&a_prime);
                let u = &data.u_cols[iv];
                let ua = ((u[0] * a6[0] + u[1] * a6[1]) + (u[2] * a6[2] + u[3] * a6[3])) + (u[4] * a6[4] + u[5] * a6[5]);
                let x = data.d_inv[i][(0, 0)] * (data.u[iv] - ua);
                data.ddq[iv] = x;
                data.a_gf[i] = plus_axis(a_prime, e, sigma * x);
            }
            None => {
                joint_acceleration(model, i, &data.d_inv[i], data.u.as_slice(), &data.u_cols, &a_prime, data.ddq.as_mut_slice());
                data.a_gf[i] = a_prime + joint_motion(model, i, data.ddq.as_slice());
            }
        }
    }
}

#[inline(always)]
fn six(f: &Force) -> [f64; 6] {
    [f.linear.x, f.linear.y, f.linear.z, f.angular.x, f.angular.y, f.angular.z]
}

#[inline(always)]
fn six_m(m: &Motion) -> [f64; 6] {
    [m.linear.x, m.linear.y, m.linear.z, m.angular.x, m.angular.y, m.angular.z]
}

/// Pass 2's projection of any joint: `U = IA S`, `D⁻¹` ([`invert_d`]), `u = τ − Sᵀ pA`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn project_general(model: &Model, i: usize, ia: &ArticulatedInertia, pa: &[f64; 6], tau: &[f64], u_cols: &mut [Vec6], u: &mut [f64], d_inv: &mut Mat6) {
    let (iv, nv) = (model.idx_v[i], model.nvs[i]);
    for k in iv..iv + nv {
        let s = six_m(&model.motion_subspace[k]);
        u_cols[k] = Vec6::from(ia.mul6(&s));
        u[k] = tau[k] - ((s[0] * pa[0] + s[1] * pa[1]) + (s[2] * pa[2] + s[3] * pa[3]) + (s[4] * pa[4] + s[5] * pa[5]));
    }
    *d_inv = invert_d(model, u_cols, i);
}

/// `Ia = IA − U D⁻¹ Uᵀ` in place after [`project_general`]; returns `U D⁻¹ u`.
#[inline(always)]
fn update_general(model: &Model, i: usize, ia: &mut ArticulatedInertia, u_cols: &[Vec6], u: &[f64], d_inv: &Mat6) -> [f64; 6] {
    let (iv, nv) = (model.idx_v[i], model.nvs[i]);
    let mut udu = [0.0; 6];
    for r in 0..nv {
        let mut w = [0.0; 6];
        let mut wu = 0.0;
        for k in 0..nv {
            for (x, uk) in w.iter_mut().zip(u_cols[iv + k].iter()) {
                *x += uk * d_inv[(k, r)];
            }
            wu += d_inv[(r, k)] * u[iv + k];
        }
        let ur: [f64; 6] = u_cols[iv + r].into();
        ia.sub_outer(&w, &ur);
        for (o, ue) in udu.iter_mut().zip(&ur) {
            *o += ue * wu;
        }
    }
    udu
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

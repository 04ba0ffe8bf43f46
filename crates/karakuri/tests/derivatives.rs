//! Analytical derivatives of the dynamics against central finite differences and against the
//! other algorithms, on random trees with every joint kind (floating and fixed, both numberings).

mod common;

use common::{random_state, random_tree, random_tree_depth_first};
use karakuri::algorithms::*;
use karakuri::constraints::{constrained_dynamics_derivatives, ConstrainedDerivatives, ConstraintSet, Method};
use karakuri::spatial::{exp3, Force, Se3, Vec3};
use karakuri::{Data, JointId, Model};
use nalgebra::{DMatrix, DVector};

fn models() -> Vec<Model> {
    let mut v = vec![];
    for seed in 0..4 {
        v.push(random_tree(seed, 10, seed % 2 == 0));
    }
    for seed in 300..302 {
        v.push(random_tree_depth_first(seed, 14, seed % 2 == 0));
    }
    v
}

const EPS: f64 = 1e-6;

/// Central differences of `f` along every tangent direction of q.
fn fd_q(model: &Model, q: &DVector<f64>, mut f: impl FnMut(&DVector<f64>) -> DVector<f64>) -> DMatrix<f64> {
    let mut out = DMatrix::zeros(f(q).len(), model.nv);
    for j in 0..model.nv {
        let mut e = DVector::zeros(model.nv);
        e[j] = EPS;
        let plus = f(&integrate(model, q, &e));
        let minus = f(&integrate(model, q, &-e));
        out.set_column(j, &((plus - minus) / (2.0 * EPS)));
    }
    out
}

/// Central differences of `f` along every coordinate of a vector x.
fn fd_vec(x: &DVector<f64>, mut f: impl FnMut(&DVector<f64>) -> DVector<f64>) -> DMatrix<f64> {
    let n = x.len();
    let mut out = DMatrix::zeros(f(x).len(), n);
    for j in 0..n {
        let mut xp = x.clone();
        xp[j] += EPS;
        let mut xm = x.clone();
        xm[j] -= EPS;
        out.set_column(j, &((f(&xp) - f(&xm)) / (2.0 * EPS)));
    }
    out
}

fn assert_close(what: &str, model: &Model, ours: &DMatrix<f64>, fd: &DMatrix<f64>, tol: f64) {
    let err = (ours - fd).amax() / (1.0 + fd.amax());
    let worst = (ours - fd).iamax_full();
    assert!(err < tol, "{}: {what} differs from finite differences by {err:e} (scale {:e}), worst at {worst:?}", model.name, fd.amax());
}

fn random_forces(model: &Model, seed: u64) -> Vec<Force> {
    let mut rng = SplitMix64::new(seed);
    let mut r = || Vec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0));
    (0..model.njoints).map(|_| Force::new(r(), r())).collect()
}

#[test]
fn rnea_derivatives_match_finite_differences() {
    for model in models() {
        let mut data = Data::new(&model);
        let mut ws = DerivativesWorkspace::new(&model);
        let mut scratch = Data::new(&model);
        for s in 0..3 {
            let (q, v, a) = random_state(&model, s);
            let f_ext = random_forces(&model, s + 10);
            for with_forces in [false, true] {
                let mut rnea = |q: &DVector<f64>, v: &DVector<f64>, a: &DVector<f64>| {
                    if with_forces {
                        inverse_dynamics_with_forces(&model, &mut scratch, q, v, a, &f_ext).clone()
                    } else {
                        inverse_dynamics(&model, &mut scratch, q, v, a).clone()
                    }
                };
                let tau = rnea(&q, &v, &a);
                if with_forces {
                    rnea_derivatives_with_forces(&model, &mut data, &mut ws, &q, &v, &a, &f_ext);
                } else {
                    rnea_derivatives(&model, &mut data, &mut ws, &q, &v, &a);
                }
                assert!((&ws.tau - &tau).amax() < 1e-10 * (1.0 + tau.amax()), "{}: τ", model.name);
                let dq = fd_q(&model, &q, |q| rnea(q, &v, &a));
                let dv = fd_vec(&v, |v| rnea(&q, v, &a));
                assert_close("∂τ/∂q", &model, &ws.dtau_dq, &dq, 1e-7);
                assert_close("∂τ/∂v", &model, &ws.dtau_dv, &dv, 1e-7);
                let m = mass_matrix(&model, &mut scratch, &q).clone();
                assert!((data.mass_matrix().unwrap() - &m).amax() < 1e-12 * (1.0 + m.amax()), "{}: ∂τ/∂a = M", model.name);
            }
        }
    }
}

#[test]
fn aba_derivatives_match_finite_differences_and_rnea_derivatives() {
    for model in models() {
        let mut data = Data::new(&model);
        let mut ws = DerivativesWorkspace::new(&model);
        let mut scratch = Data::new(&model);
        let mut ws2 = DerivativesWorkspace::new(&model);
        for s in 0..3 {
            let (q, v, tau) = random_state(&model, s + 20);
            let f_ext = random_forces(&model, s + 30);
            for with_forces in [false, true] {
                let mut aba = |q: &DVector<f64>, v: &DVector<f64>, tau: &DVector<f64>| {
                    if with_forces {
                        forward_dynamics_with_forces(&model, &mut scratch, q, v, tau, &f_ext).clone()
                    } else {
                        forward_dynamics(&model, &mut scratch, q, v, tau).clone()
                    }
                };
                let qdd = aba(&q, &v, &tau);
                if with_forces {
                    aba_derivatives_with_forces(&model, &mut data, &mut ws, &q, &v, &tau, &f_ext);
                } else {
                    aba_derivatives(&model, &mut data, &mut ws, &q, &v, &tau);
                }
                assert!((&ws.qdd - &qdd).amax() < 1e-10 * (1.0 + qdd.amax()), "{}: q̈", model.name);
                let dq = fd_q(&model, &q, |q| aba(q, &v, &tau));
                let dv = fd_vec(&v, |v| aba(&q, v, &tau));
                let dtau = fd_vec(&tau, |tau| aba(&q, &v, tau));
                assert_close("∂q̈/∂q", &model, &ws.dqdd_dq, &dq, 1e-6);
                assert_close("∂q̈/∂v", &model, &ws.dqdd_dv, &dv, 1e-6);
                assert_close("∂q̈/∂τ", &model, data.mass_matrix_inverse().unwrap(), &dtau, 1e-6);
                // ∂q̈/∂q = −M⁻¹ ∂τ/∂q at q̈ = ABA(q, v, τ), with a dense inverse
                if with_forces {
                    rnea_derivatives_with_forces(&model, &mut scratch, &mut ws2, &q, &v, &qdd, &f_ext);
                } else {
                    rnea_derivatives(&model, &mut scratch, &mut ws2, &q, &v, &qdd);
                }
                let m_inv = scratch.mass_matrix().unwrap().clone().try_inverse().expect("M invertible");
                assert_close("−M⁻¹ ∂τ/∂q", &model, &ws.dqdd_dq, &(-&m_inv * &ws2.dtau_dq), 1e-10);
                assert_close("−M⁻¹ ∂τ/∂v", &model, &ws.dqdd_dv, &(-&m_inv * &ws2.dtau_dv), 1e-10);
                assert_close("M⁻¹", &model, data.mass_matrix_inverse().unwrap(), &m_inv, 1e-10);
            }
        }
    }
}

/// The constrained forward dynamics (q̈ and λ stacked) of `cs`.
fn constrained(model: &Model, data: &mut Data, cs: &mut ConstraintSet, q: &DVector<f64>, v: &DVector<f64>, tau: &DVector<f64>, method: Method) -> DVector<f64> {
    cs.forward_dynamics(model, data, q, v, tau, method).expect("constrained solve");
    let mut out = DVector::zeros(model.nv + cs.rows());
    out.rows_mut(0, model.nv).copy_from(&cs.qdd);
    out.rows_mut(model.nv, cs.rows()).copy_from(&cs.lambda);
    out
}

#[test]
fn constrained_dynamics_derivatives_match_finite_differences() {
    // floating trees with a 3-D point contact and a 6-D frame contact, a fixed tree with a
    // normal contact and a 3-D point contact
    let cases: Vec<(Model, bool)> = vec![
        (random_tree_depth_first(400, 14, true), true),
        (random_tree(401, 12, true), true),
        (random_tree(402, 12, false), false),
    ];
    for (model, six_d) in cases {
        let (a, b) = (model.njoints - 1, model.njoints / 2);
        let mut cs = ConstraintSet::new();
        cs.add_point_contact_3d(JointId(a), Vec3::new(0.1, -0.2, 0.05), Some("point"));
        if six_d {
            let placement = Se3::new(exp3(&Vec3::new(0.3, -0.4, 0.8)), Vec3::new(0.05, 0.1, -0.1));
            cs.add_frame_contact_6d(JointId(b), placement, Some("frame"));
        } else {
            cs.add_contact(JointId(b), Vec3::new(0.0, 0.1, 0.2), Vec3::new(0.3, 0.4, 0.5).normalize(), Some("normal"));
        }
        cs.bind(&model).unwrap();
        let mut data = Data::new(&model);
        let mut scratch = Data::new(&model);
        let mut out = ConstrainedDerivatives::new(&model, &cs);
        let (nv, nc) = (model.nv, cs.rows());
        for s in 0..2 {
            let (q, v, tau) = random_state(&model, s + 40);
            for method in [Method::Direct, Method::RangeSpaceSparse] {
                constrained_dynamics_derivatives(&model, &mut data, &mut cs, &mut out, &q, &v, &tau, method).unwrap();
                let mut fd_cs = cs.clone();
                let mut f = |q: &DVector<f64>, v: &DVector<f64>, tau: &DVector<f64>| constrained(&model, &mut scratch, &mut fd_cs, q, v, tau, method);
                let dq = fd_q(&model, &q, |q| f(q, &v, &tau));
                let dv = fd_vec(&v, |v| f(&q, v, &tau));
                let dtau = fd_vec(&tau, |t| f(&q, &v, t));
                let stack = |x: &DMatrix<f64>, l: &DMatrix<f64>| {
                    let mut m = DMatrix::zeros(nv + nc, nv);
                    m.rows_mut(0, nv).copy_from(x);
                    m.rows_mut(nv, nc).copy_from(l);
                    m
                };
                assert_close("∂(q̈, λ)/∂q", &model, &stack(&out.dqdd_dq, &out.dlambda_dq), &dq, 1e-6);
                assert_close("∂(q̈, λ)/∂v", &model, &stack(&out.dqdd_dv, &out.dlambda_dv), &dv, 1e-6);
                assert_close("∂(q̈, λ)/∂τ", &model, &stack(&out.dqdd_dtau, &out.dlambda_dtau), &dtau, 1e-6);
            }
        }
    }
}

#[test]
fn constrained_dynamics_derivatives_refuse_what_they_do_not_cover() {
    let model = random_tree(403, 6, true);
    let mut cs = ConstraintSet::new();
    let c = cs.add_point_contact_3d(JointId(3), Vec3::zeros(), Some("foot"));
    cs.set_baumgarte(c, Some(0.1));
    cs.bind(&model).unwrap();
    let mut data = Data::new(&model);
    let mut out = ConstrainedDerivatives::new(&model, &cs);
    let (q, v, tau) = random_state(&model, 1);
    let err = constrained_dynamics_derivatives(&model, &mut data, &mut cs, &mut out, &q, &v, &tau, Method::Direct).unwrap_err();
    assert!(err.to_string().contains("foot") && err.to_string().contains("Baumgarte"), "{err}");
}

//! Analytical derivatives of the dynamics against central finite differences and against the
//! other algorithms, on random trees with every joint kind (floating and fixed, both numberings).

mod common;

use common::{random_state, random_tree, random_tree_depth_first};
use karakuri::algorithms::*;
use karakuri::spatial::{Force, Vec3};
use karakuri::{Data, Model};
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
    let mut out = DMatrix::zeros(model.nv, model.nv);
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
    let mut out = DMatrix::zeros(n, n);
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
    assert!(err < tol, "{}: {what} differs from finite differences by {err:e} (scale {:e})", model.name, fd.amax());
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
                assert!((&data.tau - &tau).amax() < 1e-10 * (1.0 + tau.amax()), "{}: τ", model.name);
                let dq = fd_q(&model, &q, |q| rnea(q, &v, &a));
                let dv = fd_vec(&v, |v| rnea(&q, v, &a));
                assert_close("∂τ/∂q", &model, &ws.dtau_dq, &dq, 1e-7);
                assert_close("∂τ/∂v", &model, &ws.dtau_dv, &dv, 1e-7);
                let m = mass_matrix(&model, &mut scratch, &q).clone();
                assert!((&data.mass_matrix - &m).amax() < 1e-12 * (1.0 + m.amax()), "{}: ∂τ/∂a = M", model.name);
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
                assert!((&data.ddq - &qdd).amax() < 1e-10 * (1.0 + qdd.amax()), "{}: q̈", model.name);
                let dq = fd_q(&model, &q, |q| aba(q, &v, &tau));
                let dv = fd_vec(&v, |v| aba(&q, v, &tau));
                let dtau = fd_vec(&tau, |tau| aba(&q, &v, tau));
                assert_close("∂q̈/∂q", &model, &ws.dqdd_dq, &dq, 1e-6);
                assert_close("∂q̈/∂v", &model, &ws.dqdd_dv, &dv, 1e-6);
                assert_close("∂q̈/∂τ", &model, &data.mass_matrix_inverse, &dtau, 1e-6);
                // ∂q̈/∂q = −M⁻¹ ∂τ/∂q at q̈ = ABA(q, v, τ), with a dense inverse
                if with_forces {
                    rnea_derivatives_with_forces(&model, &mut scratch, &mut ws2, &q, &v, &qdd, &f_ext);
                } else {
                    rnea_derivatives(&model, &mut scratch, &mut ws2, &q, &v, &qdd);
                }
                let m_inv = scratch.mass_matrix.clone().try_inverse().expect("M invertible");
                assert_close("−M⁻¹ ∂τ/∂q", &model, &ws.dqdd_dq, &(-&m_inv * &ws2.dtau_dq), 1e-10);
                assert_close("−M⁻¹ ∂τ/∂v", &model, &ws.dqdd_dv, &(-&m_inv * &ws2.dtau_dv), 1e-10);
                assert_close("M⁻¹", &model, &data.mass_matrix_inverse, &m_inv, 1e-10);
            }
        }
    }
}

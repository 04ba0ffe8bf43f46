//! Every batched function (karakuri::batch) against the single-state function it batches, bit
//! for bit (ABA, CRBA, M⁻¹, the ABA derivatives: within the tolerances of records 0068, 0075
//! and 0084), state by state, on random trees of every
//! joint kind and on every reference robot of tests/data, on 1, 2 and 3 threads; and the errors
//! of bad arguments.

mod common;

use common::{random_tree, random_tree_depth_first};
use karakuri::algorithms::{self as alg, DerivativesWorkspace, SplitMix64};
use karakuri::batch::{self, BatchError, BatchWorkspace};
use karakuri::io::urdf;
use karakuri::{Data, Model};
use nalgebra::{DMatrix, DVector};

fn models() -> Vec<Model> {
    let mut v = vec![];
    for seed in 0..4 {
        v.push(random_tree(seed, 12, seed % 2 == 0));
        v.push(random_tree_depth_first(seed + 10, 14, seed % 2 == 1));
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
    for name in ["ur5", "panda", "kinova_continuous", "solo12", "anymal", "talos_reduced"] {
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap()).unwrap();
        let root = match json["source"]["root_joint"].as_str() {
            Some("free_flyer") => urdf::Root::FreeFlyer,
            _ => urdf::Root::Fixed,
        };
        v.push(urdf::load(dir.join(format!("{name}.urdf")), root).unwrap());
    }
    v
}

/// `n` random states stacked: q `(n * nq)`, v, a, tau `(n * nv)`; v, a, tau uniform in ±2.
fn states(model: &Model, n: usize, seed: u64) -> [Vec<f64>; 4] {
    let mut rng = SplitMix64::new(seed);
    let mut out: [Vec<f64>; 4] = Default::default();
    for _ in 0..n {
        out[0].extend(alg::random_configuration(model, &mut rng).iter());
        for x in &mut out[1..] {
            x.extend((0..model.nv).map(|_| rng.range(-2.0, 2.0)));
        }
    }
    out
}

fn row(x: &[f64], s: usize, per: usize) -> DVector<f64> {
    DVector::from_column_slice(&x[s * per..(s + 1) * per])
}

fn row_major(m: &DMatrix<f64>) -> Vec<f64> {
    m.transpose().as_slice().to_vec()
}

/// Bit-for-bit equality, naming what differs.
fn same(what: &str, model: &Model, s: usize, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(g.to_bits() == w.to_bits(), "{} {what}, state {s}, entry {k}: batch {g:e}, single {w:e}", model.name);
    }
}

/// Every batched output of `n` states on `threads` threads, in a fixed order.
/// ABA in lanes takes other (cheaper) operations than the single call, so its q̈ differs by
/// rounding (record 0068): every entry within `ABA_TOL · (1 + max |q̈|)` of the single call's.
/// The largest seen on these models is 4e-15.
const ABA_TOL: f64 = 1e-12;

fn close(what: &str, model: &Model, s: usize, got: &[f64], want: &[f64]) -> f64 {
    let scale = 1.0 + want.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    close_at(what, model, s, got, want, scale)
}

/// Every entry within `ABA_TOL · scale` of the single call's; the largest error over `scale`.
fn close_at(what: &str, model: &Model, s: usize, got: &[f64], want: &[f64], scale: f64) -> f64 {
    assert_eq!(got.len(), want.len());
    let mut worst = 0.0f64;
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let e = (g - w).abs() / scale;
        assert!(e <= ABA_TOL, "{} {what}, state {s}, entry {k}: batch {g:e}, single {w:e}, error {e:e} of the scale", model.name);
        worst = worst.max(e);
    }
    worst
}

/// CRBA and M⁻¹ in lanes sum the composite inertias in world coordinates and factorise M
/// densely on its pattern (record 0075), so M differs from the single call's by rounding
/// (within `ABA_TOL · (1 + max |M|)`), and M⁻¹ by that rounding carried through the inverse:
/// `|Δ(M⁻¹)| ≤ |M⁻¹| |ΔM| |M⁻¹|`, so within `ABA_TOL · (1 + max |M|) · max |M⁻¹|²` (the
/// factorisations' own roundings are of the same order).
fn minv_scale(m: &DMatrix<f64>, minv: &DMatrix<f64>) -> f64 {
    (1.0 + m.amax()) * minv.amax() * minv.amax()
}

/// The ABA derivatives in lanes factorise M and form M⁻¹ as [`batch::mass_matrix_inverse`]
/// does (record 0084), so `∂q̈/∂(q, v) = −M⁻¹ ∂τ/∂(q, v)` carries M⁻¹'s rounding (within
/// [`minv_scale`]) through its products by ∂τ/∂(q, v), and q̈'s (through ∂τ/∂q at a = q̈):
/// within `ABA_TOL · minv_scale · (1 + max |∂τ/∂q| + max |∂τ/∂v|)`. The largest seen on these
/// models is 3e-17 of that.
fn dqdd_scale(m: &DMatrix<f64>, minv: &DMatrix<f64>, dq: &DMatrix<f64>, dv: &DMatrix<f64>) -> f64 {
    minv_scale(m, minv) * (1.0 + dq.amax() + dv.amax())
}

fn batched(model: &Model, x: &[Vec<f64>; 4], threads: usize) -> Vec<Vec<f64>> {
    let (n, nv, nj) = (x[0].len() / model.nq, model.nv, model.njoints);
    let mut ws = BatchWorkspace::new(model, threads);
    let [q, v, a, tau] = x;
    let mut o: Vec<Vec<f64>> = [nj * 16, nv, nv, nv, nv * nv, nv, nv * nv, 6 * nv, nv * nv, nv * nv, nv * nv, nv * nv, nv * nv, nv * nv]
        .iter()
        .map(|per| vec![f64::NAN; n * per])
        .collect();
    let [fk, t, nle, g, m, ddq, minv, j, dq, dv, mm, aq, av, ami] = &mut o[..] else { unreachable!() };
    batch::forward_kinematics(model, &mut ws, q, fk).unwrap();
    batch::rnea(model, &mut ws, q, v, a, t).unwrap();
    batch::nonlinear_effects(model, &mut ws, q, v, nle).unwrap();
    batch::gravity_torques(model, &mut ws, q, g).unwrap();
    batch::crba(model, &mut ws, q, m).unwrap();
    batch::aba(model, &mut ws, q, v, tau, ddq).unwrap();
    batch::mass_matrix_inverse(model, &mut ws, q, minv).unwrap();
    batch::joint_jacobians(model, &mut ws, q, j).unwrap();
    batch::rnea_derivatives(model, &mut ws, q, v, a, dq, dv, mm).unwrap();
    batch::aba_derivatives(model, &mut ws, q, v, tau, aq, av, ami).unwrap();
    o
}

fn check_against_single(model: &Model, x: &[Vec<f64>; 4], out: &[Vec<f64>]) {
    let (nq, nv, nj) = (model.nq, model.nv, model.njoints);
    let n = x[0].len() / nq;
    let mut d = Data::new(model);
    let mut ws = DerivativesWorkspace::new(model);
    for s in 0..n {
        let (q, v, a, tau) = (row(&x[0], s, nq), row(&x[1], s, nv), row(&x[2], s, nv), row(&x[3], s, nv));
        alg::forward_kinematics(model, &mut d, &q);
        let mut fk = vec![];
        for p in d.joint_placements().unwrap() {
            for r in 0..3 {
                fk.extend([p.rotation[(r, 0)], p.rotation[(r, 1)], p.rotation[(r, 2)], p.translation[r]]);
            }
            fk.extend([0.0, 0.0, 0.0, 1.0]);
        }
        let per = |k: usize| out[k].len() / n;
        let got = |k: usize| &out[k][s * per(k)..(s + 1) * per(k)];
        same("forward_kinematics", model, s, got(0), &fk);
        assert_eq!(per(0), nj * 16);
        same("rnea", model, s, got(1), alg::inverse_dynamics(model, &mut d, &q, &v, &a).as_slice());
        same("nonlinear_effects", model, s, got(2), alg::nonlinear_effects(model, &mut d, &q, &v).as_slice());
        // the single call sums the subtrees' weights (record 0086), the lanes run RNEA's passes
        close("gravity_torques", model, s, got(3), alg::gravity_torques(model, &mut d, &q).as_slice());
        let mass = alg::mass_matrix(model, &mut d, &q).clone();
        let e_m = close("crba", model, s, got(4), &row_major(&mass));
        let e = close("aba", model, s, got(5), alg::forward_dynamics(model, &mut d, &q, &v, &tau).as_slice());
        if std::env::var_os("BATCH_ABA_ERRORS").is_some() {
            println!("{} aba state {s}: {e:e}", model.name);
        }
        let minv = alg::mass_matrix_inverse(model, &mut d, &q).clone();
        let e_mi = close_at("mass_matrix_inverse", model, s, got(6), &row_major(&minv), minv_scale(&mass, &minv));
        if std::env::var_os("BATCH_ABA_ERRORS").is_some() {
            println!("{} crba {e_m:e} minv {e_mi:e}", model.name);
        }
        same("joint_jacobians", model, s, got(7), &row_major(alg::joint_jacobians(model, &mut d, &q)));
        alg::rnea_derivatives(model, &mut d, &mut ws, &q, &v, &a);
        same("rnea_derivatives dtau_dq", model, s, got(8), &row_major(&ws.dtau_dq));
        same("rnea_derivatives dtau_dv", model, s, got(9), &row_major(&ws.dtau_dv));
        same("rnea_derivatives M", model, s, got(10), &row_major(d.mass_matrix().unwrap()));
        alg::aba_derivatives(model, &mut d, &mut ws, &q, &v, &tau);
        let ami = d.mass_matrix_inverse().unwrap().clone();
        let scale = dqdd_scale(&mass, &ami, &ws.dtau_dq, &ws.dtau_dv);
        let e_q = close_at("aba_derivatives dqdd_dq", model, s, got(11), &row_major(&ws.dqdd_dq), scale);
        let e_v = close_at("aba_derivatives dqdd_dv", model, s, got(12), &row_major(&ws.dqdd_dv), scale);
        let e_i = close_at("aba_derivatives Minv", model, s, got(13), &row_major(&ami), minv_scale(&mass, &ami));
        if std::env::var_os("BATCH_ABA_ERRORS").is_some() {
            println!("{} aba_derivatives dq {e_q:e} dv {e_v:e} minv {e_i:e}", model.name);
        }
    }
}

/// 7 states: a lane group of four and a partial group of three.
#[test]
fn every_batched_function_equals_the_single_call() {
    for (k, model) in models().iter().enumerate() {
        let x = states(model, 7, 100 + k as u64);
        check_against_single(model, &x, &batched(model, &x, 1));
    }
}

/// 77 states cut into 2 and 3 chunks (at least 32 states per thread): the same bits as on one
/// thread, and as the single calls.
#[test]
fn threads_change_no_bit() {
    for (k, model) in models().iter().enumerate().filter(|(k, _)| k % 3 == 0) {
        let x = states(model, 77, 200 + k as u64);
        let one = batched(model, &x, 1);
        check_against_single(model, &x, &one);
        for threads in [2, 3] {
            let more = batched(model, &x, threads);
            for (a, b) in one.iter().zip(&more) {
                assert!(a.iter().zip(b).all(|(a, b)| a.to_bits() == b.to_bits()), "{} on {threads} threads", model.name);
            }
        }
    }
}

#[test]
fn bad_arguments_are_refused_by_name() {
    let model = random_tree(3, 6, true);
    let other = random_tree(4, 7, false);
    let mut ws = BatchWorkspace::new(&model, 2);
    let [q, v, a, _] = states(&model, 5, 1);
    let mut tau = vec![0.0; 5 * model.nv];
    let e = batch::rnea(&model, &mut ws, &q, &v[..v.len() - 1], &a, &mut tau).unwrap_err();
    assert!(matches!(e, BatchError::Shape { arg: "v", states: 5, .. }), "{e}");
    assert!(e.to_string().contains("'v'"), "{e}");
    let e = batch::rnea(&model, &mut ws, &q, &v, &a, &mut tau[1..]).unwrap_err();
    assert!(matches!(e, BatchError::Shape { arg: "tau", .. }), "{e}");
    let e = batch::rnea(&model, &mut ws, &q[1..], &v, &a, &mut tau).unwrap_err();
    assert!(matches!(e, BatchError::Ragged { .. }), "{e}");
    let e = batch::crba(&other, &mut ws, &q, &mut tau).unwrap_err();
    assert!(matches!(e, BatchError::OtherModel { .. }), "{e}");
    // zero states: nothing to do
    batch::rnea(&model, &mut ws, &[], &[], &[], &mut []).unwrap();
}

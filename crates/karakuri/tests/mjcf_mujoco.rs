//! The MJCF loader against MuJoCo 4.0.0's own numbers: for every model of `tests/data/mjcf`
//! with a `.ref.json` (written by `scripts/mjcf_reference.py`), karakuri's mass matrix (CRBA,
//! armature included) and bias forces (RNEA at zero acceleration, at zero and at a random
//! velocity) equal MuJoCo's `mj_fullM` and `qfrc_bias`, converted to karakuri's coordinates,
//! to 1e-9 relative; the joint order and names, the moving mass and gravity agree too.
//! `cargo test -p karakuri --test mjcf_mujoco -- --nocapture` prints the table of docs/MJCF.md.

use std::path::{Path, PathBuf};

use karakuri::algorithms::{inverse_dynamics, mass_matrix};
use karakuri::io::mjcf;
use karakuri::Data;
use nalgebra::{DMatrix, DVector};
use serde_json::Value;

const TOL: f64 = 1e-9;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/mjcf")
}

fn references() -> Vec<PathBuf> {
    let mut out = vec![];
    for dir in std::fs::read_dir(data_dir()).unwrap().flatten().filter(|d| d.path().is_dir()) {
        for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
            if f.path().to_string_lossy().ends_with(".ref.json") {
                out.push(f.path());
            }
        }
    }
    out.sort();
    out
}

fn vector(v: &Value) -> DVector<f64> {
    DVector::from_vec(v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect())
}

/// max |a - b| / max(max |b|, 1e-300)
fn rel(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(1e-300);
    a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale
}

#[test]
fn mass_matrix_and_bias_equal_mujoco() {
    let refs = references();
    assert!(refs.len() >= 20, "the references of tests/data/mjcf are missing ({})", refs.len());
    let mut failures = vec![];
    println!("| model | nq / nv | worst rel. error of M | worst rel. error of bias |");
    println!("| --- | --- | --- | --- |");
    for path in refs {
        let r: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let source = r["source"].as_str().unwrap();
        let model = mjcf::load(data_dir().join(source)).unwrap_or_else(|e| panic!("{e}"));
        let (nq, nv) = (r["nq"].as_u64().unwrap() as usize, r["nv"].as_u64().unwrap() as usize);
        assert_eq!((model.nq, model.nv), (nq, nv), "{source}: sizes");
        let names: Vec<&str> = r["joint_names"].as_array().unwrap().iter().map(|n| n.as_str().unwrap_or("")).collect();
        for (k, n) in names.iter().enumerate().filter(|(_, n)| !n.is_empty()) {
            assert_eq!(model.joint_names[k + 1], *n, "{source}: joint {k}");
        }
        let moving = r["moving_mass"].as_f64().unwrap();
        assert!((model.total_mass() - moving).abs() <= 1e-9 * moving, "{source}: mass {} vs MuJoCo's {moving}", model.total_mass());
        assert!(rel(model.gravity_vector().as_slice(), vector(&r["gravity"]).as_slice()) < 1e-15 || vector(&r["gravity"]).amax() == 0.0 && model.gravity_vector().amax() == 0.0, "{source}: gravity");
        let mut data = Data::new(&model);
        let (mut worst_m, mut worst_b) = (0.0f64, 0.0f64);
        for c in r["cases"].as_array().unwrap() {
            let (q, v) = (vector(&c["q"]), vector(&c["v"]));
            let m_ref = DMatrix::from_row_slice(nv, nv, vector(&c["mass_matrix"]).as_slice());
            let m = mass_matrix(&model, &mut data, &q).clone();
            worst_m = worst_m.max(rel(m.as_slice(), m_ref.transpose().as_slice()));
            let zero = DVector::zeros(nv);
            let b0 = inverse_dynamics(&model, &mut data, &q, &zero, &zero).clone();
            worst_b = worst_b.max(rel(b0.as_slice(), vector(&c["bias_zero_velocity"]).as_slice()));
            let b = inverse_dynamics(&model, &mut data, &q, &v, &zero).clone();
            worst_b = worst_b.max(rel(b.as_slice(), vector(&c["bias"]).as_slice()));
        }
        println!("| {source} | {nq} / {nv} | {worst_m:.1e} | {worst_b:.1e} |");
        if worst_m > TOL || worst_b > TOL {
            failures.push(format!("{source}: M {worst_m:.2e}, bias {worst_b:.2e}"));
        }
    }
    assert!(failures.is_empty(), "beyond {TOL:e}:\n{}", failures.join("\n"));
}

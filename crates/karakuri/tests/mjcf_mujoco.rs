//! The MJCF loader against MuJoCo 4.0.0's own numbers: for every model of `tests/data/mjcf`
//! with a `.ref.json` (written by `scripts/mjcf_reference.py`), karakuri's mass matrix (CRBA,
//! armature included) and bias forces (RNEA at zero acceleration, at zero and at a random
//! velocity) equal MuJoCo's `mj_fullM` and `qfrc_bias`, converted to karakuri's coordinates,
//! to 1e-9 relative; the joint order and names, the moving mass, gravity, the world poses of
//! named bodies and sites, and the qpos/qvel conversions agree too.
//! `cargo test -p karakuri --test mjcf_mujoco -- --nocapture` prints the table of docs/MJCF.md.

use std::path::{Path, PathBuf};

use karakuri::algorithms::{forward_kinematics, frame_placement, inverse_dynamics, mass_matrix, update_frame_placements};
use karakuri::io::mjcf;
use karakuri::model::FrameKind;
use karakuri::{Data, FrameId, Model};
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

/// MuJoCo's qpos, qvel to karakuri's q, v and back, against the script's conversion.
fn check_conversions(model: &Model, c: &Value, source: &str) {
    let (qpos, qvel) = (vector(&c["qpos"]), vector(&c["qvel"]));
    let (q, v) = (vector(&c["q"]), vector(&c["v"]));
    let q2 = mjcf::from_mujoco_qpos(model, qpos.as_slice()).unwrap();
    let v2 = mjcf::from_mujoco_qvel(model, qpos.as_slice(), qvel.as_slice()).unwrap();
    assert!((q2 - &q).amax() <= 1e-15, "{source}: from_mujoco_qpos");
    assert!(rel(v2.as_slice(), v.as_slice()) <= 1e-14, "{source}: from_mujoco_qvel");
    let qpos2 = mjcf::to_mujoco_qpos(model, q.as_slice()).unwrap();
    let qvel2 = mjcf::to_mujoco_qvel(model, q.as_slice(), v.as_slice()).unwrap();
    assert!((qpos2 - &qpos).amax() <= 1e-15, "{source}: to_mujoco_qpos");
    assert!(rel(qvel2.as_slice(), qvel.as_slice()) <= 1e-14, "{source}: to_mujoco_qvel");
}

fn frame_of(model: &Model, name: &str, kind: FrameKind) -> FrameId {
    FrameId(model.frames.iter().position(|f| f.name == name && f.kind == kind).unwrap_or_else(|| panic!("no frame {name}")))
}

/// Sites and bodies where MuJoCo puts them (1e-12 m, 1e-12 in rotation entries).
fn check_frames(model: &Model, data: &mut Data, q: &DVector<f64>, c: &Value, source: &str) {
    forward_kinematics(model, data, q);
    update_frame_placements(model, data).unwrap();
    for (name, p) in c["site_positions"].as_object().unwrap() {
        let x = frame_placement(model, data, frame_of(model, name, FrameKind::Operational)).unwrap();
        let err = (x.translation - vector(p)).amax();
        assert!(err < 1e-12, "{source}: site {name} off by {err:e}");
    }
    for (name, pose) in c["body_poses"].as_object().unwrap() {
        let pose = vector(pose);
        let x = frame_placement(model, data, frame_of(model, name, FrameKind::Body)).unwrap();
        let r = DMatrix::from_row_slice(3, 3, &pose.as_slice()[3..]);
        let err = (x.translation - pose.rows(0, 3)).amax().max((DMatrix::from_column_slice(3, 3, x.rotation.as_slice()) - r).amax());
        assert!(err < 1e-12, "{source}: body {name} off by {err:e}");
    }
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
            check_conversions(&model, c, source);
            check_frames(&model, &mut data, &q, c, source);
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

//! Mesh geoms' inertia against MuJoCo 4.0.0: mujoco_warp's aloha_pot (two ViperX arms and a
//! pot whose bodies weigh their meshes: `inertia="convex"` meshes scaled by a class default,
//! a table of legacy-inertia meshes) loaded with `karakuri::io::mjcf::load_with` and the
//! simulator's mesh reader ([`karakuri_sim::mesh::MeshFiles`]) has MuJoCo's moving mass, mass
//! matrix and bias forces (`scripts/mjcf_reference.py`'s `scene.ref.json`) to 1e-9 relative;
//! plain `mjcf::load`, which has no mesh reader, refuses it naming the geom and the remedy.

use std::path::{Path, PathBuf};

use karakuri::algorithms::{inverse_dynamics, mass_matrix};
use karakuri::io::mjcf;
use karakuri::Data;
use karakuri_sim::mesh::MeshFiles;
use karakuri_sim::{Scene, World};
use nalgebra::{DMatrix, DVector};
use serde_json::Value;

const TOL: f64 = 1e-9;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/mjcf")
}

fn vector(v: &Value) -> DVector<f64> {
    DVector::from_iterator(v.as_array().unwrap().len(), v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()))
}

fn rel(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(1e-300);
    a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale
}

/// Loads the model of reference `refpath` (under `dir`) with the simulator's mesh reader and
/// checks its sizes and moving mass against MuJoCo's, then returns the worst relative errors of
/// M and of the bias (at zero and at the case's velocity) over the reference's cases, and the
/// model's path.
fn against_reference(dir: &Path, refpath: &Path) -> (f64, f64, PathBuf) {
    let r: Value = serde_json::from_str(&std::fs::read_to_string(refpath).unwrap()).unwrap();
    let source = r["source"].as_str().unwrap();
    let path = dir.join(source);
    let (model, _) = mjcf::load_with(&path, &MeshFiles).unwrap_or_else(|e| panic!("{e}"));
    let (nq, nv) = (r["nq"].as_u64().unwrap() as usize, r["nv"].as_u64().unwrap() as usize);
    assert_eq!((model.nq, model.nv), (nq, nv), "{source}");
    let moving = r["moving_mass"].as_f64().unwrap();
    assert!((model.total_mass() - moving).abs() <= 1e-9 * moving, "{source}: mass {} vs MuJoCo's {moving}", model.total_mass());
    let mut data = Data::new(&model);
    let (mut worst_m, mut worst_b) = (0.0f64, 0.0f64);
    for c in r["cases"].as_array().unwrap() {
        let (q, v) = (vector(&c["q"]), vector(&c["v"]));
        let m_ref = DMatrix::from_row_slice(nv, nv, vector(&c["mass_matrix"]).as_slice());
        let m = mass_matrix(&model, &mut data, &q).clone();
        worst_m = worst_m.max(rel(m.as_slice(), m_ref.transpose().as_slice()));
        let zero = DVector::zeros(nv);
        let b = inverse_dynamics(&model, &mut data, &q, &v, &zero).clone();
        worst_b = worst_b.max(rel(b.as_slice(), vector(&c["bias"]).as_slice()));
        let b0 = inverse_dynamics(&model, &mut data, &q, &zero, &zero).clone();
        worst_b = worst_b.max(rel(b0.as_slice(), vector(&c["bias_zero_velocity"]).as_slice()));
    }
    (worst_m, worst_b, path)
}

#[test]
fn aloha_pot_mesh_inertia_equals_mujoco() {
    let refpath = data_dir().join("mujoco_warp/aloha_pot/scene.ref.json");
    let (worst_m, worst_b, path) = against_reference(&data_dir(), &refpath);
    println!("aloha_pot: worst relative error of M {worst_m:.1e}, of the bias {worst_b:.1e}");
    assert!(worst_m < TOL && worst_b < TOL, "M {worst_m:.2e}, bias {worst_b:.2e}");

    let e = mjcf::load(&path).unwrap_err().to_string();
    assert!(e.contains("<geom>") && e.contains("mesh reader") && e.contains("load_with"), "{e}");
}

/// Every `.ref.json` one level under `dir`'s folders.
fn references(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for sub in std::fs::read_dir(dir).unwrap().flatten().filter(|d| d.path().is_dir()) {
        for f in std::fs::read_dir(sub.path()).unwrap().flatten() {
            if f.path().to_string_lossy().ends_with(".ref.json") {
                out.push(f.path());
            }
        }
    }
    out.sort();
    out
}

/// The models too large to carry in the repository (dm_control's dog with 20 MB of meshes,
/// mujoco-mjx's shadow hand and barkour): the same check, from a folder of `tests/data/mjcf`'s
/// layout named by `KARAKURI_MJCF_DATA` with `scripts/mjcf_reference.py`'s `.ref.json` beside
/// each model (docs/MJCF.md says how to fill it from the wheels); skipped with a note without it.
#[test]
fn models_outside_the_repository_equal_mujoco() {
    let Some(dir) = std::env::var_os("KARAKURI_MJCF_DATA") else {
        println!("note: KARAKURI_MJCF_DATA not set: the models too large to carry are not checked");
        return;
    };
    let dir = PathBuf::from(dir);
    let refs = references(&dir);
    assert!(!refs.is_empty(), "no .ref.json under {}", dir.display());
    for refpath in refs {
        let (worst_m, worst_b, path) = against_reference(&dir, &refpath);
        let source = path.strip_prefix(&dir).unwrap().display().to_string();
        assert!(worst_m < TOL && worst_b < TOL, "{source}: M {worst_m:.2e}, bias {worst_b:.2e}");
        let run = simulate_two_seconds(&path);
        println!("| {source} | {worst_m:.1e} | {worst_b:.1e} | {run} |");
    }
}

/// Runs `path` 2 s as `karakuri simulate` does (a lone `.xml` scene): no step may fail and
/// every body stays at a finite place. Returns the run's figures (µs/step in this profile,
/// contacts at most, steps above the solver's tolerance, the first moving body's height).
fn simulate_two_seconds(path: &Path) -> String {
    let mut w = World::new(Scene::from_file(path).unwrap_or_else(|e| panic!("{e}"))).unwrap_or_else(|e| panic!("{e}"));
    let root = w.bodies().iter().position(|b| !b.is_static).unwrap_or(0);
    let z_start = w.states()[root].pose.translation.z;
    let (t0, mut steps, mut contacts) = (std::time::Instant::now(), 0usize, 0usize);
    while w.time() < 2.0 - 1e-9 {
        w.step().unwrap_or_else(|e| panic!("{}: step at t = {}: {e}", path.display(), w.time()));
        contacts = contacts.max(w.contacts().len());
        steps += 1;
    }
    let us = t0.elapsed().as_secs_f64() * 1e6 / steps as f64;
    for (b, s) in w.bodies().iter().zip(w.states()) {
        let p = s.pose.translation;
        assert!(p.iter().all(|x| x.is_finite()), "{}: body {} at {p:?}", path.display(), b.name);
    }
    let z_end = w.states()[root].pose.translation.z;
    let d = w.diagnostics();
    format!("{steps} steps, {us:.0} µs/step (test profile), {contacts} contacts max, {} above tolerance, first moving body ('{}') from z = {z_start:.3} to {z_end:.3}", d.unconverged_steps, w.bodies()[root].name)
}

//! Real robots against Pinocchio: the URDFs of example-robot-data load exactly when Pinocchio
//! loads them, with the same degrees of freedom, masses and mass matrix (to 1e-9 relative, or
//! within what the reported inertia repairs changed).
//!
//! * `romeo_*`: the three romeo URDFs copied into `tests/data/erd/` (BSD licence, see
//!   `tests/data/erd/LICENSE`), against Pinocchio's output stored beside them
//!   (`pinocchio_mass_matrices.py`): run on a bare clone.
//! * `every_example_robot_data_urdf_loads_as_in_pinocchio`: every URDF of an installed
//!   example-robot-data (`EXAMPLE_ROBOT_DATA_DIR`, else the `cmeel.prefix` of Python's site
//!   packages), against a live Pinocchio when `python3 -c 'import pinocchio'` works; skipped with
//!   a note when the package is absent.

mod example_robot_data;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use karakuri::algorithms::{mass_matrix, neutral};
use karakuri::io::urdf::{self, LoadOptions, Root};
use karakuri::{Data, Model};
use serde_json::Value;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The angle `pinocchio_mass_matrices.py` gives a 1-dof joint of this name.
fn angle(name: &str) -> f64 {
    0.5 * (name.bytes().map(u64::from).sum::<u64>() as f64).sin()
}

fn load(path: &Path, root: Root) -> Result<(Model, Vec<String>), urdf::UrdfError> {
    let opts = LoadOptions {
        root,
        ..LoadOptions::default()
    };
    urdf::load_with(path, &opts).map(|(m, g)| (m, g.warnings))
}

/// What the reported repairs may have changed in the mass matrix: a rotational inertia changed
/// by at most `c` per entry moves `aᵀ ΔI b` (unit `a`, `b`) by at most ‖ΔI‖₂ ≤ 3c.
fn repair_bound(warnings: &[String]) -> f64 {
    warnings
        .iter()
        .filter_map(|w| {
            let rest = w.split("entries changed by up to ").nth(1)?;
            rest.split_whitespace().next()?.parse::<f64>().ok()
        })
        .map(|c| 3.0 * c)
        .sum()
}

/// Compares a karakuri model with Pinocchio's summary (`fixed` or `free` entry of the script's
/// output); returns the largest difference of mass matrix entries.
fn compare(name: &str, model: &Model, warnings: &[String], pin: &Value) -> f64 {
    let pin_nv = pin["nv"].as_u64().unwrap() as usize;
    assert_eq!(model.nv, pin_nv, "{name}: nv");
    let mass: f64 = model.inertias.iter().skip(1).map(|i| i.mass).sum();
    let pin_mass = pin["mass"].as_f64().unwrap();
    assert!((mass - pin_mass).abs() <= 1e-12 * pin_mass.max(1.0), "{name}: mass {mass} vs {pin_mass}");
    // dof of karakuri -> dof of Pinocchio, by joint name
    let pin_joints: HashMap<&str, (usize, usize)> = pin["joints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["name"].as_str().unwrap(),
                (j["idx_v"].as_u64().unwrap() as usize, j["nv"].as_u64().unwrap() as usize),
            )
        })
        .collect();
    let mut dof = vec![usize::MAX; model.nv];
    let mut q = neutral(model);
    for j in 1..model.njoints {
        let jname = &model.joint_names[j];
        let &(pv, pnv) = pin_joints
            .get(jname.as_str())
            .unwrap_or_else(|| panic!("{name}: joint '{jname}' not in Pinocchio's model"));
        assert_eq!(pnv, model.nvs[j], "{name}: nv of joint '{jname}'");
        for k in 0..pnv {
            dof[model.idx_v[j] + k] = pv + k;
        }
        if model.nqs[j] == 1 {
            q[model.idx_q[j]] = angle(jname);
        }
    }
    let mut data = Data::new(model);
    let m = mass_matrix(model, &mut data, &q);
    let pm: Vec<f64> = pin["mass_matrix"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let scale = pm.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
    let mut worst = 0.0_f64;
    for r in 0..model.nv {
        for c in 0..model.nv {
            worst = worst.max((m[(r, c)] - pm[dof[r] * pin_nv + dof[c]]).abs());
        }
    }
    let tol = 1e-9 * scale + repair_bound(warnings);
    assert!(
        worst <= tol,
        "{name}: mass matrix differs from Pinocchio's by {worst:.3e} (tolerance {tol:.3e}); warnings: {warnings:#?}"
    );
    worst
}

fn stored_reference() -> Value {
    let text = std::fs::read_to_string(repo_root().join("tests/data/erd/pinocchio.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Loads a stored romeo URDF with both roots and compares with the stored Pinocchio output;
/// returns the warnings of the free-flyer load.
fn romeo(file: &str) -> Vec<String> {
    let reference = stored_reference();
    let path = repo_root().join("tests/data/erd").join(file);
    let mut free_warnings = vec![];
    for (root, key) in [(Root::Fixed, "fixed"), (Root::FreeFlyer, "free")] {
        let (model, warnings) = load(&path, root).unwrap_or_else(|e| panic!("{file} ({key}) refused: {e}"));
        let worst = compare(&format!("{file} ({key})"), &model, &warnings, &reference[file][key]);
        println!("{file} ({key}): mass matrix within {worst:.2e} of Pinocchio's; warnings:");
        for w in &warnings {
            println!("  {w}");
        }
        if root == Root::FreeFlyer {
            free_warnings = warnings;
        }
    }
    free_warnings
}

#[test]
fn romeo_hand_joint_moving_no_mass_loads_with_a_warning() {
    let warnings = romeo("romeo.urdf");
    let w = warnings
        .iter()
        .find(|w| w.contains("'LHand' (line 1443)") && w.contains("move no mass"))
        .unwrap_or_else(|| panic!("no warning for LHand: {warnings:#?}"));
    assert!(w.contains("lock them") && w.contains("armature"), "{w}");
}

#[test]
fn romeo_small_merged_shoulder_inertia_is_repaired_with_a_warning() {
    let warnings = romeo("romeo_small.urdf");
    assert!(
        warnings.iter().any(|w| w.contains("link 'RShoulderYawLink'") && w.contains("nearest physical inertia")),
        "{warnings:#?}"
    );
}

#[test]
fn romeo_laas_small_non_psd_body_inertia_is_repaired_with_a_warning() {
    let warnings = romeo("romeo_laas_small.urdf");
    assert!(
        warnings.iter().any(|w| w.contains("'body'") && w.contains("not positive semi-definite")),
        "{warnings:#?}"
    );
}

fn urdf_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            urdf_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "urdf") {
            out.push(p);
        }
    }
}

#[test]
fn every_example_robot_data_urdf_loads_as_in_pinocchio() {
    let Some(dir) = example_robot_data::robots_dir() else {
        println!("note: example-robot-data not found (set EXAMPLE_ROBOT_DATA_DIR): test skipped");
        return;
    };
    let mut files = vec![];
    urdf_files(&dir, &mut files);
    files.sort();
    assert!(!files.is_empty(), "no URDF under {}", dir.display());
    let script = repo_root().join("tests/data/erd/pinocchio_mass_matrices.py");
    let pinocchio = std::process::Command::new("python3")
        .arg(&script)
        .args(&files)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| serde_json::from_slice::<Value>(&o.stdout).ok());
    if pinocchio.is_none() {
        println!("note: Pinocchio (python3 -c 'import pinocchio') not available: only loading is checked");
    }
    let (mut loaded, mut refused) = (0, vec![]);
    for f in &files {
        let key = f.to_string_lossy().to_string();
        let short = f.file_name().unwrap().to_string_lossy().to_string();
        for (root, rk) in [(Root::Fixed, "fixed"), (Root::FreeFlyer, "free")] {
            let ours = load(f, root);
            let theirs = pinocchio.as_ref().map(|p| &p[&key][rk]);
            match (ours, theirs) {
                (Ok((model, warnings)), Some(pin)) => {
                    assert!(pin.get("error").is_none(), "{short} ({rk}): Pinocchio refuses it but karakuri loads it");
                    compare(&format!("{short} ({rk})"), &model, &warnings, pin);
                    if short.starts_with("tiago") || short.starts_with("anymal") {
                        println!("{short} ({rk}): {warnings:#?}");
                    }
                }
                (Err(e), Some(pin)) => {
                    assert!(pin.get("error").is_some(), "{short} ({rk}): Pinocchio loads it but karakuri refuses: {e}");
                }
                (Ok(_), None) => {}
                (Err(e), None) => {
                    if root == Root::Fixed {
                        println!("{short}: refused: {e}");
                    }
                }
            }
            if root == Root::Fixed {
                match load(f, root) {
                    Ok(_) => loaded += 1,
                    Err(_) => refused.push(short.clone()),
                }
            }
        }
    }
    println!("example-robot-data: karakuri loads {loaded} of {} URDFs; refused: {refused:?}", files.len());
    // example-robot-data 6.0.0: Pinocchio loads 68 of 69 (ur3.urdf has no robot name)
    assert_eq!(refused, ["ur3.urdf"], "refused URDFs");
}

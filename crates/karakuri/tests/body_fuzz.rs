//! Seeded mutation testing of the `.body` loader, as `urdf_fuzz.rs` does for URDF.
//!
//! Every `.body` file of `tests/data/body` (and a small hand-written one) is mutated (numbers
//! replaced by extreme values, spans deleted, duplicated or spliced from other files, hostile
//! YAML inserted: alias bombs, deep nesting, tags, merge keys; joint types swapped) and loaded
//! from its own directory (so resources and sub-bodies resolve). Each load must return within
//! `PER_INPUT_LIMIT` without panicking, an error must say why, and a loaded model must hold
//! finite numbers with a finite mass matrix, bias forces and forward dynamics at the neutral
//! configuration. A failing input is written to `target/body-fuzz/` and named in the failure.
//!
//! The loop is `tests/fuzz/mod.rs`'s; `KARAKURI_FUZZ_SECS` (default 20) and `KARAKURI_FUZZ_SEED`
//! as for the URDF fuzz test.

mod fuzz;

use std::path::{Path, PathBuf};

use karakuri::io::body;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/body")
}

const SMALL: &str = "format: ChoreonoidBody\nformatVersion: 1.0\nlinks:\n  - name: A\n    jointType: free\n    mass: 1\n    inertia: [1, 0, 0, 0, 1, 0, 0, 0, 1]\n    elements:\n      - type: Transform\n        rotation: [[1, 0, 0, 90], [0, 1, 0, 45]]\n        elements: &S\n          Shape: { geometry: { type: Capsule, radius: 0.1, height: 0.2 } }\n  - name: B\n    parent: A\n    jointType: revolute\n    jointAxis: [1, 1, 0]\n    jointRange: [-90, unlimited]\n    mass: 0.5\n    centerOfMass: [0, 0, -0.5]\n    inertia: [0.1, 0, 0, 0, 0.1, 0, 0, 0, 0.1]\n    elements: *S\nextraJoints:\n  - { link1Name: A, link2Name: B, jointType: ball }\nstandardPose: [10]\n";

fn seeds() -> Vec<(PathBuf, String)> {
    let mut out = vec![(data().join("misc/small.body"), SMALL.to_string())];
    for dir in ["SR1", "PA10", "Tank", "GR001", "misc"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(data().join(dir)).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "body")).collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            out.push((f, text));
        }
    }
    out
}

const EXTREME_NUMBERS: &[&str] = &["0", "-0", "-1", "1e308", "-1e308", "5e-324", "1e15", "1e16", ".nan", ".inf", "-.inf", "NaN", "1e", "", "0x10", "99999999999999999999", "unlimited", "[1, 2]", "{}"];

const SNIPPETS: &[&str] = &[
    "\n&a [*a]\n",
    "\nx: &b [1, 1, 1, 1, 1, 1, 1, 1, 1]\ny: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nz: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\nw: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n",
    "\n  - { name: X, parent: X, jointType: revolute }\n",
    "\n  - { type: SubBody, uri: ../misc/ClosedLinkSample.body, parent: WAIST }\n",
    "\n  - { type: SubBody, uri: Tank.body }\n",
    "!!binary ",
    "<<: *WaistAppearance\n",
    "? [a, b]\n: c\n",
    "\t",
    "---\n",
    "...\n",
    "jointType: pseudo_continuous_track\n",
    "geometry: { type: Extrusion, crossSection: [0, 0, 0, 0, 0, 0], spine: [0, 0, 0] }\n",
    "rotation: [[0, 0, 0, 90]]\n",
    "elements: { Visual: { elements: { Collision: {} } } }\n",
];

const BODY: fuzz::Dialect = fuzz::Dialect {
    numbers: EXTREME_NUMBERS,
    snippets: SNIPPETS,
    swaps: &[("revolute", "fixed"), ("free", "revolute"), ("fixed", "prismatic"), ("parent: ", "parent: X"), ("Box", "Sphere"), ("degree", "radian")],
    // flow sequences nested up to 32768 deep
    nests: &[("[", "]")],
    max_depth_log2: 15,
    attributes: false,
};

fn check(b: &body::BodyModel) -> Result<(), String> {
    let m = &b.model;
    for j in 0..m.njoints {
        let i = &m.inertias[j];
        if !i.mass.is_finite() || !i.com.iter().chain(i.inertia_com.iter()).all(|v| v.is_finite()) {
            return Err(format!("inertia of joint {j} not finite"));
        }
        let x = &m.joint_placements[j];
        if !x.rotation.iter().chain(x.translation.iter()).all(|v| v.is_finite()) {
            return Err(format!("placement of joint {j} not finite"));
        }
    }
    if b.shapes.iter().any(|s| !s.placement.translation.iter().chain(s.placement.rotation.iter()).all(|v| v.is_finite())) {
        return Err("shape placement not finite".into());
    }
    fuzz::dynamics_finite(m, false)
}

/// Loads `text` as if it were the file `path`: whether it loaded; `Err` for an error without a
/// reason or a non-finite model.
fn load(text: &str, path: &Path) -> Result<bool, String> {
    match body::parse_str(text, path) {
        Ok(b) => check(&b).map(|()| true),
        Err(e) if e.reason.is_empty() => Err(format!("an error without a reason: {e:?}")),
        Err(_) => Ok(false),
    }
}

#[test]
fn mutated_body_files_never_panic_hang_or_load_non_finite_numbers() {
    let c = fuzz::Campaign { name: "body", extension: "body", default_secs: 20.0, default_seed: 0x626f_6479 };
    let corpus: Vec<(String, String)> = seeds().into_iter().map(|(p, t)| (p.display().to_string(), t)).collect();
    let (_, loaded) = fuzz::campaign(&c, &corpus, |path, text, other, rng| {
        let input = fuzz::mutate(&BODY, text, other, rng);
        // loaded as the seed's own file, so that resources and sub-bodies resolve
        let (copy, path) = (input.clone(), PathBuf::from(path));
        (input, fuzz::guarded(move || load(&copy, &path)))
    });
    assert!(loaded > 0);
}

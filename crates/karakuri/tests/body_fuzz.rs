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
//! `KARAKURI_FUZZ_SECS` (default 20) and `KARAKURI_FUZZ_SEED` as for the URDF fuzz test.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use karakuri::algorithms::{forward_dynamics, inverse_dynamics, mass_matrix, neutral, SplitMix64};
use karakuri::io::body;
use karakuri::Data;

const PER_INPUT_LIMIT: Duration = Duration::from_secs(5);

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

fn boundary(text: &str, rng: &mut SplitMix64) -> usize {
    let mut i = rng.next_u64() as usize % (text.len() + 1);
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn mutate(text: &str, other: &str, rng: &mut SplitMix64) -> String {
    let mut t = text.to_string();
    for _ in 0..1 + rng.next_u64() % 4 {
        if t.is_empty() {
            t = other.to_string();
        }
        match rng.next_u64() % 9 {
            0 | 1 => {
                let start = boundary(&t, rng);
                if let Some(i) = t[start..].find(|c: char| c.is_ascii_digit()).map(|k| start + k) {
                    let num = |c: char| c.is_ascii_digit() || c == '.' || c == '-' || c == 'e';
                    let a = t[..i].rfind(|c| !num(c)).map_or(0, |k| k + 1);
                    let b = t[i..].find(|c| !num(c)).map_or(t.len(), |k| i + k);
                    t.replace_range(a..b, EXTREME_NUMBERS[rng.next_u64() as usize % EXTREME_NUMBERS.len()]);
                }
            }
            2 => {
                let (a, b) = (boundary(&t, rng), boundary(&t, rng));
                let (a, mut b) = (a.min(b), a.max(b).min(a.min(b) + 300));
                while !t.is_char_boundary(b) {
                    b -= 1;
                }
                t.replace_range(a..b, "");
            }
            3 => {
                let (a, b) = (boundary(&t, rng), boundary(&t, rng));
                let (a, b) = (a.min(b), a.max(b));
                if b - a < 2000 {
                    let span = t[a..b].to_string();
                    let at = boundary(&t, rng);
                    t.insert_str(at, &span);
                }
            }
            4 => {
                let at = boundary(&t, rng);
                t.insert_str(at, SNIPPETS[rng.next_u64() as usize % SNIPPETS.len()]);
            }
            5 => {
                let (a, b) = (boundary(other, rng), boundary(other, rng));
                let (a, mut b) = (a.min(b), a.max(b).min(a.min(b) + 2000));
                while !other.is_char_boundary(b) {
                    b -= 1;
                }
                let at = boundary(&t, rng);
                t.insert_str(at, &other[a..b]);
            }
            6 => {
                for (from, to) in [("revolute", "fixed"), ("free", "revolute"), ("fixed", "prismatic"), ("parent: ", "parent: X"), ("Box", "Sphere"), ("degree", "radian")] {
                    if rng.next_u64().is_multiple_of(3) {
                        if let Some(k) = t.find(from) {
                            t.replace_range(k..k + from.len(), to);
                        }
                    }
                }
            }
            7 => {
                let depth = 1usize << (rng.next_u64() % 16);
                let at = boundary(&t, rng);
                t.insert_str(at, &format!("{}{}", "[".repeat(depth), "]".repeat(depth)));
            }
            _ => {
                let at = boundary(&t, rng);
                t.insert(at, (rng.next_u64() % 128) as u8 as char);
            }
        }
    }
    t
}

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
    if m.nv <= 200 {
        let mut data = Data::new(m);
        let q = neutral(m);
        let v = nalgebra::DVector::zeros(m.nv);
        if !mass_matrix(m, &mut data, &q).iter().all(|x| x.is_finite()) {
            return Err("mass matrix not finite".into());
        }
        let tau = inverse_dynamics(m, &mut data, &q, &v, &v).clone();
        if !tau.iter().all(|x| x.is_finite()) {
            return Err("gravity torques not finite".into());
        }
        if !forward_dynamics(m, &mut data, &q, &v, &tau).iter().all(|x| x.is_finite()) {
            return Err("forward dynamics not finite".into());
        }
    }
    Ok(())
}

fn run_one(text: String, path: PathBuf) -> Result<bool, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(|| match body::parse_str(&text, &path) {
            Ok(b) => check(&b).map(|()| true),
            Err(e) if e.reason.is_empty() => Err(format!("an error without a reason: {e:?}")),
            Err(_) => Ok(false),
        });
        let _ = tx.send(r.unwrap_or_else(|p| {
            let msg = p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned());
            Err(format!("panic: {}", msg.unwrap_or_default()))
        }));
    });
    rx.recv_timeout(PER_INPUT_LIMIT).unwrap_or_else(|_| Err(format!("no answer within {PER_INPUT_LIMIT:?} (a hang)")))
}

#[test]
fn mutated_body_files_never_panic_hang_or_load_non_finite_numbers() {
    let secs: f64 = std::env::var("KARAKURI_FUZZ_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(20.0);
    let seed: u64 = std::env::var("KARAKURI_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x626f_6479);
    let corpus = seeds();
    let mut rng = SplitMix64::new(seed);
    let start = Instant::now();
    let (mut runs, mut loaded) = (0u64, 0u64);
    while start.elapsed().as_secs_f64() < secs {
        let (path, text) = &corpus[rng.next_u64() as usize % corpus.len()];
        let other = &corpus[rng.next_u64() as usize % corpus.len()].1;
        let input = mutate(text, other, &mut rng);
        runs += 1;
        match run_one(input.clone(), path.clone()) {
            Ok(ok) => loaded += u64::from(ok),
            Err(why) => {
                let dir = data().join("../../../target/body-fuzz");
                std::fs::create_dir_all(&dir).unwrap();
                let out = dir.join(format!("failure-{seed}-{runs}.body"));
                std::fs::write(&out, &input).unwrap();
                panic!("input {runs} (mutated from {}, seed {seed}): {why}; written to {}", path.display(), out.display());
            }
        }
    }
    println!("{runs} mutated .body files in {:.1} s (seed {seed}): {loaded} loaded, {} refused with an error", start.elapsed().as_secs_f64(), runs - loaded);
    assert!(runs > 0 && loaded > 0);
}

//! Seeded mutation testing of the scene path on stable Rust: `Scene::from_str` → `World::new`
//! → a bounded number of steps (the coverage-guided target is `fuzz/fuzz_targets/scene_path.rs`,
//! for `cargo fuzz`).
//!
//! Every scene of `tests/scenes` and the CLI's bundled demo is mutated, most often as a value
//! tree (a number replaced by an extreme value, a string by another of the file, an array
//! element dropped or repeated, a key dropped or copied from another scene) and sometimes as
//! text (spans deleted or repeated, odd characters). Each input must, within
//! `PER_INPUT_LIMIT`, either be refused with an error that says something, or load and step
//! `STEPS` times (or until a step returns an error) with every number the world reports
//! finite: body states, energy, sensor readings, joint states, contact forces. A failing input
//! is written to `target/scene-fuzz/` and named in the failure; it then becomes a regression
//! test (see `crates/karakuri-sim/tests/hardening.rs`).
//!
//! CI runs it for `KARAKURI_FUZZ_SECS` seconds (default 30) from `KARAKURI_FUZZ_SEED` (default
//! fixed, so runs are reproducible): `KARAKURI_FUZZ_SECS=600 cargo test -p karakuri-sim --test
//! scene_fuzz --release` to search longer, with another seed to search elsewhere.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use karakuri::algorithms::SplitMix64;
use karakuri_sim::{JointState, Scene, World};
use serde_json::{Map, Value};

/// The longest one input may take to load and step (`STEPS` steps of the 100-box pile take
/// well under a second in the test profile).
const PER_INPUT_LIMIT: Duration = Duration::from_secs(20);
/// Steps per loaded input.
const STEPS: usize = 60;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// (path, text) of every seed scene.
fn seeds() -> Vec<(PathBuf, String)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo_root().join("tests/scenes"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json" || x == "yaml"))
        .collect();
    files.push(repo_root().join("crates/karakuri-cli/scenes/demo.yaml"));
    files.sort();
    files.into_iter().map(|f| (f.clone(), std::fs::read_to_string(&f).unwrap())).collect()
}

fn parse(path: &Path, text: &str) -> Value {
    if path.extension().is_some_and(|x| x == "yaml") {
        serde_saphyr::from_str(text).unwrap()
    } else {
        serde_json::from_str(text).unwrap()
    }
}

const EXTREME_NUMBERS: &[f64] = &[
    0.0, -0.0, 1.0, -1.0, 1e308, -1e308, f64::MAX, 5e-324, 2.2e-308, 1e-300, 1e15, -1e15, 1e-12, 1e9,
    -1e-9, 0.5, 2.0, 1e4, 1e12, 100.0,
];
const ODD_STRINGS: &[&str] = &[
    "", "éééééééééééééééééééé", "*", "nonexistent", "robot/nonexistent", "../../../etc/passwd",
    "builtin:nothing.urdf", "NaN", "inf", "1e308", "box", "sphere", "hinge", "free", "position", "a/b/c",
];

/// Every leaf path of `v` (object keys and array indices), to pick one at random.
fn paths(v: &Value, prefix: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(prefix.clone());
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                prefix.push(Step::Key(k.clone()));
                paths(x, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                prefix.push(Step::Index(i));
                paths(x, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

fn at<'a>(v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(v, |v, s| match (s, v) {
        (Step::Key(k), Value::Object(m)) => m.get_mut(k).unwrap(),
        (Step::Index(i), Value::Array(a)) => &mut a[*i],
        _ => unreachable!("paths come from the same tree"),
    })
}

fn pick<T: Clone>(items: &[T], rng: &mut SplitMix64) -> T {
    items[rng.next_u64() as usize % items.len()].clone()
}

/// Some strings of a tree (names, references), for swaps.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Object(m) => m.values().for_each(|x| strings(x, out)),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// Some key/value pairs of a tree, to graft elsewhere.
fn members(v: &Value, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                out.push((k.clone(), x.clone()));
                members(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| members(x, out)),
        _ => {}
    }
}

fn mutate_value(v: &mut Value, other: &Value, rng: &mut SplitMix64) {
    let mut all = vec![];
    paths(v, &mut vec![], &mut all);
    let mut own_strings = vec![];
    strings(v, &mut own_strings);
    let target = pick(&all, rng);
    let node = at(v, &target);
    match node {
        Value::Number(_) => {
            let x = if rng.next_u64() % 4 == 0 {
                // a nearby value: the sign flipped or scaled by a power of ten
                let x = node.as_f64().unwrap();
                let k = (rng.next_u64() % 13) as i32 - 6;
                if rng.next_u64() % 2 == 0 { -x } else { x * 10f64.powi(k) }
            } else {
                pick(EXTREME_NUMBERS, rng)
            };
            *node = serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number);
        }
        Value::String(_) => {
            *node = Value::String(if rng.next_u64() % 2 == 0 && !own_strings.is_empty() {
                pick(&own_strings, rng)
            } else {
                pick(ODD_STRINGS, rng).to_string()
            });
        }
        Value::Array(a) if !a.is_empty() => {
            let i = rng.next_u64() as usize % a.len();
            match rng.next_u64() % 3 {
                0 => {
                    a.remove(i);
                }
                1 => {
                    let x = a[i].clone();
                    a.insert(i, x);
                }
                _ => a.truncate(i),
            }
        }
        Value::Object(m) if !m.is_empty() => {
            if rng.next_u64() % 2 == 0 {
                let keys: Vec<String> = m.keys().cloned().collect();
                m.remove(&pick(&keys, rng));
            } else {
                let mut grafts = vec![];
                members(other, &mut grafts);
                if !grafts.is_empty() {
                    let (k, x) = pick(&grafts, rng);
                    m.insert(k, x);
                }
            }
        }
        _ => {
            // a bool, null or empty container becomes something of another type
            *node = match rng.next_u64() % 4 {
                0 => Value::Bool(true),
                1 => Value::String(pick(ODD_STRINGS, rng).to_string()),
                2 => Value::Array(vec![Value::Null]),
                _ => Value::Object(Map::new()),
            };
        }
    }
}

/// A random char boundary of `text`.
fn boundary(text: &str, rng: &mut SplitMix64) -> usize {
    let mut i = rng.next_u64() as usize % (text.len() + 1);
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn mutate_text(text: &str, rng: &mut SplitMix64) -> String {
    let mut t = text.to_string();
    let (a, b) = (boundary(&t, rng), boundary(&t, rng));
    let (a, b) = (a.min(b), a.max(b));
    match rng.next_u64() % 3 {
        0 => t.replace_range(a..b, ""),
        1 if b - a < 2000 => {
            let span = t[a..b].to_string();
            let at = boundary(&t, rng);
            t.insert_str(at, &span);
        }
        _ => {
            let at = boundary(&t, rng);
            t.insert_str(at, pick(&["é", "\u{0}", "}", "]", "\"", ":", "-", "\t", "&a", "!!", "1e999"], rng));
        }
    }
    t
}

fn joint_finite(j: &JointState) -> bool {
    j.q.is_finite() && j.dq.is_finite() && j.tau.is_finite()
}

/// Loads `text` as the scene `file` and steps it; `Err` says what broke an invariant (a step's
/// own error is a fine outcome: the simulator stopped with a reason).
fn run(text: &str, file: &str) -> Result<(), String> {
    let scene = match Scene::from_str(text, file) {
        Ok(s) => s,
        Err(e) => return if e.to_string().trim().is_empty() { Err("empty load error".into()) } else { Ok(()) },
    };
    let mut world = match World::new(scene) {
        Ok(w) => w,
        Err(e) => return if e.to_string().trim().is_empty() { Err("empty world error".into()) } else { Ok(()) },
    };
    let mut joints = vec![JointState::default(); world.one_dof_joints().len()];
    for step in 0..=STEPS {
        let where_ = || format!("after {step} steps (t = {})", world.time());
        for (b, s) in world.bodies().iter().zip(world.states()) {
            let finite = s.pose.rotation.iter().chain(s.pose.translation.iter()).all(|x| x.is_finite())
                && s.linear.iter().chain(s.angular.iter()).all(|x| x.is_finite());
            if !finite {
                return Err(format!("body '{}' not finite {}", b.name, where_()));
            }
        }
        if !world.energy().is_finite() || !world.time().is_finite() {
            return Err(format!("energy or time not finite {}", where_()));
        }
        if let Some(r) = world.readings().iter().find(|r| !r.iter().all(|x| x.is_finite())) {
            return Err(format!("sensor reading {r:?} not finite {}", where_()));
        }
        world.write_joint_states(&mut joints);
        if !joints.iter().all(joint_finite) {
            return Err(format!("joint state not finite {}", where_()));
        }
        if !world.contact_wrenches().iter().all(|(f, t)| f.iter().chain(t.iter()).all(|x| x.is_finite())) {
            return Err(format!("contact wrench not finite {}", where_()));
        }
        if step == STEPS {
            break;
        }
        if let Err(e) = world.step() {
            return if e.to_string().trim().is_empty() { Err("empty step error".into()) } else { Ok(()) };
        }
    }
    Ok(())
}

/// Runs one input on a worker thread: a panic, a hang past `PER_INPUT_LIMIT` or a broken
/// invariant is returned as the reason.
fn check(text: String, file: String) -> Result<(), String> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            let out = std::panic::catch_unwind(|| run(&text, &file));
            let _ = tx.send(out);
        })
        .unwrap();
    match rx.recv_timeout(PER_INPUT_LIMIT) {
        Ok(Ok(r)) => r,
        Ok(Err(p)) => Err(format!(
            "panic: {}",
            p.downcast_ref::<String>().cloned().or(p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
        )),
        Err(_) => Err(format!("no answer within {PER_INPUT_LIMIT:?} (a hang)")),
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

#[test]
fn mutated_scenes_load_step_or_refuse_cleanly() {
    let secs = env_u64("KARAKURI_FUZZ_SECS", 30);
    let mut rng = SplitMix64::new(env_u64("KARAKURI_FUZZ_SEED", 0x5CE7E));
    let seeds = seeds();
    let values: Vec<Value> = seeds.iter().map(|(p, t)| parse(p, t)).collect();
    let start = Instant::now();
    let (mut runs, mut failures) = (0u64, vec![]);
    let out_dir = repo_root().join("target/scene-fuzz");
    // every seed once unmutated first: they must all load and step
    let mut plan: Vec<Option<usize>> = (0..seeds.len()).map(Some).collect();
    plan.reverse();
    while start.elapsed() < Duration::from_secs(secs) || !plan.is_empty() {
        let k = plan.pop().flatten().unwrap_or_else(|| rng.next_u64() as usize % seeds.len());
        let mutated = runs >= seeds.len() as u64;
        let (path, text) = &seeds[k];
        // the mutated scene sits beside its seed, so relative mesh and URDF paths resolve
        let (text, file) = if !mutated {
            (text.clone(), path.to_string_lossy().to_string())
        } else if rng.next_u64() % 5 == 0 {
            (mutate_text(text, &mut rng), path.to_string_lossy().to_string())
        } else {
            let mut v = values[k].clone();
            let other = &values[rng.next_u64() as usize % values.len()];
            for _ in 0..1 + rng.next_u64() % 3 {
                mutate_value(&mut v, other, &mut rng);
            }
            (serde_json::to_string_pretty(&v).unwrap(), path.with_extension("fuzz.json").to_string_lossy().to_string())
        };
        runs += 1;
        if let Err(why) = check(text.clone(), file.clone()) {
            std::fs::create_dir_all(&out_dir).unwrap();
            let ext = if file.ends_with(".yaml") { "yaml" } else { "json" };
            let saved = out_dir.join(format!("failure-{runs}.{ext}"));
            std::fs::write(&saved, &text).unwrap();
            failures.push(format!("{} (from {}): {why}", saved.display(), path.display()));
            if failures.len() >= 10 || why.contains("hang") {
                break;
            }
        }
    }
    eprintln!("scene fuzz: {runs} inputs in {:.1} s, {} failures", start.elapsed().as_secs_f64(), failures.len());
    assert!(failures.is_empty(), "{} of {runs} inputs failed:\n{}", failures.len(), failures.join("\n"));
}

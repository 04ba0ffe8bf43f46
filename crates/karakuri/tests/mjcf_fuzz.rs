//! Seeded mutation testing of the MJCF loader (as `urdf_fuzz.rs` for URDF).
//!
//! Every model of `tests/data/mjcf` is mutated (numbers replaced by extreme values, spans
//! deleted, duplicated or moved, attribute values swapped, hostile snippets and deep nesting
//! inserted) and loaded as if it were its own file (so includes resolve). Each load must return
//! within `PER_INPUT_LIMIT` without panicking, and a loaded model must have a finite mass
//! matrix and bias forces at the neutral configuration. A failing input is written to
//! `target/mjcf-fuzz/` and named in the failure.
//!
//! `KARAKURI_FUZZ_SECS` (default 10) and `KARAKURI_FUZZ_SEED` (default fixed) as for URDF.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use karakuri::algorithms::{inverse_dynamics, mass_matrix, neutral, SplitMix64};
use karakuri::io::mjcf;
use karakuri::{Data, Model};

const PER_INPUT_LIMIT: Duration = Duration::from_secs(5);

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/mjcf")
}

/// (path, text) of every model (included files are not seeds of their own).
fn seeds() -> Vec<(PathBuf, String)> {
    let mut out = vec![];
    for dir in std::fs::read_dir(data_dir()).unwrap().flatten().filter(|d| d.path().is_dir()) {
        for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
            let p = f.path();
            let json = p.with_extension("ref.json");
            if p.extension().is_some_and(|x| x == "xml") && json.is_file() {
                out.push((p.clone(), std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

const EXTREME_NUMBERS: &[&str] = &[
    "0", "-0", "1", "-1", "1e308", "-1e308", "5e-324", "1e-300", "1e15", "1e16", "NaN", "inf", "-inf", "1e", "",
    "1 2", "1 2 3 4", "0 0 0", "0 0 0 0", "1e-20 0 0",
];

const SNIPPETS: &[&str] = &[
    "<!DOCTYPE mujoco [<!ENTITY a \"aaaa\">]>",
    "<body><joint type=\"free\"/><body><freejoint/></body></body>",
    "<body><joint/><joint type=\"ball\"/><joint type=\"slide\"/></body>",
    "<body childclass=\"nope\"/>",
    "<joint/>",
    "<frame euler=\"1e300 0 0\"><body><geom type=\"box\" size=\"1e15 1e15 1e15\"/></body></frame>",
    "<inertial pos=\"0 0 0\" mass=\"1\" fullinertia=\"1 1 1 5 5 5\"/>",
    "<include file=\"../../../../etc/passwd\"/>",
    "<default class=\"main\"><default class=\"main\"/></default>",
    "<geom type=\"mesh\" mesh=\"nope\"/>",
    "<composite/>",
    // height fields: inline data (extreme, too few, too many numbers), files the core cannot
    // decode, a geom naming one
    "<asset><hfield name=\"hf\" nrow=\"2\" ncol=\"3\" elevation=\"0 1e15 -1e15 1 2 3\" size=\"1 1 1 1\"/></asset>",
    "<asset><hfield name=\"hf\" nrow=\"4096\" ncol=\"4096\" elevation=\"1 2\" size=\"1 1 0 1\"/></asset>",
    "<asset><hfield name=\"hf\" file=\"nope.png\" size=\"1 1 1 1\"/><hfield file=\"nope.bin\" size=\"1 1 1 1\"/></asset>",
    "<geom type=\"hfield\" hfield=\"hf\"/>",
];

fn boundary(text: &str, rng: &mut SplitMix64) -> usize {
    let mut i = rng.next_u64() as usize % (text.len() + 1);
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn find_value(text: &str, rng: &mut SplitMix64) -> Option<(usize, usize)> {
    let mut start = rng.next_u64() as usize % text.len().max(1);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let a = text[start..].find("=\"").map(|k| start + k + 2)?;
    let b = text[a..].find('"').map(|k| a + k)?;
    Some((a, b))
}

fn mutate(text: &str, rng: &mut SplitMix64) -> String {
    let mut t = text.to_string();
    for _ in 0..1 + rng.next_u64() % 4 {
        match rng.next_u64() % 8 {
            0 | 1 => {
                if let Some((a, b)) = find_value(&t, rng) {
                    t.replace_range(a..b, EXTREME_NUMBERS[rng.next_u64() as usize % EXTREME_NUMBERS.len()]);
                }
            }
            2 => {
                if let (Some((a, b)), Some((c, d))) = (find_value(&t, rng), find_value(&t, rng)) {
                    let v = t[c..d].to_string();
                    t.replace_range(a..b, &v);
                }
            }
            3 => {
                let (a, b) = (boundary(&t, rng), boundary(&t, rng));
                let (a, mut b) = (a.min(b), a.max(b).min(a.min(b) + 400));
                while !t.is_char_boundary(b) {
                    b -= 1;
                }
                t.replace_range(a..b, "");
            }
            4 => {
                let (a, b) = (boundary(&t, rng), boundary(&t, rng));
                let (a, b) = (a.min(b), a.max(b));
                if b - a < 2000 {
                    let span = t[a..b].to_string();
                    let at = boundary(&t, rng);
                    t.insert_str(at, &span);
                }
            }
            5 => {
                let at = boundary(&t, rng);
                t.insert_str(at, SNIPPETS[rng.next_u64() as usize % SNIPPETS.len()]);
            }
            6 => {
                // bodies (or unknown elements) nested up to 4096 deep
                let depth = 1usize << (rng.next_u64() % 13);
                let tag = if rng.next_u64().is_multiple_of(2) { "body" } else { "n" };
                let at = boundary(&t, rng);
                t.insert_str(at, &format!("{}{}", format!("<{tag}>").repeat(depth), format!("</{tag}>").repeat(depth)));
            }
            _ => {
                let at = boundary(&t, rng);
                t.insert(at, (rng.next_u64() % 128) as u8 as char);
            }
        }
    }
    t
}

fn check_finite(model: &Model) -> Result<(), String> {
    if model.nv > 300 {
        return Ok(());
    }
    let mut data = Data::new(model);
    let q = neutral(model);
    let v = nalgebra::DVector::zeros(model.nv);
    if !mass_matrix(model, &mut data, &q).iter().all(|x| x.is_finite()) {
        return Err("mass matrix at the neutral configuration not finite".into());
    }
    if !inverse_dynamics(model, &mut data, &q, &v, &v).iter().all(|x| x.is_finite()) {
        return Err("gravity torques at the neutral configuration not finite".into());
    }
    Ok(())
}

fn run_one(xml: String, name: String) -> Result<bool, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let result = std::panic::catch_unwind(|| match mjcf::parse_str(&xml, &name) {
            Ok((model, _)) => match mjcf::parse_world_str(&xml, &name) {
                // the simulation sections too: an answer, never a panic
                Err(e) if e.reason.is_empty() => Err(format!("load_world: an error without a reason: {e:?}")),
                _ => check_finite(&model).map(|()| true),
            },
            Err(e) if e.reason.is_empty() || e.file.is_empty() => Err(format!("an error without a reason or file: {e:?}")),
            Err(_) => Ok(false),
        });
        let _ = tx.send(result.unwrap_or_else(|p| {
            let msg = p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned());
            Err(format!("panic: {}", msg.unwrap_or_default()))
        }));
    });
    rx.recv_timeout(PER_INPUT_LIMIT).unwrap_or_else(|_| Err(format!("no answer within {PER_INPUT_LIMIT:?} (a hang)")))
}

#[test]
fn mutated_mjcf_never_panics_hangs_or_loads_non_finite_numbers() {
    let secs: f64 = std::env::var("KARAKURI_FUZZ_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let seed: u64 = std::env::var("KARAKURI_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x6d6a_6366);
    let corpus = seeds();
    assert!(!corpus.is_empty());
    let mut rng = SplitMix64::new(seed);
    let start = Instant::now();
    let (mut runs, mut loaded) = (0u64, 0u64);
    while start.elapsed().as_secs_f64() < secs {
        let (path, text) = &corpus[rng.next_u64() as usize % corpus.len()];
        let xml = mutate(text, &mut rng);
        runs += 1;
        match run_one(xml.clone(), path.display().to_string()) {
            Ok(ok) => loaded += u64::from(ok),
            Err(why) => {
                let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mjcf-fuzz");
                std::fs::create_dir_all(&out).unwrap();
                let file = out.join(format!("failure-{seed}-{runs}.xml"));
                std::fs::write(&file, &xml).unwrap();
                panic!("input {runs} (mutated from {}, seed {seed}): {why}; written to {}", path.display(), file.display());
            }
        }
    }
    println!("{runs} mutated MJCF files in {:.1} s (seed {seed}): {loaded} loaded, {} refused", start.elapsed().as_secs_f64(), runs - loaded);
}

/// A chain of 498 bodies loads (500 elements deep with <mujoco> and <worldbody>, the deepest
/// nesting accepted); deeper is refused.
#[test]
fn a_500_deep_chain_loads_and_deeper_is_refused() {
    let chain = |n: usize| {
        format!("<mujoco><worldbody>{}{}</worldbody></mujoco>", "<body><joint/><geom size=\"0.1\"/>".repeat(n), "</body>".repeat(n))
    };
    let (m, _) = mjcf::parse_str(&chain(498), "chain.xml").unwrap();
    assert_eq!(m.nv, 498);
    let e = mjcf::parse_str(&chain(500), "chain.xml").unwrap_err();
    assert!(e.reason.contains("deeper"), "{e}");
    // far deeper, on a thread with the default 2 MB stack: refused before the XML reader
    let deep = std::thread::spawn(move || mjcf::parse_str(&chain(100_000), "chain.xml").is_err()).join();
    assert_eq!(deep.ok(), Some(true));
}


//! The seeded mutation loop every loader's fuzz test shares (`urdf_fuzz.rs`, `mjcf_fuzz.rs`,
//! `body_fuzz.rs`): a [`Dialect`] says what a format's hostile numbers, snippets, keyword swaps
//! and nesting look like, [`mutate`] applies one to four random edits, [`guarded`] loads one
//! input on a worker thread (a panic or a hang is a failure), and [`campaign`] runs the whole
//! time-bounded search, writing a failing input to `target/<name>-fuzz/` and naming it.
//!
//! `KARAKURI_FUZZ_SECS` (each test's default below) bounds a run and `KARAKURI_FUZZ_SEED`
//! (default fixed, so runs are reproducible) picks where it searches:
//! `KARAKURI_FUZZ_SECS=600 cargo test -p karakuri --test urdf_fuzz --release` searches longer.

#![allow(dead_code)] // each test uses the part its format needs

use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use karakuri::algorithms::{forward_dynamics, inverse_dynamics, mass_matrix, neutral, SplitMix64};
use karakuri::{Data, Model};

/// The longest one input may take to load (a 5000-link URDF chain takes about 0.5 s).
pub const PER_INPUT_LIMIT: Duration = Duration::from_secs(5);

/// What a format's hostile edits look like.
pub struct Dialect {
    /// Values a number is replaced by (extremes, non-numbers, wrong counts).
    pub numbers: &'static [&'static str],
    /// Text inserted at random places (hostile elements, keys, entities).
    pub snippets: &'static [&'static str],
    /// Keywords swapped for others (joint types, units), each with probability 1/3.
    pub swaps: &'static [(&'static str, &'static str)],
    /// Opening and closing tokens nested at a random place, up to `2^max_depth_log2` deep.
    pub nests: &'static [(&'static str, &'static str)],
    /// The deepest nesting tried, as a power of two.
    pub max_depth_log2: u64,
    /// XML: attribute values (`="…"`) are also replaced whole and swapped with one another
    /// (names become cycles and duplicates).
    pub attributes: bool,
}

/// `text` after one to four random edits; `other` (another file of the corpus) is spliced from.
pub fn mutate(d: &Dialect, text: &str, other: &str, rng: &mut SplitMix64) -> String {
    let mut t = text.to_string();
    for _ in 0..1 + rng.next_u64() % 4 {
        if t.is_empty() {
            t = other.to_string();
        }
        let pick = |rng: &mut SplitMix64, n: usize| rng.next_u64() as usize % n;
        match rng.next_u64() % 11 {
            0 | 1 => {
                if let Some((a, b)) = find_number(&t, rng) {
                    t.replace_range(a..b, d.numbers[pick(rng, d.numbers.len())]);
                }
            }
            2 if d.attributes => {
                if let Some((a, b)) = find_value(&t, rng) {
                    t.replace_range(a..b, d.numbers[pick(rng, d.numbers.len())]);
                }
            }
            3 if d.attributes => {
                if let (Some((a, b)), Some((c, e))) = (find_value(&t, rng), find_value(&t, rng)) {
                    let v = t[c..e].to_string();
                    t.replace_range(a..b, &v);
                }
            }
            4 => {
                let (a, b) = span(&t, 400, rng);
                t.replace_range(a..b, "");
            }
            5 => {
                let (a, b) = span(&t, 2000, rng);
                let piece = t[a..b].to_string();
                let at = boundary(&t, rng);
                t.insert_str(at, &piece);
            }
            6 => {
                let at = boundary(&t, rng);
                t.insert_str(at, d.snippets[pick(rng, d.snippets.len())]);
            }
            7 => {
                let (a, b) = span(other, 3000, rng);
                let at = boundary(&t, rng);
                t.insert_str(at, &other[a..b]);
            }
            8 => {
                for (from, to) in d.swaps {
                    if rng.next_u64().is_multiple_of(3) {
                        if let Some(k) = t.find(from) {
                            t.replace_range(k..k + from.len(), to);
                        }
                    }
                }
            }
            9 if !d.nests.is_empty() => {
                let depth = 1usize << (rng.next_u64() % (d.max_depth_log2 + 1));
                let (open, close) = d.nests[pick(rng, d.nests.len())];
                let at = boundary(&t, rng);
                t.insert_str(at, &format!("{}{}", open.repeat(depth), close.repeat(depth)));
            }
            _ => {
                // a random ASCII byte (kept valid UTF-8)
                let at = boundary(&t, rng);
                t.insert(at, (rng.next_u64() % 128) as u8 as char);
            }
        }
    }
    t
}

/// A random char boundary of `text`.
pub fn boundary(text: &str, rng: &mut SplitMix64) -> usize {
    let mut i = rng.next_u64() as usize % (text.len() + 1);
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A random span of `text` at most `max` bytes long, on char boundaries.
fn span(text: &str, max: usize, rng: &mut SplitMix64) -> (usize, usize) {
    let (a, b) = (boundary(text, rng), boundary(text, rng));
    let (a, mut b) = (a.min(b), a.max(b).min(a.min(b) + max));
    while !text.is_char_boundary(b) {
        b -= 1;
    }
    (a, b)
}

/// A number's span in `text` (digits, signs, dots, exponents), at a random place.
fn find_number(text: &str, rng: &mut SplitMix64) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let start = rng.next_u64() as usize % bytes.len().max(1);
    let num = |b: u8| b.is_ascii_digit() || b == b'.' || b == b'-' || b == b'e' || b == b'+';
    let i = (start..bytes.len()).find(|&i| bytes[i].is_ascii_digit())?;
    let a = (0..i).rev().find(|&k| !num(bytes[k])).map_or(0, |k| k + 1);
    let b = (i..bytes.len()).find(|&k| !num(bytes[k])).unwrap_or(bytes.len());
    Some((a, b))
}

/// An attribute value's span (between double quotes), at a random place.
fn find_value(text: &str, rng: &mut SplitMix64) -> Option<(usize, usize)> {
    let start = boundary(text, rng).min(text.len());
    let a = text[start..].find("=\"").map(|k| start + k + 2)?;
    let b = text[a..].find('"').map(|k| a + k)?;
    Some((a, b))
}

/// Runs `load` on a worker thread: its answer (loaded or refused), or `Err` on a panic or when
/// it takes longer than [`PER_INPUT_LIMIT`] (a hang).
pub fn guarded(load: impl FnOnce() -> Result<bool, String> + Send + 'static) -> Result<bool, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(load));
        let _ = tx.send(result.unwrap_or_else(|p| {
            let msg = p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned());
            Err(format!("panic: {}", msg.unwrap_or_default()))
        }));
    });
    rx.recv_timeout(PER_INPUT_LIMIT).unwrap_or_else(|_| Err(format!("no answer within {PER_INPUT_LIMIT:?} (a hang)")))
}

/// A fuzz test's name (`target/<name>-fuzz/`), file extension and defaults.
pub struct Campaign {
    /// Names the output directory and the summary line (`urdf`, `mjcf`, `body`).
    pub name: &'static str,
    /// Extension of a written failing input.
    pub extension: &'static str,
    /// Seconds to search when `KARAKURI_FUZZ_SECS` is not set.
    pub default_secs: f64,
    /// Seed when `KARAKURI_FUZZ_SEED` is not set.
    pub default_seed: u64,
}

/// Searches for `c`'s bounded time: each round picks a corpus entry `(label, text)` (a label is
/// the seed's name or path) and another text, and `round(label, text, other, rng)` mutates and
/// loads them, answering the input it made and whether it loaded
/// (`Err` for a failure: the input is written out and the test fails naming it). Returns (inputs
/// run, inputs loaded); at least one input runs.
pub fn campaign(
    c: &Campaign,
    corpus: &[(String, String)],
    mut round: impl FnMut(&str, &str, &str, &mut SplitMix64) -> (String, Result<bool, String>),
) -> (u64, u64) {
    let env = |k: &str| std::env::var(k).ok();
    let secs: f64 = env("KARAKURI_FUZZ_SECS").and_then(|s| s.parse().ok()).unwrap_or(c.default_secs);
    let seed: u64 = env("KARAKURI_FUZZ_SEED").and_then(|s| s.parse().ok()).unwrap_or(c.default_seed);
    assert!(!corpus.is_empty(), "{}: no seed files", c.name);
    let mut rng = SplitMix64::new(seed);
    let start = Instant::now();
    let (mut runs, mut loaded) = (0u64, 0u64);
    while runs == 0 || start.elapsed().as_secs_f64() < secs {
        let (label, text) = &corpus[rng.next_u64() as usize % corpus.len()];
        let other = &corpus[rng.next_u64() as usize % corpus.len()].1;
        let (input, answer) = round(label, text, other, &mut rng);
        runs += 1;
        match answer {
            Ok(ok) => loaded += u64::from(ok),
            Err(why) => {
                let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../target/{}-fuzz", c.name));
                std::fs::create_dir_all(&dir).unwrap();
                let file = dir.join(format!("failure-{seed}-{runs}.{}", c.extension));
                std::fs::write(&file, &input).unwrap();
                panic!("input {runs} (mutated from {label}, seed {seed}): {why}; written to {}", file.display());
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!("{runs} mutated {} inputs in {secs:.1} s (seed {seed}): {loaded} loaded, {} refused with an error", c.name, runs - loaded);
    (runs, loaded)
}

/// The mass matrix, the bias forces and (unless `massless`: dofs that move no mass) forward
/// dynamics are finite at the neutral configuration (models of more than 200 dofs pass unchecked:
/// the fuzz loop stays fast).
pub fn dynamics_finite(model: &Model, massless: bool) -> Result<(), String> {
    if model.nv > 200 {
        return Ok(());
    }
    let mut data = Data::new(model);
    let q = neutral(model);
    let v = nalgebra::DVector::zeros(model.nv);
    if !mass_matrix(model, &mut data, &q).iter().all(|x| x.is_finite()) {
        return Err("mass matrix at the neutral configuration not finite".into());
    }
    let tau = inverse_dynamics(model, &mut data, &q, &v, &v).clone();
    if !tau.iter().all(|x| x.is_finite()) {
        return Err("gravity torques at the neutral configuration not finite".into());
    }
    if !massless && !forward_dynamics(model, &mut data, &q, &v, &tau).iter().all(|x| x.is_finite()) {
        return Err("forward dynamics at the neutral configuration not finite".into());
    }
    Ok(())
}

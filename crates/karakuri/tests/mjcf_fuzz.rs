//! Seeded mutation testing of the MJCF loader (as `urdf_fuzz.rs` for URDF).
//!
//! Every model of `tests/data/mjcf` is mutated (numbers replaced by extreme values, spans
//! deleted, duplicated or moved, attribute values swapped, hostile snippets and deep nesting
//! inserted) and loaded as if it were its own file (so includes resolve). Each load must return
//! within `PER_INPUT_LIMIT` without panicking, and a loaded model must have a finite mass
//! matrix and bias forces at the neutral configuration. A failing input is written to
//! `target/mjcf-fuzz/` and named in the failure.
//!
//! The loop is `tests/fuzz/mod.rs`'s; `KARAKURI_FUZZ_SECS` (default 10) and `KARAKURI_FUZZ_SEED`
//! (default fixed) as for URDF.

mod fuzz;

use std::path::{Path, PathBuf};

use karakuri::io::mjcf;

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

const MJCF: fuzz::Dialect = fuzz::Dialect {
    numbers: EXTREME_NUMBERS,
    snippets: SNIPPETS,
    swaps: &[("hinge", "ball"), ("slide", "free"), ("radian", "degree"), ("body", "frame"), ("class=\"", "childclass=\"")],
    // bodies (or unknown elements) nested up to 4096 deep
    nests: &[("<body>", "</body>"), ("<n>", "</n>")],
    max_depth_log2: 12,
    attributes: true,
};

/// Loads `xml` as if it were the file `name`, the simulation sections too: whether it loaded;
/// `Err` for an error without a reason or file, or a non-finite model.
fn load(xml: &str, name: &str) -> Result<bool, String> {
    match mjcf::parse_str(xml, name) {
        Ok((model, _)) => match mjcf::parse_world_str(xml, name) {
            Err(e) if e.reason.is_empty() => Err(format!("load_world: an error without a reason: {e:?}")),
            // the mass matrix and bias forces (forward dynamics is not asked of every model)
            _ => fuzz::dynamics_finite(&model, true).map(|()| true),
        },
        Err(e) if e.reason.is_empty() || e.file.is_empty() => Err(format!("an error without a reason or file: {e:?}")),
        Err(_) => Ok(false),
    }
}

#[test]
fn mutated_mjcf_never_panics_hangs_or_loads_non_finite_numbers() {
    let c = fuzz::Campaign { name: "mjcf", extension: "xml", default_secs: 10.0, default_seed: 0x6d6a_6366 };
    let corpus: Vec<(String, String)> = seeds().into_iter().map(|(p, t)| (p.display().to_string(), t)).collect();
    fuzz::campaign(&c, &corpus, |name, text, other, rng| {
        let xml = fuzz::mutate(&MJCF, text, other, rng);
        let (copy, name) = (xml.clone(), name.to_string());
        (xml, fuzz::guarded(move || load(&copy, &name)))
    });
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


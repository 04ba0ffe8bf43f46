//! The every-model run: each MJCF model of `tests/data/mjcf` simulates 2 s as `karakuri
//! simulate MODEL.xml` runs it (a lone `.xml` as a scene: the file's timestep and gravity, the
//! first keyframe, the default contact and engine settings), without an error and with every
//! body at a finite place. A model the loader refuses must be refused for its known reason
//! (and runs like the others once that is supported). `-- --nocapture` prints the table rows
//! of docs/MJCF.md (the timings there come from the release binary, not from this test).

use std::path::{Path, PathBuf};
use std::time::Instant;

use karakuri_sim::{Scene, World};

/// Models refused today, and a word of the reason.
const REFUSED: &[(&str, &str)] = &[];

/// Models whose constraints contradict each other under hard constraints, and must stop with a
/// named divergence rather than run: karakuri's own `features_sim.xml` welds its forearm to a
/// pose under the floor and closes a loop the weld fights (MuJoCo's soft constraints settle on
/// a compromise; hard rows cannot, docs/MJCF.md).
const STOPS: &[(&str, &str)] = &[("features/features_sim.xml", "diverged in step")];

/// Every `.xml` under `dir`, in its subfolders too (aloha_pot sits in a folder of its own;
/// dm_control's `common/` holds the fragments its models include, not models).
fn xml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for f in std::fs::read_dir(dir).unwrap() {
        let f = f.unwrap().path();
        if f.is_dir() && f.file_name().is_some_and(|n| n == "common") {
            continue;
        } else if f.is_dir() {
            xml_files(&f, out);
        } else if f.extension().is_some_and(|e| e == "xml") {
            out.push(f);
        }
    }
}

fn models() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/mjcf");
    let mut out = vec![];
    xml_files(&root, &mut out);
    out.sort();
    out
}

#[test]
fn every_mjcf_model_simulates_two_seconds() {
    let all = models();
    assert!(all.len() >= 35, "{} models", all.len());
    let mut ran = 0;
    for path in &all {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/mjcf");
        let name = path.strip_prefix(&root).unwrap().display().to_string();
        let scene = match Scene::from_file(path).and_then(World::new) {
            Ok(w) => w,
            Err(e) => {
                let reason = REFUSED.iter().find(|(m, _)| *m == name).map(|r| r.1);
                let e = e.to_string();
                assert!(reason.is_some_and(|r| e.contains(r)), "{name}: {e}");
                println!("| {name} | refused: {e} |");
                continue;
            }
        };
        let mut w = scene;
        assert_eq!(w.scene().world.duration, 2.0, "{name}");
        let t0 = Instant::now();
        let mut contacts = 0usize;
        let mut steps = 0usize;
        let stop = STOPS.iter().find(|(m, _)| *m == name).map(|s| s.1);
        let mut stopped = false;
        while w.time() < 2.0 - 1e-9 {
            if let Err(e) = w.step() {
                let e = e.to_string();
                assert!(stop.is_some_and(|s| e.contains(s)), "{name}: step at t = {}: {e}", w.time());
                println!("| {name} | stopped: {e} |");
                stopped = true;
                break;
            }
            contacts = contacts.max(w.contacts().len());
            steps += 1;
        }
        assert!(stop.is_none() || stopped, "{name} ran 2 s: take it off STOPS");
        if stopped {
            continue;
        }
        for (b, s) in w.bodies().iter().zip(w.states()) {
            let x = s.pose.translation;
            assert!(x.iter().all(|v| v.is_finite() && v.abs() < 100.0), "{name}: {} at {x:?}", b.name);
        }
        let us = t0.elapsed().as_secs_f64() * 1e6 / steps as f64;
        println!("| {name} | {steps} steps | {us:.1} µs/step (test profile) | {contacts} contacts at most |");
        ran += 1;
    }
    assert!(ran >= all.len() - REFUSED.len() - STOPS.len(), "{ran} of {} ran", all.len());
}

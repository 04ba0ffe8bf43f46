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
const REFUSED: &[(&str, &str)] = &[("dm_control/ball_in_cup.xml", "spatial")];

fn models() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/mjcf");
    let mut out = vec![];
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "xml") {
                out.push(f);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_mjcf_model_simulates_two_seconds() {
    let all = models();
    assert!(all.len() >= 35, "{} models", all.len());
    let mut ran = 0;
    for path in &all {
        let name = path.strip_prefix(path.parent().unwrap().parent().unwrap()).unwrap().display().to_string();
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
        while w.time() < 2.0 - 1e-9 {
            w.step().unwrap_or_else(|e| panic!("{name}: step at t = {}: {e}", w.time()));
            contacts = contacts.max(w.contacts().len());
            steps += 1;
        }
        for (b, s) in w.bodies().iter().zip(w.states()) {
            let x = s.pose.translation;
            assert!(x.iter().all(|v| v.is_finite() && v.abs() < 100.0), "{name}: {} at {x:?}", b.name);
        }
        let us = t0.elapsed().as_secs_f64() * 1e6 / steps as f64;
        println!("| {name} | {steps} steps | {us:.1} µs/step (test profile) | {contacts} contacts at most |");
        ran += 1;
    }
    assert!(ran >= all.len() - REFUSED.len(), "{ran} of {} ran", all.len());
}

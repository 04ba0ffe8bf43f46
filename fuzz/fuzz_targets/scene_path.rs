//! The scene path on arbitrary text: `Scene::from_str` (as JSON, and as YAML) → `World::new` →
//! up to 50 steps. It must return (no panic, no hang: run with `-timeout=20`), and while steps
//! succeed every body state and the energy stay finite. The stable, seeded version CI runs is
//! `crates/karakuri-sim/tests/scene_fuzz.rs`.
#![no_main]

use karakuri_sim::{Scene, World};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // the corpus' scenes sit in tests/scenes: relative mesh paths resolve against it
    for file in ["tests/scenes/fuzz.json", "tests/scenes/fuzz.yaml"] {
        let Ok(scene) = Scene::from_str(text, file) else { continue };
        let Ok(mut world) = World::new(scene) else { continue };
        for _ in 0..50 {
            assert!(world.energy().is_finite());
            for s in world.states() {
                assert!(s.pose.translation.iter().chain(s.linear.iter()).chain(s.angular.iter()).all(|x| x.is_finite()));
            }
            if world.step().is_err() {
                break;
            }
        }
    }
});

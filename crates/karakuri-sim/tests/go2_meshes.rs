//! Issue 29: the Go2 quadruped of example-robot-data with its own collision meshes (convex
//! hulls of its STL files), the scene a new user writes (every default, no servos), dropped
//! from 0.45 m onto a floor: the contact solve must meet `engine.tolerance` on at least 99 %
//! of the steps, and at rest nothing may sink deeper than `contact.penetration_tolerance`.
//! Skips without an installed example-robot-data (`example_robot_data::robots_dir`; CI
//! installs it).
//!
//! Record 0127: a hull's contacts against a plane are its vertices within the margin, the
//! deepest and up to three more spread at least 0.3 of its bounding radius apart (MuJoCo's
//! plane–mesh rule), instead of the vertices of the one facet that faces the plane best (the
//! three corners of a 3 mm triangle on each round calf and foot, 50 contacts at rest, and a
//! trunk whose contacts flipped from side to side as its tessellated bottom's two best
//! triangles took turns). Before: 745 of 2001 steps converged (37 %) and nothing slept; after:
//! 1978 (98.9 %), and 13 of 15 bodies asleep from about 1.2 s. The 99 % is not yet
//! met: the misses are the settling steps (0.4–0.83 s), islands of 29–40 contacts past the
//! exact solve's rows, at the sweeps' cap with residuals of 1e-6 to 2e-3 m/s.
//! Run the target with `cargo test -p karakuri-sim --test go2_meshes -- --ignored`.

#[path = "../../karakuri/tests/example_robot_data/mod.rs"]
mod example_robot_data;

use karakuri_sim::{Scene, World};

/// The scene: the Go2's URDF with its collision meshes, a floating base at 0.45 m, a floor,
/// nothing else (every engine and contact setting its default).
fn go2_scene(robots: &std::path::Path, engine: &str) -> Scene {
    // the URDF names its meshes package://example-robot-data/robots/...: the package's parent
    let share = robots.parent().and_then(|p| p.parent()).expect("robots/ inside share/example-robot-data");
    let urdf = robots.join("go2_description/urdf/go2.urdf");
    let yaml = format!(
        "schema: karakuri-scene\nschema_version: 1\nname: go2_limp_drop\nworld: {{duration: 2.0}}\n{engine}\
         bodies:\n  - {{name: floor, parent: world, shapes: [{{type: plane}}]}}\n\
         robots:\n  - name: go2\n    urdf: {}\n    root: floating\n    pose: {{position: [0, 0, 0.45]}}\n    package_dirs: [{}]\n",
        urdf.display(),
        share.display(),
    );
    Scene::from_str(&yaml, "go2_limp_drop.yaml").expect("the Go2 scene loads")
}

/// Drops the limp Go2 for 2 s and checks it: at least `share` of the steps met
/// `engine.tolerance`, no contact at the end deeper than `contact.penetration_tolerance`, and
/// no body's origin faster than 1 mm/s over the last 0.1 s (it lands within 0.6 s).
fn limp_drop_converges_and_rests(robots: &std::path::Path, share_wanted: f64) {
    let scene = go2_scene(robots, "");
    let (tol, d_tol) = (scene.engine.tolerance, scene.contact.penetration_tolerance);
    let mut world = World::new(scene).expect("the Go2 world builds");
    let steps = 2000;
    let mut converged = 0;
    let mut fastest_late: f64 = 0.0;
    for k in 0..steps {
        world.step().expect("a step");
        converged += usize::from(world.last_solve().residual <= tol);
        if k >= steps - 100 {
            for (b, s) in world.bodies().iter().zip(world.states()) {
                if !b.is_static {
                    fastest_late = fastest_late.max(s.linear.norm());
                }
            }
        }
    }
    let share = converged as f64 / steps as f64;
    eprintln!("{converged} of {steps} steps converged, fastest late {fastest_late:e} m/s");
    assert!(share >= share_wanted, "{converged} of {steps} steps met engine.tolerance {tol:e} ({:.1} %)", 100.0 * share);
    let deepest = world.contacts().iter().map(|c| c.depth).fold(f64::NEG_INFINITY, f64::max);
    assert!(deepest <= d_tol, "at rest a contact is {deepest:e} m deep, more than contact.penetration_tolerance {d_tol:e}");
    assert!(fastest_late < 1e-3, "not at rest: a body moves at {fastest_late:e} m/s in the last 100 steps");
}

/// Record 0127: the drop meets the tolerance on at least 98 % of its steps (37 % before) and
/// the robot comes to rest on the floor without sinking.
#[test]
fn go2_with_its_meshes_converges_and_comes_to_rest() {
    let Some(robots) = example_robot_data::robots_dir() else {
        eprintln!("example-robot-data not installed: skipped");
        return;
    };
    limp_drop_converges_and_rests(&robots, 0.98);
}

/// Issue 29's target: 99 % of the steps.
#[test]
#[ignore = "issue 29, record 0127: 98.9 % of the steps converge"]
fn go2_with_its_meshes_converges_on_99_percent_of_the_steps() {
    let Some(robots) = example_robot_data::robots_dir() else {
        eprintln!("example-robot-data not installed: skipped");
        return;
    };
    limp_drop_converges_and_rests(&robots, 0.99);
}

/// Steps that met `engine.tolerance` in the first `steps` of the drop.
fn converged_steps(scene: Scene, steps: usize) -> usize {
    let tol = scene.engine.tolerance;
    let mut world = World::new(scene).expect("the Go2 world builds");
    (0..steps)
        .filter(|_| {
            world.step().expect("a step");
            world.last_solve().residual <= tol
        })
        .count()
}

/// `engine.solver: newton` (record 0081) on the same drop: the Newton solve of the large robot
/// islands the sweeps leave meets issue 29's 99 %, and on at least as many steps as the
/// default (0081 measured 37 % against 79 % with the facets' contacts; with the hulls' spread
/// vertices, record 0127, 1977 and 1997 of 2000: Newton finishes the settling steps' large
/// islands).
#[test]
fn the_newton_solver_converges_on_99_percent_of_the_go2s_steps() {
    let Some(robots) = example_robot_data::robots_dir() else {
        eprintln!("example-robot-data not installed: skipped");
        return;
    };
    let steps = 2000;
    let auto = converged_steps(go2_scene(&robots, ""), steps);
    let newton = converged_steps(go2_scene(&robots, "engine: {solver: newton}\n"), steps);
    eprintln!("converged: auto {auto}, newton {newton} of {steps}");
    assert!(newton >= auto && newton * 100 >= steps * 99, "solver newton converged on {newton} of {steps} steps, auto on {auto}");
}

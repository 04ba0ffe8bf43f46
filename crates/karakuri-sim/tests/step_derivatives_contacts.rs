//! `World::step_derivatives` through the contact solve (decision record 0078) against central
//! differences of the step itself (the state set through a snapshot, one step, read back; the
//! helpers are `step_derivatives.rs`'s). Each state is chosen so that no contact changes its
//! status (separated, sticking, sliding) or its target's branch within ± ε = 1e-7 of the
//! state: a touching contact is 0.5 mm deep (inside `penetration_tolerance`, 1 mm: no
//! split-impulse pass, whose switch is 1 µm away), a gap contact's approach exceeds its gap by
//! far, sliding ones slip at cm/s. The solves are run to `engine.tolerance` 1e-13 so that the
//! step's `v⁺` is the active set's exact solution (the derivatives are of that solution; the
//! default 1e-6 m/s would leave the differences' noise at 1e-6/ε).

use karakuri::Model;
use karakuri_sim::{SimError, StepDerivatives, World};
use nalgebra::DMatrix;

/// The state perturbation of the central differences.
const EPS: f64 = 1e-7;

/// The targets' perturbation: small enough that a servo's push does not flip a slipping foot.
const EPS_U: f64 = 1e-6;

/// The solver settings of every scene here (see the module documentation).
const ENGINE: &str = "engine: {integrator: semi_implicit_euler, tolerance: 1e-13, max_iterations: 20000}";

mod central_differences;
use central_differences::{central, rel};

/// A world of `text` and what the check needs (`central_differences::world`).
fn world(text: &str) -> (World, Model, Vec<usize>) {
    central_differences::world(text, "contact_derivs.yaml")
}

/// `World::step_derivatives` against central differences; returns the relative errors of A, B.
fn check(w: &mut World, model: &Model, order: &[usize], targets: &[(String, f64)], what: &str) -> (f64, f64, StepDerivatives) {
    for (j, x) in targets {
        w.set_joint_target(j, *x).unwrap();
    }
    let (nv, nu) = w.step_derivative_sizes();
    assert_eq!((nv, nu), (model.nv, targets.len()), "{what}: sizes");
    let mut d = StepDerivatives::new(nv, nu);
    let before = w.snapshot().unwrap().to_json();
    w.step_derivatives(&mut d).unwrap();
    assert_eq!(w.snapshot().unwrap().to_json(), before, "{what}: the derivatives changed the world");
    let (a, b) = central(w, model, order, targets, EPS, EPS_U);
    // against the step's change, A − I (the identity would hide an error in O(dt) entries)
    let id = DMatrix::<f64>::identity(2 * nv, 2 * nv);
    let (ea, eb) = (rel(&(&d.a - &id), &(&a - &id)), if nu > 0 { rel(&d.b, &b) } else { 0.0 });
    eprintln!("{what}: A − I {ea:.2e} (max |A − I| {:.3e}), B {eb:.2e} (max |B| {:.3e})", (&a - &id).amax(), b.amax());
    if std::env::var("DERIV_DEBUG").is_ok() {
        let diff = &d.a - &a;
        for r in 0..2 * nv {
            for c in 0..2 * nv {
                if diff[(r, c)].abs() > 1e-7 * (&a - &id).amax() {
                    eprintln!("  A[{r},{c}] analytic {:.9e} central {:.9e}", d.a[(r, c)], a[(r, c)]);
                }
            }
        }
    }
    assert!(ea < 1e-6, "{what}: A off by {ea:e}\nanalytic {}\ncentral {}", d.a, a);
    assert!(eb < 1e-6, "{what}: B off by {eb:e}\nanalytic {}\ncentral {}", d.b, b);
    (ea, eb, d)
}


const INERTIA: &str = "[[0.009, 0, 0], [0, 0.008, 0.001], [0, 0.001, 0.002]]";

const BOX: &str = "inertia: [[0.0067, 0, 0], [0, 0.0072, 0], [0, 0, 0.0081]], mass: 1";

/// A box 0.1 m half-size on a plane floor (μ 0.8), touching at its four corners `depth` deep,
/// with the free joint's initial velocity `qd0`.
fn box_scene(depth: f64, qd0: &str, mu: f64) -> String {
    format!(
        "{ENGINE}
materials: {{m: {{static_friction: {mu}, dynamic_friction: {mu}}}}}
bodies:
  - {{name: floor, shapes: [{{type: plane, material: m}}]}}
  - {{name: box, {BOX}, joints: [{{type: free, q0: {{position: [0.01, -0.02, {z}]}}, qd0: {qd0}}}],
     shapes: [{{type: box, half_extents: [0.1, 0.1, 0.1], material: m}}]}}",
        z = 0.1 - depth
    )
}

/// `v⁺`'s rows of A, `(nv x 2 nv)`.
fn velocity_rows(d: &StepDerivatives) -> DMatrix<f64> {
    let nv = d.nv();
    d.a.view((nv, 0), (nv, 2 * nv)).clone_owned()
}

#[test]
fn a_box_resting_on_the_floor_sticks_and_its_next_velocity_depends_on_nothing() {
    let text = box_scene(0.0005, "{linear: [0.003, -0.002, -0.01], angular: [0.01, 0.02, -0.01]}", 0.8);
    let (mut w, model, order) = world(&text);
    let (ea, _, d) = check(&mut w, &model, &order, &[], "box resting, 4 sticking corners");
    // four sticking corners hold all six velocities: v⁺ = 0 whatever (q, v)
    let vrows = velocity_rows(&d).amax();
    eprintln!("box resting: largest entry of ∂v⁺/∂(q, v) {vrows:.2e}");
    assert!(vrows < 1e-9, "a stuck box's v⁺ moved with the state: {vrows:e}");
    assert!(ea < 1e-6);
}

#[test]
fn a_box_falling_onto_the_floor_across_a_gap_meets_its_gap_target() {
    // 20 µm above the floor at 0.2 m/s down: each corner's row asks u_n = −gap/dt (the gap
    // closes within the step), whose target moves with q; tilted spin makes it uneven
    let text = box_scene(-0.00002, "{linear: [0.001, 0.0, -0.2], angular: [0.05, -0.03, 0.0]}", 0.8);
    let (mut w, model, order) = world(&text);
    let (_, _, d) = check(&mut w, &model, &order, &[], "box across a gap, 4 corners on gap targets");
    // ∂v⁺/∂v = 0 (the stuck corners), ∂v⁺_z/∂z = −1/dt (the target follows the gap)
    let nv = model.nv;
    let dvz_dz = d.a[(nv + 2, 2)];
    eprintln!("gap: ∂v⁺_z/∂z = {dvz_dz:.6} (−1/dt = {})", -1.0 / w.dt());
    assert!((dvz_dz + 1.0 / w.dt()).abs() < 1e-6 / w.dt());
    assert!(d.a.view((nv, nv), (nv, nv)).amax() < 1e-9);
}

/// A box sliding and turning on its four corners: the normal impulses are one family (four
/// rows on three velocities) and the solver's sweeps choose how the friction spreads over the
/// corners, so v⁺ is not a function of the active set: refused, by name (the step itself moves
/// with the warm start there: `step_derivatives_sliding_box.rs`, which also checks a box
/// sliding without turning against central differences).
#[test]
fn a_box_sliding_on_four_corners_is_refused() {
    let text = box_scene(0.0005, "{linear: [0.5, 0.2, 0.0], angular: [0.0, 0.0, 0.3]}", 0.3);
    let (mut w, _, _) = world(&text);
    let mut d = StepDerivatives::new(6, 0);
    match w.step_derivatives(&mut d) {
        Err(SimError::Unsupported { what, .. }) => assert!(what.contains("redundant sliding contacts"), "{what}"),
        other => panic!("expected the refusal: {other:?}"),
    }
}

/// A capsule lying on the floor, sliding sideways and turning: two sliding contacts (its end
/// caps), two normal rows on two velocities (no redundancy).
#[test]
fn a_capsule_sliding_and_turning_on_the_floor() {
    let text = format!(
        "{ENGINE}
materials: {{m: {{static_friction: 0.3}}}}
bodies:
  - {{name: floor, shapes: [{{type: plane, material: m}}]}}
  - {{name: rod, {BOX}, joints: [{{type: free, q0: {{position: [0, 0, 0.0496], orientation: [0, 0.7071067811865476, 0, 0.7071067811865476]}}, qd0: {{linear: [0.3, 0.6, 0], angular: [0, 0, 0.8]}}}}],
     shapes: [{{type: capsule, radius: 0.05, half_length: 0.2, material: m}}]}}"
    );
    let (mut w, model, order) = world(&text);
    check(&mut w, &model, &order, &[], "capsule sliding on its two caps");
}

#[test]
fn a_ball_rolling_and_sliding_on_the_floor() {
    let text = format!(
        "{ENGINE}
materials: {{m: {{static_friction: 0.4}}}}
bodies:
  - {{name: floor, shapes: [{{type: plane, material: m}}]}}
  - {{name: ball, {BOX}, joints: [{{type: free, q0: {{position: [0, 0, 0.0996]}}, qd0: {{linear: [0.4, -0.1, 0], angular: [1.0, 0.5, 2.0]}}}}],
     shapes: [{{type: sphere, radius: 0.1, material: m}}]}}"
    );
    let (mut w, model, order) = world(&text);
    check(&mut w, &model, &order, &[], "ball sliding and spinning");
}

/// World height of `point` (in `body`'s frame) in the world of `text` as loaded.
fn height(text: &str, body: &str, point: [f64; 3]) -> f64 {
    let (w, _, _) = world(text);
    let pose = w.state(body).unwrap_or_else(|| panic!("no body {body}")).pose;
    pose.transform_point(&karakuri::spatial::Vec3::new(point[0], point[1], point[2])).z
}

/// A four-hinge arm (yaw, then three pitches) under gravity and weak PD servos, whose tip ball
/// (r 3 cm) rests on a table 0.5 mm deep and sticks: three rows on four dofs, the arm sagging
/// in the one motion the tip allows.
#[test]
fn an_arm_whose_tip_rests_on_a_table_under_gravity() {
    let arm = |table: f64| {
        format!(
            "{ENGINE}
materials: {{m: {{static_friction: 1.0}}}}
bodies:
  - {{name: table, pose_in_parent: {{position: [0, 0, {table}]}}, shapes: [{{type: plane, material: m}}]}}
  - {{name: l1, pose_in_parent: {{position: [0, 0, 0.5]}}, mass: 1, com: [0, 0, 0.05], inertia: {INERTIA},
     joints: [{{name: yaw, type: revolute, axis: [0, 0, 1], q0: 0.2, qd0: 0.1, actuator: {{mode: position, kp: 3, kd: 0.2, target: 0.1}}}}]}}
  - {{name: l2, parent: l1, pose_in_parent: {{position: [0, 0, 0.1]}}, mass: 1, com: [0.15, 0, 0], inertia: {INERTIA},
     joints: [{{name: shoulder, type: revolute, axis: [0, 1, 0], q0: 0.3, qd0: 0.05, actuator: {{mode: position, kp: 5, kd: 0.3, target: 0.2}}}}]}}
  - {{name: l3, parent: l2, pose_in_parent: {{position: [0.3, 0, 0]}}, mass: 0.8, com: [0.15, 0, 0], inertia: {INERTIA},
     joints: [{{name: elbow, type: revolute, axis: [0, 1, 0], q0: 0.6, actuator: {{mode: position, kp: 4, kd: 0.2, target: 0.5}}}}]}}
  - {{name: l4, parent: l3, pose_in_parent: {{position: [0.3, 0, 0]}}, mass: 0.3, com: [0.05, 0, 0], inertia: {INERTIA},
     joints: [{{name: wrist, type: revolute, axis: [0, 1, 0], q0: 0.4, qd0: 0.05, damping: 0.1}}],
     shapes: [{{type: sphere, radius: 0.03, pose: {{position: [0.1, 0, 0]}}, material: m}}]}}"
        )
    };
    let tip = height(&arm(-5.0), "l4", [0.1, 0.0, 0.0]);
    let (mut w, model, order) = world(&arm(tip - 0.03 + 0.0005));
    // the servos press the tip down (targets below the pose)
    let targets = [("yaw".to_string(), 0.15), ("shoulder".to_string(), 0.45), ("elbow".to_string(), 0.8)];
    check(&mut w, &model, &order, &targets, "arm, tip ball sticking on a table");
}

/// Solo-12 (example-robot-data's URDF, bundled) standing on a floor on a ball per foot (r
/// 16 mm, 0.5 mm deep), every joint on a PD servo, the base sinking at 5 cm/s: the front feet
/// stick, the hind ones slip at mm/s (twelve rows on 18 dofs), an articulated island (the
/// solver's active-set path).
#[test]
fn a_quadruped_standing_under_pd() {
    let solo = |z: f64| {
        format!(
            "{ENGINE}
materials: {{m: {{static_friction: 1.0}}}}
bodies: [{{name: floor, shapes: [{{type: plane, material: m}}]}}]
robots:
  - name: solo
    urdf: builtin:solo12.urdf
    root: floating
    collision: none
    material: m
    shapes: [{{link: FL_FOOT, type: sphere, radius: 0.016}}, {{link: FR_FOOT, type: sphere, radius: 0.016}},
             {{link: HL_FOOT, type: sphere, radius: 0.016}}, {{link: HR_FOOT, type: sphere, radius: 0.016}}]
    pose: {{position: [0, 0, {z}]}}
    base_velocity: {{linear: [0.01, -0.02, -0.05], angular: [0.005, 0.0, -0.01]}}
    q0: {{FL_HFE: 0.8, FL_KFE: -1.6, FR_HFE: 0.8, FR_KFE: -1.6, HL_HFE: -0.8, HL_KFE: 1.6, HR_HFE: -0.8, HR_KFE: 1.6}}
    actuators:
      - {{joints: '*', mode: position, kp: 5.0, kd: 0.1, target: 0.0, effort_limit: 100}}"
        )
    };
    let foot = height(&solo(1.0), "solo/FL_LOWER_LEG", [0.0, 0.008, -0.16]);
    let (mut w, model, order) = world(&solo(1.0 - (foot - 0.016 + 0.0005)));
    let q0 = [0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6];
    let targets: Vec<(String, f64)> = w.one_dof_joints().iter().zip(q0).map(|(j, x)| (j.clone(), x + 0.05)).collect();
    check(&mut w, &model, &order, &targets, "solo12 standing under PD: two feet sticking, two slipping");
}

/// A box resting on another free box: a contact between two moving shapes (not built: the
/// point and normal would move with both), refused by name; the same box apart from the other
/// (a pair that can touch but is separated in this step) goes through.
#[test]
fn a_contact_between_two_moving_boxes_is_refused_and_a_separated_pair_is_not() {
    let two = |z2: f64| {
        format!(
            "{ENGINE}
bodies:
  - {{name: floor, shapes: [{{type: plane}}]}}
  - {{name: a, {BOX}, joints: [{{type: free, q0: {{position: [0, 0, 0.0995]}}}}], shapes: [{{type: box, half_extents: [0.1, 0.1, 0.1]}}]}}
  - {{name: b, {BOX}, joints: [{{type: free, q0: {{position: [0.02, 0, {z2}]}}}}], shapes: [{{type: box, half_extents: [0.1, 0.1, 0.1]}}]}}"
        )
    };
    let (mut w, _, _) = world(&two(0.2985));
    let mut d = StepDerivatives::new(12, 0);
    match w.step_derivatives(&mut d) {
        Err(SimError::Unsupported { what, .. }) => assert!(what.contains("static plane"), "{what}"),
        other => panic!("expected the refusal: {other:?}"),
    }
    let (mut w, model, order) = world(&two(0.6));
    check(&mut w, &model, &order, &[], "box resting, a second box falling far above");
}

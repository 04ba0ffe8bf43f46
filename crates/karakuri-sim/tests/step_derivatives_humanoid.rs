//! `World::step_derivatives` of dm_control's humanoid (MJCF: a floating base, 21 hinges with
//! armature and damping, 21 motors, capsule and sphere geoms) in contact with the floor plane,
//! against central differences of the step itself (`central_differences`, as
//! `step_derivatives_contacts.rs`: ε = 1e-7 on the state, 1e-6 on the motors' torques, solves
//! run to `engine.tolerance` 1e-13 so that `v⁺` is the active set's exact solution).
//!
//! The humanoid starts from its file's pose (feet about 0.2 m up), falls and lands on its four
//! foot capsules. Lying on the floor later, some joint always rests on its limit (a knee, the
//! abdomen: refused by 0069's list, limits not built yet), so the states checked are the
//! landing before the first limit is reached: eight foot points pressing on the static plane
//! from 0.16–0.24 µm away (0078's gap targets), all sticking, four on each foot's body (12
//! rows on its 6 velocities: a redundant set). The second state also has two self-contact
//! pairs (thigh and lower arm, two moving bodies: refused when they touch, 0078) built but
//! separated by 9.5 µm, which the derivatives must pass through untouched. No contact is
//! disabled.

use karakuri::Model;
use karakuri_sim::{StepDerivatives, World};
use nalgebra::DMatrix;

mod central_differences;
use central_differences::{central, rel};

/// The humanoid on the file's floor, with `engine` settings for exact solves.
fn humanoid() -> (World, Model, Vec<usize>) {
    let xml = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/mjcf/dm_control/humanoid.xml");
    let text = format!(
        "engine: {{integrator: semi_implicit_euler, tolerance: 1e-13, max_iterations: 20000}}\nrobots: [{{name: h, mjcf: {xml}}}]\n"
    );
    central_differences::world(&text, "humanoid_contacts.yaml")
}

/// The contacts of the last step between the floor and the humanoid (`on_cone`: those whose
/// friction force is on the cone, |f_t| ≥ 0.999 μ f_n, μ = 1 the pair's), and those between two
/// of its bodies, with their largest depth.
fn contact_counts(w: &World) -> (usize, usize, usize, f64) {
    let names: Vec<&str> = w.bodies().iter().map(|b| b.name.as_str()).collect();
    let (mut floor, mut on_cone, mut moving, mut deepest_moving) = (0, 0, 0, f64::NEG_INFINITY);
    for c in w.contacts() {
        if names[c.body_a] == "h/universe" {
            floor += 1;
            let f = c.force;
            let n = f.dot(&c.normal);
            if (f - c.normal * n).norm() >= 0.999 * n {
                on_cone += 1;
            }
        } else {
            moving += 1;
            deepest_moving = deepest_moving.max(c.depth);
        }
    }
    (floor, on_cone, moving, deepest_moving)
}

/// Runs the humanoid to `t`, sets the motors' torques, and checks A and B against central
/// differences (bound 1e-6 of the largest entry of A − I, of B).
fn check_at(t: f64, what: &str) -> (usize, usize, usize, f64) {
    let (mut w, model, order) = humanoid();
    w.run(t).unwrap();
    let counts = contact_counts(&w);
    let targets: Vec<(String, f64)> =
        w.layout().actuated.iter().enumerate().map(|(i, &k)| (w.one_dof_joints()[k].clone(), 0.03 * i as f64 - 0.3)).collect();
    for (j, x) in &targets {
        w.set_joint_target(j, *x).unwrap();
    }
    let (nv, nu) = w.step_derivative_sizes();
    assert_eq!((nv, nu), (27, 21), "{what}: sizes");
    let mut d = StepDerivatives::new(nv, nu);
    let before = w.snapshot().unwrap().to_json();
    w.step_derivatives(&mut d).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(w.snapshot().unwrap().to_json(), before, "{what}: the derivatives changed the world");
    let (a, b) = central(&mut w, &model, &order, &targets, 1e-7, 1e-6);
    let id = DMatrix::<f64>::identity(2 * nv, 2 * nv);
    let (ea, eb) = (rel(&(&d.a - &id), &(&a - &id)), rel(&d.b, &b));
    eprintln!("{what} {counts:?}: A − I {ea:.2e} (max |A − I| {:.3e}), B {eb:.2e} (max |B| {:.3e})", (&a - &id).amax(), b.amax());
    assert!(ea < 1e-6, "{what}: A off by {ea:e}");
    assert!(eb < 1e-6, "{what}: B off by {eb:e}");
    counts
}

/// Landed on both feet, 0.3 s in: eight foot points on the floor (four capsules, two points
/// each), all sticking (their forces inside the cone), no self-contact.
#[test]
fn the_humanoid_landing_on_its_feet() {
    let (floor, on_cone, moving, _) = check_at(0.3, "humanoid landing, 8 foot contacts");
    assert_eq!((floor, moving), (8, 0), "the state checked: eight foot points, nothing else");
    assert_eq!(on_cone, 0, "every foot point sticks ({on_cone} of {floor} on the cone)");
}

/// 0.45 s in, the knees bending: the feet on the floor and two thigh–lower-arm pairs (two
/// moving bodies) built but apart, which leave the derivatives as they are.
#[test]
fn the_humanoid_crouching_with_separated_self_contacts() {
    let (floor, _, moving, deepest) = check_at(0.45, "humanoid crouching, feet and 2 separated self-pairs");
    assert_eq!((floor, moving), (8, 2), "the state checked: eight foot points and two self-pairs");
    assert!(deepest < 0.0, "the self-pairs are apart ({deepest:e})");
}

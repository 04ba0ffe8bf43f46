//! `World::step_derivatives` of a box sliding on its four bottom corners (issue 32): four
//! normal rows on the three velocities they can move (height, roll, pitch), so the corners'
//! impulses are a family `λ + c z`, `z` the normal impulses `(+, −, +, −)` around the bottom
//! face with friction `μ s` each. With every corner slipping along the same `s` (the box
//! translating, not turning), `z` carries no net force (`Σ z_i = 0`) and no net torque
//! (`Σ z_i r_i = 0` for the corners `r_i` of a rectangle, hence `Σ z_i r_i × (n + μ s) = 0`):
//! `v⁺` is the same for every member, and so is its derivative. Checked against central
//! differences of the step (`central_differences.rs`, ε = 1e-7 on the state, 1e-6 on the
//! torque target; solves to `engine.tolerance` 1e-13, so that the step is its set's exact
//! solution), with a torque-driven mast on the box so that `B` goes through the contacts.
//!
//! `v⁺` is unique but its derivative is not a function of the state alone: a perturbation that
//! turns the box (a yaw rate) makes the slips differ by corner, and the friction's response
//! at each corner scales with that corner's normal impulse, the member the solver holds (its
//! warm start). The derivative is that of the step from the solver's member, which the
//! active set reads off the probe step; a symmetric member (the four corners' mean) in its
//! place is off by 7e-3 here, so the check below sees the member. The slide is diagonal to
//! the box's axes on purpose: along an axis the member's share cancels. A box sliding *and
//! turning* is refused (`step_derivatives_contacts.rs`): there the member reaches `v⁺` itself.

use karakuri::Model;
use karakuri_sim::{Snapshot, StepDerivatives, World};
use nalgebra::DVector;
use nalgebra::DMatrix;

mod central_differences;
use central_differences::{central, rel};

/// A box 0.1 m half-size, 1 kg, 0.5 mm into a plane floor at its four bottom corners, sliding
/// at `v` (m/s, in the floor's plane) and turning at `wz` (rad/s); on its top a mast (0.3 kg,
/// centre 0.15 m up) on a hinge across the slide, driven by a torque actuator.
fn scene(v: [f64; 2], wz: f64, mu: f64) -> String {
    let n = (v[0] * v[0] + v[1] * v[1]).sqrt();
    format!(
        "engine: {{integrator: semi_implicit_euler, tolerance: 1e-13, max_iterations: 20000}}
materials: {{m: {{static_friction: {mu}, dynamic_friction: {mu}}}}}
bodies:
  - {{name: floor, shapes: [{{type: plane, material: m}}]}}
  - {{name: box, mass: 1, inertia: [[0.0067, 0, 0], [0, 0.0072, 0], [0, 0, 0.0081]],
     joints: [{{type: free, q0: {{position: [0.01, -0.02, 0.0995]}}, qd0: {{linear: [{vx}, {vy}, 0.0], angular: [0.0, 0.0, {wz}]}}}}],
     shapes: [{{type: box, half_extents: [0.1, 0.1, 0.1], material: m}}]}}
  - {{name: mast, parent: box, pose_in_parent: {{position: [0, 0, 0.1]}}, mass: 0.3, com: [0, 0, 0.15],
     inertia: [[0.002, 0, 0], [0, 0.002, 0], [0, 0, 0.0002]],
     joints: [{{name: hinge, type: revolute, axis: [{ax}, {ay}, 0], q0: 0.1, qd0: 0.2, actuator: {{mode: torque, target: 0.05, effort_limit: 10}}}}]}}",
        vx = v[0],
        vy = v[1],
        ax = -v[1] / n,
        ay = v[0] / n,
    )
}

fn world(text: &str) -> (World, Model, Vec<usize>) {
    central_differences::world(text, "sliding_box.yaml")
}

/// The four corners slide, each slipping along the same direction after the step.
fn assert_four_corners_sliding(w: &World, mu: f64, what: &str) {
    let c = w.contacts();
    assert_eq!(c.len(), 4, "{what}: contacts {c:?}");
    for k in c {
        let (fn_, ft) = (k.force.z, (k.force.x.powi(2) + k.force.y.powi(2)).sqrt());
        assert!(fn_ > 0.0 && (ft - mu * fn_).abs() < 1e-9 * fn_, "{what}: a corner not on its cone: {k:?}");
    }
}

#[test]
fn a_box_sliding_on_four_corners_matches_central_differences() {
    let mu = 0.3;
    let (mut w, model, order) = world(&scene([0.5, 0.2], 0.0, mu));
    let targets = [("hinge".to_string(), 0.05)];
    let (nv, nu) = w.step_derivative_sizes();
    assert_eq!((nv, nu), (7, 1));
    let mut d = StepDerivatives::new(nv, nu);
    let before = w.snapshot().unwrap().to_json();
    w.step_derivatives(&mut d).unwrap();
    assert_eq!(w.snapshot().unwrap().to_json(), before, "the derivatives changed the world");
    let (a, b) = central(&mut w, &model, &order, &targets, 1e-7, 1e-6);
    let id = DMatrix::<f64>::identity(2 * nv, 2 * nv);
    let (ea, eb) = (rel(&(&d.a - &id), &(&a - &id)), rel(&d.b, &b));
    eprintln!("box sliding on four corners: A − I {ea:.2e} (max |A − I| {:.3e}), B {eb:.2e} (max |B| {:.3e})", (&a - &id).amax(), b.amax());
    if std::env::var("DERIV_DEBUG").is_ok() {
        eprintln!("analytic A {}central A {}analytic B {}central B {}", d.a, a, d.b, b);
    }
    w.step().unwrap();
    assert_four_corners_sliding(&w, mu, "after the step");
    assert!(ea < 1e-6, "A off by {ea:e}");
    assert!(eb < 1e-6, "B off by {eb:e}");
}

/// `(q⁺, v⁺)` of one step from `base` with the warm normal impulses of the corners moved by
/// `d` times `(+, −, +, −)` around the bottom face (a member of the family further away).
fn step_with_warm_moved(w: &mut World, base: &Snapshot, d: f64) -> DVector<f64> {
    let mut s = base.clone();
    let corners = s.state["contacts"].as_array().unwrap().iter().map(|c| (c[1][0].as_f64().unwrap(), c[1][1].as_f64().unwrap())).collect::<Vec<_>>();
    let warm = s.state["state"]["warm_contacts"].as_array_mut().unwrap();
    assert_eq!((warm.len(), corners.len()), (4, 4));
    for e in warm.iter_mut() {
        // the corner's sign: + where x and y of its offset from the centre have the same sign
        let (x, y) = corners[e[1].as_u64().unwrap() as usize];
        let (cx, cy) = (corners.iter().map(|c| c.0).sum::<f64>() / 4.0, corners.iter().map(|c| c.1).sum::<f64>() / 4.0);
        let sign = ((x - cx) * (y - cy)).signum();
        let ln = e[2][0].as_f64().unwrap();
        e[2][0] = serde_json::json!(ln + sign * d);
    }
    w.restore(&s).unwrap();
    w.step().unwrap();
    central_differences::qv(&w.snapshot().unwrap()).1
}

/// The family does not reach `v⁺` when the box only slides, and does when it also turns: the
/// step from the same `(q, v)` with the warm start moved along the family (a tenth of the
/// corners' impulses) keeps `v⁺` to rounding in the first case and moves its yaw rate in the
/// second (why that case is refused, not differentiated).
#[test]
fn the_corners_impulse_family_reaches_v_only_when_the_box_turns() {
    for (wz, what) in [(0.0, "sliding"), (0.3, "sliding and turning")] {
        let (mut w, _, _) = world(&scene([0.5, 0.2], wz, 0.3));
        w.step().unwrap();
        let base = w.snapshot().unwrap();
        let v0 = step_with_warm_moved(&mut w, &base, 0.0);
        let ln = base.state["state"]["warm_contacts"][0][2][0].as_f64().unwrap();
        let v1 = step_with_warm_moved(&mut w, &base, 0.1 * ln);
        let moved = (&v1 - &v0).amax() / v0.amax();
        eprintln!("box {what}: warm normal impulses moved by ±{:.1e} along the family: v⁺ moves by {moved:.2e} of |v⁺|", 0.1 * ln);
        if wz == 0.0 {
            assert!(moved < 1e-12, "{what}: v⁺ moved by {moved:e}");
        } else {
            assert!(moved > 1e-6, "{what}: v⁺ did not move ({moved:e})");
        }
    }
}

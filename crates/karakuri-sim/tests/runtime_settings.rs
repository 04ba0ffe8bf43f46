//! Settings changed while running (contact modes per pair, group and one body against all,
//! materials, contact numbers, gravity, a robot's self-collision) and the accelerations a
//! step reads (q̈, the bodies' dv, dw), against analytic motion.

mod common;

use std::sync::Arc;

use common::ground_and;
use karakuri::spatial::Vec3;
use karakuri_sim::scene::{ContactMode, Material};
use karakuri_sim::{NativeEngine, Scene, SimError, World};

const G: f64 = 9.81;

fn world(extra: &str, bodies: &str) -> World {
    World::new(Scene::from_str(&ground_and(extra, bodies), "t.yaml").unwrap()).unwrap()
}

/// A 1 kg ball of radius 0.1 m, its centre at height `z`, sideways speed `vx`.
fn ball(name: &str, x: f64, z: f64, vx: f64) -> String {
    format!(
        r#"
  - name: {name}
    mass: 1
    inertia: [[0.004, 0, 0], [0, 0.004, 0], [0, 0, 0.004]]
    joints: [{{type: free, q0: {{position: [{x}, 0, {z}]}}, qd0: {{linear: [{vx}, 0, 0]}}}}]
    shapes: [{{type: sphere, radius: 0.1, material: m}}]"#
    )
}

/// A 1 kg box of half side 0.1 m resting on the ground, sliding at `vx`.
fn block(name: &str, vx: f64) -> String {
    format!(
        r#"
  - name: {name}
    mass: 1
    inertia: [[0.00667, 0, 0], [0, 0.00667, 0], [0, 0, 0.00667]]
    joints: [{{type: free, q0: {{position: [0, 0, 0.1]}}, qd0: {{linear: [{vx}, 0, 0]}}}}]
    shapes: [{{type: box, half_extents: [0.1, 0.1, 0.1], material: m}}]"#
    )
}

fn z(w: &World, b: &str) -> f64 {
    w.state(b).unwrap().pose.translation.z
}

#[test]
fn a_free_falling_body_reads_gravity_and_a_changed_gravity_from_the_next_step() {
    let mut w = world("", &ball("b", 0.0, 5.0, 0.0));
    assert!(w.body_acceleration("b").is_err(), "no step yet");
    w.step().unwrap();
    let (lin, ang) = w.body_acceleration("b").unwrap();
    assert!((lin - Vec3::new(0.0, 0.0, -G)).norm() < 1e-9, "{lin:?}");
    assert!(ang.norm() < 1e-12);
    w.set_gravity(Vec3::new(1.0, 0.0, -3.0)).unwrap();
    assert_eq!(w.gravity(), Vec3::new(1.0, 0.0, -3.0));
    w.step().unwrap();
    let (lin, _) = w.body_acceleration("b").unwrap();
    assert!((lin - Vec3::new(1.0, 0.0, -3.0)).norm() < 1e-9, "{lin:?}");
    // the energy uses the new gravity too (the model changed, not a copy)
    let e0 = w.energy();
    w.run(0.1).unwrap();
    assert!((w.energy() - e0).abs() < 1e-3 * e0.abs().max(1.0), "{} vs {e0}", w.energy());
}

/// A point mass on a massless rod of length l about y, from θ = 0.9, under `integrator`.
fn pendulum(l: f64, integrator: &str) -> World {
    let text = format!(
        r#"
name: p
world: {{gravity: [0, 0, -{G}], dt: 0.001}}
engine: {{integrator: {integrator}}}
bodies:
  - name: bob
    mass: 2
    com: [0, 0, -{l}]
    inertia: [[0, 0, 0], [0, 0, 0], [0, 0, 0]]
    pose_in_parent: {{position: [0, 0, 2]}}
    joints: [{{name: hinge, type: revolute, axis: [0, 1, 0], q0: 0.9}}]
"#
    );
    World::new(Scene::from_str(&text, "p.yaml").unwrap()).unwrap()
}

#[test]
fn a_pendulums_ddq_is_minus_g_over_l_sin_theta() {
    // θ̈ = −(g/l) sin θ. Semi-implicit Euler's (q̇⁺ − q̇)/dt is the acceleration at the step's
    // start state, exact up to rounding of M⁻¹(τ − h).
    let l = 0.7;
    let mut w = pendulum(l, "semi_implicit_euler");
    let mut worst: f64 = 0.0;
    let mut ddq = [0.0];
    for _ in 0..500 {
        let theta = w.joint_position("hinge").unwrap();
        w.step().unwrap();
        w.write_joint_accelerations(&mut ddq).unwrap();
        assert_eq!(ddq[0], w.joint_acceleration("hinge").unwrap());
        worst = worst.max((ddq[0] + G / l * theta.sin()).abs());
    }
    assert!(worst < 1e-9, "worst |ddq − (−g/l sin θ)| = {worst:e}");
    // against the state after the step, the difference is the step's own: |θ⁺ − θ| g/l ≤ dt |ω| g/l
    let (theta, omega) = (w.joint_position("hinge").unwrap(), w.joint_velocity("hinge").unwrap());
    w.write_joint_accelerations(&mut ddq).unwrap();
    let bound = 0.001 * omega.abs() * G / l + 1e-9;
    assert!((ddq[0] + G / l * theta.sin()).abs() <= bound);
    // the bob's linear acceleration: tangential l θ̈ and centripetal l ω² (world, mid-step)
    let (lin, ang) = w.body_acceleration("bob").unwrap();
    assert!((ang.y - ddq[0]).abs() < 1e-9 && ang.x == 0.0 && ang.z == 0.0, "{ang:?}");
    assert!(lin.norm() < 1e-9, "the body frame's origin is the pivot: it does not move ({lin:?})");

    // Under the default (`auto`: RK4 for this smooth pendulum) (q̇⁺ − q̇)/dt is the mean of θ̈
    // over the step. With θ(t) = θ̄ + ωτ + ατ²/2 about the step's middle (|τ| ≤ dt/2) and θ̂ =
    // (θ + θ⁺)/2 = θ̄ + α dt²/8, the mean of θ is θ̂ − α dt²/12 and the mean of sin θ is
    // sin(mean θ) minus at most (ω² dt²/12)/2: |ddq + (g/l) sin θ̂| ≤ (g/l) dt² (|α|/12 + ω²/24).
    let mut w = pendulum(l, "auto");
    let dt: f64 = 0.001;
    let mut worst: f64 = 0.0;
    for _ in 0..500 {
        let theta = w.joint_position("hinge").unwrap();
        w.step().unwrap();
        let (after, omega) = (w.joint_position("hinge").unwrap(), w.joint_velocity("hinge").unwrap());
        let ddq = w.joint_acceleration("hinge").unwrap();
        let mid = 0.5 * (theta + after);
        let alpha = G / l;
        let bound = G / l * dt * dt * (alpha / 12.0 + omega * omega / 24.0) * 1.5 + 1e-9;
        let off = (ddq + G / l * mid.sin()).abs();
        worst = worst.max(off / bound);
    }
    assert!(worst <= 1.0, "auto: |ddq + g/l sin θ̂| reached {worst:.3} of its bound");
}

#[test]
fn contact_modes_per_pair_group_and_one_against_all_take_effect_at_the_next_step() {
    let bodies = format!("{}{}", ball("a", 0.0, 0.1, 0.0), ball("b", 1.0, 0.1, 0.0));
    let mut w = world("", &bodies);
    w.run(0.2).unwrap();
    assert!(z(&w, "a") > 0.098 && z(&w, "b") > 0.098, "both rest");
    // one body against all: a passes through the ground, b stays
    let n = w.set_contact_mode(&["a"], &["*"], ContactMode::None).unwrap();
    assert_eq!(n, 2, "a–ground and a–b");
    w.run(0.3).unwrap();
    assert!(z(&w, "a") < -0.2, "a fell through: {}", z(&w, "a"));
    assert!(z(&w, "b") > 0.098);
    // a pair: b–ground penalty (one point: depth m g / k at rest)
    let (k, d) = (2000.0, 100.0);
    let n = w.set_contact_mode(&["b"], &["ground"], ContactMode::Penalty { stiffness: k, damping: d }).unwrap();
    assert_eq!(n, 1);
    w.run(1.0).unwrap();
    let depth = 0.1 - z(&w, "b");
    assert!((depth - G / k).abs() < 0.02 * G / k, "penalty depth {depth} against m g / k = {}", G / k);
    // a group of both against the ground, back to the constraint model
    w.set_contact_mode(&["a", "b"], &["ground"], ContactMode::Lcp).unwrap();
    w.run(0.5).unwrap();
    assert!(0.1 - z(&w, "b") < 1.5e-3, "lcp leaves at most about the penetration tolerance");
}

#[test]
fn a_world_without_contacts_at_load_gets_them_when_a_mode_turns_them_on() {
    let text = ground_and("contact: {mode: none}", &ball("a", 0.0, 0.5, 0.0));
    let mut w = World::new(Scene::from_str(&text, "t.yaml").unwrap()).unwrap();
    w.run(0.5).unwrap();
    assert!(z(&w, "a") < 0.0, "no contacts: it falls through");
    let mut w = World::new(Scene::from_str(&text, "t.yaml").unwrap()).unwrap();
    assert_eq!(w.set_contact_mode(&["*"], &["*"], ContactMode::Lcp).unwrap(), 1);
    w.run(1.0).unwrap();
    assert!((z(&w, "a") - 0.1).abs() < 1.5e-3, "the plan runs contacts now: {}", z(&w, "a"));
}

#[test]
fn friction_changed_while_sliding_sets_the_deceleration_to_mu_g() {
    let mut w = world("", &block("box", 3.0));
    w.run(0.05).unwrap();
    let (lin, _) = w.body_acceleration("box").unwrap();
    assert!((lin.x + 0.5 * G).abs() < 1e-6 * G, "μ = 0.5: {lin:?}");
    let ice = Material { static_friction: 0.1, dynamic_friction: 0.1, restitution: 0.0 };
    w.set_material(&["box", "ground"], ice).unwrap();
    w.run(0.05).unwrap();
    let (lin, _) = w.body_acceleration("box").unwrap();
    assert!((lin.x + 0.1 * G).abs() < 1e-6 * G, "μ = 0.1: {lin:?}");
    // the box alone: the mean of its 0.3 and the ground's 0.1
    let rubber = Material { static_friction: 0.3, dynamic_friction: 0.3, restitution: 0.0 };
    w.set_material(&["box"], rubber).unwrap();
    w.step().unwrap();
    let (lin, _) = w.body_acceleration("box").unwrap();
    assert!((lin.x + 0.2 * G).abs() < 1e-6 * G, "mean 0.2: {lin:?}");
}

#[test]
fn restitution_set_while_running_turns_the_impact_passes_on() {
    // a ball dropped from 0.5 m: plastic as loaded; elastic after the change it bounces back
    // to near its height (e = 1 above the threshold speed)
    let mut w = world("", &ball("a", 0.0, 0.6, 0.0));
    let bouncy = Material { static_friction: 0.5, dynamic_friction: 0.5, restitution: 1.0 };
    w.set_material(&["*"], bouncy).unwrap();
    w.run(0.4).unwrap();
    let mut top: f64 = 0.0;
    for _ in 0..400 {
        w.step().unwrap();
        top = top.max(z(&w, "a"));
    }
    assert!(top > 0.55, "bounced to {top}");
    let mut w = world("", &ball("a", 0.0, 0.6, 0.0));
    w.run(0.4).unwrap();
    let mut top: f64 = 0.0;
    for _ in 0..400 {
        w.step().unwrap();
        top = top.max(z(&w, "a"));
    }
    assert!(top < 0.11, "plastic: {top}");
}

#[test]
fn contact_numbers_are_checked_and_applied() {
    let mut w = world("", &ball("a", 0.0, 0.1, 0.0));
    let mut c = w.contact_params().clone();
    c.restitution_threshold_velocity = 0.5;
    c.penetration_tolerance = 0.002;
    w.set_contact_params(c.clone()).unwrap();
    assert_eq!(w.contact_params(), &c);
    let mut bad = c.clone();
    bad.friction_threshold_velocity = -1.0;
    let e = w.set_contact_params(bad).unwrap_err().to_string();
    assert!(e.contains("friction_threshold_velocity") && e.contains("non-negative"), "{e}");
    let mut bad = c.clone();
    bad.penetration_tolerance = f64::NAN;
    assert!(w.set_contact_params(bad).is_err());
    let mut bad = c.clone();
    bad.mode = ContactMode::None;
    assert!(w.set_contact_params(bad).unwrap_err().to_string().contains("set_contact_mode"));
    assert_eq!(w.contact_params(), &c, "unchanged by the refusals");
}

#[test]
fn bad_settings_are_refused_with_the_key_and_change_nothing() {
    let mut w = world("", &ball("a", 0.0, 0.1, 0.0));
    let e = w.set_gravity(Vec3::new(0.0, f64::NAN, 0.0)).unwrap_err().to_string();
    assert!(e.contains("gravity"), "{e}");
    assert_eq!(w.gravity(), Vec3::new(0.0, 0.0, -G));
    let neg = Material { static_friction: -0.1, dynamic_friction: 0.1, restitution: 0.0 };
    let e = w.set_material(&["a"], neg).unwrap_err().to_string();
    assert!(e.contains("static_friction"), "{e}");
    let e = w.set_material(&["a"], Material { restitution: 1.5, ..neg }).unwrap_err().to_string();
    assert!(e.contains("static_friction") || e.contains("restitution"), "{e}");
    let e = w.set_contact_mode(&["a"], &["ground"], ContactMode::Penalty { stiffness: -1.0, damping: 0.0 }).unwrap_err().to_string();
    assert!(e.contains("stiffness"), "{e}");
    let e = w.set_contact_mode(&["a"], &["nobody"], ContactMode::None).unwrap_err().to_string();
    assert!(e.contains("'nobody'"), "{e}");
    assert!(matches!(w.set_self_collision("r", false), Err(SimError::Input(_))));
    w.run(0.2).unwrap();
    assert!(z(&w, "a") > 0.098, "still resting");
}

#[test]
fn a_change_in_one_world_leaves_the_worlds_sharing_its_model_alone() {
    let scene = Scene::from_str(&ground_and("", &ball("a", 0.0, 5.0, 0.0)), "t.yaml").unwrap();
    let first = NativeEngine::new(&scene).unwrap();
    let shared = first.shared_model();
    let mut w1 = World::with_engine(scene.clone(), Box::new(first)).unwrap();
    let mut w2 = World::with_engine(scene.clone(), Box::new(NativeEngine::from_model(Arc::clone(&shared)).unwrap())).unwrap();
    w1.set_gravity(Vec3::new(0.0, 0.0, -1.0)).unwrap();
    w1.step().unwrap();
    w2.step().unwrap();
    assert!((w1.body_acceleration("a").unwrap().0.z + 1.0).abs() < 1e-9);
    assert!((w2.body_acceleration("a").unwrap().0.z + G).abs() < 1e-9);
    assert_eq!(shared.model.gravity_vector(), Vec3::new(0.0, 0.0, -G));
}

#[test]
fn the_same_changes_at_the_same_steps_give_the_same_bits() {
    let run = || {
        let mut w = world("", &format!("{}{}", block("box", 2.0), ball("a", 0.5, 0.4, -1.0)));
        let mut out = vec![];
        for k in 0..600 {
            if k == 100 {
                w.set_contact_mode(&["a"], &["box"], ContactMode::Penalty { stiffness: 5000.0, damping: 20.0 }).unwrap();
            }
            if k == 300 {
                w.set_material(&["box"], Material { static_friction: 0.9, dynamic_friction: 0.8, restitution: 0.3 }).unwrap();
                w.set_gravity(Vec3::new(0.5, 0.0, -9.0)).unwrap();
            }
            w.step().unwrap();
            out.extend(w.states().iter().map(|s| s.pose.translation.map(f64::to_bits)));
        }
        out
    };
    assert_eq!(run(), run());
}

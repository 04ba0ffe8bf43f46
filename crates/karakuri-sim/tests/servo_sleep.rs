//! Robots held still by their position servos sleep (issue 29 item 5): a Solo-12 standing on
//! the floor under PD falls asleep exactly when a twin that never sleeps has been still for
//! `engine.sleep.time`; asleep, its servo torques are the ones that hold it against gravity
//! (the core's `gravity_torques` less the contact forces' `Jᵀ f`); a new target wakes it in
//! the step it applies and it tracks the target as the twin does; a moving target keeps it
//! awake; a batch of such worlds is bit-identical on 1 and 2 threads. All with
//! `engine.sleep.actuated: true`; by default a servo-held robot stays awake.

use karakuri::algorithms::{gravity_torques, joint_jacobian, joint_jacobians, ReferenceFrame};
use karakuri::model::JointId;
use karakuri::Data;
use karakuri_sim::native::NativeEngine;
use karakuri_sim::{Batch, Engine, Scene, World};
use nalgebra::{DMatrix, DVector, Vector3};

/// Servo gains of the robot race's Solo-12 (scripts/robot_race.py).
const KP: f64 = 8.0;
const KD: f64 = 0.2;

/// Solo-12 standing on the floor under PD at its standing posture (the robot race's scene);
/// `engine.sleep.actuated` lets servo-held trees sleep (off by default);
/// `sleep` is the `engine.sleep` mapping, `root` `floating` (on its feet) or `fixed` (legs
/// in the air).
fn solo(sleep: &str, root: &str) -> Scene {
    let z = if root == "fixed" { 0.6 } else { 0.235 };
    let legs = [
        ("FL", 0.1, 0.8, -1.6),
        ("FR", -0.1, 0.8, -1.6),
        ("HL", 0.1, -0.8, 1.6),
        ("HR", -0.1, -0.8, 1.6),
    ];
    let mut q0 = Vec::new();
    let mut acts = String::new();
    for (leg, haa, hfe, kfe) in legs {
        for (j, x) in [("HAA", haa), ("HFE", hfe), ("KFE", kfe)] {
            q0.push(format!("{leg}_{j}: {x}"));
            acts += &format!("      - {{joints: [{leg}_{j}], mode: position, kp: {KP}, kd: {KD}, target: {x}}}\n");
        }
    }
    let text = format!(
        "name: solo_pd
world: {{gravity: [0, 0, -9.81], dt: 0.001}}
engine: {{sleep: {sleep}}}
materials: {{ground: {{static_friction: 0.8, dynamic_friction: 0.8, restitution: 0}}}}
bodies:
  - {{name: floor, parent: world, shapes: [{{type: plane, material: ground}}]}}
robots:
  - name: robot
    urdf: builtin:solo12.urdf
    root: {root}
    pose: {{position: [0, 0, {z}]}}
    material: ground
    q0: {{{}}}
    collision: none
    actuators:
{acts}    shapes:
      - {{link: FL_FOOT, type: sphere, radius: 0.016}}
      - {{link: FR_FOOT, type: sphere, radius: 0.016}}
      - {{link: HL_FOOT, type: sphere, radius: 0.016}}
      - {{link: HR_FOOT, type: sphere, radius: 0.016}}
",
        q0.join(", ")
    );
    Scene::from_str(&text, "solo_pd.yaml").unwrap()
}

/// Sleep thresholds of the default settings (docs/SCENE_FORMAT.md): m/s, rad/s, s.
const LINEAR: f64 = 0.01;
const ANGULAR: f64 = 0.05;
const TIME: f64 = 0.5;

fn sleeping(e: &NativeEngine) -> usize {
    e.report().sleeping.unwrap()
}

/// Whether every body moves slower than the sleep thresholds.
fn still(e: &NativeEngine) -> bool {
    let mut states = vec![Default::default(); e.bodies().len()];
    e.write_states(&mut states);
    states.iter().all(|s: &karakuri_sim::BodyState| s.linear.norm() < LINEAR && s.angular.norm() < ANGULAR)
}

fn bits(e: &NativeEngine) -> Vec<u64> {
    e.q().iter().chain(e.v().iter()).map(|x| x.to_bits()).collect()
}

/// The one-dof index of joint `name`.
fn one_dof(e: &NativeEngine, name: &str) -> usize {
    e.sim_model().one_dof_names.iter().position(|n| n == name).unwrap()
}

#[test]
fn a_standing_solo_under_pd_sleeps_when_its_awake_twin_has_been_still_for_the_sleep_time() {
    let mut awake = NativeEngine::new(&solo("{enabled: false}", "floating")).unwrap();
    let mut slept = NativeEngine::new(&solo("{actuated: true}", "floating")).unwrap();
    let k = (TIME / 0.001f64).ceil() as usize;
    // the bound: the first step n whose last k steps the twin was still in (never sleeping,
    // its trajectory is the sleeping world's until then)
    let mut run = 0;
    let mut predicted: Option<usize> = None;
    let mut onset = None;
    for n in 1..=4000 {
        awake.step().unwrap();
        slept.step().unwrap();
        run = if still(&awake) { run + 1 } else { 0 };
        if run >= k && predicted.is_none() {
            predicted = Some(n);
        }
        if sleeping(&slept) > 0 {
            onset = Some(n);
            break;
        }
        assert_eq!(bits(&slept), bits(&awake), "step {n}: the worlds differ before any sleep");
    }
    let (predicted, onset) = (predicted.expect("the twin is never still"), onset.expect("never sleeps"));
    // the body velocities of the report and the stage's joint-frame ones round differently
    // right at a threshold: one step either way
    assert!(onset.abs_diff(predicted) <= 1, "asleep at step {onset}, the twin still for {k} steps at {predicted}");
    assert!(onset < 2000, "asleep only at {onset} ms");
    assert_eq!(sleeping(&slept), slept.bodies().iter().filter(|b| b.joint != 0).count());
    eprintln!("Solo-12 on PD (kp {KP}, kd {KD}): still from step {} , asleep at step {onset}", predicted - k);

    // asleep: the state is exactly held, the servo torques constant from the first step
    // asleep on (the step it fell asleep in reported them at its v⁺, before v was zeroed)
    slept.step().unwrap();
    let (q, tau) = (bits(&slept), slept.output().act_tau.clone());
    for _ in 0..300 {
        slept.step().unwrap();
    }
    assert_eq!(bits(&slept), q);
    assert_eq!(slept.output().act_tau, tau);
    assert!(slept.contacts().len() >= 4, "the feet keep reporting their contacts");
    equilibrium(&slept);
}

/// Asleep, the servos hold the robot: `Sᵀτ = g(q) − Σ Jᵀ f` of the kept contacts, with `g` the
/// core's `gravity_torques`. The tolerance: at the step the robot fell asleep every body was
/// slower than the thresholds, so each joint rate below `2 · ANGULAR` (its body's and its
/// parent's), and a servo's torque at `v = 0` differs from the one the contacts balanced in
/// that step by `(kd + dt kp) · 2 · ANGULAR` at most. (What `M q̈ + C v` was in that step adds
/// to the error found; still for `engine.sleep.time`, it is smaller: 4.6e-4 N·m here.)
fn equilibrium(e: &NativeEngine) {
    let m = e.model();
    let mut data = Data::new(m);
    let q = e.q().clone();
    let g = gravity_torques(m, &mut data, &q).clone();
    joint_jacobians(m, &mut data, &q);
    let mut rhs = g.clone();
    let mut jac = DMatrix::zeros(6, m.nv);
    for c in e.contacts() {
        for (b, sign) in [(c.body_a, -1.0), (c.body_b, 1.0)] {
            let j = e.bodies()[b].joint;
            if j == 0 {
                continue;
            }
            joint_jacobian(m, &data, JointId(j), ReferenceFrame::World, &mut jac).unwrap();
            let f: Vector3<f64> = sign * Vector3::new(c.force.x, c.force.y, c.force.z);
            let p = Vector3::new(c.point.x, c.point.y, c.point.z);
            let w = DVector::from_iterator(6, f.iter().copied().chain(p.cross(&f).iter().copied()));
            rhs -= jac.transpose() * w;
        }
    }
    let mut s_tau = DVector::zeros(m.nv);
    for (a, &t) in e.sim_model().actuators.iter().zip(&e.output().act_tau) {
        s_tau[a.dof] += t;
    }
    let gain_bound = (KD + 0.001 * KP) * 2.0 * ANGULAR;
    let err = (&rhs - &s_tau).amax();
    eprintln!("asleep: |Sᵀτ − (g − Jᵀf)| = {err:.2e} N·m (largest g {:.3}, gain bound {gain_bound:.1e})", g.amax());
    assert!(err <= gain_bound, "{rhs} vs {s_tau}");
    // the contacts carry the robot: without them the residual is the base's weight
    assert!((&g - &s_tau).amax() > 10.0 * gain_bound);
}

#[test]
fn legs_held_in_the_air_sleep_with_the_servo_torque_equal_to_gravity() {
    let mut e = NativeEngine::new(&solo("{actuated: true}", "fixed")).unwrap();
    let mut n = 0;
    while sleeping(&e) < 12 {
        e.step().unwrap();
        n += 1;
        assert!(n < 4000, "not asleep after {n} steps");
    }
    let m = e.model();
    let mut data = Data::new(m);
    let g = gravity_torques(m, &mut data, e.q()).clone();
    let gain_bound = (KD + 0.001 * KP) * 2.0 * ANGULAR;
    let mut worst: f64 = 0.0;
    for (a, &t) in e.sim_model().actuators.iter().zip(&e.output().act_tau) {
        worst = worst.max((t - g[a.dof]).abs());
    }
    eprintln!("legs in the air asleep at step {n}: |τ − g| ≤ {worst:.2e} N·m (gain bound {gain_bound:.1e})");
    assert!(worst <= gain_bound, "servo torques {:?} vs gravity {g}", e.output().act_tau);
}

#[test]
fn a_new_target_wakes_the_sleeping_robot_and_it_tracks_it_as_its_awake_twin() {
    let mut slept = NativeEngine::new(&solo("{actuated: true}", "floating")).unwrap();
    let mut awake = NativeEngine::new(&solo("{enabled: false}", "floating")).unwrap();
    for _ in 0..2500 {
        slept.step().unwrap();
        awake.step().unwrap();
    }
    assert!(sleeping(&slept) > 0);
    let held = bits(&slept);
    // the same target again changes nothing: still asleep, bit for bit
    let k = one_dof(&slept, "robot/FL_HFE");
    slept.set_target(k, 0.8).unwrap();
    slept.step().unwrap();
    assert!(sleeping(&slept) > 0);
    assert_eq!(bits(&slept), held);
    awake.step().unwrap();
    // a new one wakes it in the step it applies
    for e in [&mut slept, &mut awake] {
        e.set_target(k, 1.0).unwrap();
        e.step().unwrap();
    }
    assert_eq!(sleeping(&slept), 0);
    assert_ne!(bits(&slept), held);
    for _ in 0..1000 {
        slept.step().unwrap();
        awake.step().unwrap();
    }
    let a = &slept.sim_model().actuators[slept.sim_model().one_dof_actuator[k].unwrap()];
    let (qs, qa) = (slept.q()[a.iq], awake.q()[a.iq]);
    // the sleeping world was frozen at a state within the thresholds of the twin's: 1 mrad
    assert!((qs - qa).abs() < 1e-3, "FL_HFE {qs} vs the twin's {qa}");
    assert!((qs - 0.8).abs() > 0.1, "FL_HFE did not move: {qs}");
}

#[test]
fn a_moving_target_keeps_the_robot_awake() {
    let mut scene = solo("{actuated: true}", "floating");
    let text = "{joints: [FL_HAA], mode: position, kp: 8, kd: 0.2, target: {sine: {amplitude: 0.0001, frequency: 0.2, offset: 0.1}}}";
    let yaml = format!("robots:\n  - name: robot\n    urdf: builtin:solo12.urdf\n    actuators: [{text}]\n");
    let s2 = Scene::from_str(&yaml, "sine.yaml");
    if let Ok(s2) = s2 {
        scene.robots[0].actuators[0] = s2.robots[0].actuators[0].clone();
    } else {
        panic!("{}", s2.err().unwrap());
    }
    let mut e = NativeEngine::new(&scene).unwrap();
    for _ in 0..3000 {
        e.step().unwrap();
        assert_eq!(sleeping(&e), 0, "asleep at {} s with a moving target", e.time());
    }
}

#[test]
fn a_batch_of_eight_sleeping_robots_is_bit_identical_on_one_and_two_threads() {
    let scene = solo("{actuated: true}", "floating");
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut b = Batch::perturbed(&scene, 8, 5).unwrap();
        pool.install(|| b.run_steps(2000)).unwrap();
        b.into_worlds()
    };
    let (one, two) = (run(1), run(2));
    let bits = |w: &World| -> Vec<u64> {
        w.states()
            .iter()
            .flat_map(|s| s.pose.translation.iter().chain(s.pose.rotation.iter()).chain(s.linear.iter()).chain(s.angular.iter()).copied().collect::<Vec<_>>())
            .map(f64::to_bits)
            .collect()
    };
    let asleep = one.iter().filter(|w| w.sleeping_bodies().unwrap() > 0).count();
    assert!(asleep >= 4, "only {asleep} of 8 worlds asleep at 2 s");
    for (i, (a, b)) in one.iter().zip(&two).enumerate() {
        assert_eq!(bits(a), bits(b), "world {i}");
        assert_eq!(a.sleeping_bodies().unwrap(), b.sleeping_bodies().unwrap(), "world {i}");
    }
}

#[test]
fn by_default_a_servo_held_robot_stays_awake() {
    let mut e = NativeEngine::new(&solo("{}", "floating")).unwrap();
    for _ in 0..2000 {
        e.step().unwrap();
    }
    assert_eq!(sleeping(&e), 0);
}

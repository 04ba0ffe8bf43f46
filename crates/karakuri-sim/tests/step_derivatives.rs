//! `World::step_derivatives` (decision record 0069) against central differences of the step
//! itself: the state set through a snapshot (its `q`, `v` replaced), one step, the result
//! read back, in the tangent space of the documented order (`karakuri_sim::derivatives`), for
//! ± ε on each coordinate. The step is smooth in these worlds, so the difference agrees to
//! ε²-truncation and rounding (bound 1e-6 of the largest entry). The random trees are also
//! held to the core's ABA derivatives (another route to ∂q̈), and the refusals are checked.

use karakuri::algorithms;
use karakuri::Model;
use karakuri_sim::{NativeEngine, Scene, SimError, StepDerivatives, World};
use nalgebra::{DMatrix, DVector};

mod central_differences;
use central_differences::{central, qv, rel};

/// A world of `text` and what the check needs (`central_differences::world`).
fn world(text: &str) -> (World, Model, Vec<usize>) {
    central_differences::world(text, "derivs.yaml")
}

/// `World::step_derivatives` against central differences; returns the relative errors of A, B.
fn check(w: &mut World, model: &Model, order: &[usize], targets: &[(String, f64)], what: &str) -> (f64, f64) {
    for (j, x) in targets {
        w.set_joint_target(j, *x).unwrap();
    }
    let (nv, nu) = w.step_derivative_sizes();
    assert_eq!((nv, nu), (model.nv, targets.len()), "{what}: sizes");
    let mut d = StepDerivatives::new(nv, nu);
    let before = w.snapshot().unwrap().to_json();
    w.step_derivatives(&mut d).unwrap();
    assert_eq!(w.snapshot().unwrap().to_json(), before, "{what}: the derivatives changed the world");
    let (a, b) = central(w, model, order, targets, 1e-6, 1e-3);
    // against the step's change, A − I (the identity would hide an error in O(dt) entries)
    let id = DMatrix::<f64>::identity(2 * nv, 2 * nv);
    let (ea, eb) = (rel(&(&d.a - &id), &(&a - &id)), if nu > 0 { rel(&d.b, &b) } else { 0.0 });
    eprintln!("{what}: A − I {ea:.2e} (max |A − I| {:.3e}), B {eb:.2e} (max |B| {:.3e})", (&a - &id).amax(), b.amax());
    assert!(ea < 1e-6, "{what}: A off by {ea:e}\nanalytic {}\ncentral {}", d.a, a);
    assert!(eb < 1e-6, "{what}: B off by {eb:e}\nanalytic {}\ncentral {}", d.b, b);
    (ea, eb)
}

const INERTIA: &str = "[[0.09, 0, 0], [0, 0.08, 0.001], [0, 0.001, 0.02]]";

#[test]
fn a_pendulum_with_spring_damper_and_armature_under_semi_implicit_euler() {
    let text = format!(
        "engine: {{integrator: semi_implicit_euler}}
bodies: [{{name: bob, mass: 1.3, com: [0.1, 0, -0.8], inertia: {INERTIA},
          joints: [{{name: hinge, type: revolute, axis: [0, 1, 0], q0: 0.7, qd0: 1.3, damping: 0.4, stiffness: 3, spring_reference: 0.2, armature: 0.05}}]}}]"
    );
    let (mut w, model, order) = world(&text);
    check(&mut w, &model, &order, &[], "pendulum (Euler)");
}

#[test]
fn a_double_pendulum_under_the_default_rk4() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/scenes/06_double_pendulum.json");
    let scene = Scene::from_file(path).unwrap();
    assert!(NativeEngine::new(&scene).unwrap().sim_model().plan.rk4, "auto gives this world RK4");
    let (mut w, model, order) = world(&std::fs::read_to_string(path).unwrap());
    w.run(0.3).unwrap();
    check(&mut w, &model, &order, &[], "double pendulum (RK4)");
}

/// A pendulum swinging fast enough that RK4 takes several sub-steps (|ω| dt > 0.1 rad).
#[test]
fn a_fast_pendulum_under_rk4_with_sub_steps() {
    let text = format!(
        "world: {{dt: 0.01}}
bodies: [{{name: bob, mass: 1, com: [0, 0, -0.5], inertia: {INERTIA},
          joints: [{{name: hinge, type: revolute, axis: [0, 1, 0], q0: 0.3, qd0: 25}}]}}]"
    );
    let (mut w, model, order) = world(&text);
    check(&mut w, &model, &order, &[], "fast pendulum (RK4, 3 sub-steps)");
}

/// Solo-12 with a floating base, no collision, spinning and falling, every joint on a PD servo
/// and a damper: the free flyer's tangent rows (position, rotation vector, body velocities).
#[test]
fn a_floating_quadruped_in_free_fall_under_pd() {
    let text = "robots:
  - name: solo
    urdf: builtin:solo12.urdf
    root: floating
    collision: none
    joint_damping: 0.05
    pose: {position: [0, 0, 1], orientation: [0.1, -0.2, 0.3, 0.9273618495495703]}
    base_velocity: {linear: [0.3, -0.2, 0.5], angular: [0.8, -1.1, 0.6]}
    q0: {FL_HFE: 0.8, FL_KFE: -1.6, FR_HFE: 0.7, HL_HFE: -0.8, HL_KFE: 1.6, HR_KFE: 1.2}
    actuators:
      - {joints: '*', mode: position, kp: 8.0, kd: 0.2, target: 0.1, effort_limit: 100}";
    let (mut w, model, order) = world(text);
    w.run(0.05).unwrap();
    let targets: Vec<(String, f64)> = w.one_dof_joints().iter().enumerate().map(|(i, j)| (j.clone(), 0.1 * i as f64 - 0.5)).collect();
    check(&mut w, &model, &order, &targets, "solo12 floating, PD (Euler)");
}

/// UR5 (tests/data/ur5.urdf) fixed, held by PD servos on every joint, joint damping, a torque
/// motor on the wrist.
#[test]
fn a_pd_held_arm() {
    let urdf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/ur5.urdf");
    let text = format!(
        "robots:
  - name: arm
    urdf: {urdf}
    root: fixed
    collision: none
    joint_damping: 0.3
    q0: {{shoulder_lift_joint: -0.8, elbow_joint: 1.2, wrist_1_joint: 0.3}}
    v0: {{shoulder_pan_joint: 0.4, elbow_joint: -0.7}}
    actuators:
      - {{joints: '*', mode: position, kp: 200, kd: 20, target: 0, effort_limit: 1000}}
      - {{joints: [wrist_3_joint], mode: torque, target: 0.2, effort_limit: 5}}"
    );
    let (mut w, model, order) = world(&text);
    w.run(0.02).unwrap();
    let targets: Vec<(String, f64)> = w.one_dof_joints().iter().enumerate().map(|(i, j)| (j.clone(), if i == 5 { 0.7 } else { 0.2 * i as f64 - 0.4 })).collect();
    check(&mut w, &model, &order, &targets, "ur5 PD (Euler)");
}

/// dm_control's humanoid (MJCF: a floating base, 21 hinges with armature and damping, 21
/// motors) with contacts off, a second into a fall from its initial pose.
#[test]
fn the_mjcf_humanoid_without_contacts() {
    let xml = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/mjcf/dm_control/humanoid.xml");
    let text = format!("contact: {{mode: none}}\nrobots: [{{name: h, mjcf: {xml}, collision: none}}]\n");
    let (mut w, model, order) = world(&text);
    w.run(0.02).unwrap();
    let targets: Vec<(String, f64)> = w.layout().actuated.iter().enumerate().map(|(i, &k)| (w.one_dof_joints()[k].clone(), 0.02 * i as f64 - 0.2)).collect();
    check(&mut w, &model, &order, &targets, "humanoid MJCF, no contacts (Euler)");
}

/// SplitMix64, for the random trees.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
    fn axis(&mut self) -> String {
        let v = [self.range(-1.0, 1.0), self.range(-1.0, 1.0), self.range(-1.0, 1.0) + 1.5];
        let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        format!("[{}, {}, {}]", v[0] / n, v[1] / n, v[2] / n)
    }
    fn vec3(&mut self, r: f64) -> String {
        format!("[{:.4}, {:.4}, {:.4}]", self.range(-r, r), self.range(-r, r), self.range(-r, r))
    }
}

/// A random tree of `n` bodies on hinges and sliders (random parents, axes, anchors,
/// inertias, states); `extras`: springs, dampers, armature and actuators on some joints.
fn random_tree(rng: &mut Rng, n: usize, extras: bool, integrator: &str) -> String {
    let mut s = format!("engine: {{integrator: {integrator}}}\nbodies:\n");
    for i in 0..n {
        let parent = if i == 0 || rng.next() < 0.2 { "world".to_string() } else { format!("b{}", (rng.next() * i as f64) as usize) };
        let kind = if rng.next() < 0.25 { "prismatic" } else { "revolute" };
        let (ix, iy, iz) = (rng.range(0.04, 0.07), rng.range(0.04, 0.07), rng.range(0.04, 0.07));
        let mut joint = format!(
            "{{name: j{i}, type: {kind}, axis: {}, anchor: {}, q0: {:.4}, qd0: {:.4}",
            rng.axis(), rng.vec3(0.1), rng.range(-1.0, 1.0), rng.range(-2.0, 2.0)
        );
        if extras {
            let r = rng.next();
            if r < 0.3 {
                joint += &format!(", damping: {:.3}, stiffness: {:.3}, armature: {:.3}", rng.range(0.0, 0.5), rng.range(0.0, 5.0), rng.range(0.0, 0.05));
            } else if r < 0.6 {
                joint += &format!(", actuator: {{mode: position, kp: {:.2}, kd: {:.2}, target: 0.1}}", rng.range(5.0, 50.0), rng.range(0.1, 2.0));
            } else if r < 0.8 {
                joint += ", actuator: {mode: torque, target: 0.3, effort_limit: 10}";
            }
        }
        s += &format!(
            "  - {{name: b{i}, parent: {parent}, pose_in_parent: {{position: {}}}, mass: {:.3}, com: {}, inertia: [[{ix:.4}, 0, 0], [0, {iy:.4}, 0], [0, 0, {iz:.4}]], joints: [{joint}}}]}}\n",
            rng.vec3(0.5), rng.range(0.3, 2.0), rng.vec3(0.2)
        );
    }
    s
}

#[test]
fn random_trees_with_springs_dampers_armature_and_actuators() {
    let mut rng = Rng(7);
    let mut worst = (0.0f64, 0.0f64);
    for t in 0..6 {
        let n = 2 + t;
        let text = random_tree(&mut rng, n, true, "semi_implicit_euler");
        let (mut w, model, order) = world(&text);
        let targets: Vec<(String, f64)> = w
            .layout()
            .actuated
            .clone()
            .into_iter()
            .map(|k| (w.one_dof_joints()[k].clone(), rng.range(-0.5, 0.5)))
            .collect();
        let (ea, eb) = check(&mut w, &model, &order, &targets, &format!("random tree {t} ({n} bodies, Euler)"));
        worst = (worst.0.max(ea), worst.1.max(eb));
        // the same tree's smooth part under RK4
        let text = random_tree(&mut Rng(100 + t as u64), n, false, "rk4");
        let (mut w, model, order) = world(&text);
        let (ea, _) = check(&mut w, &model, &order, &[], &format!("random tree {t} ({n} bodies, RK4)"));
        worst.0 = worst.0.max(ea);
    }
    eprintln!("worst over the random trees: A {:.2e}, B {:.2e}", worst.0, worst.1);
}

/// Without springs, dampers, armature or actuators the Euler step's velocity rows are
/// `∂v⁺/∂q = dt ∂q̈/∂q`, `∂v⁺/∂v = I + dt ∂q̈/∂v` with q̈ = ABA: the core's `aba_derivatives`
/// (M⁻¹ through its own factors) against the step's route (RNEA derivatives, qH solves).
#[test]
fn random_trees_agree_with_the_core_aba_derivatives() {
    let mut rng = Rng(11);
    for t in 0..8 {
        let n = 3 + t;
        let text = random_tree(&mut rng, n, false, "semi_implicit_euler");
        let (mut w, model, order) = world(&text);
        assert!(order.iter().enumerate().all(|(i, &k)| i == k), "one-dof worlds keep the model order");
        let mut d = StepDerivatives::new(model.nv, 0);
        w.step_derivatives(&mut d).unwrap();
        let (q, v) = qv(&w.snapshot().unwrap());
        let mut data = karakuri::Data::new(&model);
        let mut ws = algorithms::DerivativesWorkspace::new(&model);
        algorithms::aba_derivatives(&model, &mut data, &mut ws, &q, &v, &DVector::zeros(model.nv));
        let dt = w.dt();
        let nv = model.nv;
        let dvq = d.a.view((nv, 0), (nv, nv)).clone_owned();
        let dvv = d.a.view((nv, nv), (nv, nv)).clone_owned();
        let e1 = rel(&dvq, &(&ws.dqdd_dq * dt));
        let e2 = rel(&dvv, &(DMatrix::identity(nv, nv) + &ws.dqdd_dv * dt));
        assert!(e1 < 1e-9 && e2 < 1e-9, "tree {t}: ∂v⁺/∂q off by {e1:e}, ∂v⁺/∂v by {e2:e}");
    }
}

#[test]
fn what_the_derivatives_do_not_go_through_is_refused_by_name() {
    let unsupported = |text: &str, word: &str| {
        let (mut w, model, _) = world(text);
        let (nv, nu) = w.step_derivative_sizes();
        let mut d = StepDerivatives::new(nv, nu);
        match w.step_derivatives(&mut d) {
            Err(SimError::Unsupported { what, .. }) => assert!(what.contains(word), "{what}"),
            other => panic!("expected a refusal naming {word}: {other:?} ({} dofs)", model.nv),
        }
    };
    let box_on_floor = "bodies:
  - {name: floor, shapes: [{type: plane}]}
  - {name: box, mass: 1, inertia: [[0.01,0,0],[0,0.01,0],[0,0,0.01]], joints: [{type: free, q0: {position: [0, 0, 0.09]}}], shapes: [{type: box, half_extents: [0.1, 0.1, 0.1]}]}";
    // 1 cm deep: the split-impulse pass (contacts themselves: step_derivatives_contacts.rs)
    unsupported(box_on_floor, "split-impulse");
    let penalty = format!("contact: {{mode: penalty, stiffness: 10000, damping: 100}}\n{box_on_floor}");
    unsupported(&penalty.replace("0.09", "0.0995"), "penalty");
    let at_limit = "engine: {integrator: semi_implicit_euler}
bodies: [{name: bob, mass: 1, com: [0, 0, -1], inertia: [[0.01,0,0],[0,0.01,0],[0,0,0.01]], joints: [{name: hinge, type: revolute, axis: [0, 1, 0], q0: 0.5, limits: [-0.5, 0.5]}]}]";
    unsupported(at_limit, "'hinge''s limit");
    let servo = "bodies: [{name: bob, mass: 1, com: [0, 0, -1], inertia: [[0.01,0,0],[0,0.01,0],[0,0,0.01]], joints: [{name: hinge, type: revolute, axis: [0, 1, 0], actuator: {mode: velocity, target: 1, effort_limit: 10}}]}]";
    unsupported(servo, "velocity servo");
    // a wrong-sized output is an input error naming the sizes
    let (mut w, _, _) = world(servo);
    let mut d = StepDerivatives::new(3, 0);
    assert!(matches!(w.step_derivatives(&mut d), Err(SimError::Input(m)) if m.contains("nv = 1")));
}

//! The integrators (decision record 0061): semi-implicit Euler's implicit damper where an
//! explicit step blows up, RK4's order, RK4's refusal of what it cannot step, and the default
//! (`auto`). Each check is analytic (derived in the test) or against the same scheme at a far
//! smaller step.

use karakuri_sim::scene::Integrator;
use karakuri_sim::{Scene, SimError, World};

/// A hinge about the vertical axis (gravity does no work on it) carrying a body of inertia
/// `i` (kg m²) about it, with damping `d` (N m s/rad), starting at `qd0` (rad/s).
fn damped_hinge(i: f64, d: f64, qd0: f64, integrator: &str) -> World {
    let text = format!(
        "engine: {{{integrator}}}
bodies: [{{name: bob, mass: 1, inertia: [[{i},0,0],[0,{i},0],[0,0,{i}]],
           joints: [{{name: hinge, type: revolute, axis: [0, 0, 1], damping: {d}, qd0: {qd0}}}]}}]"
    );
    World::new(Scene::from_str(&text, "damped.yaml").unwrap()).unwrap()
}

/// A damper stiff for the step: `I ω̇ = −d ω`. Explicit Euler multiplies ω by `1 − dt d / I`
/// per step, stable only while `dt d / I ≤ 2`; here `dt d / I = 10` (a factor −9 per step).
/// The default integrator (`auto`: semi-implicit Euler, the world has a damper) takes the
/// damper at the step's end, `I (ω⁺ − ω) = −dt d ω⁺`, so ω⁺ = ω / (1 + dt d / I) = ω / 11 per
/// step: it decays, monotonically, at that rate. RK4, explicit in the damper, multiplies ω by
/// `1 + z + z²/2 + z³/6 + z⁴/24` with `z = −10` (= 291): chosen by hand it runs away, and the
/// speed guard stops it.
#[test]
fn a_stiff_damper_decays_where_an_explicit_step_would_blow_up() {
    let (i, d, dt) = (0.01, 100.0, 0.001);
    let z = dt * d / i;
    assert!(z > 2.0, "the damper is not stiff for an explicit step: dt d / I = {z}");
    let mut w = damped_hinge(i, d, 1.0, "");
    assert_eq!(w.scene().engine.integrator, Integrator::Auto);
    assert_eq!(w.dt(), dt);
    let mut expected = 1.0f64;
    for _ in 0..6 {
        w.step().unwrap();
        expected /= 1.0 + z;
        let v = w.joint_velocity("hinge").unwrap();
        assert!((v / expected - 1.0).abs() < 1e-9, "ω = {v}, implicit Euler's {expected}");
    }
    let growth = 1.0 - z + z * z / 2.0 - z.powi(3) / 6.0 + z.powi(4) / 24.0;
    assert!(growth > 1.0, "RK4's factor {growth}");
    let mut w = damped_hinge(i, d, 1.0, "integrator: rk4");
    let err = (0..100).find_map(|_| w.step().err());
    assert!(matches!(err, Some(SimError::Diverged { .. })), "explicit RK4 did not run away: {err:?}");
}

/// A pendulum (1 kg at 1 m on a hinge about y, released at 1 rad, no damping): its angle after
/// 1 s by RK4 at dt = 20, 10 and 5 ms against RK4 at 0.625 ms (whose own error is 4096 times
/// smaller than at 5 ms' …, 1e-4 of the errors compared). A fourth-order scheme's error
/// falls 2⁴ = 16 fold when dt halves. The pendulum turns at most √(2 g (1 − cos 1) / L) =
/// 3.0 rad/s, 0.06 rad in 20 ms: below RK4's sub-step bound (0.1 rad), so every step is one
/// RK4 step of dt.
#[test]
fn rk4_error_falls_sixteen_fold_when_the_step_halves() {
    let angle = |dt: f64| {
        let text = format!(
            "world: {{dt: {dt}}}
engine: {{integrator: rk4}}
bodies: [{{name: bob, mass: 1, com: [0, 0, -1], inertia: [[0.001,0,0],[0,0.001,0],[0,0,0.001]],
           joints: [{{name: hinge, type: revolute, axis: [0, 1, 0], q0: 1.0}}]}}]"
        );
        let mut w = World::new(Scene::from_str(&text, "pendulum.yaml").unwrap()).unwrap();
        let n = (1.0 / dt).round() as usize;
        for _ in 0..n {
            w.step().unwrap();
        }
        w.joint_position("hinge").unwrap()
    };
    let reference = angle(0.000625);
    let e: Vec<f64> = [0.02, 0.01, 0.005].iter().map(|&dt| (angle(dt) - reference).abs()).collect();
    for k in 0..2 {
        let ratio = e[k] / e[k + 1];
        assert!((12.0..20.0).contains(&ratio), "error ratio {ratio} (errors {e:?})");
    }
    assert!(e[0] > 1e-9, "the errors compared are not above rounding: {e:?}");
}

/// RK4 has no constraint stage: a world with a floor its ball can touch is refused at load,
/// naming `engine.integrator` and the reason (it used to step semi-implicit Euler in steps with
/// contacts, without a word). The default (`auto`) steps it semi-implicit Euler and lands the
/// ball.
#[test]
fn rk4_refuses_a_world_with_contacts_and_auto_steps_it() {
    let text = |integrator: &str| {
        format!(
            "engine: {{{integrator}}}
bodies:
  - {{name: floor, shapes: [{{type: plane}}]}}
  - {{name: ball, mass: 1, inertia: [[0.004,0,0],[0,0.004,0],[0,0,0.004]],
     joints: [{{type: free, q0: {{position: [0, 0, 0.5]}}}}], shapes: [{{type: sphere, radius: 0.1}}]}}"
        )
    };
    let err = World::new(Scene::from_str(&text("integrator: rk4"), "ball.yaml").unwrap()).err();
    match err {
        Some(SimError::Scene { path, reason, .. }) => {
            assert_eq!(path, "engine.integrator");
            assert!(reason.contains("shapes that can touch"), "{reason}");
        }
        other => panic!("rk4 with a floor was not refused: {other:?}"),
    }
    let mut w = World::new(Scene::from_str(&text(""), "ball.yaml").unwrap()).unwrap();
    w.run(1.0).unwrap();
    let z = w.state("ball").unwrap().pose.translation.z;
    assert!((z - 0.1).abs() < 2e-3, "the ball rests at z = {z} m, its radius is 0.1 m");
}

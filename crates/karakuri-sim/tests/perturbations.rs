//! External forces (issue 15, item 7) against analytic answers: a free box in zero gravity
//! pushed by F for T reaches v = F T / m, a torque about a principal axis gives ω = τ T / I,
//! and a force at a point of a servo-held hinge settles where the servo balances its moment.

use karakuri::spatial::Vec3;
use karakuri_sim::{Scene, SimError, World};

const M: f64 = 2.5;
const I: [f64; 3] = [0.1, 0.2, 0.3];

/// A free box of mass `M`, principal inertia `I`, in zero gravity, with `more` top-level YAML.
fn free_box(more: &str) -> World {
    let text = format!(
        r#"
name: pushed
world: {{gravity: [0, 0, 0], dt: 0.001, duration: 1}}
bodies:
  - name: box
    mass: {M}
    inertia: [[{}, 0, 0], [0, {}, 0], [0, 0, {}]]
    joints: [{{type: free, q0: {{position: [0, 0, 1]}}}}]
    shapes: [{{type: box, half_extents: [0.1, 0.2, 0.3]}}]
{more}"#,
        I[0], I[1], I[2]
    );
    World::new(Scene::from_str(&text, "pushed.yaml").unwrap()).unwrap()
}

fn close(a: Vec3, b: Vec3, tol: f64, what: &str) {
    assert!((a - b).norm() <= tol, "{what}: {a:?} vs {b:?} (|Δ| = {:e})", (a - b).norm());
}

#[test]
fn a_scene_push_gives_a_free_box_v_equal_f_t_over_m() {
    let (f, t) = (Vec3::new(3.0, -1.5, 0.75), 0.25);
    let mut w = free_box("perturbations:\n  - {body: box, force: [3, -1.5, 0.75], start: 0.1, duration: 0.25}\n");
    w.run(0.1).unwrap();
    close(w.state("box").unwrap().linear, Vec3::zeros(), 0.0, "before the push");
    w.run(0.5).unwrap();
    let s = w.state("box").unwrap();
    close(s.linear, f * (t / M), 1e-9, "v after the push");
    close(s.angular, Vec3::zeros(), 1e-12, "no turn from a force at the origin");
}

#[test]
fn an_api_push_equals_the_scene_push() {
    let (f, t) = (Vec3::new(0.0, 4.0, -2.0), 0.3);
    let mut w = free_box("");
    w.run(0.05).unwrap();
    w.apply_wrench("box", f, Vec3::zeros(), t).unwrap();
    w.run(0.5).unwrap();
    close(w.state("box").unwrap().linear, f * (t / M), 1e-9, "v after the API push");
}

#[test]
fn a_torque_about_a_principal_axis_gives_omega_equal_tau_t_over_i() {
    for (axis, tau) in [(0usize, 0.4), (1, -0.7), (2, 0.9)] {
        let mut torque = [0.0; 3];
        torque[axis] = tau;
        let t = 0.5;
        let mut w = free_box(&format!(
            "perturbations:\n  - {{body: box, torque: [{}, {}, {}], start: 0, duration: {t}}}\n",
            torque[0], torque[1], torque[2]
        ));
        w.run(0.8).unwrap();
        let s = w.state("box").unwrap();
        let mut expect = Vec3::zeros();
        expect[axis] = tau * t / I[axis];
        close(s.angular, expect, 1e-9, &format!("ω about axis {axis}"));
        close(s.linear, Vec3::zeros(), 1e-12, "no linear motion from a torque");
    }
}

#[test]
fn a_force_at_a_point_turns_a_servo_held_hinge_to_its_balance() {
    // hinge about x at the body origin, zero gravity, servo kp (0 − q); force F along +y at
    // the body point (0, 0, l): its moment about x is −F l cos q, so kp q = −F l cos q
    let (kp, f, l) = (20.0, 6.0, 0.4);
    let text = format!(
        r#"
name: lever
world: {{gravity: [0, 0, 0], dt: 0.001, duration: 10}}
bodies:
  - name: lever
    pose_in_parent: {{position: [0, 0, 1]}}
    mass: 1
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    joints: [{{name: hinge, type: revolute, axis: [1, 0, 0], actuator: {{mode: position, kp: {kp}, kd: 2, target: 0}}}}]
perturbations:
  - {{body: lever, force: [0, {f}, 0], point: [0, 0, {l}], start: 0, duration: 10}}
"#
    );
    let mut w = World::new(Scene::from_str(&text, "lever.yaml").unwrap()).unwrap();
    w.run(9.0).unwrap();
    let mut q: f64 = 0.0;
    for _ in 0..50 {
        q -= (kp * q + f * l * q.cos()) / (kp - f * l * q.sin());
    }
    let got = w.joint_position("hinge").unwrap();
    assert!((got - q).abs() < 1e-6, "q {got} vs {q}");
    assert!(w.joint_velocity("hinge").unwrap().abs() < 1e-6);
}

#[test]
fn pushes_on_robot_links_and_bad_pushes() {
    let robot = |body: &str| {
        format!(
            "name: r\nrobots: [{{name: solo, urdf: 'builtin:solo12.urdf', collision: none, pose: {{position: [0, 0, 0.5]}}}}]\nbodies: [{{name: floor, shapes: [{{type: plane}}]}}]\nperturbations: [{{body: '{body}', force: [0, 1, 0], duration: 0.1}}]\n"
        )
    };
    // a robot link by `robot/link`: the base moves sideways
    let mut w = World::new(Scene::from_str(&robot("solo/base_link"), "r.yaml").unwrap()).unwrap();
    w.run(0.05).unwrap();
    assert!(w.state("solo/base_link").unwrap().linear.y > 0.0);
    for (body, says) in [("solo/nope", "unknown body 'solo/nope'"), ("floor", "static"), ("ghost", "unknown body 'ghost'")] {
        let err = Scene::from_str(&robot(body), "r.yaml").and_then(World::new).map(|_| ()).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("perturbations[0].body") && text.contains(says), "{body}: {text}");
    }
    let bad = "name: b\nbodies: [{name: b, mass: 1, inertia: [[1,0,0],[0,1,0],[0,0,1]], joints: [{type: free}]}]\nperturbations: [{body: b, force: [0, 1, 0], duration: 0}]\n";
    let text = Scene::from_str(bad, "b.yaml").unwrap_err().to_string();
    assert!(text.contains("perturbations[0].duration"), "{text}");
    let mut w = free_box("");
    for (body, dur) in [("ghost", 0.1), ("box", -1.0), ("box", f64::NAN)] {
        let err = w.apply_wrench(body, Vec3::x(), Vec3::zeros(), dur).unwrap_err();
        assert!(matches!(err, SimError::Input(_)), "{err}");
    }
}

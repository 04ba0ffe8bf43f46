//! Island sleeping (`engine.sleep`, issue 14 item 1) against physical answers: resting boxes
//! fall asleep and then stay exactly put; a box dropped on a sleeping stack wakes it and the
//! stack reacts as a stack that never slept does; a checkpoint taken while asleep resumes bit
//! for bit; a box on an incline below the friction angle sleeps, one above never does; a push
//! on a sleeping box gives it v = F T / m; bad settings are refused by name.

mod common;

use karakuri::spatial::Vec3;
use karakuri_sim::{Scene, Snapshot, World};

/// A world of YAML `text`.
fn world(text: &str) -> World {
    World::new(Scene::from_str(text, "sleep.yaml").unwrap()).unwrap()
}

/// A free box `name` (half extent `h`, 1 kg) at `(x, y, z)`, as a YAML list item.
fn free_box(name: &str, h: f64, x: f64, y: f64, z: f64) -> String {
    let i = 2.0 * h * h / 3.0;
    format!(
        "  - name: {name}\n    mass: 1\n    inertia: [[{i}, 0, 0], [0, {i}, 0], [0, 0, {i}]]\n    joints: [{{type: free, q0: {{position: [{x}, {y}, {z}]}}}}]\n    shapes: [{{type: box, half_extents: [{h}, {h}, {h}], material: m}}]\n"
    )
}

/// A stack of three 10 cm boxes on the ground, each resting on the one below, plus `more`
/// bodies; `sleep` is the `engine.sleep` mapping.
fn stack(sleep: &str, more: &str) -> World {
    let mut bodies = String::new();
    for k in 0..3 {
        bodies += &free_box(&format!("b{k}"), 0.05, 0.0, 0.0, 0.05 + 0.1 * k as f64);
    }
    bodies += more;
    world(&common::ground_and(&format!("engine: {{sleep: {sleep}}}"), &bodies))
}

/// Every body's pose and velocity as bits.
fn bits(w: &World) -> Vec<u64> {
    w.states()
        .iter()
        .flat_map(|s| {
            let p = &s.pose;
            p.translation.iter().chain(p.rotation.iter()).chain(s.linear.iter()).chain(s.angular.iter()).copied().collect::<Vec<_>>()
        })
        .map(f64::to_bits)
        .collect()
}

/// Every reported contact as bits.
fn contact_bits(w: &World) -> Vec<u64> {
    w.contacts()
        .iter()
        .flat_map(|c| [c.point, c.normal, c.force].into_iter().flat_map(|v| [v.x, v.y, v.z]).chain([c.depth]))
        .map(f64::to_bits)
        .chain(w.contacts().iter().flat_map(|c| [c.body_a as u64, c.body_b as u64]))
        .collect()
}

#[test]
fn resting_boxes_fall_asleep_and_stay_exactly_put() {
    let mut w = stack("{}", "");
    // settled after a few steps; still for 0.5 s from then on
    w.run(0.4).unwrap();
    assert_eq!(w.sleeping_bodies().unwrap(), 0, "asleep before engine.sleep.time");
    w.run(0.3).unwrap();
    assert_eq!(w.sleeping_bodies().unwrap(), 3, "the resting stack sleeps");
    let before = (bits(&w), contact_bits(&w));
    w.run(2.0).unwrap();
    assert_eq!(bits(&w), before.0, "a sleeping body is exactly at rest");
    // its contacts are those of the step it fell asleep in, not collided again; they carry
    // the stack's weight (3 kg)
    assert_eq!(contact_bits(&w), before.1, "a sleeping island's contacts were recomputed");
    let ground = w.contacts().iter().filter(|c| c.body_a == 0 || c.body_b == 0);
    let fz: f64 = ground.map(|c| if c.body_a == 0 { c.force.z } else { -c.force.z }).sum();
    assert!((fz - 3.0 * 9.81).abs() < 1e-3, "the floor carries {fz} N");
    for s in w.states().iter().skip(1) {
        assert_eq!((s.linear, s.angular), (Vec3::zeros(), Vec3::zeros()));
    }
    // and where a resting stack is: each box on the one below (within the contact tolerance)
    for k in 0..3 {
        let z = w.state(&format!("b{k}")).unwrap().pose.translation.z;
        assert!((z - (0.05 + 0.1 * k as f64)).abs() < 2e-3, "b{k} at z = {z}");
    }
}

#[test]
fn sleeping_off_keeps_every_body_awake() {
    let mut w = stack("{enabled: false}", "");
    w.run(1.5).unwrap();
    assert_eq!(w.sleeping_bodies().unwrap(), 0);
    assert!(!w.contacts().is_empty());
}

/// The stack with a box thrown at the top box's side: 3 m/s along x from 1.4 m away, falling
/// 1.07 m on the way (it strikes about 0.467 s in, after the stack has slept from about
/// 0.3 s).
fn dropped(sleep: &str) -> World {
    let thrown = free_box("dropped", 0.05, -1.45, 0.0, 1.32).replace("}}]\n    shapes", "}, qd0: {linear: [3, 0, 0]}}]\n    shapes");
    assert!(thrown.contains("qd0"));
    stack(sleep, &thrown)
}

#[test]
fn a_dropped_box_wakes_the_sleeping_stack_and_it_reacts_as_an_awake_one() {
    let (mut a, mut b) = (dropped("{time: 0.3}"), dropped("{enabled: false}"));
    let top = |w: &World| w.state("b2").unwrap().pose.translation;
    let z0 = top(&a);
    // the stack sleeps before the box lands (from about 0.3 s)
    a.run(0.4).unwrap();
    assert_eq!(a.sleeping_bodies().unwrap(), 3, "the stack sleeps, the falling box does not");
    let asleep_at = top(&a);
    let mut woke = None;
    for _ in 0..200 {
        a.step().unwrap();
        if a.sleeping_bodies().unwrap() == 0 {
            woke = Some(a.time());
            break;
        }
        assert_eq!(top(&a), asleep_at, "the sleeping top box moved");
    }
    let woke = woke.expect("the dropped box woke the stack");
    // woken by the thrown box's first contact with the stack, not before: it has flown the
    // 1.4 m to the stack at 3 m/s (less the contact margin and the stack's sides)
    let thrown = a.body_index("dropped").unwrap();
    assert!(a.contacts().iter().any(|c| c.body_a == thrown || c.body_b == thrown), "woken with no contact");
    let x = a.state("dropped").unwrap().pose.translation.x;
    assert!(x > -0.12 && (woke - (x + 1.45) / 3.0).abs() < 1e-9, "woken at {woke} s, the thrown box at x = {x}");
    a.run(1.5 - a.time()).unwrap();
    b.run(1.5).unwrap();
    // the stack reacted: the top box was knocked, as it is in the run that never slept
    let (ta, tb) = (top(&a), top(&b));
    assert!((ta - z0).norm() > 5e-3, "the top box did not react: moved {:e} m", (ta - z0).norm());
    assert!((ta - tb).norm() < 0.02 * (tb - z0).norm().max(0.05), "slept {ta:?} vs awake {tb:?}");
    for name in ["b0", "b1", "dropped"] {
        let (pa, pb) = (a.state(name).unwrap().pose.translation, b.state(name).unwrap().pose.translation);
        assert!((pa - pb).norm() < 5e-3, "{name}: slept {pa:?} vs awake {pb:?}");
    }
}

#[test]
fn a_checkpoint_taken_asleep_resumes_bit_for_bit_through_the_wake() {
    let mut a = dropped("{time: 0.3}");
    a.run(0.4).unwrap();
    assert_eq!(a.sleeping_bodies().unwrap(), 3);
    let snap = a.snapshot().unwrap();
    let mut expect = vec![];
    for _ in 0..300 {
        a.step().unwrap();
        expect.push((bits(&a), a.sleeping_bodies().unwrap()));
    }
    assert_eq!(expect.first().unwrap().1, 3);
    assert!(expect.iter().any(|e| e.1 == 0), "the run crosses the wake");
    let mut b = dropped("{time: 0.3}");
    b.restore(&Snapshot::from_json(&snap.to_json(), "mem").unwrap()).unwrap();
    for (k, e) in expect.iter().enumerate() {
        b.step().unwrap();
        assert!((bits(&b), b.sleeping_bodies().unwrap()) == *e, "step {} after the checkpoint differs", k + 1);
    }
}

/// A box on the ground with gravity tilted by `deg` degrees about y (an incline of that slope)
/// and μ = 0.5 (friction angle atan 0.5 = 26.57°), after `t` seconds.
fn incline(deg: f64, t: f64) -> World {
    let (s, c) = deg.to_radians().sin_cos();
    let text = common::ground_and("", &free_box("box", 0.05, 0.0, 0.0, 0.05)).replace(
        "gravity: [0, 0, -9.81]",
        &format!("gravity: [{}, 0, {}]", 9.81 * s, -9.81 * c),
    );
    let mut w = world(&text);
    w.run(t).unwrap();
    w
}

#[test]
fn a_box_below_the_friction_angle_sleeps_above_it_never_does() {
    let mut w = incline(20.0, 1.0);
    assert_eq!(w.sleeping_bodies().unwrap(), 1, "sticks at 20° < 26.57°");
    let x = w.state("box").unwrap().pose.translation.x;
    w.run(1.0).unwrap();
    assert_eq!(w.state("box").unwrap().pose.translation.x, x, "a sleeping box does not creep");
    // 30°: slides with a = g (sin θ − μ cos θ); never still, never asleep
    let mut w = incline(30.0, 0.0);
    let a = 9.81 * (30f64.to_radians().sin() - 0.5 * 30f64.to_radians().cos());
    for _ in 0..20 {
        w.run(0.1).unwrap();
        assert_eq!(w.sleeping_bodies().unwrap(), 0, "a sliding box slept at {} s", w.time());
    }
    let v = w.state("box").unwrap().linear.x;
    assert!((v - a * 2.0).abs() < 0.01 * a * 2.0, "v = {v}, a t = {}", a * 2.0);
}

#[test]
fn a_push_on_a_sleeping_box_slides_it_as_coulomb_says() {
    // F = 10 N along x for 0.2 s on a 1 kg box (μ = 0.5): v = (F − μ m g) T / m = 1.019 m/s
    let mut w = world(&common::ground_and("", &free_box("box", 0.05, 0.0, 0.0, 0.05)));
    w.run(0.6).unwrap();
    assert_eq!(w.sleeping_bodies().unwrap(), 1);
    let (f, t) = (10.0, 0.2);
    w.apply_wrench("box", Vec3::new(f, 0.0, 0.0), Vec3::zeros(), t).unwrap();
    w.run(t).unwrap();
    let v = w.state("box").unwrap().linear;
    let want = (f - 0.5 * 9.81) * t;
    assert!((v.x - want).abs() < 0.01 * want && v.yz().norm() < 1e-6, "v = {v:?}, (F − μ m g) T / m = {want}");
    assert_eq!(w.sleeping_bodies().unwrap(), 0, "a sliding box is awake");
}

#[test]
fn a_slow_spin_in_zero_gravity_never_sleeps() {
    // 0.04 rad/s about a principal axis (below engine.sleep.angular) is motion, not rest: no
    // contact holds the box, so it spins on with ω constant
    let text = common::ground_and("", &free_box("box", 0.05, 0.0, 0.0, 1.0))
        .replace("gravity: [0, 0, -9.81]", "gravity: [0, 0, 0]")
        .replace("}}]\n    shapes", "}, qd0: {angular: [0, 0, 0.04]}}]\n    shapes");
    let mut w = world(&text);
    w.run(2.0).unwrap();
    assert_eq!(w.sleeping_bodies().unwrap(), 0);
    let s = w.state("box").unwrap();
    assert!((s.angular - Vec3::new(0.0, 0.0, 0.04)).norm() < 1e-12, "ω = {:?}", s.angular);
}

#[test]
fn a_joint_torque_on_a_sleeping_pendulum_wakes_it() {
    let text = common::ground_and(
        "",
        "  - name: arm\n    mass: 1\n    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]\n    pose_in_parent: {position: [0, 0, 2]}\n    joints: [{type: revolute, name: hinge, axis: [0, 1, 0]}]\n",
    );
    let mut w = world(&text);
    w.run(0.6).unwrap();
    assert_eq!(w.sleeping_bodies().unwrap(), 1, "a pendulum hanging at rest sleeps");
    w.set_joint_torque("hinge", 0.5).unwrap();
    w.run(0.1).unwrap();
    // I q̈ = τ about the hinge through the centre of mass: q = τ t² / (2 I)
    let q = w.joint_position("hinge").unwrap();
    let want = 0.5 * 0.1f64.powi(2) / (2.0 * 0.01);
    assert!((q - want).abs() < 0.02 * want, "q = {q}, τ t² / 2I = {want}");
}

#[test]
fn bad_sleep_settings_are_refused_by_name() {
    for (bad, key) in [
        ("{linear: -1}", "engine.sleep.linear"),
        ("{angular: 0}", "engine.sleep.angular"),
        ("{time: .nan}", "engine.sleep.time"),
        ("{time: 1e9}", "engine.sleep.time"),
    ] {
        let e = common::error_of(&common::ground_and(&format!("engine: {{sleep: {bad}}}"), ""), "s.yaml");
        assert!(e.contains(key), "{bad}: {e}");
    }
    let e = common::error_of(&common::ground_and("engine: {sleep: {enable: true}}", ""), "s.yaml");
    assert!(e.contains("enable"), "{e}");
}

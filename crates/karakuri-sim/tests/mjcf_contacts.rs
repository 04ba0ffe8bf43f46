//! MJCF robots as MuJoCo runs them: which geoms touch (`contype`/`conaffinity`, parent and
//! child, welded bodies, `<exclude>`, `<pair>`), with what friction (MuJoCo's rule: the
//! higher `priority`'s, else the larger; a `<pair>`'s own; `condim` 1 frictionless), the
//! actuators (`velocity`, `general` with fixed or affine gain and bias, `ctrlrange`,
//! `forcerange`) against their steady states, and the start (keyframe `qvel`, a keyframe by
//! name).

use karakuri_sim::{Scene, World};

/// A world of an MJCF text written to a file of its own (the scene `name: NAME` of one robot).
fn world(name: &str, xml: &str) -> World {
    let dir = std::env::temp_dir().join(format!("karakuri-mjcfc-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.xml"));
    std::fs::write(&path, xml).unwrap();
    let w = World::new(Scene::from_file(&path).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    w
}

fn z(w: &World, body: &str) -> f64 {
    w.state(body).unwrap_or_else(|| panic!("no body {body}")).pose.translation.z
}

/// Five boxes dropped 0.2 m onto a floor: the default one and the one whose `contype` (2)
/// meets the floor's `conaffinity` (1) only one way land on it (MuJoCo's `(ct1 & ca2) ||
/// (ct2 & ca1)`); the one of bits 2/2 and the one `<exclude>`d from the world fall through;
/// the one of bits 0/0 lands because a `<pair>` names it with the floor.
#[test]
fn contype_conaffinity_exclude_and_pair_decide_who_lands() {
    let boxes = [("a", ""), ("b", r#"contype="2" conaffinity="2""#), ("c", ""), ("d", r#"name="dg" contype="0" conaffinity="0""#), ("e", r#"contype="2" conaffinity="1""#)];
    let bodies: String = boxes
        .iter()
        .enumerate()
        .map(|(i, (n, attrs))| format!(r#"<body name="{n}" pos="{} 0 0.3"><freejoint/><geom type="box" size="0.1 0.1 0.1" {attrs}/></body>"#, i as f64 * 0.5))
        .collect();
    let xml = format!(
        r#"<mujoco><worldbody><geom name="floor" type="plane" size="5 5 0.1"/>{bodies}</worldbody>
  <contact><exclude body1="world" body2="c"/><pair geom1="floor" geom2="dg"/></contact></mujoco>"#
    );
    let mut w = world("drop", &xml);
    w.run(1.0).unwrap();
    for (n, lands) in [("a", true), ("b", false), ("c", false), ("d", true), ("e", true)] {
        let h = z(&w, &format!("drop/{n}"));
        if lands {
            assert!((h - 0.1).abs() < 5e-3, "box {n} at z = {h}, expected resting at 0.1");
        } else {
            // free fall from 0.3 m for 1 s, semi-implicit Euler (dt 0.002): 0.3 − g/2 t (t + dt)
            let fallen = 0.3 - 9.81 / 2.0 * 1.0 * (1.0 + 0.002);
            assert!((h - fallen).abs() < 1e-9, "box {n} at z = {h}, expected falling freely to {fallen}");
        }
    }
}

/// Boxes sliding at 2 m/s (keyframe `qvel`) on a floor of friction 0.6 slow down at μ g, with
/// MuJoCo's μ: a box of friction 0.2 takes the larger, 0.6; one of `priority` 1 its own 0.2;
/// one of `condim` 1 and `priority` 1 none (of equal priority the larger `condim`, the
/// floor's 3, would hold); one in a `<pair friction="0.3">` 0.3. After 0.2 s (all still
/// sliding): v = 2 − μ g 0.2.
#[test]
fn sliding_friction_is_mujocos() {
    let cases = [("max", "", 0.6), ("prio", r#"priority="1""#, 0.2), ("cd1", r#"condim="1" priority="1""#, 0.0), ("pair", r#"name="pg""#, 0.3)];
    let bodies: String = cases
        .iter()
        .enumerate()
        .map(|(i, (n, attrs, _))| {
            format!(r#"<body name="{n}" pos="0 {} 0.1"><freejoint/><geom type="box" size="0.1 0.1 0.1" friction="0.2" {attrs}/></body>"#, i as f64)
        })
        .collect();
    let qvel = "2 0 0 0 0 0 ".repeat(cases.len());
    let xml = format!(
        r#"<mujoco><option timestep="0.001"/><worldbody><geom name="floor" type="plane" size="5 5 0.1" friction="0.6"/>{bodies}</worldbody>
  <contact><pair geom1="floor" geom2="pg" friction="0.3 0.3"/></contact><keyframe><key qvel="{qvel}"/></keyframe></mujoco>"#
    );
    let mut w = world("slide", &xml);
    assert!((w.state("slide/max").unwrap().linear.x - 2.0).abs() < 1e-12, "the keyframe's qvel is the start");
    w.run(0.2).unwrap();
    for (n, _, mu) in cases {
        let v = w.state(&format!("slide/{n}")).unwrap().linear.x;
        let expected = 2.0 - mu * 9.81 * 0.2;
        assert!((v - expected).abs() < 1e-2, "box {n}: v = {v}, expected {expected} (μ = {mu})");
    }
}

/// A free body with a hinged child whose capsule runs through the body's box, and a jointless
/// (welded) grandchild overlapping the capsule's end: parent and child never touch (MuJoCo's
/// `filterparent`), nor the child and its grandchild (one weld body); with `<flag
/// filterparent="disable"/>` the parent's box and the child's capsule touch (and only they).
#[test]
fn parent_and_child_touch_only_when_filterparent_is_disabled() {
    let tree = r#"<worldbody><body name="p" pos="0 0 1"><freejoint/><geom type="box" size="0.1 0.1 0.1"/>
      <body name="c"><joint type="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
        <body name="g" pos="0.3 0 0"><geom type="sphere" size="0.05"/></body></body></body></worldbody>"#;
    let touching = |flag: &str| {
        let mut w = world(&format!("family{}", flag.len()), &format!("<mujoco><option gravity=\"0 0 0\">{flag}</option>{tree}</mujoco>"));
        w.step().unwrap();
        let name = |i: usize| w.bodies()[i].name.rsplit('/').next().unwrap().to_string();
        let mut pairs: Vec<(String, String)> = w.contacts().iter().map(|c| (name(c.body_a), name(c.body_b))).collect();
        pairs.dedup();
        pairs
    };
    assert_eq!(touching(""), vec![]);
    assert_eq!(touching(r#"<flag filterparent="disable"/>"#), vec![("p".to_string(), "c".to_string())]);
}

/// A `velocity` servo (kv 5, gear 2, ctrl 0.3) on a vertical hinge with damping 1 turns at
/// the speed where `gear · kv (ctrl − gear q̇)` equals the damping `q̇`: q̇ = g kv c / (g² kv + d).
#[test]
fn a_velocity_servo_turns_at_its_steady_speed() {
    let xml = r#"<mujoco><option timestep="0.001"/><worldbody><body name="r">
      <joint name="j" type="hinge" axis="0 0 1" damping="1"/><geom type="box" size="0.3 0.05 0.05" pos="0.3 0 0" mass="1"/></body></worldbody>
      <actuator><velocity joint="j" kv="5" gear="2"/></actuator><keyframe><key ctrl="0.3"/></keyframe></mujoco>"#;
    let mut w = world("vel", xml);
    w.run(3.0).unwrap();
    let (g, kv, c, d) = (2.0, 5.0, 0.3, 1.0);
    let expected = g * kv * c / (g * g * kv + d);
    let v = w.joint_velocity("vel/j").unwrap();
    assert!((v - expected).abs() < 1e-6, "q̇ = {v}, expected {expected}");
}

/// `general` actuators on pendulums (1 kg, 0.5 m): a fixed gain with an affine bias
/// (gear 1.5, gainprm 10, biasprm 1 −20 −2, ctrl 0.4: τ = 7.5 − 45 θ − 4.5 θ̇), an affine gain
/// (gainprm 10 −5 0, ctrl 0.4: τ = 4 − 2 θ), a motor with ctrl 2 clamped by its `ctrlrange` to
/// 1 (τ = 1) and one with ctrl 10 saturated by its `forcerange` ±2 (τ = 2): each hinge settles
/// where its τ balances m g l sin θ.
#[test]
fn general_actuators_settle_where_gain_and_bias_balance_gravity() {
    let pendulum = |n: &str, x: f64| {
        format!(r#"<body name="{n}" pos="{x} 0 1"><joint name="{n}" type="hinge" axis="0 -1 0" damping="3"/><geom type="sphere" pos="0 0 -0.5" size="0.05" mass="1"/></body>"#)
    };
    let xml = format!(
        r#"<mujoco><option timestep="0.001"/><worldbody>{}{}{}{}</worldbody><actuator>
      <general joint="a" gear="1.5" gainprm="10" biastype="affine" biasprm="1 -20 -2"/>
      <general joint="b" gaintype="affine" gainprm="10 -5 0"/>
      <motor joint="c" ctrllimited="true" ctrlrange="-1 1"/>
      <motor joint="d" forcelimited="true" forcerange="-2 2"/>
    </actuator><keyframe><key ctrl="0.4 0.4 2 10"/></keyframe></mujoco>"#,
        pendulum("a", 0.0),
        pendulum("b", 1.0),
        pendulum("c", 2.0),
        pendulum("d", 3.0)
    );
    let mut w = world("gen", &xml);
    assert!(!w.warnings().iter().any(|m| m.contains("actuators not simulated")), "{:?}", w.warnings());
    w.run(6.0).unwrap();
    // the sphere's inertia about its centre does not change the rest angle
    let mgl = 1.0 * 9.81 * 0.5;
    let torques: [(&str, &dyn Fn(f64) -> f64); 4] =
        [("a", &|t| 7.5 - 45.0 * t), ("b", &|t| 4.0 - 2.0 * t), ("c", &|_| 1.0), ("d", &|_| 2.0)];
    for (n, tau) in torques {
        let th = w.joint_position(&format!("gen/{n}")).unwrap();
        let residual = tau(th) - mgl * th.sin();
        assert!(residual.abs() < 1e-3 && th > 0.05, "{n}: θ = {th}, residual {residual} N·m");
    }
}

/// `robots[].keyframe` picks a `<key>` by name (its qpos); an unknown name is an error listing
/// the file's keyframes.
#[test]
fn a_keyframe_is_chosen_by_name() {
    let dir = std::env::temp_dir().join(format!("karakuri-mjcfk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let xml = r#"<mujoco><worldbody><body name="b" pos="0 0 1"><joint name="j" type="hinge" axis="0 1 0"/>
      <geom type="sphere" pos="0 0 -0.5" size="0.05"/></body></worldbody>
      <keyframe><key name="first" qpos="0.1"/><key name="second" qpos="0.7" qvel="-0.5"/></keyframe></mujoco>"#;
    std::fs::write(dir.join("k.xml"), xml).unwrap();
    let scene = |key: &str| Scene::from_str(&format!("name: s\nrobots: [{{name: r, mjcf: k.xml, keyframe: {key}}}]\n"), &dir.join("s.yaml").display().to_string());
    let w = World::new(scene("second").unwrap()).unwrap();
    assert_eq!((w.joint_position("r/j").unwrap(), w.joint_velocity("r/j").unwrap()), (0.7, -0.5));
    let err = World::new(scene("third").unwrap()).err().unwrap().to_string();
    assert!(err.contains("robots[0].keyframe") && err.contains("no keyframe 'third'") && err.contains("first, second"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// What hard contacts and karakuri's integrators do not carry is said at load, counted: a
/// geom's own `solref`, a `margin` (its `margin - gap` stand-off), `condim` 6, `impratio` 10, the implicitfast integrator;
/// a geom that never collides (bits 0/0) is not counted.
#[test]
fn soft_contact_parameters_and_options_not_simulated_are_warned() {
    let xml = r#"<mujoco><option integrator="implicitfast" impratio="10"/><worldbody>
      <geom type="plane" size="1 1 0.1" solref="0.01 1"/>
      <body pos="0 0 1"><freejoint/><geom type="sphere" size="0.1" margin="0.01" condim="6"/>
        <geom type="sphere" size="0.1" solref="0.05 1" contype="0" conaffinity="0"/></body></worldbody></mujoco>"#;
    let w = world("soft", xml);
    let said = w.warnings().join("\n");
    assert!(said.contains("1 geom(s)/pair(s) with their own solref/solimp, 1 acting at margin - gap > 0 (they act at touching), 1 with condim 4 or 6"), "{said}");
    assert!(said.contains("<option integrator> implicit/implicitfast: stepped semi-implicit Euler"), "{said}");
    assert!(said.contains("<option impratio=\"10\"> not simulated"), "{said}");
}

/// MuJoCo's `margin` (its collision driver: a contact exists while `dist < margin`): balls
/// falling on a plane make their first contact within a step's travel of `margin` (the
/// larger geom's, or the `<pair>`'s 0.04), a ball of no margin within a step's travel of the
/// plane (the speculative band of its speed, `(|v| + g dt) dt`, not the scene's 0.01
/// `prediction_distance`); all rest on the plane (hard contacts act at touching: the
/// `margin - gap` stand-off is not simulated, a warning says so).
#[test]
fn margin_decides_where_contacts_begin() {
    let ball = |n: &str, x: f64, attrs: &str| {
        format!(r#"<body name="{n}" pos="{x} 0 0.3"><freejoint/><geom name="{n}" type="sphere" size="0.05" {attrs}/></body>"#)
    };
    let bodies = [ball("m", 0.0, r#"margin="0.02""#), ball("mg", 0.5, r#"margin="0.02" gap="0.02""#), ball("none", 1.0, ""), ball("p", 1.5, r#"margin="0.02""#)].concat();
    let xml = format!(
        r#"<mujoco><worldbody><geom name="floor" type="plane" size="5 5 0.1"/>{bodies}</worldbody>
  <contact><pair geom1="floor" geom2="p" margin="0.04"/></contact></mujoco>"#
    );
    let mut w = world("margins", &xml);
    assert!(w.warnings().iter().any(|m| m.contains("3 acting at margin - gap > 0")), "{:?}", w.warnings());
    let names = ["m", "mg", "none", "p"];
    let ids: Vec<usize> = names.iter().map(|n| w.body_index(&format!("margins/{n}")).unwrap()).collect();
    let mut first: Vec<Option<(f64, f64)>> = vec![None; 4];
    for _ in 0..500 {
        w.step().unwrap();
        for (k, &b) in ids.iter().enumerate() {
            if first[k].is_none() {
                let c = w.contacts().iter().find(|c| c.body_a == b || c.body_b == b);
                first[k] = c.map(|c| (-c.depth, w.states()[b].linear.norm()));
            }
        }
    }
    let dt = w.dt();
    for (k, margin) in [0.02, 0.02, 0.0, 0.04].into_iter().enumerate() {
        let (gap, v) = first[k].unwrap();
        let travel = (v + 9.81 * dt) * dt;
        assert!(gap < margin + travel && gap > margin - travel, "ball {}: first contact {gap} m away, margin {margin}, step travel {travel}", names[k]);
        let h = z(&w, &format!("margins/{}", names[k]));
        assert!((h - 0.05).abs() < 1.5e-3, "ball {} at z = {h}, expected resting on the plane at 0.05", names[k]);
    }
}

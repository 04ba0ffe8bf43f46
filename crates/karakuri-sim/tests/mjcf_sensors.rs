//! An MJCF robot's sensors and equality constraints against MuJoCo itself: a double pendulum
//! driven by a motor, every supported sensor kind on it, stepped 0.2 s in both simulators
//! from the same keyframe; MuJoCo's `sensordata` (run through `python3 -c "import mujoco"`,
//! the test is skipped with a note when that fails) against `World::sensor`. And analytic
//! cases: a box resting on a floor touches with m·g, a connect closes a chain, a weld holds
//! a body fixed, a joint equality couples two pendulums, a fixed tendon's range holds, and
//! dm_control's ball-in-cup string holds its ball.

mod mujoco_live;

use std::path::{Path, PathBuf};

use karakuri_sim::{Scene, World};

/// A double pendulum: a hinge about y, then a hinge about x, a motor on the first (ctrl 0.5,
/// gear 2), sites turned away from their bodies' axes.
const PENDULUM: &str = r#"<mujoco model="sensed">
  <option timestep="0.0005"/>
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="shoulder" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.03" mass="1" contype="0" conaffinity="0"/>
      <site name="top" pos="0 0 0" euler="0 0 30"/>
      <body name="hand" pos="0 0 -0.5" euler="0 20 0">
        <joint name="wrist" type="hinge" axis="1 0 0"/>
        <geom type="sphere" size="0.05" pos="0.1 0 -0.3" mass="0.7" contype="0" conaffinity="0"/>
        <site name="wrist_site" pos="0 0.02 0" euler="10 0 0"/>
        <site name="tip" pos="0.1 0 -0.3" euler="30 40 50"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor name="drive" joint="shoulder" gear="2"/></actuator>
  <keyframe><key qpos="0.6 -0.4" ctrl="0.5"/></keyframe>
  <sensor>
    <jointpos name="q1" joint="shoulder"/>
    <jointvel name="v2" joint="wrist"/>
    <accelerometer name="acc" site="tip"/>
    <gyro name="gyro" site="tip"/>
    <velocimeter name="vel" site="tip"/>
    <force name="f_top" site="top"/>
    <torque name="t_top" site="top"/>
    <force name="f_wrist" site="wrist_site"/>
    <torque name="t_wrist" site="wrist_site"/>
    <framepos name="pos" objtype="site" objname="tip"/>
    <framequat name="quat" objtype="site" objname="tip"/>
    <framelinvel name="linvel" objtype="site" objname="tip"/>
    <frameangvel name="angvel" objtype="xbody" objname="hand"/>
    <framepos name="hand_pos" objtype="xbody" objname="hand"/>
    <actuatorfrc name="frc" actuator="drive"/>
  </sensor>
</mujoco>"#;

fn dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mjcf_sensors");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// MuJoCo's sensordata by sensor name after `steps` steps from the first keyframe, or `None`
/// (with a note) when `import mujoco` fails.
fn mujoco_readings(xml: &Path, steps: usize) -> Option<Vec<(String, Vec<f64>)>> {
    let script = format!(
        r#"import mujoco, json
m = mujoco.MjModel.from_xml_path({xml:?}); d = mujoco.MjData(m)
mujoco.mj_resetDataKeyframe(m, d, 0)
for _ in range({steps}): mujoco.mj_step(m, d)
mujoco.mj_forward(m, d)
print(json.dumps([[m.sensor(i).name, list(d.sensordata[m.sensor_adr[i]:m.sensor_adr[i] + m.sensor_dim[i]])] for i in range(m.nsensor)]))"#,
        xml = xml.display().to_string()
    );
    Some(serde_json::from_slice(&mujoco_live::run(&script)?).unwrap())
}

fn world_of(name: &str, xml: &str) -> (World, PathBuf) {
    let path = dir().join(format!("{name}.xml"));
    std::fs::write(&path, xml).unwrap();
    (World::new(Scene::from_file(&path).unwrap()).unwrap(), path)
}

#[test]
fn sensors_read_as_mujoco_reads_them() {
    let (mut w, path) = world_of("sensed", PENDULUM);
    assert!(!w.warnings().iter().any(|m| m.contains("sensors not simulated")), "{:?}", w.warnings());
    let steps = 400;
    for _ in 0..steps {
        w.step().unwrap();
    }
    let Some(reference) = mujoco_readings(&path, steps) else { return };
    assert_eq!(reference.len(), 15);
    for (name, mj) in &reference {
        let mut ours = w.sensor(&format!("sensed/{name}")).unwrap().to_vec();
        if name == "quat" {
            // karakuri's x y z w, w ≥ 0; MuJoCo's w x y z, either sign
            let s = if mj[0] < 0.0 { -1.0 } else { 1.0 };
            ours = vec![s * ours[3], s * ours[0], s * ours[1], s * ours[2]];
        }
        assert_eq!(ours.len(), mj.len(), "{name}");
        let scale = mj.iter().fold(1.0f64, |a, x| a.max(x.abs()));
        let err = ours.iter().zip(mj).fold(0.0f64, |a, (x, y)| a.max((x - y).abs())) / scale;
        println!("{name:>9}: karakuri {ours:?}\n           MuJoCo   {mj:?}  rel. error {err:.1e}");
        // both integrate the same semi-implicit Euler step: the states agree to rounding; the
        // readings of accelerations (accelerometer, force, torque) are karakuri's mean over the
        // last step and MuJoCo's at its end, O(dt) apart
        let by_acceleration = ["acc", "f_top", "t_top", "f_wrist", "t_wrist"].contains(&name.as_str());
        let tolerance = if by_acceleration { 1e-2 } else { 1e-9 };
        assert!(err < tolerance, "{name}: {err:.2e}");
    }
}

/// A 2 kg box resting on the floor (dropped from 2 cm): its touch site reads m·g, an accelerometer in it +g up,
/// a force sensor on a mass hanging below it by a hinge m·g along the link.
#[test]
fn touch_and_accelerometer_at_rest_read_the_weight() {
    let xml = r#"<mujoco model="rest">
  <option timestep="0.001"/>
  <worldbody>
    <geom type="plane" size="2 2 0.1"/>
    <body name="box" pos="0 0 0.12">
      <freejoint/>
      <geom type="box" size="0.1 0.1 0.1" mass="2"/>
      <site name="touch_zone" type="box" size="0.11 0.11 0.11"/>
      <site name="imu" pos="0.02 0 0"/>
    </body>
    <body name="post" pos="1 0 2">
      <body name="bob" pos="0 0 0">
        <joint name="swing" type="hinge" axis="0 1 0" damping="1"/>
        <geom type="sphere" size="0.05" pos="0 0 -0.5" mass="3"/>
        <site name="pivot"/>
      </body>
    </body>
  </worldbody>
  <sensor>
    <touch name="touch" site="touch_zone"/>
    <accelerometer name="acc" site="imu"/>
    <force name="hang" site="pivot"/>
  </sensor>
</mujoco>"#;
    // a free body's parent is the robot's root, which carries the world's geoms: parent/child
    // pairs must collide here
    let (_, path) = world_of("rest", xml);
    let text = "name: rest\nworld: {dt: 0.001}\ncontact: {exclude_parent_child: false}\nrobots: [{name: rest, mjcf: rest.xml}]\n";
    let scene = Scene::from_str(text, &path.with_extension("yaml").display().to_string()).unwrap();
    let mut w = World::new(scene).unwrap();
    w.run(1.0).unwrap();
    let g = 9.81;
    let touch = w.sensor("rest/touch").unwrap()[0];
    assert!((touch - 2.0 * g).abs() < 1e-3 * 2.0 * g, "touch {touch}");
    let acc = w.sensor("rest/acc").unwrap().to_vec();
    assert!(acc[0].abs() < 1e-3 && acc[1].abs() < 1e-3 && (acc[2] - g).abs() < 1e-3, "accelerometer {acc:?}");
    let hang = w.sensor("rest/hang").unwrap().to_vec();
    assert!(hang[0].abs() < 1e-9 && hang[1].abs() < 1e-9 && (hang[2] - 3.0 * g).abs() < 1e-9, "hanging {hang:?}");
}

/// A `connect` closes a three-link chain onto a world point (a parallelogram four-bar with the
/// ground link, one dof): its pin holds while the linkage swings under gravity; a `weld`
/// holds a free body where it starts, one with a `relpose` where that puts it (started 2 cm
/// off); an inactive weld holds nothing.
#[test]
fn connect_and_weld_hold() {
    let xml = r#"<mujoco model="closed">
  <option timestep="0.001"/>
  <worldbody>
    <body name="l1" pos="0 0 1">
      <joint name="j1" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.02" mass="1" contype="0" conaffinity="0"/>
      <body name="l2" pos="0.5 0 0">
        <joint name="j2" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.02" mass="1" contype="0" conaffinity="0"/>
        <body name="l3" pos="0 0 -0.5">
          <joint name="j3" type="hinge" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 -0.5 0 0" size="0.02" mass="1" contype="0" conaffinity="0"/>
        </body>
      </body>
    </body>
    <body name="held" pos="2 0 1">
      <freejoint/>
      <geom type="sphere" size="0.1" mass="1" contype="0" conaffinity="0"/>
    </body>
    <body name="posed" pos="0 0.12 -0.2" euler="0 0 -90">
      <freejoint/>
      <geom type="sphere" size="0.1" mass="1" contype="0" conaffinity="0"/>
    </body>
    <body name="loose" pos="3 0 1">
      <freejoint/>
      <geom type="sphere" size="0.1" mass="1" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <equality>
    <connect body1="l3" body2="world" anchor="-0.5 0 0"/>
    <weld body1="held"/>
    <weld body1="posed" relpose="0.1 0 0.2 0.7071067811865476 0 0 0.7071067811865476"/>
    <weld body1="loose" active="false"/>
  </equality>
</mujoco>"#;
    let (mut w, _) = world_of("closed", xml);
    let q = |w: &World| ["j1", "j2", "j3"].map(|j| w.joint_position(&format!("closed/{j}")).unwrap());
    // the end of l3 in the world, the links turning about y (x–z plane): R_y(a) takes x to
    // (cos a, −sin a) and −z to (−sin a, −cos a)
    let end = |[q1, q2, q3]: [f64; 3]| {
        let (a1, a2, a3) = (q1, q1 + q2, q1 + q2 + q3);
        let x = 0.5 * a1.cos() - 0.5 * a2.sin() - 0.5 * a3.cos();
        let z = 1.0 - 0.5 * a1.sin() - 0.5 * a2.cos() + 0.5 * a3.sin();
        (x, z)
    };
    let mut worst = 0.0f64;
    for _ in 0..10 {
        w.run(0.1).unwrap();
        let (x, z) = end(q(&w));
        worst = worst.max(x.abs()).max((z - 0.5).abs());
    }
    let qs = q(&w);
    assert!(qs[0].abs() > 0.1, "the linkage did not swing: {qs:?}");
    assert!(worst < 1e-6, "the pin drifted {worst} m, q = {qs:?}");
    let held = w.state("closed/held").unwrap().pose.translation;
    assert!((held - nalgebra::Vector3::new(2.0, 0.0, 1.0)).norm() < 1e-6, "held at {held:?}");
    // relpose: the world's frame (body2) at (0.1, 0, 0.2), turned 90° about z, in posed's:
    // posed at −R_z(−90°) (0.1, 0, 0.2) = (0, 0.1, −0.2), turned −90° about z
    let posed = w.state("closed/posed").unwrap().pose;
    assert!((posed.translation - nalgebra::Vector3::new(0.0, 0.1, -0.2)).norm() < 1e-6, "posed at {:?}", posed.translation);
    let x_axis = posed.rotation * nalgebra::Vector3::x();
    assert!((x_axis - nalgebra::Vector3::new(0.0, -1.0, 0.0)).norm() < 1e-6, "posed turned to {x_axis:?}");
    let loose = w.state("closed/loose").unwrap().pose.translation;
    let fallen = 0.5 * 9.81 * 1.0f64.powi(2);
    assert!((loose.z - (1.0 - fallen)).abs() < 2e-2, "the inactive weld held: {loose:?}");
}

/// Two hinged pendulums side by side, coupled by `<joint joint1="a" joint2="b"
/// polycoef="0 2 0 0 0">` (q_a = 2 q_b): they fall together and keep q_a = 2 q_b to rounding
/// (the row is linear in q, so the velocity rows hold it exactly); a quadratic `polycoef` is
/// not simulated and said so.
#[test]
fn a_joint_equality_couples_two_falling_pendulums() {
    let xml = |poly: &str| {
        format!(
            r#"<mujoco model="coupled">
  <option timestep="0.001"/>
  <worldbody>
    <body name="pa" pos="0 0 1">
      <joint name="a" type="hinge" axis="0 1 0"/>
      <geom type="sphere" size="0.05" pos="0 0 -0.5" mass="1" contype="0" conaffinity="0"/>
    </body>
    <body name="pb" pos="1 0 1">
      <joint name="b" type="hinge" axis="0 1 0"/>
      <geom type="sphere" size="0.05" pos="0 0 -0.3" mass="2" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <equality><joint joint1="a" joint2="b" polycoef="{poly}"/></equality>
  <keyframe><key qpos="0.8 0.4"/></keyframe>
</mujoco>"#
        )
    };
    let (mut w, _) = world_of("coupled", &xml("0 2 0 0 0"));
    assert!(!w.warnings().iter().any(|m| m.contains("equalities or tendon ranges not simulated")), "{:?}", w.warnings());
    let mut worst = 0.0f64;
    let mut lowest = f64::INFINITY;
    for _ in 0..1000 {
        w.step().unwrap();
        let (qa, qb) = (w.joint_position("coupled/a").unwrap(), w.joint_position("coupled/b").unwrap());
        worst = worst.max((qa - 2.0 * qb).abs());
        lowest = lowest.min(qb);
    }
    println!("q_a − 2 q_b: largest {worst:.1e} over 1 s (q_b down to {lowest:.3})");
    assert!(lowest < 0.0, "they did not swing through the bottom: {lowest}");
    assert!(worst < 1e-9, "q_a − 2 q_b reached {worst}");
    let (w, _) = world_of("coupled_quadratic", &xml("0 2 0.5 0 0"));
    let said = w.warnings().join("\n");
    assert!(said.contains("1 MJCF joint/tendon equalities or tendon ranges not simulated: coupled_quadratic/equality0"), "{said}");
}

/// A double pendulum released from horizontal with a fixed tendon `L = q1 + q2` limited to
/// [−0.5, 0.5] (the absolute angle of the second link): unlimited, its L passes 1 within the
/// second; limited, L stays within the range but for the speculative rows' tolerance (one
/// step's approach, at most |L̇| dt) and reaches the bound.
#[test]
fn a_fixed_tendon_range_holds() {
    let xml = |limited: &str| {
        format!(
            r#"<mujoco model="tendon">
  <option timestep="0.001"/>
  <worldbody>
    <body name="l1" pos="0 0 2">
      <joint name="j1" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.02" mass="1" contype="0" conaffinity="0"/>
      <body name="l2" pos="0.5 0 0">
        <joint name="j2" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.02" mass="1" contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
  <tendon><fixed name="absolute" limited="{limited}" range="-0.5 0.5"><joint joint="j1" coef="1"/><joint joint="j2" coef="1"/></fixed></tendon>
</mujoco>"#
        )
    };
    let extremes = |name: &str, limited: &str| {
        let (mut w, _) = world_of(name, &xml(limited));
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for _ in 0..1000 {
            w.step().unwrap();
            let l = w.joint_position(&format!("{name}/j1")).unwrap() + w.joint_position(&format!("{name}/j2")).unwrap();
            (lo, hi) = (lo.min(l), hi.max(l));
        }
        (lo, hi)
    };
    let (_, free_hi) = extremes("tendon_free", "false");
    assert!(free_hi > 1.0, "unlimited, L only reached {free_hi}");
    let (lo, hi) = extremes("tendon", "true");
    println!("L = q1 + q2: unlimited up to {free_hi:.3}, limited to [−0.5, 0.5] within [{lo:.5}, {hi:.5}]");
    assert!(lo > -0.5 - 1e-3 && hi < 0.5 + 1e-2, "L within [{lo}, {hi}]");
    assert!(hi > 0.5 - 1e-3, "L never reached its bound: {hi}");
}

/// dm_control's ball-in-cup: a 0.3 m string (a spatial tendon between the ball's and the cup's
/// sites, `range="0 0.3"`) catches the ball 8 mm below its start and holds it under the cup,
/// which sinks on its springs under the ball's weight: the string never stretches past
/// 0.3 m (but for the speculative rows' tolerance), and the ball and the cup end where MuJoCo
/// puts them (5 mm: MuJoCo's limit is soft).
#[test]
fn ball_in_cup_string_holds() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/mjcf/dm_control/ball_in_cup.xml");
    let mut w = World::new(Scene::from_file(&path).unwrap()).unwrap();
    assert!(!w.warnings().iter().any(|m| m.contains("tendon")), "{:?}", w.warnings());
    let site = |w: &World, body: &str, z: f64| {
        let x = w.state(&format!("ball_in_cup/{body}")).unwrap().pose;
        x.translation + x.rotation * nalgebra::Vector3::new(0.0, 0.0, z)
    };
    let mut longest = 0.0f64;
    for _ in 0..1000 {
        w.step().unwrap();
        longest = longest.max((site(&w, "cup", -0.108) - site(&w, "ball", 0.0)).norm());
    }
    let (ball_z, cup_z) = (w.joint_position("ball_in_cup/ball_z").unwrap(), w.joint_position("ball_in_cup/cup_z").unwrap());
    println!("string: longest {longest:.5} m (range 0.3); ball_z {ball_z:.5}, cup_z {cup_z:.5}");
    assert!(longest < 0.3 + 1e-3, "the string stretched to {longest}");
    assert!(longest > 0.3 - 1e-3, "the string never pulled: {longest}");
    // the ball (from z 0.2) would fall to the floor (ball_z −0.175) without it
    assert!(ball_z > -0.15, "ball_z {ball_z}");
    let Some(reference) = mujoco_positions(&path, 1000) else { return };
    println!("MuJoCo: ball_z {:.5}, cup_z {:.5}", reference[3], reference[1]);
    assert!((ball_z - reference[3]).abs() < 5e-3 && (cup_z - reference[1]).abs() < 5e-3, "MuJoCo: {reference:?}");
}

/// MuJoCo's qpos after `steps` steps from qpos0, or `None` (with a note) without MuJoCo.
fn mujoco_positions(xml: &Path, steps: usize) -> Option<Vec<f64>> {
    let script = format!(
        r#"import mujoco, json
m = mujoco.MjModel.from_xml_path({xml:?}); d = mujoco.MjData(m)
for _ in range({steps}): mujoco.mj_step(m, d)
print(json.dumps(list(d.qpos)))"#,
        xml = xml.display().to_string()
    );
    Some(serde_json::from_slice(&mujoco_live::run(&script)?).unwrap())
}

/// The new kinds in a scene file: a hinged arm driven by a constant torque 0.5 (saturated at
/// 0.4 by its effort limit) and a box resting on the ground; the joint sensors read the joint,
/// the actuator force the applied torque, the frame sensors the world's body states, touch
/// the box's weight; a joint sensor given a body, or an actuator force on an unknown joint,
/// is an error naming the key.
#[test]
fn scene_files_use_the_new_kinds() {
    let text = r#"
name: kinds
world: {dt: 0.001}
bodies:
  - name: arm
    mass: 1
    com: [0, 0, -0.5]
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    pose_in_parent: {position: [0, 0, 1]}
    joints: [{type: revolute, name: hinge, axis: [1, 0, 0], actuator: {mode: torque, target: 0.5, effort_limit: 0.4}}]
  - {name: ground, shapes: [{type: plane}]}
  - name: box
    mass: 2
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    joints: [{type: free, q0: {position: [3, 0, 0.11]}}]
    shapes: [{type: box, half_extents: [0.1, 0.1, 0.1]}]
sensors:
  - {name: q, type: joint_position, joint: hinge}
  - {name: v, type: joint_velocity, joint: hinge}
  - {name: tau, type: actuator_force, joint: hinge}
  - {name: pos, type: frame_position, body: arm, pose: {position: [0, 0, -0.5]}}
  - {name: quat, type: frame_quaternion, body: arm}
  - {name: lin, type: frame_linear_velocity, body: arm, pose: {position: [0, 0, -0.5]}}
  - {name: ang, type: frame_angular_velocity, body: arm}
  - {name: vel, type: velocimeter, body: arm, pose: {position: [0, 0, -0.5]}}
  - {name: touch, type: touch, body: box}
  - {name: f, type: force3, joint: hinge}
  - {name: t, type: torque, joint: hinge}
"#;
    let mut w = World::new(Scene::from_str(text, "kinds.yaml").unwrap()).unwrap();
    w.run(0.5).unwrap();
    let read = |w: &World, n: &str| w.sensor(n).unwrap().to_vec();
    let (q, v) = (w.joint_position("hinge").unwrap(), w.joint_velocity("hinge").unwrap());
    assert_eq!(read(&w, "q"), vec![q]);
    assert_eq!(read(&w, "v"), vec![v]);
    assert_eq!(read(&w, "tau"), vec![0.4]);
    // the arm turns about x: the point 0.5 below the hinge
    let s = w.state("arm").unwrap();
    let tip = s.pose.translation + s.pose.rotation * nalgebra::Vector3::new(0.0, 0.0, -0.5);
    let pos = read(&w, "pos");
    assert!((nalgebra::Vector3::new(pos[0], pos[1], pos[2]) - tip).norm() < 1e-12, "{pos:?} vs {tip:?}");
    let expected = nalgebra::Vector3::new(0.0, 0.5 * q.cos(), 0.5 * q.sin()) * v;
    let lin = read(&w, "lin");
    assert!((nalgebra::Vector3::new(lin[0], lin[1], lin[2]) - expected).norm() < 1e-12, "{lin:?} vs {expected:?}");
    let vel = read(&w, "vel");
    assert!((vel[1] - 0.5 * v).abs() < 1e-12 && vel[0].abs() < 1e-12 && vel[2].abs() < 1e-12, "{vel:?}");
    assert!((read(&w, "ang")[0] - v).abs() < 1e-12);
    let quat = read(&w, "quat");
    assert!((quat[0] - (q / 2.0).sin().abs()).abs() < 1e-12 && (quat[3] - (q / 2.0).cos()).abs() < 1e-12, "{quat:?} at q {q}");
    assert!((read(&w, "touch")[0] - 2.0 * 9.81).abs() < 2e-2, "{:?}", read(&w, "touch"));
    assert_eq!(read(&w, "f").len(), 3);
    assert_eq!(read(&w, "t").len(), 3);
    for (bad, key) in [
        ("  - {name: bad, type: joint_position, body: arm}\n", "sensors[11].body"),
        ("  - {name: bad, type: actuator_force, joint: free_box}\n", "sensors[11].joint"),
    ] {
        let err = Scene::from_str(&format!("{text}{bad}"), "kinds.yaml").and_then(World::new).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains(key), "{bad}: {err}");
    }
}

//! MJCF actuators carried as joint forces (decision 0070) against MuJoCo 4.0 itself: fixed
//! tendon transmissions with affine bias, `filter`, `filterexact` and `integrator` (with
//! `actrange`) activation dynamics, a second actuator on a joint saturated by its `forcerange`;
//! a hanging three-link leg stepped 0.8 s in both simulators from the same keyframe, MuJoCo's
//! qpos (run through `python3 -c "import mujoco"`, skipped with a note when that fails) against
//! `World::joint_position`. And dm_control's quadruped, whose 12 actuators are all of these
//! kinds, stands at MuJoCo's height.

mod mujoco_live;

use std::path::{Path, PathBuf};

use karakuri_sim::{Scene, World};

/// A leg hanging from the world (pitch, knee, ankle about y), dm_control quadruped's `lift` and
/// `extend` tendons on it, five actuators: two on the tendons (filter, filterexact, affine
/// bias: a spring along the tendon), an integrator on the knee (activation clamped to ±0.5 after
/// 0.5 s), a motor on the ankle (a scene actuator) and a second one there saturated at 0.2 N·m.
const LEG: &str = r#"<mujoco model="leg">
  <compiler angle="radian"/>
  <option timestep="0.002"/>
  <default>
    <joint type="hinge" axis="0 1 0" damping="0.05" armature="0.01"/>
    <geom type="capsule" size="0.03" density="500"/>
  </default>
  <worldbody>
    <body name="thigh" pos="0 0 1">
      <joint name="pitch"/>
      <geom fromto="0 0 0 0.1 0 -0.3"/>
      <body name="shin" pos="0.1 0 -0.3">
        <joint name="knee"/>
        <geom fromto="0 0 0 -0.05 0 -0.3"/>
        <body name="foot" pos="-0.05 0 -0.3">
          <joint name="ankle"/>
          <geom fromto="0 0 0 0.1 0 -0.05"/>
        </body>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="lift"><joint joint="pitch" coef=".5"/><joint joint="ankle" coef="-.5"/></fixed>
    <fixed name="extend"><joint joint="pitch" coef=".25"/><joint joint="knee" coef="-.5"/><joint joint="ankle" coef=".25"/></fixed>
  </tendon>
  <actuator>
    <general name="lift" tendon="lift" gear="1.5" gainprm="20" biasprm="0 -20 -0.5" biastype="affine" dyntype="filter" dynprm=".05"/>
    <general name="extend" tendon="extend" gainprm="10" biasprm="0 -10" biastype="affine" dyntype="filterexact" dynprm=".1"/>
    <general name="push" joint="knee" gear="2" dyntype="integrator" actlimited="true" actrange="-.5 .5"/>
    <motor name="turn" joint="ankle" gear="0.3"/>
    <motor name="second" joint="ankle" gear="0.5" forcelimited="true" forcerange="-.2 .2"/>
  </actuator>
  <keyframe><key qpos="0.3 -0.4 0.2" ctrl="0.4 -0.3 0.2 0.1 1"/></keyframe>
</mujoco>"#;

fn dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mjcf_actuators");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// MuJoCo's qpos after each of `steps` steps from the first keyframe (or qpos0), or `None`
/// (with a note) when `import mujoco` fails.
fn mujoco_qpos(xml: &Path, steps: usize) -> Option<Vec<Vec<f64>>> {
    let script = format!(
        r#"import mujoco, json
m = mujoco.MjModel.from_xml_path({xml:?}); d = mujoco.MjData(m)
if m.nkey: mujoco.mj_resetDataKeyframe(m, d, 0)
out = []
for _ in range({steps}):
    mujoco.mj_step(m, d); out.append(list(d.qpos))
print(json.dumps(out))"#,
        xml = xml.display().to_string()
    );
    Some(serde_json::from_slice(&mujoco_live::run(&script)?).unwrap())
}

#[test]
fn tendon_and_activation_actuators_move_the_leg_as_mujoco_does() {
    let path = dir().join("leg.xml");
    std::fs::write(&path, LEG).unwrap();
    let mut w = World::new(Scene::from_file(&path).unwrap()).unwrap();
    assert!(w.warnings().iter().any(|m| m.contains("4 actuators") && m.contains("joint forces")), "{:?}", w.warnings());
    assert!(!w.warnings().iter().any(|m| m.contains("not simulated yet")), "{:?}", w.warnings());
    let steps = 400;
    let joints = ["leg/pitch", "leg/knee", "leg/ankle"];
    let mut ours = vec![];
    for _ in 0..steps {
        w.step().unwrap();
        ours.push(joints.iter().map(|j| w.joint_position(j).unwrap()).collect::<Vec<_>>());
    }
    let Some(reference) = mujoco_qpos(&path, steps) else { return };
    // the leg swings (the forces matter): it moves by tenths of a radian
    let travel = (0..3).map(|i| (reference[steps - 1][i] - reference[0][i]).abs()).fold(0.0, f64::max);
    assert!(travel > 0.1, "{travel}");
    let mut worst = 0.0f64;
    for (k, (a, b)) in ours.iter().zip(&reference).enumerate() {
        for i in 0..3 {
            let e = (a[i] - b[i]).abs();
            assert!(e < 1e-9, "step {}: {} karakuri {} MuJoCo {}", k + 1, joints[i], a[i], b[i]);
            worst = worst.max(e);
        }
    }
    // both integrate MuJoCo's Euler step (damping implicit, actuator forces explicit): the
    // same arithmetic up to rounding
    println!("worst |q − q_MuJoCo| over {steps} steps: {worst:.1e} rad");
}

/// dm_control's quadruped (no keyframe: ctrl 0, so each actuator is a spring `−1000 L` along
/// its tendon or joint) stands 2 s later within 2 cm of MuJoCo's torso height (`mj_step` × 400,
/// then `mj_kinematics`; without its actuators both engines end at 0.200 m), no contact deeper
/// than the penetration tolerance.
#[test]
fn dm_control_quadruped_stands_at_mujocos_height() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/mjcf/dm_control/quadruped.xml");
    let scene = Scene::from_file(&path).unwrap();
    let tolerance = scene.contact.penetration_tolerance;
    let mut w = World::new(scene).unwrap();
    w.run(2.0).unwrap();
    let z = w.state("quadruped/torso").unwrap().pose.translation.z;
    // its actuators drive the whole tree (as the world's actuators do, they keep it awake)
    let robot = w.bodies().iter().filter(|b| b.name.starts_with("quadruped/") && b.name != "quadruped/ball").count();
    assert!(w.sleeping_bodies().unwrap() <= w.bodies().len() - robot, "{}", w.sleeping_bodies().unwrap());
    // the feet on the floor within the tolerance; the ball that fell on the back rests at it
    // (1.005 mm of 1 mm: the depth the error correction settles at)
    for c in w.contacts() {
        let (a, b) = (&w.bodies()[c.body_a].name, &w.bodies()[c.body_b].name);
        println!("{a} – {b}: depth {:.3e} m", c.depth);
        let bound = if b.ends_with("/ball") { 1.01 * tolerance } else { tolerance };
        assert!(c.depth <= bound, "{a} – {b}: {}", c.depth);
    }
    let script = format!(
        r#"import mujoco
m = mujoco.MjModel.from_xml_path({:?}); d = mujoco.MjData(m)
for _ in range(400): mujoco.mj_step(m, d)
mujoco.mj_kinematics(m, d); print(d.xpos[m.body('torso').id][2])"#,
        path.display().to_string()
    );
    let Some(out) = mujoco_live::run(&script) else { return };
    let mj: f64 = String::from_utf8_lossy(&out).trim().parse().unwrap();
    println!("MuJoCo's torso at {mj:.4} m");
    // 2 cm: issue 29's bound for a standing robot (MuJoCo's toes sink 1.75 mm in its soft
    // contacts, its couplings and limits give; four splayed legs on friction hold a state the
    // landing chose, and MuJoCo's ball bounces off the back where karakuri's does not)
    assert!((z - mj).abs() < 0.02, "torso at {z} m, MuJoCo's at {mj} m");
}

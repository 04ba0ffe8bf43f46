//! Extra joints closing loops (Choreonoid's ExtraJoint: `loop_constraints[].type` piston, ball,
//! revolute, weld) against analytic answers: free fall along a piston's axis, the compound
//! pendulum's period through a weld and through a ball joint, the kinematic closure of a
//! four-bar built from robot links.

use std::f64::consts::PI;
use std::path::PathBuf;

use karakuri_sim::{Scene, World};

const G: f64 = 9.81;

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("karakuri-sim-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The rotation angle about +y of a rotation about y (`R = R_y(θ)`).
fn angle_about_y(r: &nalgebra::Matrix3<f64>) -> f64 {
    r[(0, 2)].atan2(r[(2, 2)])
}

/// The mean period of `x(t)` from its upward zero crossings (linear interpolation), over
/// whole periods.
fn period(t: &[f64], x: &[f64]) -> f64 {
    let mut up = vec![];
    for k in 1..x.len() {
        if x[k - 1] < 0.0 && x[k] >= 0.0 {
            up.push(t[k - 1] + (t[k] - t[k - 1]) * (-x[k - 1]) / (x[k] - x[k - 1]));
        }
    }
    assert!(up.len() >= 3, "too few crossings: {up:?}");
    (up[up.len() - 1] - up[0]) / (up.len() - 1) as f64
}

/// The complete elliptic integral of the first kind K(k) (arithmetic-geometric mean).
fn ellip_k(k: f64) -> f64 {
    let (mut a, mut b) = (1.0, (1.0 - k * k).sqrt());
    for _ in 0..30 {
        (a, b) = ((a + b) / 2.0, (a * b).sqrt());
    }
    PI / (2.0 * a)
}

#[test]
fn piston_keeps_its_slider_on_the_axis_while_it_falls_freely_along_it() {
    // axis through (0, 0, 2) along u = (1, 0, -1)/√2 (world); gravity -z: along the axis the
    // slider falls with g/√2, its other component (g/√2 normal to the axis) is carried by the
    // joint; the slider also spins freely about the axis (spherical inertia: no gyroscopic torque)
    let s2 = 0.5f64.sqrt();
    let spin = 3.0;
    let text = format!(
        r#"
name: piston
world: {{gravity: [0, 0, -{G}], dt: 0.001}}
bodies:
  - name: slider
    mass: 2
    inertia: [[0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]]
    joints: [{{type: free, name: slide, q0: {{position: [0, 0, 2]}}, qd0: {{angular: [{wx}, 0, {wz}]}}}}]
    shapes: [{{type: box, half_extents: [0.1, 0.1, 0.1], collide: false}}]
loop_constraints:
  - {{type: piston, body_a: world, anchor_a: [0, 0, 2], body_b: slider, axis_a: [{s2}, 0, -{s2}]}}
"#,
        wx = spin * s2,
        wz = -spin * s2
    );
    let mut w = World::new(Scene::from_str(&text, "piston.yaml").unwrap()).unwrap();
    let u = nalgebra::Vector3::new(s2, 0.0, -s2);
    let p0 = nalgebra::Vector3::new(0.0, 0.0, 2.0);
    let (dt, a) = (w.dt(), G * s2);
    let mut worst_off_axis: f64 = 0.0;
    for n in 1..=1000u64 {
        w.step().unwrap();
        let st = w.state("slider").unwrap();
        let d = st.pose.translation - p0;
        let s = d.dot(&u);
        worst_off_axis = worst_off_axis.max((d - s * u).norm());
        // the semi-implicit Euler step of free fall: s_n = a dt² n (n + 1) / 2 ...
        let discrete = a * dt * dt * (n * (n + 1)) as f64 / 2.0;
        assert!((s - discrete).abs() < 1e-9, "step {n}: s = {s}, discrete free fall {discrete}");
        // ... within a dt t / 2 of the analytic a t² / 2
        let t = n as f64 * dt;
        assert!((s - a * t * t / 2.0).abs() <= a * dt * t / 2.0 + 1e-9, "t = {t}: s = {s}");
        // rotation about the axis is free: the spin is kept, no other rotation appears
        let om = st.angular;
        assert!((om.dot(&u) - spin).abs() < 1e-9 && (om - spin * u).norm() < 1e-6, "t = {t}: ω = {om:?}");
    }
    assert!(worst_off_axis < 1e-5, "off the axis by {worst_off_axis:e} m");
    eprintln!("piston: worst distance from the axis over 1 s {worst_off_axis:.2e} m");
}

/// A fixed-base robot `arm`: one link `link` hinged about y at the base, its centre of mass
/// 0.5 m below the hinge; and a fixed tip link `tip` merged into it, 0.8 m below the hinge.
fn arm_urdf(dir: &std::path::Path) -> PathBuf {
    let urdf = r#"<robot name="arm">
  <link name="base"/>
  <link name="link">
    <inertial><origin xyz="0 0 -0.5"/><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <link name="tip"/>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="link"/><axis xyz="0 1 0"/></joint>
  <joint name="tip_fix" type="fixed"><parent link="link"/><child link="tip"/><origin xyz="0 0 -0.8"/></joint>
</robot>
"#;
    let p = dir.join("arm.urdf");
    std::fs::write(&p, urdf).unwrap();
    p
}

#[test]
fn weld_holds_a_body_to_a_robot_link_and_swings_as_one_compound_pendulum() {
    // a 0.5 kg box welded to the arm's merged tip link (0.8 m below the hinge): relative pose
    // kept within 1e-6, and the small-oscillation period that of the compound pendulum
    // 2π √(I_o / (g Σ m d))
    let dir = temp_dir("weld");
    let urdf = arm_urdf(&dir);
    let q0: f64 = 0.05;
    let (m2, d2, i2) = (0.5, 0.8, 0.5 * (0.1f64.powi(2) + 0.1f64.powi(2)) / 3.0);
    let (sq, cq) = (q0.sin(), q0.cos());
    let text = format!(
        r#"
name: weld
world: {{gravity: [0, 0, -{G}], dt: 0.001}}
robots:
  - {{name: arm, urdf: {urdf}, root: fixed, pose: {{position: [0, 0, 2]}}, q0: {{hinge: {q0}}}}}
bodies:
  - name: box
    mass: {m2}
    inertia: [[{i2}, 0, 0], [0, {i2}, 0], [0, 0, {i2}]]
    joints: [{{type: free, name: box_free, q0: {{position: [{x}, 0, {z}], orientation: [0, {qy}, 0, {qw}]}}}}]
    shapes: [{{type: box, half_extents: [0.1, 0.1, 0.1], collide: false}}]
loop_constraints:
  - {{type: weld, body_a: arm/tip, body_b: box}}
"#,
        urdf = urdf.display(),
        x = -d2 * sq,
        z = 2.0 - d2 * cq,
        qy = (q0 / 2.0).sin(),
        qw = (q0 / 2.0).cos(),
    );
    let mut w = World::new(Scene::from_str(&text, dir.join("weld.yaml").to_str().unwrap()).unwrap()).unwrap();
    let rel = |w: &World| {
        let (a, b) = (w.state("arm/link").unwrap().pose, w.state("box").unwrap().pose);
        a.inverse().compose(&b)
    };
    let rel0 = rel(&w);
    assert!((rel0.translation - nalgebra::Vector3::new(0.0, 0.0, -d2)).norm() < 1e-12, "{rel0:?}");
    let (mut ts, mut qs) = (vec![], vec![]);
    let mut drift: f64 = 0.0;
    for _ in 0..6000 {
        w.step().unwrap();
        let r = rel(&w);
        drift = drift
            .max((r.translation - rel0.translation).norm())
            .max((r.rotation - rel0.rotation).abs().max());
        ts.push(w.time());
        qs.push(w.joint_position("arm/hinge").unwrap());
    }
    assert!(drift < 1e-6, "relative pose drift {drift:e}");
    let (m1, d1, i1) = (1.0, 0.5, 0.01);
    let i_o = i1 + m1 * d1 * d1 + i2 + m2 * d2 * d2;
    let want = 2.0 * PI * (i_o / (G * (m1 * d1 + m2 * d2))).sqrt() * (2.0 / PI) * ellip_k((q0 / 2.0).sin());
    let got = period(&ts, &qs);
    assert!((got / want - 1.0).abs() < 1e-4, "period {got} s, compound pendulum {want} s");
    eprintln!("weld: drift {drift:.2e}, period {got:.6} s vs {want:.6} s");
}

#[test]
fn ball_joint_pendulum_swings_with_the_period_of_the_tree_pendulum() {
    // the same rigid body (1 kg, centre of mass d = 0.4 m below the pivot) hung from the pivot
    // by a hinge (tree) and, free, by a ball joint (loop), released at 0.6 rad in the x-z
    // plane: both periods within 1e-4 of the large-amplitude period 4 √(I_o / (m g d)) K(sin θ0/2)
    let (d, th0) = (0.4, 0.6f64);
    let (ixx, iyy, izz) = (0.02, 0.03, 0.01);
    let text = format!(
        r#"
name: ball
world: {{gravity: [0, 0, -{G}], dt: 0.001}}
bodies:
  - name: tree
    pose_in_parent: {{position: [0, 0, 1]}}
    mass: 1
    com: [0, 0, -{d}]
    inertia: [[{ixx}, 0, 0], [0, {iyy}, 0], [0, 0, {izz}]]
    joints: [{{name: hinge, type: revolute, axis: [0, 1, 0], q0: {th0}}}]
  - name: loose
    mass: 1
    inertia: [[{ixx}, 0, 0], [0, {iyy}, 0], [0, 0, {izz}]]
    joints: [{{type: free, name: loose_free, q0: {{position: [{x}, 3, {z}], orientation: [0, {qy}, 0, {qw}]}}}}]
loop_constraints:
  - {{type: ball, body_a: world, anchor_a: [0, 3, 1], body_b: loose, anchor_b: [0, 0, {d}]}}
"#,
        x = -d * th0.sin(),
        z = 1.0 - d * th0.cos(),
        qy = (th0 / 2.0).sin(),
        qw = (th0 / 2.0).cos(),
    );
    let mut w = World::new(Scene::from_str(&text, "ball.yaml").unwrap()).unwrap();
    let (mut ts, mut a_tree, mut a_ball) = (vec![], vec![], vec![]);
    let mut off_plane: f64 = 0.0;
    for _ in 0..5000 {
        w.step().unwrap();
        ts.push(w.time());
        a_tree.push(angle_about_y(&w.state("tree").unwrap().pose.rotation));
        let st = w.state("loose").unwrap();
        a_ball.push(angle_about_y(&st.pose.rotation));
        off_plane = off_plane.max((st.pose.translation.y - 3.0).abs());
    }
    let want = 4.0 * ((iyy + d * d) / (G * d)).sqrt() * ellip_k((th0 / 2.0).sin());
    let (t_tree, t_ball) = (period(&ts, &a_tree), period(&ts, &a_ball));
    assert!((t_tree / want - 1.0).abs() < 1e-4, "tree {t_tree} s vs {want} s");
    assert!((t_ball / want - 1.0).abs() < 1e-4, "ball {t_ball} s vs {want} s");
    assert!((t_ball / t_tree - 1.0).abs() < 1e-5, "ball {t_ball} s vs tree {t_tree} s");
    assert!(off_plane < 1e-9, "the ball pendulum left its plane by {off_plane:e} m");
    eprintln!("ball: periods tree {t_tree:.6} s, ball {t_ball:.6} s, analytic {want:.6} s");
}

/// Rocker-tip position of the planar four-bar (ground pivots (0, 0) and (d, 0), crank a,
/// coupler b, rocker c) for crank angle θ2, on the branch with the tip above the line from the
/// crank tip to the rocker pivot: returns the rocker's absolute angle θ4.
fn fourbar_rocker(th2: f64, [a, b, c, d]: [f64; 4]) -> f64 {
    let pb = nalgebra::Vector2::new(a * th2.cos(), a * th2.sin());
    let o4 = nalgebra::Vector2::new(d, 0.0);
    let e = o4 - pb;
    let l = e.norm();
    // circle (pb, b) ∩ circle (o4, c)
    let x = (b * b - c * c + l * l) / (2.0 * l);
    let h = (b * b - x * x).sqrt();
    let n = nalgebra::Vector2::new(-e.y, e.x) / l;
    let tip = pb + e * (x / l) + n * h;
    (tip.y).atan2(tip.x - d)
}

#[test]
fn revolute_extra_joint_closes_a_four_bar_built_from_robot_links() {
    // crank (a = 0.2) and coupler (b = 0.6) in series, rocker (c = 0.5) from the other ground
    // pivot (d = 0.5), all robot links; the coupler's tip is hinged to the rocker's tip by a
    // revolute extra joint. Released from rest it swings under gravity; at every step the
    // rocker angle is the one the loop's geometry gives for the crank angle (Grashof crank-rocker)
    let dims = [0.2, 0.6, 0.5, 0.5];
    let [a, b, c, d] = dims;
    let rod = |name: &str, len: f64| {
        let m = len; // 1 kg/m
        let i = m * len * len / 12.0;
        format!(
            r#"<link name="{name}"><inertial><origin xyz="{h} 0 0"/><mass value="{m}"/><inertia ixx="1e-5" iyy="{i}" izz="{i}" ixy="0" ixz="0" iyz="0"/></inertial></link>"#,
            h = len / 2.0
        )
    };
    // hinges about -y: a positive angle turns +x towards +z (the x-z plane's usual angle)
    let urdf = format!(
        r#"<robot name="bar">
  <link name="ground"/>
  {crank}{coupler}{rocker}
  <joint name="crank_j" type="continuous"><parent link="ground"/><child link="crank"/><axis xyz="0 -1 0"/></joint>
  <joint name="coupler_j" type="continuous"><parent link="crank"/><child link="coupler"/><origin xyz="{a} 0 0"/><axis xyz="0 -1 0"/></joint>
  <joint name="rocker_j" type="continuous"><parent link="ground"/><child link="rocker"/><origin xyz="{d} 0 0"/><axis xyz="0 -1 0"/></joint>
</robot>
"#,
        crank = rod("crank", a),
        coupler = rod("coupler", b),
        rocker = rod("rocker", c)
    );
    let dir = temp_dir("fourbar");
    std::fs::write(dir.join("bar.urdf"), urdf).unwrap();
    let th2 = 1.2f64;
    let th4 = fourbar_rocker(th2, dims);
    let tip = nalgebra::Vector2::new(d + c * th4.cos(), c * th4.sin());
    let th3 = (tip.y - a * th2.sin()).atan2(tip.x - a * th2.cos());
    let text = format!(
        r#"
name: fourbar
world: {{gravity: [0, 0, -{G}], dt: 0.001}}
# the projection keeps the loop closed to 1e-10 m (the default 1e-6 m leaves ~4e-6 rad here)
engine: {{loop_tolerance: 1e-10}}
robots:
  - {{name: bar, urdf: bar.urdf, root: fixed, pose: {{position: [0, 0, 1]}}, q0: {{crank_j: {th2}, coupler_j: {q2}, rocker_j: {th4}}}}}
loop_constraints:
  - {{type: revolute, body_a: bar/coupler, anchor_a: [{b}, 0, 0], body_b: bar/rocker, anchor_b: [{c}, 0, 0], axis_a: [0, 1, 0]}}
"#,
        q2 = th3 - th2
    );
    let mut w = World::new(Scene::from_str(&text, dir.join("fourbar.yaml").to_str().unwrap()).unwrap()).unwrap();
    let e0 = w.energy();
    let (mut worst, mut swing, mut lo, mut hi): (f64, f64, f64, f64) = (0.0, 0.0, th2, th2);
    for _ in 0..3000 {
        w.step().unwrap();
        let q2 = w.joint_position("bar/crank_j").unwrap();
        let q4 = w.joint_position("bar/rocker_j").unwrap();
        worst = worst.max((q4 - fourbar_rocker(q2, dims)).abs());
        (lo, hi) = (lo.min(q2), hi.max(q2));
        swing = hi - lo;
    }
    // energy against the scale M g Σ lengths of validation scene 08_fourbar (the same
    // linkage), whose first-order (semi-implicit Euler) allowance is 2 %; here 1 %
    let de = (w.energy() - e0).abs() / ((a + b + c) * (a + b + c) * G);
    assert!(swing > 0.5, "the linkage hardly moved ({swing} rad)");
    assert!(worst < 1e-6, "rocker angle off the loop's geometry by {worst:e} rad");
    assert!(de < 1e-2, "energy drifted by {de} of M g Σ lengths");
    eprintln!("four-bar: crank swing {swing:.3} rad, rocker off the closure by {worst:.2e} rad, energy drift {de:.2e} of M g Σ lengths");
}

#[test]
fn bad_extra_joints_are_refused_with_their_path() {
    let dir = temp_dir("badloops");
    let urdf = arm_urdf(&dir);
    let bodies = r#"
bodies:
  - {name: floor, shapes: [{type: plane}]}
  - name: b
    mass: 1
    inertia: [[1,0,0],[0,1,0],[0,0,1]]
    joints: [{type: free, name: bf}]
"#;
    let robot = format!("robots: [{{name: arm, urdf: {}, root: fixed}}]\n", urdf.display());
    for (lc, key, words) in [
        ("{type: ball, body_a: nowhere, body_b: b}", "loop_constraints[0].body_a", "unknown body 'nowhere'"),
        ("{type: weld, body_a: b, body_b: b}", "loop_constraints[0].body_b", "itself"),
        ("{type: piston, body_a: world, body_b: b, axis_a: [0, 0, 0]}", "loop_constraints[0].axis_a", "zero"),
        ("{type: revolute, body_a: world, body_b: b, axis_a: [0, 0, 2]}", "loop_constraints[0].axis_a", "unit"),
        ("{type: hinge, body_a: world, body_b: b}", "loop_constraints[0]", "piston"),
    ] {
        let text = format!("{bodies}loop_constraints: [{lc}]\n");
        let err = Scene::from_str(&text, "bad.yaml").unwrap_err().to_string();
        assert!(err.contains(key) && err.contains(words), "{lc}: {err}");
    }
    // resolved when the world is built: robot links and bodies that move as one
    for (lc, key, words) in [
        ("{type: weld, body_a: arm/nolink, body_b: b}", "loop_constraints[0].body_a", "robot 'arm' has no link 'nolink'"),
        ("{type: weld, body_a: world, body_b: floor}", "loop_constraints[0]", "rigidly joined"),
        ("{type: ball, body_a: arm/link, body_b: arm/tip}", "loop_constraints[0]", "rigidly joined"),
    ] {
        let text = format!("{bodies}{robot}loop_constraints: [{lc}]\n");
        let scene = Scene::from_str(&text, dir.join("bad.yaml").to_str().unwrap()).unwrap();
        let err = World::new(scene).err().expect(lc).to_string();
        assert!(err.contains(key) && err.contains(words), "{lc}: {err}");
    }
}

#[test]
fn force_sensor_at_a_hinge_reads_the_share_the_hinge_carries_beside_a_loop() {
    // a uniform bar (m, length L along x) hinged about y at the world point (0, 0, 1) and held
    // at x = a by a ball joint to the world, at rest. Moments about the hinge axis: the ball
    // joint's vertical force F satisfies F a = m g L / 2 (the hinge takes no moment about its
    // axis; the ball's x and y rows move nothing), so the hinge carries m g − F =
    // m g (1 − L / (2a)) upward, no horizontal force, and no torque about the hinge point.
    // Before the loop's forces were subtracted the sensor read the whole weight m g.
    let (m, l, a) = (2.0, 1.0, 0.75);
    let i = m * l * l / 12.0;
    let text = format!(
        r#"
name: shared
world: {{gravity: [0, 0, -{G}], dt: 0.001}}
bodies:
  - name: bar
    pose_in_parent: {{position: [0, 0, 1]}}
    mass: {m}
    com: [{h}, 0, 0]
    inertia: [[1e-4, 0, 0], [0, {i}, 0], [0, 0, {i}]]
    joints: [{{name: hinge, type: revolute, axis: [0, 1, 0]}}]
loop_constraints:
  - {{type: ball, body_a: bar, anchor_a: [{a}, 0, 0], body_b: world, anchor_b: [{a}, 0, 1]}}
sensors:
  - {{name: f, type: force, joint: hinge}}
"#,
        h = l / 2.0
    );
    let mut w = World::new(Scene::from_str(&text, "shared.yaml").unwrap()).unwrap();
    let hinge = m * G * (1.0 - l / (2.0 * a));
    let want = [0.0, 0.0, hinge, 0.0, 0.0, 0.0];
    for k in 0..500 {
        w.step().unwrap();
        let got = w.sensor("f").unwrap();
        for c in 0..6 {
            assert!((got[c] - want[c]).abs() < 1e-3, "step {k}: {got:?}, want {want:?}");
        }
    }
    eprintln!("shared load: hinge reads {:?}, derived {hinge}", w.sensor("f").unwrap());
}

#[test]
fn force_sensor_at_a_robot_hinge_carries_a_body_welded_below_it() {
    // the arm hanging straight down with a 0.5 kg box welded to its tip: everything below the
    // hinge hangs from it, so the hinge passes (1 + 0.5) kg · g up and no torque (the box is
    // not in the hinge's subtree: the weld's force on the tip is what brings its weight in)
    let dir = temp_dir("weldsensor");
    let urdf = arm_urdf(&dir);
    let text = format!(
        r#"
name: weld_sensor
world: {{gravity: [0, 0, -{G}], dt: 0.001}}
robots:
  - {{name: arm, urdf: {urdf}, root: fixed, pose: {{position: [0, 0, 2]}}}}
bodies:
  - name: box
    mass: 0.5
    inertia: [[0.001, 0, 0], [0, 0.001, 0], [0, 0, 0.001]]
    joints: [{{type: free, name: box_free, q0: {{position: [0, 0, 1.2]}}}}]
loop_constraints:
  - {{type: weld, body_a: arm/tip, body_b: box}}
sensors:
  - {{name: f, type: force, joint: arm/hinge}}
"#,
        urdf = urdf.display()
    );
    let scene = Scene::from_str(&text, dir.join("weld_sensor.yaml").to_str().unwrap()).unwrap();
    let mut w = World::new(scene).unwrap();
    let want = [0.0, 0.0, 1.5 * G, 0.0, 0.0, 0.0];
    for k in 0..500 {
        w.step().unwrap();
        let got = w.sensor("f").unwrap();
        for c in 0..6 {
            assert!((got[c] - want[c]).abs() < 1e-3, "step {k}: {got:?}, want {want:?}");
        }
    }
}

#[test]
fn without_the_projection_baumgarte_alone_keeps_every_kind_close() {
    // the velocity rows' errors and Jacobians agree in sign for every kind: with SHAKE off,
    // Baumgarte's correction alone keeps a swinging chain of a weld, a piston, a revolute and
    // a ball joint within a millimetre (milliradian) of its joints
    let text = format!(
        r#"
name: baumgarte
world: {{gravity: [0, 0, -{G}], dt: 0.001}}
engine: {{loop_projection: false}}
bodies:
  - name: arm
    pose_in_parent: {{position: [0, 0, 2]}}
    mass: 1
    com: [0.5, 0, 0]
    inertia: [[0.01, 0, 0], [0, 0.1, 0], [0, 0, 0.1]]
    joints: [{{name: hinge, type: revolute, axis: [0, 1, 0]}}]
  - name: welded
    mass: 0.5
    inertia: [[0.001, 0, 0], [0, 0.001, 0], [0, 0, 0.001]]
    joints: [{{type: free, name: wf, q0: {{position: [1, 0, 2]}}}}]
  - name: slider
    mass: 0.5
    inertia: [[0.001, 0, 0], [0, 0.001, 0], [0, 0, 0.001]]
    joints: [{{type: free, name: sf, q0: {{position: [1, 0, 2]}}}}]
  - name: flap
    mass: 0.3
    com: [0, 0, -0.2]
    inertia: [[0.002, 0, 0], [0, 0.002, 0], [0, 0, 0.002]]
    joints: [{{type: free, name: ff, q0: {{position: [1, 0, 2]}}}}]
  - name: bob
    mass: 0.3
    inertia: [[0.001, 0, 0], [0, 0.001, 0], [0, 0, 0.001]]
    joints: [{{type: free, name: bf, q0: {{position: [1, 0, 1.6]}}}}]
loop_constraints:
  - {{type: weld, body_a: arm, anchor_a: [1, 0, 0], body_b: welded}}
  - {{type: piston, body_a: welded, body_b: slider, axis_a: [1, 0, 0]}}
  - {{type: revolute, body_a: slider, body_b: flap, axis_a: [1, 0, 0]}}
  - {{type: ball, body_a: flap, anchor_a: [0, 0, -0.4], body_b: bob}}
"#
    );
    let mut w = World::new(Scene::from_str(&text, "baumgarte.yaml").unwrap()).unwrap();
    let rel0 = |w: &World, a: &str, b: &str| {
        let (x, y) = (w.state(a).unwrap().pose, w.state(b).unwrap().pose);
        x.inverse().compose(&y)
    };
    let weld0 = rel0(&w, "arm", "welded");
    let mut worst: f64 = 0.0;
    for _ in 0..2000 {
        w.step().unwrap();
        let weld = rel0(&w, "arm", "welded");
        let piston = rel0(&w, "welded", "slider");
        let hinge = rel0(&w, "slider", "flap");
        let flap = w.state("flap").unwrap().pose;
        let ball = flap.transform_point(&nalgebra::Vector3::new(0.0, 0.0, -0.4)) - w.state("bob").unwrap().pose.translation;
        let errs = [
            (weld.translation - weld0.translation).norm(),
            (weld.rotation - weld0.rotation).abs().max(),
            piston.translation.yz().norm(),
            (piston.rotation * nalgebra::Vector3::x() - nalgebra::Vector3::x()).norm(),
            (hinge.translation).norm(),
            (hinge.rotation * nalgebra::Vector3::x() - nalgebra::Vector3::x()).norm(),
            ball.norm(),
        ];
        worst = errs.iter().fold(worst, |a, &b| a.max(b));
    }
    assert!(worst < 1e-3, "a joint opened by {worst:e}");
    assert!(w.joint_position("hinge").unwrap().abs() > 0.3, "the chain hardly swung");
    eprintln!("Baumgarte only: worst joint error {worst:.2e} over 2 s");
}

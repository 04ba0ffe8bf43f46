//! Track surfaces (Choreonoid's conveyors and crawlers): `bodies[].track` gives a body's
//! contacts a tangential surface velocity (about the track's axis, along `axis × n`) that
//! friction carries other bodies along. Crawlers on robots and their physics: crawlers.rs.

use karakuri_sim::{ControlIo, Controller, Scene, SimError, World};

/// A static conveyor belt (its top at z = 0.1) moving along x at `speed` (axis +y: the top
/// surface, outward normal +z, moves along y × z = +x), a 1 kg box resting on it (friction 0.5
/// by default).
fn conveyor(speed: f64) -> Scene {
    let text = format!(
        r#"
name: conveyor
world: {{gravity: [0, 0, -9.81], dt: 0.001}}
bodies:
  - name: belt
    pose_in_parent: {{position: [0, 0, 0.05]}}
    shapes: [{{type: box, half_extents: [3, 0.5, 0.05]}}]
    track: {{axis: [0, 1, 0], speed: {speed}}}
  - name: box
    mass: 1
    inertia: [[0.006, 0, 0], [0, 0.006, 0], [0, 0, 0.006]]
    joints: [{{type: free, name: box_free, q0: {{position: [0, 0, 0.2]}}}}]
    shapes: [{{type: box, half_extents: [0.1, 0.1, 0.1]}}]
"#
    );
    Scene::from_str(&text, "conveyor.yaml").unwrap()
}

#[test]
fn a_box_on_a_moving_belt_is_carried_at_the_belt_speed() {
    // friction accelerates the box at μ g ≈ 4.9 m/s² until it moves with the belt (~0.1 s);
    // then it rides at 0.5 m/s along the belt's direction, nothing else
    let mut w = World::new(conveyor(0.5)).unwrap();
    w.run(0.05).unwrap();
    let early = w.state("box").unwrap().linear.x;
    assert!(early > 0.1 && early < 0.4, "still accelerating at 0.05 s: {early}");
    w.run(0.95).unwrap();
    let s = *w.state("box").unwrap();
    assert!((s.linear.x - 0.5).abs() < 0.01, "box at {:?} m/s", s.linear);
    assert!(s.linear.y.abs() < 1e-6 && s.linear.z.abs() < 1e-3 && s.angular.norm() < 1e-3, "{s:?}");
    assert!((s.pose.translation.z - 0.2).abs() < 2e-3, "box left the belt: {:?}", s.pose.translation);
    // the speed is a command: reverse it through the world
    w.set_track_speed("belt", -0.3).unwrap();
    assert_eq!(w.track_speed("belt").unwrap(), -0.3);
    w.run(0.5).unwrap();
    let v = w.state("box").unwrap().linear.x;
    assert!((v + 0.3).abs() < 0.01, "after the reversal {v}");
    eprintln!("conveyor: box at {:.5} m/s on a 0.5 m/s belt, then {v:.5} on -0.3", s.linear.x);
}

#[test]
fn a_box_on_a_belt_at_rest_stays() {
    let mut w = World::new(conveyor(0.0)).unwrap();
    w.run(1.0).unwrap();
    let s = w.state("box").unwrap();
    assert!(s.linear.norm() < 1e-6 && s.angular.norm() < 1e-6, "{s:?}");
    let p = s.pose.translation;
    assert!(p.x.abs() < 1e-6 && p.y.abs() < 1e-6, "box slid to {p:?}");
}

#[test]
fn track_speed_commands_are_checked_and_named() {
    let mut w = World::new(conveyor(0.5)).unwrap();
    assert_eq!(w.tracks(), ["belt".to_string()]);
    assert!(matches!(w.set_track_speed("nope", 1.0), Err(SimError::UnknownTrack { .. })));
    let err = w.set_track_speed("belt", f64::NAN).unwrap_err().to_string();
    assert!(err.contains("belt") && err.contains("not finite"), "{err}");
    for (track, key) in [
        ("{axis: [0, 0, 0], speed: 1}", "bodies[0].track.axis"),
        ("{axis: [2, 0, 0], speed: 1}", "bodies[0].track.axis"),
        ("{axis: [0, 1, 0], sped: 1}", "bodies[0].track"),
        ("{axis: [0, 1, 0], speed: 1, lateral_friction: 0}", "bodies[0].track.lateral_friction"),
        ("{direction: [1, 0, 0], speed: 1}", "bodies[0].track"),
    ] {
        let text = format!("bodies:\n  - {{name: belt, shapes: [{{type: box, half_extents: [1, 1, 0.1]}}], track: {track}}}\n");
        let err = Scene::from_str(&text, "bad.yaml").unwrap_err().to_string();
        assert!(err.contains(key), "{track}: {err}");
    }
}

/// A skid-steered vehicle on the floor: a 10 kg chassis (free body, no contact of its own)
/// with two track bodies fixed under it at y = ±0.3 (children without joints: rigid parts of
/// the chassis), turning about the chassis' +y: their bottom runs (outward normal −z) move
/// along y × (−z) = −x, so a positive speed drives the vehicle forward, +x.
fn vehicle(left: f64, right: f64) -> Scene {
    let track = |name: &str, y: f64, speed: f64| {
        format!(
            r#"
  - name: {name}
    parent: chassis
    pose_in_parent: {{position: [0, {y}, -0.1]}}
    mass: 1
    inertia: [[0.002, 0, 0], [0, 0.05, 0], [0, 0, 0.05]]
    shapes: [{{type: box, half_extents: [0.4, 0.06, 0.05]}}]
    track: {{axis: [0, 1, 0], speed: {speed}}}"#
        )
    };
    let text = format!(
        r#"
name: vehicle
world: {{gravity: [0, 0, -9.81], dt: 0.001}}
default_material: {{static_friction: 1.0}}
bodies:
  - {{name: ground, shapes: [{{type: plane}}]}}
  - name: chassis
    mass: 10
    inertia: [[0.3, 0, 0], [0, 0.6, 0], [0, 0, 0.8]]
    joints: [{{type: free, name: chassis_free, q0: {{position: [0, 0, 0.15]}}}}]
    shapes: [{{type: box, half_extents: [0.4, 0.25, 0.05], collide: false}}]{l}{r}
"#,
        l = track("left", 0.3, left),
        r = track("right", -0.3, right)
    );
    Scene::from_str(&text, "vehicle.yaml").unwrap()
}

#[test]
fn a_two_track_vehicle_drives_straight_at_equal_speeds() {
    let mut w = World::new(vehicle(0.4, 0.4)).unwrap();
    w.run(1.5).unwrap();
    let s = w.state("chassis").unwrap();
    assert!((s.linear.x - 0.4).abs() < 0.01, "chassis at {:?} m/s", s.linear);
    assert!(s.linear.y.abs() < 1e-6 && s.angular.z.abs() < 1e-6, "it swerved: {s:?}");
    assert!(s.pose.translation.y.abs() < 1e-6, "{:?}", s.pose.translation);
}

#[test]
fn a_two_track_vehicle_turns_left_when_its_right_track_drives_forward() {
    // left back, right forward at 0.4 m/s, tracks 0.6 m apart: a counter-clockwise turn seen
    // from above (yaw rate > 0 about +z), at most the no-slip 2 · 0.4 / 0.6 rad/s (the tracks
    // skid sideways as they turn); swapping the speeds turns it the other way. The centre
    // stays near the start but not exactly: each track's load is shared by four coplanar
    // corner contacts, a split the contact problem leaves open, and the solver's split is
    // not symmetric, so the skidding friction leaves a net force of ~1 N (~8 cm in 1.5 s);
    // with penalty contacts (determined loads) the spin is exact, see the test below.
    let mut w = World::new(vehicle(-0.4, 0.4)).unwrap();
    w.run(1.5).unwrap();
    let s = w.state("chassis").unwrap();
    let yaw_rate = s.angular.z;
    assert!(yaw_rate > 0.1 && yaw_rate <= 0.4 / 0.3, "yaw rate {yaw_rate} rad/s");
    let yaw = s.pose.rotation[(1, 0)].atan2(s.pose.rotation[(0, 0)]);
    assert!(yaw > 0.3, "turned by {yaw} rad");
    assert!(s.pose.translation.xy().norm() < 0.15, "the centre wandered to {:?}", s.pose.translation);
    let mut w = World::new(vehicle(0.4, -0.4)).unwrap();
    w.run(1.5).unwrap();
    let mirrored = w.state("chassis").unwrap().angular.z;
    assert!((-0.4 / 0.3..-0.1).contains(&mirrored), "mirrored yaw rate {mirrored} rad/s");
    eprintln!("vehicle: yaw rate {yaw_rate:.4} rad/s, mirrored {mirrored:.4} (no-slip bound {:.4}), turned {yaw:.3} rad", 0.4 / 0.3);
}

/// Steers by commanding the tracks: straight for 0.5 s, then a spin to the left.
struct Steer;

impl Controller for Steer {
    fn update(&mut self, io: &mut ControlIo<'_>) {
        let (l, r) = (io.track("left").unwrap(), io.track("right").unwrap());
        let turning = io.time >= 0.5;
        io.track_commands[l] = Some(if turning { -0.4 } else { 0.4 });
        io.track_commands[r] = Some(0.4);
    }
}

#[test]
fn a_controller_steers_the_vehicle_through_its_track_speeds() {
    let mut w = World::new(vehicle(0.0, 0.0)).unwrap();
    w.add_controller(Box::new(Steer), 0.01).unwrap();
    w.run(0.5).unwrap();
    let s = w.state("chassis").unwrap();
    assert!(s.linear.x > 0.3 && s.angular.z.abs() < 1e-6, "{s:?}");
    w.run(1.0).unwrap();
    assert!(w.state("chassis").unwrap().angular.z > 0.1);
    assert_eq!(w.track_speed("left").unwrap(), -0.4);
}

#[test]
fn tracks_and_extra_joints_survive_save_and_reload() {
    let mut scene = conveyor(0.5);
    scene.loop_constraints = Scene::from_str(
        "bodies: [{name: box}, {name: belt}]\nloop_constraints: [{type: piston, body_a: belt, body_b: box, axis_a: [0, 0, 1]}, {type: weld, body_a: world, body_b: box, anchor_a: [0, 0, 0.2]}]\n",
        "l.yaml",
    )
    .unwrap()
    .loop_constraints;
    let path = std::env::temp_dir().join(format!("karakuri-tracks-{}.yaml", std::process::id()));
    scene.save(&path).unwrap();
    let back = Scene::from_file(&path).unwrap();
    std::fs::remove_file(&path).ok();
    assert_eq!(back.bodies, scene.bodies);
    assert_eq!(back.loop_constraints, scene.loop_constraints);
    assert!(back.bodies[0].track.is_some());
}

#[test]
fn a_urdf_robot_drives_on_track_bodies_welded_to_its_base() {
    // tracks are scene bodies; a URDF robot gets them through weld extra joints to its base
    // link (free track bodies started where the welds hold them)
    let dir = std::env::temp_dir().join(format!("karakuri-sim-tank-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("tank.urdf"),
        r#"<robot name="tank"><link name="base"><inertial><mass value="10"/><inertia ixx="0.3" iyy="0.6" izz="0.8" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>"#,
    )
    .unwrap();
    let track = |name: &str, y: f64, speed: f64| {
        format!(
            r#"
  - name: {name}
    mass: 1
    inertia: [[0.002, 0, 0], [0, 0.05, 0], [0, 0, 0.05]]
    joints: [{{type: free, name: {name}_free, q0: {{position: [0, {y}, 0.05]}}}}]
    shapes: [{{type: box, half_extents: [0.4, 0.06, 0.05]}}]
    track: {{axis: [0, 1, 0], speed: {speed}}}"#
        )
    };
    let text = format!(
        r#"
name: tank
world: {{gravity: [0, 0, -9.81], dt: 0.001}}
default_material: {{static_friction: 1.0}}
robots:
  - {{name: tank, urdf: tank.urdf, root: floating, pose: {{position: [0, 0, 0.15]}}}}
bodies:
  - {{name: ground, shapes: [{{type: plane}}]}}{l}{r}
loop_constraints:
  - {{type: weld, body_a: tank/base, anchor_a: [0, 0.3, -0.1], body_b: left}}
  - {{type: weld, body_a: tank/base, anchor_a: [0, -0.3, -0.1], body_b: right}}
"#,
        l = track("left", 0.3, 0.3),
        r = track("right", -0.3, 0.3)
    );
    let scene = Scene::from_str(&text, dir.join("tank.yaml").to_str().unwrap()).unwrap();
    let mut w = World::new(scene).unwrap();
    w.run(1.5).unwrap();
    let s = *w.state("tank/base").unwrap();
    assert!((s.linear.x - 0.3).abs() < 0.01, "base at {:?} m/s", s.linear);
    assert!(s.angular.z.abs() < 1e-6 && s.pose.translation.y.abs() < 1e-6, "{s:?}");
    w.set_track_speed("left", -0.3).unwrap();
    w.run(1.0).unwrap();
    let yaw_rate = w.state("tank/base").unwrap().angular.z;
    assert!(yaw_rate > 0.1 && yaw_rate <= 0.3 / 0.3, "yaw rate {yaw_rate}");
}

/// The steady yaw rate of the skid-steered [`vehicle`] spinning in place with belt speeds
/// ∓`speed` (left back, right forward) when every track corner slides with Coulomb friction
/// under an equal load: the rate at which the friction moments about the centre cancel,
/// `Σ (r × ŝ)_z = 0`, ŝ the direction of each corner's slip `ω × r + s_belt` (bisection).
fn skid_yaw_rate(speed: f64) -> f64 {
    let mut corners = vec![];
    for (y0, belt_x) in [(0.3, speed), (-0.3, -speed)] {
        for x in [-0.4, 0.4] {
            for dy in [-0.06, 0.06] {
                corners.push((x, y0 + dy, belt_x));
            }
        }
    }
    let moment = |w: f64| -> f64 {
        corners
            .iter()
            .map(|&(x, y, belt_x)| {
                let (vx, vy) = (-w * y + belt_x, w * x);
                let n = vx.hypot(vy);
                // friction −ŝ at (x, y): its moment about z
                x * (-vy / n) - y * (-vx / n)
            })
            .sum()
    };
    let (mut lo, mut hi) = (1e-3, speed / 0.3);
    assert!(moment(lo) > 0.0 && moment(hi) < 0.0);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if moment(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

#[test]
fn a_vehicle_on_penalty_contacts_spins_in_place_at_the_skid_steering_rate() {
    // with penalty contacts each corner's load is determined (equal here by symmetry), so the
    // spin is the textbook skid-steering balance: a steady yaw rate where the sliding friction
    // moments cancel, and the centre stays where it is
    let mut scene = vehicle(-0.4, 0.4);
    scene.contact.mode = karakuri_sim::scene::ContactMode::Penalty { stiffness: 1e5, damping: 1e3 };
    let mut w = World::new(scene).unwrap();
    w.run(1.0).unwrap();
    let r1 = w.state("chassis").unwrap().angular.z;
    w.run(1.0).unwrap();
    let s = w.state("chassis").unwrap();
    let want = skid_yaw_rate(0.4);
    assert!((s.angular.z - r1).abs() < 1e-3, "not steady: {r1} then {}", s.angular.z);
    assert!((s.angular.z / want - 1.0).abs() < 0.02, "yaw rate {} rad/s, skid steering {want}", s.angular.z);
    assert!(s.pose.translation.xy().norm() < 1e-3, "the centre moved to {:?}", s.pose.translation);
    eprintln!("penalty spin: yaw rate {:.5} rad/s, skid-steering balance {want:.5}", s.angular.z);
}

//! Simulating Choreonoid `.body` files (a lone `.body` as a scene, `robots: [{body: FILE}]`):
//! SR1 stands at its `standardPose` under the default position hold; its ankle force sensors
//! carry its weight and its IMU reads gravity; PA10 and the Tank run; an extra joint holds.

use std::path::{Path, PathBuf};

use karakuri_sim::{Scene, World};

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(p)
}

/// SR1 on the floor, held at its standard pose by the default servos, stands 3 s: after the
/// first 0.5 s the waist's height stays within 3 mm and its up axis within 1°; the two ankle
/// force sensors carry the weight above them (total mass minus the feet, as the file states)
/// within 2 %, and the waist IMU's accelerometer reads g up.
#[test]
fn sr1_stands_at_its_standard_pose() {
    let path = repo("tests/data/body/SR1/SR1.body");
    let body = karakuri::io::body::load_body(&path).unwrap();
    let mut w = World::from_file(&path).unwrap();
    assert_eq!(w.dt(), Scene::from_file(&path).unwrap().world.dt);
    let knee = w.joint_position("SR1/LLEG_KNEE").unwrap();
    assert!((knee - 60f64.to_radians()).abs() < 1e-12, "standardPose: knee at {knee}");
    w.run(0.5).unwrap();
    let z0 = w.state("SR1/WAIST").unwrap().pose.translation.z;
    let (mut lo, mut hi, mut tilt) = (z0, z0, 0f64);
    while w.time() < 3.0 {
        w.step().unwrap();
        let s = w.state("SR1/WAIST").unwrap();
        let z = s.pose.translation.z;
        (lo, hi) = (lo.min(z), hi.max(z));
        let up = s.pose.rotation * nalgebra::Vector3::z();
        tilt = tilt.max(up.z.clamp(-1.0, 1.0).acos());
    }
    println!("SR1: waist z from {z0:.5} within [{lo:.5}, {hi:.5}], tilt {tilt:.2e} rad");
    assert!(hi - lo < 3e-3, "waist height between {lo} and {hi} (from {z0})");
    assert!(tilt < 1f64.to_radians(), "waist tilted {tilt} rad");
    let g = 9.81;
    let feet: f64 = body.links.iter().filter(|l| l.name.ends_with("ANKLE_R")).map(|l| l.mass).sum();
    let carried = (body.model.total_mass() - feet) * g;
    let fz: f64 = ["SR1/LeftAnkleForceSensor", "SR1/RightAnkleForceSensor"].iter().map(|n| w.sensor(n).unwrap()[2]).sum();
    println!("SR1: ankle sensors fz {fz:.2} N, weight above the feet {carried:.2} N");
    assert!((fz.abs() - carried).abs() < 0.02 * carried, "ankle sensors fz {fz} vs weight above the feet {carried}");
    let acc = w.sensor("SR1/WaistIMU/accel").unwrap();
    assert!((acc[2] - g).abs() < 0.05 * g && acc[0].abs() < 0.5 && acc[1].abs() < 0.5, "IMU accelerometer {acc:?}");
    assert!(w.sensor("SR1/WaistGyro").unwrap().iter().all(|x| x.abs() < 0.05));
    // the cameras are listed, not simulated
    assert!(w.warnings().iter().any(|m| m.contains("devices not simulated") && m.contains("LeftCamera")), "{:?}", w.warnings());
}

/// PA10 (fixed base, Visual .wrl parts not read, Collision shapes), the Tank (a SubBody, track
/// links: driven in crawlers.rs) and the closed-link sample (a hinge extra joint) run 1 s with finite states; the
/// closed loop stays closed.
#[test]
fn pa10_tank_and_closed_link_run() {
    for (file, what) in [("PA10/PA10.body", "VRML"), ("Tank/Tank.body", "VRML"), ("misc/ClosedLinkSample.body", "held as a piston")] {
        let mut w = World::from_file(repo(&format!("tests/data/body/{file}"))).unwrap_or_else(|e| panic!("{file}: {e}"));
        w.run(1.0).unwrap_or_else(|e| panic!("{file}: {e}"));
        for b in w.bodies() {
            let x = w.state(&b.name).unwrap().pose.translation;
            assert!(x.iter().all(|v| v.is_finite() && v.abs() < 5.0), "{file}: {} at {x:?}", b.name);
        }
        assert!(w.warnings().iter().any(|m| m.contains(what)), "{file}: {:?}", w.warnings());
        if file.contains("ClosedLink") {
            // the anchors (ClosedLinkSample.body lines 142-143) stay on one axis line
            let (a, b) = (w.state("ClosedLinkSample/J1").unwrap().pose, w.state("ClosedLinkSample/J3").unwrap().pose);
            let d = b.transform_point(&nalgebra::Vector3::new(0.0, 0.1, 0.0)) - a.transform_point(&nalgebra::Vector3::new(0.2, 0.0, 0.0));
            let axis = a.rotation * nalgebra::Vector3::z();
            let across = (d - d.dot(&axis) * axis).norm();
            assert!(across < 1e-4, "{file}: loop open by {across} m");
        }
    }
}

/// A scene naming a `.body` robot: its pose places the root (composed with the file's root
/// placement), its q0 overrides the standard pose, the robot's sensors are the world's.
#[test]
fn a_scene_with_a_body_robot() {
    let yaml = "name: s\nworld: {duration: 0.1}\nbodies: [{name: floor, shapes: [{type: plane}]}]\nrobots:\n  - name: r\n    body: ../data/body/SR1/SR1.body\n    pose: {position: [1, 0, 0]}\n    q0: {LLEG_KNEE: 0.5}\n";
    let scene = Scene::from_str(yaml, repo("tests/scenes/body_robot.yaml").to_str().unwrap()).unwrap();
    let w = World::new(scene).unwrap();
    let x = w.state("r/WAIST").unwrap().pose.translation;
    assert_eq!((x.x, x.z), (1.0, 0.7135));
    assert_eq!(w.joint_position("r/LLEG_KNEE").unwrap(), 0.5);
    assert!(w.layout().sensors.iter().any(|s| s.name == "r/WaistGyro"));
    let bad = yaml.replace("body: ../data/body/SR1/SR1.body", "body: ../data/body/SR1/SR1.body\n    urdf: x.urdf");
    let e = Scene::from_str(&bad, repo("tests/scenes/b.yaml").to_str().unwrap()).unwrap_err().to_string();
    assert!(e.contains("exactly one of"), "{e}");
}

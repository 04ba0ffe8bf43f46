//! `karakuri simulate` through the library: the bundled demo, its CSV files, and a demo that
//! needs no file beside the binary.

use karakuri_sim::World;

#[test]
fn the_cli_writes_the_demo_csv_files() {
    let dir = std::env::temp_dir().join(format!("karakuri-sim-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let args = karakuri_cli::simulate::SimulateArgs {
        scene: None,
        duration: Some(0.6),
        dt: None,
        out: Some(dir.join("traj.csv")),
        steps: Some(dir.join("steps.csv")),
        ..Default::default()
    };
    let mut last = 0.0;
    let summary = karakuri_cli::simulate::simulate(&args, &mut |f| last = f).unwrap();
    assert_eq!((summary.steps, last), (600, 1.0));
    assert!(summary.contacts_final >= 4, "{summary}");
    let traj = std::fs::read_to_string(dir.join("traj.csv")).unwrap();
    assert!(traj.starts_with("step,t,body,px,py,pz,qx,qy,qz,qw,vx,vy,vz,wx,wy,wz\n"));
    let base: Vec<&str> = traj.lines().filter(|l| l.contains(",solo/base_link,")).collect();
    assert_eq!(base.len(), 601);
    // still lying on its belly (the base box's half height is 0.04 m): it rises from 0.3 s on
    let z: f64 = base[250].split(',').nth(5).unwrap().parse().unwrap();
    assert!((0.035..0.045).contains(&z), "the lying robot's base at {z} m");
    let steps = std::fs::read_to_string(dir.join("steps.csv")).unwrap();
    assert_eq!(steps.lines().count(), 602);
    assert!(steps.starts_with("step,t,contacts,wall_ns,sweeps,residual,converged,signorini,coulomb,dissipation,depth\n"), "{}", &steps[..120]);
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 15, item 9: the bundled demo's quadruped lies on the floor, stands up under its
/// position servos (base 0.22–0.24 m up, level within 1°), takes the 2 N·s sideways push at
/// t = 2 s (it moves and tilts, but the base stays above 0.2 m and within 10° of level) and
/// is standing still at the end (within 2° of level); the summary reports the servos'
/// tracking error.
#[test]
fn the_demo_quadruped_stands_up_and_survives_the_push() {
    // (time, base height, tilt from level in degrees, lateral offset, speed)
    let mut track: Vec<(f64, f64, f64, f64, f64)> = vec![];
    let summary = karakuri_cli::simulate::simulate_observed(&Default::default(), &mut |_| {}, &mut |w, _| {
        let s = w.state("solo/base_link").unwrap();
        let r = s.pose.rotation;
        let tilt = r[(2, 2)].clamp(-1.0, 1.0).acos().to_degrees();
        let p = s.pose.translation;
        track.push((w.time(), p.z, tilt, p.y, s.linear.norm()));
    })
    .unwrap();
    let during = |a: f64, b: f64| track.iter().filter(move |x| x.0 >= a - 1e-9 && x.0 <= b + 1e-9);
    let max = |it: &mut dyn Iterator<Item = f64>| it.fold(f64::NEG_INFINITY, f64::max);
    let min = |it: &mut dyn Iterator<Item = f64>| it.fold(f64::INFINITY, f64::min);
    // lying until the ramp starts
    assert!(max(&mut during(0.05, 0.3).map(|x| x.1)) < 0.045);
    // standing before the push
    let (z, tilt) = (min(&mut during(1.8, 2.0).map(|x| x.1)), max(&mut during(1.8, 2.0).map(|x| x.2)));
    assert!((0.22..0.24).contains(&z) && tilt < 1.0, "before the push: base at {z} m, tilt {tilt}°");
    // the push moves it, it does not fall
    let shift = max(&mut during(2.0, 2.5).map(|x| x.3.abs()));
    let (low, worst) = (min(&mut during(2.0, 3.5).map(|x| x.1)), max(&mut during(2.0, 3.5).map(|x| x.2)));
    assert!(shift > 0.02, "the push moved the base only {shift} m");
    assert!(low > 0.2 && worst < 10.0, "after the push: base down to {low} m, tilted up to {worst}°");
    let &(t, z, tilt, _, speed) = track.last().unwrap();
    assert!((t - 3.5).abs() < 1e-9 && z > 0.22 && tilt < 2.0 && speed < 0.02, "at the end: {z} m, {tilt}°, {speed} m/s");
    let tracking = summary.tracking.clone().expect("the demo's servos");
    assert_eq!(tracking.joints, 12);
    assert!(tracking.rms > 0.0 && tracking.rms < 0.1 && tracking.max.0 < 0.3, "{tracking:?}");
    assert!(summary.to_string().contains("tracking error   12 position servo(s)"), "{summary}");
}

/// Issue 13, item 6: the bundled demo names no file, so a copied binary runs it anywhere (its
/// meshes come from the binary too).
#[test]
fn the_bundled_demo_refers_to_no_file() {
    let scene = karakuri_cli::simulate::demo_scene().unwrap();
    assert!(scene.robots.iter().all(|r| karakuri_sim::scene::builtin_urdf(&r.urdf).is_some()));
    let mesh_file = |s: &karakuri_sim::scene::ShapeSpec| {
        matches!(
            s.geometry,
            karakuri_sim::scene::Geometry::ConvexMesh { file: Some(_), .. } | karakuri_sim::scene::Geometry::TriMesh { file: Some(_), .. }
        )
    };
    assert!(!scene.bodies.iter().flat_map(|b| &b.shapes).any(mesh_file));
    // its only package directory is the one the binary writes its own meshes to
    let own = |d: &String| std::path::Path::new(d).starts_with(std::env::temp_dir());
    assert!(scene.robots.iter().all(|r| r.collision == karakuri_sim::scene::RobotCollision::None && r.package_dirs.iter().all(own)));
    World::new(scene).unwrap();
}


/// Issue 15: `--sensors` and `--joints` write one row per step after it, with the columns the
/// issue names; a servo-held pendulum's last row gives its analytic equilibrium.
#[test]
fn sensor_and_joint_csv_files() {
    let dir = std::env::temp_dir().join(format!("karakuri-sim-sensors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("servo.yaml");
    std::fs::write(
        &scene,
        r#"
name: servo
world: {gravity: [0, 0, -9.81], dt: 0.001, duration: 5}
bodies:
  - name: bob
    pose_in_parent: {position: [0, 0, 1]}
    mass: 1
    com: [0, 0, -0.5]
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    joints: [{name: hinge, type: revolute, axis: [1, 0, 0], actuator: {mode: position, kp: 50, kd: 5, target: 1.0}}]
sensors:
  - {name: imu, type: accelerometer, body: bob}
  - {name: f, type: force, joint: hinge}
"#,
    )
    .unwrap();
    let args = karakuri_cli::simulate::SimulateArgs {
        scene: Some(scene),
        sensors: Some(dir.join("sensors.csv")),
        joints: Some(dir.join("joints.csv")),
        ..Default::default()
    };
    karakuri_cli::simulate::simulate(&args, &mut |_| {}).unwrap();
    let sensors = std::fs::read_to_string(dir.join("sensors.csv")).unwrap();
    let lines: Vec<&str> = sensors.lines().collect();
    assert_eq!(lines[0], "time,imu.x,imu.y,imu.z,f.fx,f.fy,f.fz,f.tx,f.ty,f.tz");
    assert_eq!(lines.len(), 5001);
    let joints = std::fs::read_to_string(dir.join("joints.csv")).unwrap();
    let jl: Vec<&str> = joints.lines().collect();
    assert_eq!(jl[0], "time,hinge.q,hinge.dq,hinge.tau");
    assert_eq!(jl.len(), 5001);
    let last: Vec<f64> = jl[5000].split(',').map(|x| x.parse().unwrap()).collect();
    assert!((last[0] - 5.0).abs() < 1e-9);
    // kp (1 − q) = m g l sin q
    let (q, tau) = (last[1], last[3]);
    assert!((50.0 * (1.0 - q) - 9.81 * 0.5 * q.sin()).abs() < 1e-3, "q {q}");
    assert!((tau - 9.81 * 0.5 * q.sin()).abs() < 1e-3, "tau {tau}");
    // the hinge carries the servo torque about x and the weight
    let s: Vec<f64> = lines[5000].split(',').map(|x| x.parse().unwrap()).collect();
    assert!((s[7] - tau).abs() < 1e-3, "sensor torque {} vs joint torque {tau}", s[7]);
    assert!(((s[5] * s[5] + s[6] * s[6]).sqrt() - 9.81).abs() < 1e-3);
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 15, item 8: `--checkpoint FILE --checkpoint-at T` then `--resume FILE`: the resumed
/// run's trajectory rows after T are byte for byte the uninterrupted run's (the step column
/// aside, though it agrees too: rows are numbered by the world's steps), and writing the
/// checkpoint leaves the run it is taken from untouched.
#[test]
fn checkpoint_and_resume_reproduce_the_uninterrupted_run() {
    let dir = std::env::temp_dir().join(format!("karakuri-sim-ckpt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |out: &str, checkpoint: Option<(&str, f64)>, resume: Option<&str>| {
        let args = karakuri_cli::simulate::SimulateArgs {
            duration: Some(2.3),
            out: Some(dir.join(out)),
            checkpoint: checkpoint.map(|(f, _)| dir.join(f)),
            checkpoint_at: checkpoint.map(|(_, t)| t),
            resume: resume.map(|f| dir.join(f)),
            ..Default::default()
        };
        let summary = karakuri_cli::simulate::simulate(&args, &mut |_| {}).unwrap();
        let text = std::fs::read_to_string(dir.join(out)).unwrap();
        (summary, text)
    };
    let (_, whole) = run("whole.csv", None, None);
    let (_, taking) = run("taking.csv", Some(("ckpt.json", 2.05)), None);
    assert!(taking == whole, "writing a checkpoint changed the run");
    let (summary, resumed) = run("resumed.csv", None, Some("ckpt.json"));
    assert_eq!(summary.steps, 250);
    // rows without their step column, for steps after T = 2.05 s (step 2050: the demo's
    // robot standing on its servos, the sideways push half done)
    let after = |text: &str| -> Vec<String> {
        text.lines()
            .skip(1)
            .filter(|l| l.split(',').next().unwrap().parse::<u64>().unwrap() > 2050)
            .map(|l| l.split_once(',').unwrap().1.to_string())
            .collect()
    };
    let (a, b) = (after(&whole), after(&resumed));
    assert_eq!(a.len(), 250 * 17, "four objects and 13 robot links per step");
    assert!(a == b, "the resumed run departs from the uninterrupted one");
    // the resumed file starts with the state at T, numbered 2050
    assert!(resumed.lines().nth(1).unwrap().starts_with("2050,2.05"));
    // a checkpoint of another scene, or outside the run, is refused with a reason
    let other = dir.join("other.json");
    std::fs::write(&other, r#"{"name": "other", "bodies": [{"name": "floor", "shapes": [{"type": "plane"}]}]}"#).unwrap();
    let args = karakuri_cli::simulate::SimulateArgs { scene: Some(other), resume: Some(dir.join("ckpt.json")), ..Default::default() };
    let err = format!("{:#}", karakuri_cli::simulate::simulate(&args, &mut |_| {}).unwrap_err());
    assert!(err.contains("fingerprint"), "{err}");
    let args = karakuri_cli::simulate::SimulateArgs { duration: Some(2.0), resume: Some(dir.join("ckpt.json")), ..Default::default() };
    let err = format!("{:#}", karakuri_cli::simulate::simulate(&args, &mut |_| {}).unwrap_err());
    assert!(err.contains("not before the run's end"), "{err}");
    let args = karakuri_cli::simulate::SimulateArgs {
        duration: Some(0.3),
        checkpoint: Some(dir.join("late.json")),
        checkpoint_at: Some(0.5),
        ..Default::default()
    };
    let err = format!("{:#}", karakuri_cli::simulate::simulate(&args, &mut |_| {}).unwrap_err());
    assert!(err.contains("outside the run"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 29, item 4: `--cpu-time R` times the run's steps alone (restored to the start state
/// each time, after a warm-up) and reports the least in the summary; the run itself is the
/// one without it, row for row.
#[test]
fn cpu_time_reports_the_steps_alone_and_leaves_the_run_unchanged() {
    let dir = std::env::temp_dir().join(format!("karakuri-sim-cpu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |out: &str, cpu_time: Option<u32>| {
        let args = karakuri_cli::simulate::SimulateArgs {
            duration: Some(0.4),
            out: Some(dir.join(out)),
            cpu_time,
            ..Default::default()
        };
        let summary = karakuri_cli::simulate::simulate(&args, &mut |_| {}).unwrap();
        (summary, std::fs::read_to_string(dir.join(out)).unwrap())
    };
    let (plain, plain_rows) = run("plain.csv", None);
    let (timed, timed_rows) = run("timed.csv", Some(3));
    assert_eq!(plain.cpu_us_per_step, None);
    assert!(!plain.to_string().contains("cpu time"), "{plain}");
    let us = timed.cpu_us_per_step.unwrap();
    // the demo's step takes some µs; a figure of zero or of seconds would be a broken clock
    assert!(us > 0.1 && us < 100_000.0, "{us} µs/step");
    assert!(timed.to_string().contains(&format!("cpu time         {us:.3} µs/step")), "{timed}");
    assert!(timed_rows == plain_rows, "timing the steps changed the run's rows");
    assert_eq!(timed.energy.1.to_bits(), plain.energy.1.to_bits());
    assert_eq!((timed.steps, timed.contacts_max), (plain.steps, plain.contacts_max));
    std::fs::remove_dir_all(&dir).ok();
}

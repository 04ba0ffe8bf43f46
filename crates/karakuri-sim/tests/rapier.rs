//! Both engines on the free fall, slide and double pendulum scenes against their analytic
//! answers (`cargo test -p karakuri-sim --features rapier --test rapier`), and what the
//! rapier engine refuses at load.
//!
//! The native engine is held to each scene's own tolerance. Rapier is held to its own, stated
//! per check with the reason (its contacts are soft constraints with a 5 mm slop and its
//! solver is substepped, so resting and sliding contacts settle differently from Springhead's
//! hard contacts; on contact-free motion it must be as exact as any symplectic integrator).
//! Rapier meets every tolerance of these three scenes, so it is held to the same ones.
//!
//! Without the feature (`cargo test --workspace`) only the last test runs: a scene asking for
//! rapier fails at load saying how to enable it.

mod common;
use common::scene_path;

#[cfg(feature = "rapier")]
use karakuri::spatial::{Mat3, Vec3};
use karakuri_sim::scene::EngineKind;
use karakuri_sim::{Scene, SimError, World};

#[cfg(not(feature = "rapier"))]
#[test]
fn without_the_feature_a_rapier_scene_says_how_to_enable_it() {
    let mut scene = Scene::from_file(scene_path("01_free_fall.json")).unwrap();
    scene.engine.kind = EngineKind::Rapier;
    match World::new(scene) {
        Err(SimError::Scene { path, reason, .. }) => {
            assert_eq!(path, "engine.type");
            assert!(reason.contains("--features rapier"), "{reason}");
        }
        Err(e) => panic!("not a scene error: {e}"),
        Ok(_) => panic!("loaded without the feature"),
    }
}

/// Counts the allocations of the thread that sets `COUNTING` (thread-local: the other tests
/// of this binary run meanwhile and are not counted).
#[cfg(feature = "rapier")]
#[allow(unsafe_code)] // implementing GlobalAlloc is unsafe by definition
mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    thread_local! {
        pub static COUNTING: Cell<bool> = const { Cell::new(false) };
        pub static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
    }

    pub struct Counting;

    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            if COUNTING.with(Cell::get) {
                ALLOCATIONS.with(|n| n.set(n.get() + 1));
            }
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    #[global_allocator]
    static GLOBAL: Counting = Counting;

    /// The allocations `f` makes on this thread.
    pub fn allocations(f: impl FnOnce()) -> usize {
        let before = ALLOCATIONS.with(Cell::get);
        COUNTING.with(|c| c.set(true));
        f();
        COUNTING.with(|c| c.set(false));
        ALLOCATIONS.with(Cell::get) - before
    }
}

#[cfg(feature = "rapier")]
mod with_rapier {
    use super::*;

    /// Per step, per body: origin, rotation, centre-of-mass velocity, angular velocity (world).
    struct Traj {
        scene: Scene,
        t: Vec<f64>,
        origin: Vec<Vec<Vec3>>,
        rot: Vec<Vec<Mat3>>,
        vel: Vec<Vec<Vec3>>,
        omega: Vec<Vec<Vec3>>,
        energy: Vec<f64>,
    }

    fn run(file: &str, engine: EngineKind) -> Traj {
        let mut scene = Scene::from_file(scene_path(file)).unwrap();
        scene.engine.kind = engine;
        let n = (scene.world.duration / scene.world.dt).round() as usize;
        let mut world = World::new(scene.clone()).unwrap();
        assert_eq!(
            world.engine().name(),
            if engine == EngineKind::Rapier {
                "rapier"
            } else {
                "native"
            }
        );
        let mut tr = Traj {
            scene,
            t: vec![],
            origin: vec![],
            rot: vec![],
            vel: vec![],
            omega: vec![],
            energy: vec![],
        };
        for k in 0..=n {
            if k > 0 {
                world.step().unwrap();
            }
            tr.t.push(world.time());
            let s = world.states();
            tr.origin.push(s.iter().map(|s| s.pose.translation).collect());
            tr.rot.push(s.iter().map(|s| s.pose.rotation).collect());
            tr.vel.push(
                s.iter()
                    .zip(&tr.scene.bodies)
                    .map(|(s, b)| s.linear + s.angular.cross(&(s.pose.rotation * Vec3::from(b.com))))
                    .collect(),
            );
            tr.omega.push(s.iter().map(|s| s.angular).collect());
            tr.energy.push(world.energy());
        }
        tr
    }

    /// The scene's analytic value and tolerance of a check.
    fn expected(scene: &Scene, id: &str) -> (f64, f64) {
        let e = scene.extra["expected"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == id)
            .unwrap();
        (e["analytic"].as_f64().unwrap(), e["tolerance"].as_f64().unwrap())
    }

    /// Asserts `value` within `tol` of the analytic answer of check `id`; `tol = None`: the
    /// scene's own tolerance.
    fn assert_check(tr: &Traj, engine: &str, id: &str, value: f64, tol: Option<f64>) {
        let (a, scene_tol) = expected(&tr.scene, id);
        let tol = tol.unwrap_or(scene_tol);
        println!(
            "{engine:7} {:20} {id:18} {value:14.9} {a:12.6} ± {tol:e}",
            tr.scene.name
        );
        assert!(
            (value - a).abs() <= tol,
            "{engine} {}: {id} = {value} (analytic {a} ± {tol})",
            tr.scene.name
        );
    }

    fn free_fall(engine: EngineKind, tols: [Option<f64>; 4]) {
        let tr = run("01_free_fall.json", engine);
        let b = tr.scene.body_index("ball").unwrap();
        let last = tr.t.len() - 1;
        let w0 = tr.omega[0][b];
        let name = format!("{engine:?}");
        assert_check(&tr, &name, "z_at_T", tr.origin[last][b].z, tols[0]);
        assert_check(&tr, &name, "vz_at_T", tr.vel[last][b].z, tols[1]);
        assert_check(&tr, &name, "x_at_T", tr.origin[last][b].x, tols[2]);
        let dw = tr.omega.iter().map(|o| (o[b] - w0).norm()).fold(0.0, f64::max);
        assert_check(&tr, &name, "omega_change", dw, tols[3]);
    }

    #[test]
    fn free_fall_native() {
        free_fall(EngineKind::Native, [None; 4]);
    }

    /// Free flight has no contact: rapier must be as exact as the native engine's semi-implicit
    /// Euler (the scene's tolerances, which are those of an exact integration of v and of x, ω
    /// up to rounding).
    #[test]
    fn free_fall_rapier() {
        free_fall(EngineKind::Rapier, [None; 4]);
    }

    fn slide(engine: EngineKind, tols: [Option<f64>; 3]) {
        let tr = run("03_slide.json", engine);
        let b = tr.scene.body_index("box").unwrap();
        let last = tr.t.len() - 1;
        let k = tr.vel.iter().position(|v| v[b].x.abs() < 1e-2).expect("the box stops");
        let tilt = tr
            .rot
            .iter()
            .map(|r| r[b][(2, 2)].clamp(-1.0, 1.0).acos().to_degrees())
            .fold(0.0, f64::max);
        let name = format!("{engine:?}");
        assert_check(
            &tr,
            &name,
            "stop_distance",
            tr.origin[last][b].x - tr.origin[0][b].x,
            tols[0],
        );
        assert_check(&tr, &name, "stop_time", tr.t[k], tols[1]);
        assert_check(&tr, &name, "max_tilt_deg", tilt, tols[2]);
    }

    #[test]
    fn slide_native() {
        slide(EngineKind::Native, [None; 3]);
    }

    /// Coulomb friction on a flat floor: rapier's friction is a velocity-level cone solved per
    /// substep, like the native engine's; the scene's tolerances (2 % of the distance and time).
    #[test]
    fn slide_rapier() {
        slide(EngineKind::Rapier, [None; 3]);
    }

    fn double_pendulum(engine: EngineKind, tols: [Option<f64>; 4]) {
        let tr = run("06_double_pendulum.json", engine);
        let scale = tr.scene.extra["parameters"]["energy_scale"].as_f64().unwrap();
        let e = &tr.energy;
        let drift = e.iter().map(|x| (x - e[0]).abs()).fold(0.0, f64::max) / scale;
        let name = format!("{engine:?}");
        assert_check(&tr, &name, "energy_drift_max", drift, tols[0]);
        // each link's absolute planar angle about y, unwrapped; q = relative angles
        let links: Vec<usize> = (0..tr.scene.bodies.len())
            .filter(|&i| !tr.scene.bodies[i].is_static())
            .collect();
        let phi: Vec<Vec<f64>> = links
            .iter()
            .map(|&b| {
                let raw: Vec<f64> = tr.rot.iter().map(|r| r[b][(0, 2)].atan2(r[b][(0, 0)])).collect();
                let mut out = vec![raw[0]];
                for k in 1..raw.len() {
                    let d = (raw[k] - raw[k - 1] + std::f64::consts::PI).rem_euclid(2.0 * std::f64::consts::PI)
                        - std::f64::consts::PI;
                    out.push(out[k - 1] + d);
                }
                out
            })
            .collect();
        let dt = tr.scene.world.dt;
        for (i, s) in tr.scene.extra["reference_solution"]["samples"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            let t = s["t"].as_f64().unwrap();
            let k = (t / dt).round() as usize;
            let mut prev = 0.0;
            let mut err: f64 = 0.0;
            for (l, p) in phi.iter().enumerate() {
                err = err.max((s["q"][l].as_f64().unwrap() - (p[k] - prev)).abs());
                prev = p[k];
            }
            assert_check(&tr, &name, &format!("q_error_t{t}"), err, tols[1 + i]);
        }
    }

    #[test]
    fn double_pendulum_native() {
        double_pendulum(EngineKind::Native, [None; 4]);
    }

    /// A contact-free multibody: rapier's reduced-coordinate step (implicit Coriolis terms, no
    /// joint damping once the scene's zero replaces its default 0.1) against the reference
    /// solution, to the scene's tolerances.
    #[test]
    fn double_pendulum_rapier() {
        double_pendulum(EngineKind::Rapier, [None; 4]);
    }

    /// What rapier cannot express fails at load, naming the key and the feature.
    #[test]
    fn rapier_refuses_what_it_cannot_express() {
        let load = |edit: &dyn Fn(&mut Scene)| {
            let mut scene = Scene::from_file(scene_path("03_slide.json")).unwrap();
            scene.engine.kind = EngineKind::Rapier;
            edit(&mut scene);
            match World::new(scene) {
                Err(SimError::Scene { path, reason, .. }) => format!("{path}: {reason}"),
                Err(e) => panic!("not a scene error: {e}"),
                Ok(_) => panic!("loaded"),
            }
        };
        let e = load(&|s| s.materials[0].1.static_friction = 0.4);
        assert!(
            e.starts_with("materials.") && e.contains("static and dynamic friction"),
            "{e}"
        );
        let e = load(&|s| s.engine.integrator = karakuri_sim::scene::Integrator::Rk4);
        assert!(e.starts_with("engine.integrator") && e.contains("RK4"), "{e}");
        let e = load(&|s| {
            s.contact.mode = karakuri_sim::scene::ContactMode::Penalty {
                stiffness: 1e4,
                damping: 10.0,
            }
        });
        assert!(e.starts_with("contact.mode") && e.contains("penalty"), "{e}");
        // features of the native engine not mapped onto rapier yet are refused, not ignored
        let e = load(&|s| {
            s.perturbations =
                vec![serde_json::from_value(serde_json::json!({"body": "box", "force": [1, 0, 0], "duration": 0.1})).unwrap()]
        });
        assert!(e.starts_with("perturbations") && e.contains("not mapped"), "{e}");
        let e = load(&|s| {
            let i = s.bodies.len() - 1;
            s.bodies[i].track = Some(karakuri_sim::scene::TrackSpec { axis: [0.0, 1.0, 0.0], speed: 0.5, lateral_friction: None });
        });
        assert!(e.contains(".track") && e.contains("track surfaces"), "{e}");
        // the scene key reads `name` as well as `type`
        let text = std::fs::read_to_string(scene_path("01_free_fall.json")).unwrap();
        let text = text.replacen("\"world\"", "\"engine\": {\"name\": \"rapier\"}, \"world\"", 1);
        let scene = Scene::from_str(&text, "free_fall.json").unwrap();
        assert_eq!(scene.engine.kind, EngineKind::Rapier);
    }

    /// A pendulum hinged about x at height 1, centre of mass `L` below the hinge, the hinge's
    /// actuator and extra keys given; gravity torque about x: `-m g l sin q`.
    fn pendulum(actuator: &str, gravity: f64, more: &str) -> World {
        let text = format!(
            r#"
name: pendulum
engine: {{type: rapier}}
world: {{gravity: [0, 0, {g}], dt: 0.001, duration: 1.0}}
bodies:
  - name: bob
    pose_in_parent: {{position: [0, 0, 1]}}
    mass: 1.0
    com: [0, 0, -0.5]
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    joints:
      - {{name: hinge, type: revolute, axis: [1, 0, 0], actuator: {actuator}{more}}}
"#,
            g = -gravity
        );
        World::new(Scene::from_str(&text, "pendulum.yaml").unwrap()).unwrap()
    }

    /// The model's joint forces are evaluated into buffers sized at load: steps of a damped
    /// pendulum allocate no more than those of an undamped one (before: three vectors per step
    /// and joint-force set).
    #[test]
    fn rapier_joint_forces_allocate_nothing_in_a_step() {
        let per_100_steps = |more: &str| {
            let mut w = pendulum("{mode: torque}", 9.81, more);
            w.run(0.02).unwrap();
            counting::allocations(|| (0..100).for_each(|_| w.step().unwrap()))
        };
        let (damped, undamped) = (per_100_steps(", damping: 0.26"), per_100_steps(", damping: 0.0"));
        eprintln!("allocations in 100 steps: {damped} damped, {undamped} undamped");
        assert_eq!(damped, undamped);
    }

    /// A hinge damper (the model's joint forces, applied by rapier explicitly each step): in
    /// zero gravity the speed decays as e^{-b t / I}, I = 0.01 + m l² = 0.26 about the hinge.
    #[test]
    fn rapier_applies_the_scenes_joint_damping() {
        let mut w = pendulum("{mode: torque}", 0.0, ", damping: 0.26, qd0: 1.0");
        w.run(1.0).unwrap();
        let dq = hinge(&w).1;
        // b / I = 1 per second: e^{-1}; explicit Euler at dt = 1 ms is within 1e-3 of it
        assert!((dq - (-1.0f64).exp()).abs() < 2e-3, "{dq}");
    }

    fn hinge(w: &World) -> (f64, f64, f64) {
        let mut s = [karakuri_sim::JointState::default()];
        w.write_joint_states(&mut s);
        (s[0].q, s[0].dq, s[0].tau)
    }

    const MGL: f64 = 1.0 * 9.81 * 0.5;

    /// Torque mode is an applied force pair: with no gravity `q̈ = τ / I_hinge` exactly as in a
    /// symplectic step (1e-9), and the command is clamped to the effort limit.
    #[test]
    fn rapier_torque_actuator_accelerates_the_hinge_by_tau_over_inertia() {
        let mut w = pendulum("{mode: torque, target: 10.0, effort_limit: 3.0}", 0.0, "");
        w.run(0.1).unwrap();
        let (_, dq, tau) = hinge(&w);
        assert_eq!(tau, 3.0);
        let expect = 3.0 / (0.01 + 0.25) * 0.1;
        assert!((dq - expect).abs() < 1e-9, "dq {dq} vs {expect}");
    }

    /// Position mode is rapier's force-based motor (kp, kd): it settles where `kp (target − q)`
    /// balances gravity (the native engine's test, 1e-4 there; rapier's motor is a soft
    /// constraint with the same spring law, so the same 1e-4 rad), and the reported torque is the
    /// gravity torque it holds.
    #[test]
    fn rapier_position_servo_settles_where_the_spring_balances_gravity() {
        let (kp, target) = (50.0, 1.0);
        let mut w = pendulum(
            &format!("{{mode: position, kp: {kp}, kd: 5, target: {target}}}"),
            9.81,
            "",
        );
        w.run(10.0).unwrap();
        let (q, dq, tau) = hinge(&w);
        let mut e = 1.0;
        for _ in 0..50 {
            e -= (kp * (target - e) - MGL * f64::sin(e)) / (-kp - MGL * f64::cos(e));
        }
        assert!((q - e).abs() < 1e-4 && dq.abs() < 1e-4, "q {q} vs {e}, dq {dq}");
        assert!((tau - MGL * q.sin()).abs() < 1e-3, "tau {tau} vs {}", MGL * q.sin());
    }

    /// Velocity mode is a stiff rapier velocity motor bounded by the effort limit: it carries the
    /// pendulum over the top at its speed (within 1e-3 rad/s: the motor is solved with rapier's
    /// iterations, not exactly), and cannot against a load above its limit.
    #[test]
    fn rapier_velocity_servo_holds_its_speed_within_its_effort_limit() {
        let mut w = pendulum("{mode: velocity, target: 2.0, effort_limit: 10.0}", 9.81, ", qd0: 2.0");
        let mut worst: f64 = 0.0;
        for _ in 0..3000 {
            w.step().unwrap();
            worst = worst.max((hinge(&w).1 - 2.0).abs());
        }
        assert!(worst < 1e-3, "speed error {worst}");
        let mut w = pendulum("{mode: velocity, target: 2.0, effort_limit: 2.0}", 9.81, ", qd0: 2.0");
        let mut slowest = f64::INFINITY;
        for _ in 0..3000 {
            w.step().unwrap();
            slowest = slowest.min(hinge(&w).1);
        }
        assert!(
            slowest < 1.5,
            "held its speed against m g l = {MGL} > 2: slowest {slowest}"
        );
    }

    /// Accelerometers and gyros from the bodies' velocities (finite difference over the step):
    /// a free fall reads 0 (1e-9), a torque-free spin its rate on the gyro (1e-8), a box at rest
    /// on the floor +9.81 up (0.05 m/s²: rapier's soft contact leaves a small oscillation).
    #[test]
    fn rapier_accelerometer_and_gyro() {
        let world = |body: &str, sensors: &str, gravity: f64| {
            let text = format!(
            "name: s\nengine: {{type: rapier}}\nworld: {{gravity: [0, 0, {gravity}], dt: 0.001}}\nbodies:\n{body}\nsensors: {sensors}\n"
        );
            World::new(Scene::from_str(&text, "s.yaml").unwrap()).unwrap()
        };
        let mut w = world(
        "  - {name: b, mass: 1, inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]], joints: [{type: free, q0: {position: [0, 0, 10]}, qd0: {linear: [1, 0, 2]}}]}",
        "[{name: acc, type: accelerometer, body: b, pose: {position: [0.1, 0, 0]}}]",
        -9.81,
    );
        for _ in 0..500 {
            w.step().unwrap();
            let a = w.sensor("acc").unwrap();
            assert!(a.iter().all(|x| x.abs() < 1e-9), "free fall {a:?}");
        }
        let mut w = world(
        "  - {name: top, mass: 3, inertia: [[0.1, 0, 0], [0, 0.2, 0], [0, 0, 0.3]], joints: [{type: free, q0: {position: [1, 2, 3]}, qd0: {angular: [0, 0, 5]}}]}",
        "[{name: gyro, type: rate_gyro, body: top, pose: {orientation: [0.7071067811865476, 0, 0, 0.7071067811865476]}}]",
        0.0,
    );
        for _ in 0..2000 {
            w.step().unwrap();
            let g = w.sensor("gyro").unwrap();
            assert!(
                (g[0]).abs() < 1e-8 && (g[1] - 5.0).abs() < 1e-8 && g[2].abs() < 1e-8,
                "spin {g:?}"
            );
        }
        let mut w = world(
        "  - {name: ground, shapes: [{type: plane}]}\n  - {name: box, mass: 2, inertia: [[0.02, 0, 0], [0, 0.02, 0], [0, 0, 0.02]], joints: [{type: free, q0: {position: [0.3, -0.2, 0.1]}}], shapes: [{type: box, half_extents: [0.1, 0.1, 0.1]}]}",
        "[{name: imu, type: accelerometer, body: box, pose: {position: [0.05, 0.02, 0.08]}}]",
        -9.81,
    );
        w.run(1.0).unwrap();
        let a = w.sensor("imu").unwrap();
        assert!(
            a[0].abs() < 0.05 && a[1].abs() < 0.05 && (a[2] - 9.81).abs() < 0.05,
            "at rest {a:?}"
        );
    }

    /// Contacts are reported with their force on B along the normal from A to B: the forces on
    /// a box resting on the floor sum to its weight (1e-6 relative: the normal impulses of a
    /// converged resting contact), through World's engine-agnostic contact wrenches.
    #[test]
    fn rapier_contact_forces_on_a_resting_box_carry_its_weight() {
        let text = "name: r\nengine: {type: rapier}\nworld: {gravity: [0, 0, -9.81], dt: 0.001}\nbodies:\n  - {name: ground, shapes: [{type: plane}]}\n  - {name: box, mass: 2, inertia: [[0.02, 0, 0], [0, 0.02, 0], [0, 0, 0.02]], joints: [{type: free, q0: {position: [0, 0, 0.1]}}], shapes: [{type: box, half_extents: [0.1, 0.1, 0.1]}]}\n";
        let mut w = World::new(Scene::from_str(text, "r.yaml").unwrap()).unwrap();
        w.run(1.0).unwrap();
        let b = w.body_index("box").unwrap();
        let (f, _) = w.contact_wrenches()[b];
        assert!(w.contacts().len() >= 4, "{} contacts", w.contacts().len());
        assert!((f - Vec3::new(0.0, 0.0, 2.0 * 9.81)).norm() < 1e-6 * 2.0 * 9.81, "contact force on the box {f:?}");
    }
}

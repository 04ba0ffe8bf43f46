//! A running step allocates nothing (a counting global allocator): its buffers are sized at
//! load and grow only in a step whose contacts (and so rows, pairs, warm-start entries)
//! exceed those of every earlier step.
#![allow(unsafe_code)] // implementing GlobalAlloc is unsafe by definition

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use karakuri_sim::{Scene, World};

mod common;
use common::scene_path;

struct Counting;
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Set on the thread that steps: only its allocations count (libtest's own threads allocate
    /// too, e.g. its "running for over 60 seconds" notice on a loaded machine).
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    /// The step derivatives' test counts on its own thread here, apart from `ALLOCATIONS`
    /// (the tests run side by side).
    static COUNTING_HERE: Cell<bool> = const { Cell::new(false) };
    static HERE: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    if COUNTING.with(Cell::get) {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
    }
    if COUNTING_HERE.with(Cell::get) {
        HERE.with(|h| h.set(h.get() + 1));
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn scene(name: &str) -> Scene {
    Scene::from_file(scene_path(name)).unwrap()
}

/// Steps `world` `steps` times; returns the allocations of the steps whose contact count did
/// not exceed every earlier step's (those may grow the contact buffers), and how many steps
/// set a new high.
fn allocations_outside_new_highs(world: &mut World, steps: usize) -> (usize, usize) {
    let (mut high, mut highs, mut stray) = (world.contacts().len(), 0, 0);
    for k in 0..steps {
        let before = ALLOCATIONS.load(Ordering::SeqCst);
        COUNTING.with(|c| c.set(true));
        let stepped = world.step();
        COUNTING.with(|c| c.set(false));
        stepped.unwrap();
        let n = ALLOCATIONS.load(Ordering::SeqCst) - before;
        let nc = world.contacts().len();
        if nc > high {
            high = nc;
            highs += 1;
        } else if n > 0 {
            eprintln!("step {k}: {n} allocations with {nc} contacts (high {high})");
            stray += n;
        }
    }
    (stray, highs)
}

/// The only test in this binary, so no other thread allocates while it counts. Every
/// validation scene (contacts with friction, restitution, stacks, RK4, loops with SHAKE, the
/// direct solver, a mixed pile), an MJCF robot's sensors, equalities and tendon range, triangle
/// meshes (trimesh floors, a height field), and a penalty, a joint-limit and an actuator and
/// sensor scene.
#[test]
fn a_running_step_allocates_nothing() {
    let scenes = [
        ("01_free_fall.json", 500),
        ("02_bounce.json", 1500),
        ("03_slide.json", 1000),
        ("04b_incline_slide.json", 500),
        ("05a_stack5.json", 1000),
        ("06_double_pendulum.json", 1000),
        ("08_fourbar.json", 1000),
        ("09b_newton_cradle_gap.json", 1000),
        ("11_pile_mixed.json", 300),
        // the impact passes through a touching row, the split impulse on a ragdoll's limbs
        ("cradle_touching.json", 700),
        ("ragdoll.yaml", 1000),
    ];
    let mut total = 0;
    for (name, steps) in scenes {
        let mut world = World::new(scene(name)).unwrap();
        let (stray, highs) = allocations_outside_new_highs(&mut world, steps);
        eprintln!("{name}: {stray} allocations outside the {highs} steps with a new contact high");
        total += stray;
    }
    // an MJCF robot with every sensor kind, a connect, a weld, a joint equality, a tendon range
    let mjcf = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/scenes/mjcf_constraints.xml");
    let mut world = World::new(Scene::from_file(mjcf).unwrap()).unwrap();
    assert!(!world.warnings().iter().any(|m| m.contains("MJCF ")), "{:?}", world.warnings());
    let (stray, highs) = allocations_outside_new_highs(&mut world, 1000);
    eprintln!("mjcf_constraints.xml: {stray} allocations outside the {highs} steps with a new contact high");
    total += stray;
    // Choreonoid's SR1 (a .body alone on a floor): its legs' cylinders touch each other, the
    // generic convex pair with EPA (its buffers kept in the collision workspace)
    let sr1 = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/body/SR1/SR1.body");
    let mut world = World::from_file(sr1).unwrap();
    let (stray, highs) = allocations_outside_new_highs(&mut world, 1000);
    eprintln!("SR1.body: {stray} allocations outside the {highs} steps with a new contact high");
    total += stray;
    // triangle meshes: balls on trimesh floors (ball-triangle pairs), and an MJCF height field
    // (a static trimesh solid) under a rolling ball and a resting box (box-triangle pairs)
    let slope = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/mjcf/hfield/slope.xml");
    for (name, mut world) in [("trimesh_floor.yaml", World::new(scene("trimesh_floor.yaml")).unwrap()), ("slope.xml", World::from_file(slope).unwrap())] {
        let (stray, highs) = allocations_outside_new_highs(&mut world, 1000);
        eprintln!("{name}: {stray} allocations outside the {highs} steps with a new contact high");
        total += stray;
    }
    for text in [PENALTY, LIMITS, ACTUATORS, JOINTS_AND_TRACKS, CYLINDERS_AND_CONES] {
        let mut world = World::new(Scene::from_str(text, "inline.yaml").unwrap()).unwrap();
        if world.joint_index("hinge").is_some() {
            world.set_joint_torque("hinge", 0.5).unwrap();
        }
        if text == ACTUATORS {
            world.add_controller(Box::new(Sway), 0.002).unwrap();
            let push = karakuri::spatial::Vec3::new(0.0, 2.0, 0.0);
            world.apply_wrench("servo", push, push, 0.1).unwrap();
        }
        if text == PENALTY {
            world.add_joint_forces(&["hinge"], Box::new(Push)).unwrap();
        }
        if text == JOINTS_AND_TRACKS {
            world.add_controller(Box::new(Drive), 0.002).unwrap();
        }
        total += allocations_outside_new_highs(&mut world, 600).0;
    }
    // a Solo-12 held by its servos falls asleep (at about 0.7 s), then a new target wakes it
    let mut world = World::new(Scene::from_str(SOLO_ASLEEP, "solo.yaml").unwrap()).unwrap();
    let (stray, _) = allocations_outside_new_highs(&mut world, 1000);
    assert!(world.sleeping_bodies().unwrap() > 0, "the servo-held Solo-12 does not sleep");
    world.set_joint_target("solo/FL_KFE", -1.4).unwrap();
    let (woken, _) = allocations_outside_new_highs(&mut world, 300);
    assert_eq!(world.sleeping_bodies().unwrap(), 0);
    eprintln!("servo-held Solo-12 asleep and woken: {} allocations", stray + woken);
    total += stray + woken;
    assert_eq!(total, 0, "steps allocated (see the lines above)");
}

/// The step derivatives (decision record 0069) allocate at their first call only: a floating
/// quadruped under PD (semi-implicit Euler) and the double pendulum (RK4), derivatives and
/// steps in turn.
#[test]
fn step_derivatives_allocate_nothing_after_the_first_call() {
    let solo = "robots:
  - {name: solo, urdf: builtin:solo12.urdf, root: floating, collision: none, joint_damping: 0.05,
     pose: {position: [0, 0, 1]}, base_velocity: {angular: [0.5, 0.2, 0.1]},
     actuators: [{joints: '*', mode: position, kp: 8.0, kd: 0.2, target: 0.1}]}";
    let pendulum = std::fs::read_to_string(scene_path("06_double_pendulum.json")).unwrap();
    for text in [solo, pendulum.as_str()] {
        let mut world = World::new(Scene::from_str(text, "inline.yaml").unwrap()).unwrap();
        let (nv, nu) = world.step_derivative_sizes();
        let mut d = karakuri_sim::StepDerivatives::new(nv, nu);
        let here = || HERE.with(Cell::get);
        let first = here();
        COUNTING_HERE.with(|c| c.set(true));
        world.step_derivatives(&mut d).unwrap();
        let before = here();
        assert!(before > first, "the first call makes the workspace (the counter counts)");
        for _ in 0..20 {
            world.step_derivatives(&mut d).unwrap();
            world.step().unwrap();
        }
        COUNTING_HERE.with(|c| c.set(false));
        let n = here() - before;
        assert_eq!(n, 0, "{nv} dofs: {n} allocations in 20 derivative calls and steps");
    }
}

/// A Solo-12 standing under PD with `engine.sleep.actuated` (0067).
const SOLO_ASLEEP: &str = r#"
name: solo_asleep
world: {gravity: [0, 0, -9.81], dt: 0.001}
engine: {sleep: {actuated: true}}
bodies:
  - {name: floor, parent: world, shapes: [{type: plane}]}
robots:
  - name: solo
    urdf: builtin:solo12.urdf
    root: floating
    pose: {position: [0, 0, 0.235]}
    q0: {FL_HAA: 0.1, FL_HFE: 0.8, FL_KFE: -1.6, FR_HAA: -0.1, FR_HFE: 0.8, FR_KFE: -1.6, HL_HAA: 0.1, HL_HFE: -0.8, HL_KFE: 1.6, HR_HAA: -0.1, HR_HFE: -0.8, HR_KFE: 1.6}
    collision: none
    actuators:
      - {joints: [FL_HAA, HL_HAA], mode: position, kp: 8, kd: 0.2, target: 0.1}
      - {joints: [FR_HAA, HR_HAA], mode: position, kp: 8, kd: 0.2, target: -0.1}
      - {joints: [FL_HFE, FR_HFE], mode: position, kp: 8, kd: 0.2, target: 0.8}
      - {joints: [HL_HFE, HR_HFE], mode: position, kp: 8, kd: 0.2, target: -0.8}
      - {joints: [FL_KFE, FR_KFE], mode: position, kp: 8, kd: 0.2, target: -1.6}
      - {joints: [HL_KFE, HR_KFE], mode: position, kp: 8, kd: 0.2, target: 1.6}
    shapes:
      - {link: FL_FOOT, type: sphere, radius: 0.016}
      - {link: FR_FOOT, type: sphere, radius: 0.016}
      - {link: HL_FOOT, type: sphere, radius: 0.016}
      - {link: HR_FOOT, type: sphere, radius: 0.016}
"#;

/// Cylinders and cones piled crosswise: their pairs penetrate (GJK finds an intersection,
/// then EPA runs), the generic convex path whose EPA the collision workspace keeps.
const CYLINDERS_AND_CONES: &str = r#"
name: cylinders_and_cones
world: {dt: 0.001}
bodies:
  - {name: ground, shapes: [{type: plane}]}
  - name: c1
    mass: 1
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    joints: [{type: free, q0: {position: [0, 0, 0.1], orientation: [0.7071068, 0, 0, 0.7071068]}}]
    shapes: [{type: cylinder, radius: 0.1, half_length: 0.3}]
  - name: c2
    mass: 1
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    joints: [{type: free, q0: {position: [0.05, 0, 0.32], orientation: [0, 0.7071068, 0, 0.7071068]}}]
    shapes: [{type: cylinder, radius: 0.1, half_length: 0.3}]
  - name: k1
    mass: 1
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    joints: [{type: free, q0: {position: [0.1, 0.05, 0.55]}}]
    shapes: [{type: cone, radius: 0.15, half_length: 0.1}]
  - name: k2
    mass: 1
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    joints: [{type: free, q0: {position: [-0.1, 0.0, 0.8], orientation: [0.3826834, 0, 0, 0.9238795]}}]
    shapes: [{type: cone, radius: 0.15, half_length: 0.1}]
"#;

const PENALTY: &str = r#"
name: penalty
world: {dt: 0.001}
contact: {mode: penalty, stiffness: 20000, damping: 200}
bodies:
  - {name: ground, parent: world, shapes: [{type: plane}]}
  - name: box
    mass: 1
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    joints: [{type: free, q0: {position: [0, 0, 0.3]}, qd0: {linear: [0.5, 0, 0]}}]
    shapes: [{type: box, half_extents: [0.1, 0.1, 0.1]}]
  - name: arm
    mass: 1
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    pose_in_parent: {position: [2, 0, 1]}
    joints: [{type: revolute, name: hinge, axis: [0, 1, 0], damping: 0.1, stiffness: 2}]
"#;

const LIMITS: &str = r#"
name: limits
world: {dt: 0.001}
bodies:
  - name: arm
    mass: 1
    com: [0.5, 0, 0]
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    pose_in_parent: {position: [0, 0, 1]}
    joints: [{type: revolute, name: hinge, axis: [0, 1, 0], limits: [-0.5, 0.5], armature: 0.01, friction: 0.2}]
"#;

const ACTUATORS: &str = r#"
name: actuators
world: {dt: 0.001}
bodies:
  - name: arm
    mass: 1
    com: [0, 0, -0.5]
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    pose_in_parent: {position: [0, 0, 1]}
    joints: [{type: revolute, name: hinge, axis: [1, 0, 0], actuator: {mode: torque, target: {sine: {amplitude: 1, frequency: 2}}, effort_limit: 0.8}}]
  - name: servo
    mass: 1
    com: [0, 0, -0.5]
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    pose_in_parent: {position: [2, 0, 1]}
    joints: [{type: revolute, name: servo, axis: [1, 0, 0], actuator: {mode: position, kp: 100, kd: 5, target: {sine: {amplitude: 0.5, frequency: 1}}, effort_limit: 20}}]
  - name: wheel
    mass: 1
    com: [0, 0, -0.5]
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    pose_in_parent: {position: [4, 0, 1]}
    joints: [{type: revolute, name: wheel, axis: [1, 0, 0], actuator: {mode: velocity, target: 2, effort_limit: 3}}]
  - name: swing
    mass: 1
    com: [0, 0, -0.5]
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    pose_in_parent: {position: [8, 0, 1]}
    joints: [{type: revolute, name: swing, axis: [1, 0, 0], actuator: {mode: prescribed, target: {sine: {amplitude: 0.5, frequency: 1}}}}]
  - {name: ground, shapes: [{type: plane}]}
  - name: box
    mass: 1
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    joints: [{type: free, q0: {position: [6, 0, 0.3]}}]
    shapes: [{type: box, half_extents: [0.1, 0.1, 0.1]}]
sensors:
  - {name: imu, type: accelerometer, body: box, noise: {std: 0.01, bias: [0.1, 0, 0], seed: 3}}
  - {name: gyro, type: rate_gyro, body: servo, noise: {std: 0.001}}
  - {name: f, type: force, joint: servo}
  - {name: fb, type: force, joint: box_j0}
perturbations:
  - {body: box, force: [3, 0, 0], point: [0, 0.1, 0], start: 0.1, duration: 0.2}
  - {body: arm, torque: [0.5, 0, 0], start: 0.2, duration: 0.05}
"#;

/// A controller reading joints and sensors and commanding the servo's target.
struct Sway;

impl karakuri_sim::Controller for Sway {
    fn update(&mut self, io: &mut karakuri_sim::ControlIo<'_>) {
        let k = io.joint("servo").unwrap();
        let gyro = io.sensor("gyro").unwrap()[0];
        io.commands[k] = Some(0.3 * (io.time * 3.0).sin() + 1e-3 * gyro);
    }
}

/// A custom joint force (explicit, time-dependent).
struct Push;

impl karakuri_sim::JointForces for Push {
    fn forces(&self, t: f64, q: &[f64], _dq: &[f64], out: &mut [karakuri_sim::JointForce]) {
        out[0].tau = 0.1 * t.sin() - 0.01 * q[0];
    }
}

/// Extra joints of every kind (30 loop rows: more than the direct solver's default 24, which
/// SHAKE's dense solve still takes without allocating; a force sensor beside a loop) and track
/// surfaces driven by a controller.
const JOINTS_AND_TRACKS: &str = r#"
name: joints_and_tracks
world: {dt: 0.001}
bodies:
  - {name: ground, shapes: [{type: plane}]}
  - name: arm
    mass: 1
    com: [0.5, 0, 0]
    inertia: [[0.01, 0, 0], [0, 0.1, 0], [0, 0, 0.1]]
    pose_in_parent: {position: [0, 0, 2]}
    joints: [{type: revolute, name: hinge, axis: [0, 1, 0]}]
  - name: slider
    mass: 1
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    joints: [{type: free, q0: {position: [3, 0, 2]}}]
  - name: payload
    mass: 0.5
    inertia: [[0.001, 0, 0], [0, 0.001, 0], [0, 0, 0.001]]
    joints: [{type: free, q0: {position: [1, 0, 2]}}]
  - name: payload2
    mass: 0.5
    inertia: [[0.001, 0, 0], [0, 0.001, 0], [0, 0, 0.001]]
    joints: [{type: free, q0: {position: [0.5, 0, 2]}}]
  - name: payload3
    mass: 0.5
    inertia: [[0.001, 0, 0], [0, 0.001, 0], [0, 0, 0.001]]
    joints: [{type: free, q0: {position: [0.5, 0, 2.5]}}]
  - name: bob
    mass: 0.5
    inertia: [[0.001, 0, 0], [0, 0.001, 0], [0, 0, 0.001]]
    joints: [{type: free, q0: {position: [5, 0, 1.5]}}]
  - name: belt
    pose_in_parent: {position: [0, 3, 0.05]}
    shapes: [{type: box, half_extents: [2, 0.5, 0.05]}]
    track: {axis: [0, 1, 0], speed: 0.5, lateral_friction: 0.3}
  - name: box
    mass: 1
    inertia: [[0.006, 0, 0], [0, 0.006, 0], [0, 0, 0.006]]
    joints: [{type: free, q0: {position: [0, 3, 0.25]}}]
    shapes: [{type: box, half_extents: [0.1, 0.1, 0.1]}]
loop_constraints:
  - {type: ball, body_a: arm, anchor_a: [0.75, 0, 0], body_b: world, anchor_b: [0.75, 0, 2]}
  - {type: piston, body_a: world, anchor_a: [3, 0, 2], body_b: slider, axis_a: [0, 0.6, 0.8]}
  - {type: weld, body_a: arm, anchor_a: [1, 0, 0], body_b: payload}
  - {type: weld, body_a: arm, anchor_a: [0.5, 0, 0], body_b: payload2}
  - {type: weld, body_a: payload2, anchor_a: [0, 0, 0.5], body_b: payload3}
  - {type: revolute, body_a: world, anchor_a: [5, 0, 2], body_b: bob, anchor_b: [0, 0, 0.5], axis_a: [0, 1, 0]}
sensors:
  - {name: f, type: force, joint: hinge}
"#;

/// A controller changing the belt's speed.
struct Drive;

impl karakuri_sim::Controller for Drive {
    fn update(&mut self, io: &mut karakuri_sim::ControlIo<'_>) {
        let k = io.track("belt").unwrap();
        io.track_commands[k] = Some(0.5 * (io.time * 3.0).cos());
    }
}

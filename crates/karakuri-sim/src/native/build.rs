//! `SimModel::from_scene`: everything the simulation needs that never changes once built —
//! the world's karakuri [`Model`] (free bodies as free flyers, hinge chains, URDF robots
//! grafted as subtrees), the simulated bodies, the collision shapes and pairs, joint passive
//! parameters, limits and loop closures, and the initial state. Read through today's scene
//! fields, so the scene's own types can change beside it.

use karakuri::algorithms;
use karakuri::spatial::{quat_from_xyzw, Mat3, Se3, Vec3};
use karakuri::{Data, Model};
use nalgebra::DVector;

use super::assemble::{assemble, v3};
use super::joint_forces::{JointForceSet, JointFriction};
use super::plan::StagePlan;
use crate::joint_forces::SpringDamper;
use super::tracks::Track;
use crate::collision::{joint_frame_bounds, ColShape, Collider};
use crate::engine::{BodyInfo, SensorInfo};
use crate::scene::{ActuatorMode, ContactMode, LoopKind, SensorKind, Target, ContactParams, EngineParams, Scene};
use crate::SimError;

/// A simulated body: a scene body or a robot link, carried by a model joint.
#[derive(Clone, Debug)]
pub struct SimBody {
    /// Name.
    pub name: String,
    /// Model joint that moves it (0: static).
    pub joint: usize,
    /// Body frame in the joint frame.
    pub placement: Se3,
    /// Parent body (for parent/child collision exclusion).
    pub parent: Option<usize>,
    /// Mass.
    pub mass: f64,
    /// The centre of its collision shapes' bounding box in the joint frame and the box's
    /// smallest extent (m), for the tunnelling watch (None: no bounded shape).
    pub bounds: Option<(Vec3, f64)>,
}

/// A position range of a one-dof joint.
#[derive(Clone, Copy, Debug)]
pub struct Limit {
    /// Its velocity index.
    pub dof: usize,
    /// Its configuration index.
    pub iq: usize,
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
}

/// A loop closure (Choreonoid's extra joint): anchor `pa` on joint `ja` and anchor `pb` on
/// joint `jb` (both in the joint frames), held together by the rows of its kind (see
/// [`super::loops::loop_rows`]).
#[derive(Clone, Copy, Debug)]
pub struct LoopSpec {
    /// Ball, revolute, piston or weld.
    pub kind: LoopKind,
    /// Joint of body A (0: the world).
    pub ja: usize,
    /// Anchor on A (joint frame).
    pub pa: Vec3,
    /// Joint of body B.
    pub jb: usize,
    /// Anchor on B (joint frame).
    pub pb: Vec3,
    /// Hinge or slider axis in A's joint frame (revolute, piston).
    pub axis_a: Vec3,
    /// The same axis in B's joint frame, from the initial configuration.
    pub axis_b: Vec3,
    /// B's joint axes in A's joint axes at the initial configuration, `R_aᵀ R_b` (weld: the
    /// relative orientation held).
    pub rel_rotation: Mat3,
}

impl LoopSpec {
    /// Its number of constraint rows: ball 3, piston 4, revolute 5, weld 6.
    pub fn rows(&self) -> usize {
        match self.kind {
            LoopKind::Ball => 3,
            LoopKind::Piston => 4,
            LoopKind::Revolute => 5,
            LoopKind::Weld => 6,
        }
    }
}

/// The actuator of a one-dof joint (see [`crate::scene::ActuatorSpec`]).
#[derive(Clone, Debug)]
pub struct Actuator {
    /// The world joint's name (`robot/joint` for robots).
    pub name: String,
    /// Its velocity index.
    pub dof: usize,
    /// Its configuration index.
    pub iq: usize,
    /// Mode.
    pub mode: ActuatorMode,
    /// Position gain.
    pub kp: f64,
    /// Velocity gain.
    pub kd: f64,
    /// Target as given in the scene (a command set through the world replaces it).
    pub target: Target,
    /// Largest |torque| (∞: unlimited).
    pub effort_limit: f64,
    /// Largest |target speed| (∞: unlimited).
    pub velocity_limit: f64,
}

/// A sensor, resolved onto the world model.
#[derive(Clone, Debug)]
pub struct Sensor {
    /// Name.
    pub name: String,
    /// What it measures.
    pub kind: SensorKind,
    /// The model joint whose frame carries it (force: the joint it measures).
    pub joint: usize,
    /// Sensor frame in that joint's frame.
    pub placement: Se3,
    /// Force sensors: which joints are on the child side (the joint's subtree) `(njoints)`;
    /// empty for the others.
    pub subtree: Vec<bool>,
    /// Gaussian noise and bias of its readings (`None`: exact).
    pub noise: Option<Noise>,
}

/// A sensor's noise, per reading component (`[x, y, z, 0, 0, 0]` or `[fx .. tz]`).
#[derive(Clone, Copy, Debug)]
pub struct Noise {
    /// Standard deviations.
    pub std: [f64; 6],
    /// Biases.
    pub bias: [f64; 6],
    /// Seed of the sensor's stream (its stream is the sensor's index of this seed).
    pub seed: u64,
}

/// Per-dof passive parameters `(nv)` each (springs and dampers are joint forces:
/// [`SimModel::joint_forces`]).
#[derive(Clone, Debug)]
pub struct DofParams {
    /// Armature (rotor inertia) added to qH's diagonal.
    pub armature: Vec<f64>,
}

/// The description of a simulated world (MuJoCo's `mjModel`): built once by
/// [`SimModel::from_scene`], read by every stage, never written by a step.
pub struct SimModel {
    /// The world's multibody model.
    pub model: Model,
    /// Time step (s).
    pub dt: f64,
    /// Contact model parameters.
    pub contact: ContactParams,
    /// Engine settings (integrator, solver, guards).
    pub engine: EngineParams,
    /// Simulated bodies, in the world's body order.
    pub bodies: Vec<SimBody>,
    /// What the world reports of each body (same order).
    pub infos: Vec<BodyInfo>,
    /// Passive joint parameters.
    pub dofs: DofParams,
    /// Joint position ranges.
    pub limits: Vec<Limit>,
    /// Loop closures.
    pub loops: Vec<LoopSpec>,
    /// Joint actuators, in scene order (bodies' joints, then robots').
    pub actuators: Vec<Actuator>,
    /// Sensors, in scene order.
    pub sensors: Vec<Sensor>,
    /// What the world reports of each sensor (same order).
    pub sensor_infos: Vec<SensorInfo>,
    /// The one-dof joints (world joint index, in model order) and their names.
    pub one_dof: Vec<usize>,
    /// Names of [`SimModel::one_dof`].
    pub one_dof_names: Vec<String>,
    /// Each one-dof joint's actuator, if any `(one_dof)`.
    pub one_dof_actuator: Vec<Option<usize>>,
    /// Collision shapes and pairs.
    pub collider: Collider,
    /// Initial configuration `(nq)`.
    pub q0: DVector<f64>,
    /// Initial velocity `(nv)`.
    pub v0: DVector<f64>,
    /// Non-fatal remarks of building it (a URDF's repaired inertias, ...), each naming its robot.
    pub warnings: Vec<String>,
    /// The scene's `perturbations`, windows in steps.
    pub perturbations: Vec<super::external::Push>,
    /// Joint forces (the scene's springs and dampers first, then those registered on the
    /// world), evaluated by the joint-force stage.
    pub joint_forces: Vec<JointForceSet>,
    /// Joints with Coulomb friction (a bounded row each).
    pub frictions: Vec<JointFriction>,
    /// Track surfaces, in scene order.
    pub tracks: Vec<Track>,
    /// Each body's track, if any `(bodies)`.
    pub body_track: Vec<Option<usize>>,
    /// Names of [`SimModel::tracks`].
    pub track_names: Vec<String>,
    /// The sleep settings and trees (see [`super::sleep`]).
    pub sleep: super::sleep::SleepModel,
    /// Which optional stages the step runs, from what the world holds ([`StagePlan::of`]).
    pub plan: StagePlan,
}

impl SimModel {
    /// Builds the world of a scene: the model, bodies, shapes, pairs, joint parameters, limits,
    /// loops and initial state. Errors name the scene file and the element.
    pub fn from_scene(scene: &Scene) -> Result<SimModel, SimError> {
        let asm = assemble(scene)?;
        let model = asm.model;
        let mut q = algorithms::neutral(&model);
        let mut v = DVector::zeros(model.nv);
        for x in &asm.q0 {
            q[model.idx_q[x.joint]] = x.value;
        }
        for x in &asm.v0 {
            v[model.idx_v[x.joint]] = x.value;
        }
        for f in &asm.free_start {
            let (iq, iv) = (model.idx_q[f.joint], model.idx_v[f.joint]);
            q.as_mut_slice()[iq..iq + 3].copy_from_slice(&f.pose.position);
            q.as_mut_slice()[iq + 3..iq + 7].copy_from_slice(&f.pose.orientation);
            // the free flyer's velocity is in its body frame
            let rt = quat_from_xyzw(&f.pose.orientation).transpose();
            let (l, a) = (rt * v3(&f.linear), rt * v3(&f.angular));
            v.as_mut_slice()[iv..iv + 3].copy_from_slice(l.as_slice());
            v.as_mut_slice()[iv + 3..iv + 6].copy_from_slice(a.as_slice());
        }
        let nv = model.nv;
        let mut dofs = DofParams { armature: vec![0.0; nv] };
        // the scene's springs and dampers: one built-in joint-force set
        let mut springs = (Vec::new(), Vec::new(), SpringDamper::default());
        let mut frictions = Vec::new();
        for s in &asm.dofs {
            let k = model.idx_v[s.joint];
            dofs.armature[k] = s.armature;
            if s.damping != 0.0 || s.stiffness != 0.0 {
                springs.0.push(model.idx_q[s.joint]);
                springs.1.push(k);
                springs.2.stiffness.push(s.stiffness);
                springs.2.damping.push(s.damping);
                springs.2.reference.push(s.spring_reference);
            }
            if s.friction > 0.0 {
                frictions.push(JointFriction { dof: k, friction: s.friction });
            }
        }
        let mut joint_forces = Vec::new();
        if !springs.1.is_empty() {
            let (iq, dof, forces) = springs;
            joint_forces.push(JointForceSet { iq, dof, forces: Box::new(forces) });
        }
        let limits: Vec<Limit> = asm
            .limits
            .iter()
            .map(|l| Limit {
                dof: model.idx_v[l.joint],
                iq: model.idx_q[l.joint],
                lo: l.lower,
                hi: l.upper,
            })
            .collect();
        let actuators: Vec<Actuator> = asm
            .actuators
            .iter()
            .map(|a| Actuator {
                name: model.joint_names[a.joint].clone(),
                dof: model.idx_v[a.joint],
                iq: model.idx_q[a.joint],
                mode: a.spec.mode,
                kp: a.spec.kp,
                kd: a.spec.kd,
                target: a.spec.target.clone(),
                effort_limit: a.spec.effort_limit.unwrap_or(f64::INFINITY),
                velocity_limit: a.spec.velocity_limit.unwrap_or(f64::INFINITY),
            })
            .collect();
        // a prescribed joint's target within its limits (else the limit rows and the
        // prescribed row contradict each other)
        for a in actuators.iter().filter(|a| a.mode == ActuatorMode::Prescribed) {
            let (lo, hi) = a.target.range();
            if let Some(l) = limits.iter().find(|l: &&Limit| l.dof == a.dof) {
                if lo < l.lo || hi > l.hi {
                    let file = scene.source.as_ref().map_or("scene".to_string(), |p| p.display().to_string());
                    let reason = format!(
                        "joint '{}': the prescribed target spans [{lo}, {hi}], outside the joint's limits [{}, {}]",
                        a.name, l.lo, l.hi
                    );
                    return Err(crate::scene::scene_error(&file, &actuator_path(scene, &a.name), reason));
                }
            }
        }
        // a prescribed joint starts on its trajectory, at the velocity the step's integrator
        // would have arriving there (`(x(0) − x(−dt)) / dt`, as every later step's), so its
        // first step asks no jump of it
        for a in actuators.iter().filter(|a| a.mode == ActuatorMode::Prescribed) {
            let (x0, x1) = (a.target.at(0.0).0, a.target.at(-scene.world.dt).0);
            (q[a.iq], v[a.dof]) = (x0, (x0 - x1) / scene.world.dt);
        }
        let mut bodies = asm.bodies;
        for (bi, b) in bodies.iter_mut().enumerate() {
            let boxes = asm.shapes.iter().filter(|s| s.body == bi).filter_map(joint_frame_bounds);
            b.bounds = boxes
                .reduce(|(lo, hi), (l, h)| (lo.inf(&l), hi.sup(&h)))
                .map(|(lo, hi)| ((lo + hi) / 2.0, (hi - lo).min()));
        }
        let sensors = sensors(scene, &model, &bodies)?;
        let sensor_infos = sensors
            .iter()
            .map(|s| SensorInfo {
                name: s.name.clone(),
                kind: s.kind,
            })
            .collect();
        let one_dof: Vec<usize> = (1..model.njoints).filter(|&j| model.nvs[j] == 1).collect();
        let one_dof_names = one_dof.iter().map(|&j| model.joint_names[j].clone()).collect();
        let one_dof_actuator = one_dof
            .iter()
            .map(|&j| actuators.iter().position(|a: &Actuator| a.dof == model.idx_v[j]))
            .collect();
        let mut data = Data::new(&model);
        algorithms::forward_kinematics(&model, &mut data, &q);
        let o_m_i = data.joint_placements()?;
        let mut warnings = asm.warnings;
        let all = collider(scene, &bodies, asm.shapes.clone(), &[]);
        let overlapping = overlapping_links(scene, &bodies, &all, o_m_i, &mut warnings);
        let collider = if overlapping.is_empty() {
            all
        } else {
            collider(scene, &bodies, asm.shapes, &overlapping)
        };
        // B's axis and relative orientation from the initial configuration
        let mut loops = asm.loops;
        for l in &mut loops {
            let (xa, xb) = (o_m_i[l.ja], o_m_i[l.jb]);
            l.axis_b = xb.rotation.transpose() * (xa.rotation * l.axis_a);
            l.rel_rotation = xa.rotation.transpose() * xb.rotation;
        }
        let tracks: Vec<Track> = scene
            .bodies
            .iter()
            .enumerate()
            .filter_map(|(bi, bs)| {
                let t = bs.track?;
                Some(Track {
                    name: bs.name.clone(),
                    body: bi,
                    joint: bodies[bi].joint,
                    direction: bodies[bi].placement.rotation * v3(&t.direction),
                    speed: t.speed,
                })
            })
            .collect();
        let mut body_track = vec![None; bodies.len()];
        for (k, t) in tracks.iter().enumerate() {
            body_track[t.body] = Some(k);
        }
        let infos = bodies
            .iter()
            .map(|b| BodyInfo {
                name: b.name.clone(),
                is_static: b.joint == 0,
                mass: b.mass,
            })
            .collect();
        let perturbations = super::external::perturbations(scene, &bodies, scene.world.dt)?;
        let mut sim = SimModel {
            model,
            dt: scene.world.dt,
            contact: scene.contact.clone(),
            engine: scene.engine.clone(),
            bodies,
            infos,
            dofs,
            limits,
            loops,
            actuators,
            sensors,
            sensor_infos,
            one_dof,
            one_dof_names,
            one_dof_actuator,
            collider,
            q0: q,
            v0: v,
            warnings,
            perturbations,
            joint_forces,
            frictions,
            track_names: tracks.iter().map(|t| t.name.clone()).collect(),
            tracks,
            body_track,
            sleep: Default::default(),
            plan: StagePlan::default(),
        };
        sim.sleep = super::sleep::SleepModel::new(&sim);
        sim.plan = StagePlan::of(&sim);
        Ok(sim)
    }

    /// The name of the body a joint moves (for error messages).
    pub fn body_of_joint(&self, joint: usize) -> &str {
        self.bodies
            .iter()
            .find(|b| b.joint == joint)
            .map_or(&self.model.body_names[joint], |b| &b.name)
    }
}

/// Where the actuator of world joint `joint` is written in the scene: a body joint's
/// `actuator.target`, or the robot's `actuators`.
fn actuator_path(scene: &Scene, joint: &str) -> String {
    for (bi, b) in scene.bodies.iter().enumerate() {
        if let Some(k) = b.joints.iter().position(|j| j.name() == joint) {
            return format!("bodies[{bi}].joints[{k}].actuator.target");
        }
    }
    match scene.robots.iter().position(|r| joint.starts_with(&format!("{}/", r.name))) {
        Some(ri) => format!("robots[{ri}].actuators"),
        None => "actuators".into(),
    }
}

/// The scene's sensors on the world model: a body's sensor on the body's joint (pose composed
/// with the body's placement), a force sensor on its joint with the joint's subtree.
fn sensors(scene: &Scene, model: &Model, bodies: &[SimBody]) -> Result<Vec<Sensor>, SimError> {
    let err = |i: usize, key: &str, reason: String| {
        let file = scene.source.as_ref().map_or("scene".to_string(), |p| p.display().to_string());
        crate::scene::scene_error(&file, &format!("sensors[{i}].{key}"), reason)
    };
    let mut out = Vec::with_capacity(scene.sensors.len());
    for (i, s) in scene.sensors.iter().enumerate() {
        let pose = Se3::new(quat_from_xyzw(&s.pose.orientation), v3(&s.pose.position));
        let sensor = match (s.kind, &s.body, &s.joint) {
            (SensorKind::Force, _, Some(name)) => {
                let j = model
                    .joint_id(name)
                    .filter(|j| j.0 != 0)
                    .ok_or_else(|| err(i, "joint", format!("unknown joint '{name}'")))?
                    .0;
                let mut subtree = vec![false; model.njoints];
                for k in j..model.njoints {
                    subtree[k] = k == j || subtree[model.parents[k]];
                }
                Sensor { name: s.name.clone(), kind: s.kind, joint: j, placement: pose, subtree, noise: None }
            }
            (_, Some(name), _) => {
                let b = bodies
                    .iter()
                    .find(|b| &b.name == name)
                    .ok_or_else(|| err(i, "body", format!("unknown body '{name}'")))?;
                Sensor {
                    name: s.name.clone(),
                    kind: s.kind,
                    joint: b.joint,
                    placement: b.placement.compose(&pose),
                    subtree: Vec::new(),
                    noise: None,
                }
            }
            _ => return Err(err(i, "type", "a sensor needs `body` (accelerometer, rate_gyro) or `joint` (force)".into())),
        };
        let mut sensor = sensor;
        // accelerometers and gyros read 3 components
        let len = if s.kind == SensorKind::Force { 6 } else { 3 };
        let part = |p: &crate::scene::PerComponent, k: usize| if k < len { p.get(k) } else { 0.0 };
        sensor.noise = s.noise.as_ref().map(|n| Noise {
            std: std::array::from_fn(|k| part(&n.std, k)),
            bias: std::array::from_fn(|k| part(&n.bias, k)),
            seed: n.seed,
        });
        out.push(sensor);
    }
    Ok(out)
}

/// The body pairs `(a, b)`, `a < b`, of one robot whose collision shapes overlap at the
/// initial placements `o_m_i` (penetration > 0), unless the robot keeps them
/// (`keep_overlapping_self_collisions`); one warning per robot lists them with the depth, as
/// MoveIt's "disabled collisions". Reads the shapes and pairs of `all` (every pair the scene
/// allows).
fn overlapping_links(
    scene: &Scene,
    bodies: &[SimBody],
    all: &Collider,
    o_m_i: &[Se3],
    warnings: &mut Vec<String>,
) -> Vec<(usize, usize)> {
    let robot_of = |b: usize| {
        let name = &bodies[b].name;
        scene.robots.iter().position(|r| name.starts_with(&format!("{}/", r.name)))
    };
    let mut raw = Vec::new();
    all.detect(&mut all.work(), o_m_i, 0.0, &mut raw);
    let mut found: Vec<(usize, (usize, usize), f64)> = vec![];
    for c in raw.iter().filter(|c| c.depth > 0.0) {
        let (a, b) = (all.shapes[c.shape_a].body, all.shapes[c.shape_b].body);
        let (Some(ra), Some(rb)) = (robot_of(a), robot_of(b)) else { continue };
        if ra != rb || scene.robots[ra].keep_overlapping_self_collisions {
            continue;
        }
        let key = (a.min(b), a.max(b));
        match found.iter_mut().find(|f| f.1 == key) {
            Some(f) => f.2 = f.2.max(c.depth),
            None => found.push((ra, key, c.depth)),
        }
    }
    for (ri, r) in scene.robots.iter().enumerate() {
        let listed: Vec<String> = found
            .iter()
            .filter(|f| f.0 == ri)
            .map(|(_, (a, b), d)| format!("{} – {} ({:.1} mm)", bodies[*a].name, bodies[*b].name, d * 1e3))
            .collect();
        if !listed.is_empty() {
            warnings.push(format!(
                "robot '{}': {} link pair(s) overlap in the initial configuration and do not collide with each other (set keep_overlapping_self_collisions: true to keep them): {}",
                r.name,
                listed.len(),
                listed.join(", ")
            ));
        }
    }
    found.into_iter().map(|f| f.1).collect()
}

/// The collision pairs: shapes on one joint never touch; excluded pairs (the scene's, and
/// `more`: body pairs `(a, b)`, `a < b`) and parent/child pairs (if asked) neither; the others
/// take their pair's mode or the scene's default.
fn collider(
    scene: &Scene,
    bodies: &[SimBody],
    shapes: Vec<ColShape>,
    more: &[(usize, usize)],
) -> Collider {
    let index = |n: &str| bodies.iter().position(|x| x.name == n);
    let mut excluded: Vec<(usize, usize)> = scene
        .collision_exclude_pairs
        .iter()
        .filter_map(|[a, b]| {
            let (ia, ib) = (index(a)?, index(b)?);
            Some((ia.min(ib), ia.max(ib)))
        })
        .collect();
    excluded.extend_from_slice(more);
    let pair_modes: Vec<((usize, usize), ContactMode)> = scene
        .contact_pairs
        .iter()
        .filter_map(|p| {
            let (ia, ib) = (index(&p.bodies[0])?, index(&p.bodies[1])?);
            Some(((ia.min(ib), ia.max(ib)), p.mode))
        })
        .collect();
    let exclude_pc = scene.contact.exclude_parent_child;
    let default_mode = scene.contact.mode;
    Collider::new(shapes, |a, b| {
        if a.joint == b.joint {
            return None;
        }
        let key = (a.body.min(b.body), a.body.max(b.body));
        if excluded.contains(&key) {
            return None;
        }
        if exclude_pc
            && (bodies[a.body].parent == Some(b.body) || bodies[b.body].parent == Some(a.body))
        {
            return None;
        }
        Some(
            pair_modes
                .iter()
                .find(|(k, _)| *k == key)
                .map_or(default_mode, |(_, m)| *m),
        )
    })
}

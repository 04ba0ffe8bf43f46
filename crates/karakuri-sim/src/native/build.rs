//! `SimModel::from_scene`: everything the simulation needs that never changes once built —
//! the world's karakuri [`Model`] (free bodies as free flyers, hinge chains, URDF robots
//! grafted as subtrees), the simulated bodies, the collision shapes and pairs, joint passive
//! parameters, limits and loop closures, and the initial state. Read through today's scene
//! fields, so the scene's own types can change beside it.

use karakuri::algorithms;
use karakuri::spatial::{quat_from_xyzw, Se3, Vec3};
use karakuri::{Data, Model};
use nalgebra::DVector;

use super::assemble::{assemble, v3};
use crate::collision::{joint_frame_bounds, ColShape, Collider};
use crate::engine::{BodyInfo, SensorInfo};
use crate::scene::{ActuatorMode, ContactMode, SensorKind, Target, ContactParams, EngineParams, Scene};
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

/// A loop closure: anchor `pa` on joint `ja` held at anchor `pb` on joint `jb` (both in the
/// joint frames), and for a revolute loop B's hinge axis held along A's.
#[derive(Clone, Copy, Debug)]
pub struct LoopSpec {
    /// Joint of body A.
    pub ja: usize,
    /// Anchor on A (joint frame).
    pub pa: Vec3,
    /// Joint of body B.
    pub jb: usize,
    /// Anchor on B (joint frame).
    pub pb: Vec3,
    /// Two more (angular) rows align the hinge axes.
    pub revolute: bool,
    /// Hinge axis in A's joint frame.
    pub axis_a: Vec3,
    /// The same axis in B's joint frame, from the initial configuration.
    pub axis_b: Vec3,
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
}

/// Per-dof passive parameters `(nv)` each.
#[derive(Clone, Debug)]
pub struct DofParams {
    /// Armature (rotor inertia) added to qH's diagonal.
    pub armature: Vec<f64>,
    /// Viscous damping (N·m·s/rad or N·s/m), implicit in the step.
    pub damping: Vec<f64>,
    /// Spring stiffness (N·m/rad or N/m), implicit in the step.
    pub stiffness: Vec<f64>,
    /// Spring rest position (joint coordinate).
    pub spring_reference: Vec<f64>,
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
        let mut dofs = DofParams {
            armature: vec![0.0; nv],
            damping: vec![0.0; nv],
            stiffness: vec![0.0; nv],
            spring_reference: vec![0.0; nv],
        };
        for s in &asm.dofs {
            let k = model.idx_v[s.joint];
            dofs.damping[k] = s.damping;
            dofs.stiffness[k] = s.stiffness;
            dofs.spring_reference[k] = s.spring_reference;
            dofs.armature[k] = s.armature;
        }
        let limits = asm
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
                target: a.spec.target,
                effort_limit: a.spec.effort_limit.unwrap_or(f64::INFINITY),
                velocity_limit: a.spec.velocity_limit.unwrap_or(f64::INFINITY),
            })
            .collect();
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
        // loop axes of B from the initial configuration
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
        // loop axes of B from the initial configuration
        let mut loops = asm.loops;
        for l in &mut loops {
            let (xa, xb) = (o_m_i[l.ja], o_m_i[l.jb]);
            l.axis_b = xb.rotation.transpose() * (xa.rotation * l.axis_a);
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
        Ok(SimModel {
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
        })
    }

    /// The name of the body a joint moves (for error messages).
    pub fn body_of_joint(&self, joint: usize) -> &str {
        self.bodies
            .iter()
            .find(|b| b.joint == joint)
            .map_or(&self.model.body_names[joint], |b| &b.name)
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
                Sensor { name: s.name.clone(), kind: s.kind, joint: j, placement: pose, subtree }
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
                }
            }
            _ => return Err(err(i, "type", "a sensor needs `body` (accelerometer, rate_gyro) or `joint` (force)".into())),
        };
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

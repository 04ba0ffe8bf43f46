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
use crate::engine::BodyInfo;
use crate::scene::{ContactMode, ContactParams, EngineParams, Scene};
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
    /// Collision shapes and pairs.
    pub collider: Collider,
    /// Initial configuration `(nq)`.
    pub q0: DVector<f64>,
    /// Initial velocity `(nv)`.
    pub v0: DVector<f64>,
    /// Non-fatal remarks of building it (a URDF's repaired inertias, ...), each naming its robot.
    pub warnings: Vec<String>,
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
        let mut bodies = asm.bodies;
        for (bi, b) in bodies.iter_mut().enumerate() {
            let boxes = asm.shapes.iter().filter(|s| s.body == bi).filter_map(joint_frame_bounds);
            b.bounds = boxes
                .reduce(|(lo, hi), (l, h)| (lo.inf(&l), hi.sup(&h)))
                .map(|(lo, hi)| ((lo + hi) / 2.0, (hi - lo).min()));
        }
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
            collider,
            q0: q,
            v0: v,
            warnings,
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

//! Scene → world model: scene bodies become free flyers, hinge chains or universe frames,
//! URDF robots are grafted as subtrees, and every collision element becomes a shape on its
//! joint. The result ([`Assembly`]) is by joint id; [`super::SimModel::from_scene`] turns it
//! into indices of q and v.


use karakuri::model::{Axis, FrameKind, JointId, JointType};
use karakuri::spatial::{quat_from_xyzw, Inertia, Mat3, Se3, Vec3};
use karakuri::{Model, ModelBuilder, ModelError};
use parry3d_f64::shape::SharedShape;

use super::build::{LoopSpec, SimBody};
use crate::collision::{make_shape, ColShape};
use crate::scene::{ActuatorSpec, JointSelection, JointSpec, Pose, RobotRoot, Scene};
use crate::SimError;

fn se3(p: &Pose) -> Se3 {
    Se3::new(quat_from_xyzw(&p.orientation), Vec3::from(p.position))
}

pub(super) fn v3(a: &[f64; 3]) -> Vec3 {
    Vec3::new(a[0], a[1], a[2])
}

fn scene_err(scene: &Scene, path: String, reason: impl Into<String>) -> SimError {
    SimError::Scene {
        file: scene
            .source
            .as_ref()
            .map_or("<scene>".into(), |p| p.display().to_string()),
        path,
        reason: reason.into(),
    }
}

fn model_err(scene: &Scene, path: String, e: ModelError) -> SimError {
    let reason = match e {
        ModelError::BadInertia { reason, .. } => reason,
        o => o.to_string(),
    };
    scene_err(scene, path, reason)
}

/// Where a body of the world model comes from in the scene: `bodies[i].joints[k]` for a scene
/// body's joint (its intermediate bodies are named `<body>#<k>`, the body itself carries the
/// last joint), `robots[i]` for a robot's link (`<robot>/<link>`), else `bodies`.
fn locate_model_body(scene: &Scene, name: &str) -> String {
    let (base, k) = match name.rsplit_once('#') {
        Some((b, k)) if k.parse::<usize>().is_ok() => (b, k.parse::<usize>().ok()),
        _ => (name, None),
    };
    if let Some(bi) = scene.bodies.iter().position(|b| b.name == base) {
        let n = scene.bodies[bi].joints.len();
        return match k.or(n.checked_sub(1)) {
            Some(k) => format!("bodies[{bi}].joints[{k}]"),
            None => format!("bodies[{bi}]"),
        };
    }
    let robot = scene.robots.iter().position(|r| name.starts_with(&format!("{}/", r.name)));
    robot.map_or_else(|| "bodies".into(), |ri| format!("robots[{ri}]"))
}

/// The collision shapes of scene body `bi`.
fn body_shapes(
    scene: &Scene,
    bi: usize,
    body: &SimBody,
    specs: &[crate::scene::ShapeSpec],
) -> Result<Vec<ColShape>, SimError> {
    let mut out = Vec::new();
    for (si, s) in specs.iter().enumerate() {
        if !s.collide {
            continue;
        }
        let (shape, extra, unbounded) = make_shape(&s.geometry)
            .map_err(|e| scene_err(scene, format!("bodies[{bi}].shapes[{si}]"), e))?;
        out.push(ColShape {
            body: bi,
            joint: body.joint,
            placement: body.placement.compose(&se3(&s.pose)).compose(&extra),
            shape,
            material: scene.material(s.material.as_deref()),
            unbounded,
        });
    }
    Ok(out)
}

/// An initial value of a one-dof joint.
pub(super) struct JointValue {
    pub(super) joint: usize,
    pub(super) value: f64,
}

/// The initial state of a free flyer: pose and world velocities of its origin.
pub(super) struct FreeStart {
    pub(super) joint: usize,
    pub(super) pose: Pose,
    pub(super) linear: [f64; 3],
    pub(super) angular: [f64; 3],
}

/// The passive parameters of a one-dof joint.
pub(super) struct DofSetting {
    pub(super) joint: usize,
    pub(super) damping: f64,
    pub(super) stiffness: f64,
    pub(super) spring_reference: f64,
    pub(super) armature: f64,
    /// Coulomb friction (the scene's `friction`, the URDF's `<dynamics friction>`).
    pub(super) friction: f64,
}

/// A position range of a one-dof joint.
pub(super) struct LimitSetting {
    pub(super) joint: usize,
    pub(super) lower: f64,
    pub(super) upper: f64,
}

/// The actuator of a one-dof joint, with the URDF's limits where the scene gives none.
pub(super) struct ActuatorSetting {
    pub(super) joint: usize,
    pub(super) spec: ActuatorSpec,
}

/// Everything a scene describes, by joint id (before indices into q and v are known).
pub(super) struct Assembly {
    pub(super) model: Model,
    pub(super) bodies: Vec<SimBody>,
    pub(super) shapes: Vec<ColShape>,
    pub(super) q0: Vec<JointValue>,
    pub(super) v0: Vec<JointValue>,
    pub(super) free_start: Vec<FreeStart>,
    pub(super) dofs: Vec<DofSetting>,
    pub(super) limits: Vec<LimitSetting>,
    pub(super) loops: Vec<LoopSpec>,
    pub(super) actuators: Vec<ActuatorSetting>,
    /// Non-fatal remarks (a URDF's repaired inertias, ...), each naming its robot.
    pub(super) warnings: Vec<String>,
}

/// The world model and the collision shapes of a scene (today's scene fields, read as is).
pub(super) fn assemble(scene: &Scene) -> Result<Assembly, SimError> {
    let mut b = ModelBuilder::new(&scene.name);
    b.set_gravity(v3(&scene.world.gravity));
    let mut bodies: Vec<SimBody> = Vec::new();
    let mut shapes = Vec::new();
    let mut q0 = Vec::new();
    let mut v0 = Vec::new();
    let mut free_start = Vec::new();
    let mut dofs = Vec::new();
    let mut limits = Vec::new();
    let mut warnings = Vec::new();
    let mut actuators: Vec<ActuatorSetting> = Vec::new();
    // (`robot/link`, world joint, link frame in the joint frame) of every robot link
    let mut links: Vec<(String, usize, Se3)> = Vec::new();
    // (world joint, URDF effort limit, URDF velocity limit) of robots' 1-dof joints
    let mut urdf_limits: Vec<(usize, f64, f64)> = Vec::new();
    for (bi, bs) in scene.bodies.iter().enumerate() {
        let path = |s: &str| format!("bodies[{bi}].{s}");
        let parent_idx = if bs.parent == "world" {
            None
        } else {
            scene.body_index(&bs.parent)
        };
        let (pj, px) = match parent_idx {
            None => (0usize, Se3::identity()),
            Some(p) => (bodies[p].joint, bodies[p].placement),
        };
        let base = px.compose(&se3(&bs.pose_in_parent));
        let inertia = Inertia::new(bs.mass, v3(&bs.com), Mat3::from_fn(|r, c| bs.inertia[r][c]));
        let (joint, placement) = if bs.joints.is_empty() {
            if pj != 0 {
                b.add_inertia(JointId(pj), &bs.name, inertia.transformed(&base))
                    .map_err(|e| model_err(scene, path("inertia"), e))?;
            }
            (pj, base)
        } else if let JointSpec::Free {
            name,
            q0: pose,
            qd0,
        } = &bs.joints[0]
        {
            let j = b
                .add_joint(
                    JointId::UNIVERSE,
                    name,
                    JointType::FreeFlyer,
                    Se3::identity(),
                )
                .map_err(|e| model_err(scene, path("joints[0]"), e))?;
            b.add_body(j, &bs.name, inertia)
                .map_err(|e| model_err(scene, path("inertia"), e))?;
            b.set_body_name(j, &bs.name)
                .map_err(|e| model_err(scene, path("name"), e))?;
            free_start.push(FreeStart {
                joint: j.0,
                pose: *pose,
                linear: qd0.linear,
                angular: qd0.angular,
            });
            (j.0, Se3::identity())
        } else {
            let mut parent = JointId(pj);
            let mut prev_anchor = Vec3::zeros();
            let n = bs.joints.len();
            for (k, js) in bs.joints.iter().enumerate() {
                let JointSpec::Hinge {
                    name,
                    prismatic,
                    axis,
                    anchor,
                    q0: jq,
                    qd0: jv,
                    limits: lim,
                    damping,
                    stiffness,
                    spring_reference,
                    armature,
                    actuator,
                    friction,
                } = js
                else {
                    return Err(scene_err(
                        scene,
                        path(&format!("joints[{k}]")),
                        "a free joint must be the body's only joint",
                    ));
                };
                let a = v3(anchor);
                let placement = if k == 0 {
                    base.compose(&Se3::from_translation(a))
                } else {
                    Se3::from_translation(a - prev_anchor)
                };
                prev_anchor = a;
                let ax = Axis::from_unit(v3(axis));
                let kind = match (prismatic, lim.is_some()) {
                    (true, _) => JointType::Prismatic { axis: ax },
                    (false, true) => JointType::Revolute { axis: ax },
                    (false, false) => JointType::RevoluteUnbounded { axis: ax },
                };
                let j = b
                    .add_joint(parent, name, kind, placement)
                    .map_err(|e| model_err(scene, path(&format!("joints[{k}]")), e))?;
                if let Some(l) = lim {
                    b.set_position_limits(j, &[l[0]], &[l[1]])
                        .map_err(|e| model_err(scene, path(&format!("joints[{k}].limits")), e))?;
                    limits.push(LimitSetting {
                        joint: j.0,
                        lower: l[0],
                        upper: l[1],
                    });
                }
                q0.push(JointValue {
                    joint: j.0,
                    value: *jq,
                });
                v0.push(JointValue {
                    joint: j.0,
                    value: *jv,
                });
                dofs.push(DofSetting {
                    joint: j.0,
                    damping: *damping,
                    stiffness: *stiffness,
                    spring_reference: *spring_reference,
                    armature: *armature,
                    friction: *friction,
                });
                if let Some(a) = actuator {
                    actuators.push(ActuatorSetting {
                        joint: j.0,
                        spec: a.clone(),
                    });
                }
                if k + 1 == n {
                    let x = Se3::from_translation(-a);
                    b.add_body(j, &bs.name, inertia.transformed(&x))
                        .map_err(|e| model_err(scene, path("inertia"), e))?;
                    b.set_body_name(j, &bs.name)
                        .map_err(|e| model_err(scene, path("name"), e))?;
                } else {
                    b.set_body_name(j, &format!("{}#{}", bs.name, k))
                        .map_err(|e| model_err(scene, path("name"), e))?;
                }
                parent = j;
            }
            (parent.0, Se3::from_translation(-prev_anchor))
        };
        let body = SimBody {
            name: bs.name.clone(),
            joint,
            placement,
            parent: parent_idx,
            mass: bs.mass,
            bounds: None,
        };
        shapes.extend(body_shapes(scene, bi, &body, &bs.shapes)?);
        bodies.push(body);
    }
    // robots from URDF
    for (ri, rs) in scene.robots.iter().enumerate() {
        let robot = crate::scene::geometry::load_robot(scene, ri)?;
        let rm = &robot.model;
        warnings.extend(robot.warnings);
        let base = se3(&rs.pose);
        let mut map = vec![0usize; rm.njoints];
        let mut link_body = vec![usize::MAX; rm.njoints];
        // the universe's links: static
        let root_body = bodies.len();
        bodies.push(SimBody {
            name: format!("{}/{}", rs.name, rm.body_names[0]),
            joint: 0,
            placement: base,
            parent: None,
            mass: 0.0,
            bounds: None,
        });
        link_body[0] = root_body;
        for j in 1..rm.njoints {
            let parent = map[rm.parents[j]];
            let placement = if rm.parents[j] == 0 && rm.joint_types[j] != JointType::FreeFlyer {
                base.compose(&rm.joint_placements[j])
            } else {
                rm.joint_placements[j]
            };
            let name = format!("{}/{}", rs.name, rm.joint_names[j]);
            let id = b
                .add_joint(JointId(parent), &name, rm.joint_types[j], placement)
                .map_err(|e| model_err(scene, format!("robots[{ri}]"), e))?;
            let bname = format!("{}/{}", rs.name, rm.body_names[j]);
            b.add_inertia(id, &bname, rm.inertias[j])
                .map_err(|e| model_err(scene, format!("robots[{ri}]"), e))?;
            b.set_body_name(id, &bname)
                .map_err(|e| model_err(scene, format!("robots[{ri}]"), e))?;
            let (iq, nq) = (rm.idx_q[j], rm.nqs[j]);
            let (lo, hi) = (
                &rm.lower_position_limit[iq..iq + nq],
                &rm.upper_position_limit[iq..iq + nq],
            );
            if nq == 1
                && lo[0].is_finite()
                && hi[0].is_finite()
                && matches!(
                    rm.joint_types[j],
                    JointType::Revolute { .. } | JointType::Prismatic { .. }
                )
            {
                limits.push(LimitSetting {
                    joint: id.0,
                    lower: lo[0],
                    upper: hi[0],
                });
            }
            let (iv, nv) = (rm.idx_v[j], rm.nvs[j]);
            if nv == 1 {
                let q_ref = rs
                    .q0
                    .iter()
                    .find(|(n, _)| n == &rm.joint_names[j])
                    .map_or(0.0, |(_, x)| *x);
                dofs.push(DofSetting {
                    joint: id.0,
                    damping: rm.damping[iv] + rs.joint_damping,
                    stiffness: rs.joint_stiffness,
                    spring_reference: q_ref,
                    armature: 0.0,
                    friction: rm.friction[iv],
                });
                urdf_limits.push((id.0, rm.effort_limit[iv], rm.velocity_limit[iv]));
            }
            map[j] = id.0;
            link_body[j] = bodies.len();
            bodies.push(SimBody {
                name: bname,
                joint: id.0,
                placement: Se3::identity(),
                parent: Some(link_body[rm.parents[j]]),
                mass: rm.inertias[j].mass,
                bounds: None,
            });
        }
        let mat = scene.material(rs.material.as_deref());
        let mut made: Vec<(SharedShape, Se3, bool)> = Vec::with_capacity(robot.collisions.len());
        for g in &robot.collisions {
            // a mesh shared by several links is one hull
            let (shape, extra, unbounded) = match g.same_mesh_as {
                Some(first) => made[first].clone(),
                None => make_shape(&g.geometry).map_err(|e| {
                    scene_err(scene, format!("robots[{ri}].collision"), format!("link '{}': {e}", g.link))
                })?,
            };
            made.push((shape.clone(), extra, unbounded));
            let rj = g.parent_joint;
            let placement = if rj == 0 { base.compose(&g.placement) } else { g.placement };
            shapes.push(ColShape {
                body: link_body[rj],
                joint: map[rj],
                placement: placement.compose(&extra),
                shape,
                material: mat,
                unbounded,
            });
        }
        // every link by name, also those merged into a body through fixed joints (loops)
        for f in rm.frames.iter().filter(|f| f.kind == FrameKind::Body) {
            let rj = f.parent_joint.0;
            let placement = if rj == 0 { base.compose(&f.placement) } else { f.placement };
            links.push((format!("{}/{}", rs.name, f.name), map[rj], placement));
        }
        for (si, (link, spec)) in rs.shapes.iter().enumerate() {
            let path = format!("robots[{ri}].shapes[{si}]");
            let Some(f) = rm
                .frames
                .iter()
                .find(|f| &f.name == link && f.kind == FrameKind::Body)
            else {
                return Err(scene_err(
                    scene,
                    format!("{path}.link"),
                    format!("the robot has no link '{link}'"),
                ));
            };
            if !spec.collide {
                continue;
            }
            let rj = f.parent_joint.0;
            let (shape, extra, unbounded) =
                make_shape(&spec.geometry).map_err(|e| scene_err(scene, path.clone(), e))?;
            let at = f.placement.compose(&se3(&spec.pose));
            let placement = if rj == 0 { base.compose(&at) } else { at };
            let material = if spec.material.is_some() {
                scene.material(spec.material.as_deref())
            } else {
                scene.material(rs.material.as_deref())
            };
            shapes.push(ColShape {
                body: link_body[rj],
                joint: map[rj],
                placement: placement.compose(&extra),
                shape,
                material,
                unbounded,
            });
        }
        // initial joint state, resolved after the build (joint names are prefixed)
        for (key, list) in [("q0", &rs.q0), ("v0", &rs.v0)] {
            for (name, _) in list {
                if rm.joint_id(name).is_none() {
                    return Err(scene_err(
                        scene,
                        format!("robots[{ri}].{key}.{name}"),
                        format!("the robot has no joint '{name}'"),
                    ));
                }
            }
        }
        if rs.root == RobotRoot::Floating && rm.njoints > 1 {
            free_start.push(FreeStart {
                joint: map[1],
                pose: rs.pose,
                linear: rs.base_velocity.linear,
                angular: rs.base_velocity.angular,
            });
        }
    }
    let model = b.build().map_err(|e| {
        let at = match &e {
            ModelError::BadInertia { body, .. } => locate_model_body(scene, body),
            _ => "bodies".into(),
        };
        model_err(scene, at, e)
    })?;
    // robot joint initial values by name
    for rs in &scene.robots {
        for (name, x) in &rs.q0 {
            if let Some(j) = model.joint_id(&format!("{}/{}", rs.name, name)) {
                if model.nqs[j.0] == 1 {
                    q0.push(JointValue {
                        joint: j.0,
                        value: *x,
                    });
                }
            }
        }
        for (name, x) in &rs.v0 {
            if let Some(j) = model.joint_id(&format!("{}/{}", rs.name, name)) {
                if model.nvs[j.0] == 1 {
                    v0.push(JointValue {
                        joint: j.0,
                        value: *x,
                    });
                }
            }
        }
    }
    // robot actuators by joint name, in order (a later entry replaces an earlier one)
    for (ri, rs) in scene.robots.iter().enumerate() {
        for (ai, a) in rs.actuators.iter().enumerate() {
            let path = format!("robots[{ri}].actuators[{ai}]");
            let prefix = format!("{}/", rs.name);
            let mut selected: Vec<usize> = Vec::new();
            match &a.joints {
                JointSelection::All(star) if star == "*" => {
                    selected.extend((1..model.njoints).filter(|&j| {
                        model.nvs[j] == 1 && model.joint_names[j].starts_with(&prefix)
                    }));
                }
                JointSelection::All(other) => {
                    return Err(scene_err(
                        scene,
                        format!("{path}.joints"),
                        format!("expected a list of joint names or \"*\", found \"{other}\""),
                    ))
                }
                JointSelection::Names(names) => {
                    for n in names {
                        let j = model.joint_id(&format!("{prefix}{n}")).ok_or_else(|| {
                            scene_err(scene, format!("{path}.joints"), format!("the robot has no joint '{n}'"))
                        })?;
                        if model.nvs[j.0] != 1 {
                            return Err(scene_err(
                                scene,
                                format!("{path}.joints"),
                                format!("joint '{n}' has {} dofs; actuators drive 1-dof joints", model.nvs[j.0]),
                            ));
                        }
                        selected.push(j.0);
                    }
                }
            }
            for j in selected {
                let mut spec = a.actuator();
                if let Some(&(_, effort, velocity)) = urdf_limits.iter().find(|x| x.0 == j) {
                    spec.effort_limit = spec.effort_limit.or((effort.is_finite() && effort > 0.0).then_some(effort));
                    spec.velocity_limit =
                        spec.velocity_limit.or((velocity.is_finite() && velocity > 0.0).then_some(velocity));
                }
                actuators.retain(|x| x.joint != j);
                actuators.push(ActuatorSetting { joint: j, spec });
            }
        }
    }
    let loops = loop_specs(scene, &model, &bodies, &links)?;
    Ok(Assembly {
        model,
        bodies,
        shapes,
        q0,
        v0,
        free_start,
        dofs,
        limits,
        loops,
        actuators,
        warnings,
    })
}

/// The scene's loop constraints on the world model: each body name (`world`, a scene body, a
/// robot link, also one merged through fixed joints) resolved to its joint and frame, anchors
/// and axis into joint frames. Errors name `loop_constraints[i].body_a` / `.body_b` for a
/// name that is not found and the loop for two bodies that move as one (a loop between them
/// would hold nothing and give the solver empty rows).
fn loop_specs(
    scene: &Scene,
    model: &Model,
    bodies: &[SimBody],
    links: &[(String, usize, Se3)],
) -> Result<Vec<LoopSpec>, SimError> {
    let find = |li: usize, key: &str, n: &str| -> Result<(usize, Se3), SimError> {
        if n == "world" {
            return Ok((0, Se3::identity()));
        }
        if let Some(b) = bodies.iter().find(|b| b.name == n) {
            return Ok((b.joint, b.placement));
        }
        if let Some((_, j, x)) = links.iter().find(|(name, _, _)| name == n) {
            return Ok((*j, *x));
        }
        let reason = match scene.robots.iter().find(|r| n.starts_with(&format!("{}/", r.name))) {
            Some(r) => format!("robot '{}' has no link '{}'", r.name, &n[r.name.len() + 1..]),
            None => format!("unknown body '{n}'"),
        };
        Err(scene_err(scene, format!("loop_constraints[{li}].{key}"), reason))
    };
    let mut loops = Vec::with_capacity(scene.loop_constraints.len());
    for (li, l) in scene.loop_constraints.iter().enumerate() {
        let (ja, xa) = find(li, "body_a", &l.body_a)?;
        let (jb, xb) = find(li, "body_b", &l.body_b)?;
        if ja == jb {
            let with = if ja == 0 { "the world".to_string() } else { format!("joint '{}'", model.joint_names[ja]) };
            return Err(scene_err(
                scene,
                format!("loop_constraints[{li}]"),
                format!("'{}' and '{}' are rigidly joined (both move with {with}): the loop would hold nothing", l.body_a, l.body_b),
            ));
        }
        loops.push(LoopSpec {
            kind: l.kind,
            ja,
            pa: xa.transform_point(&v3(&l.anchor_a)),
            jb,
            pb: xb.transform_point(&v3(&l.anchor_b)),
            axis_a: xa.rotation * v3(&l.axis_a),
            axis_b: Vec3::zeros(),          // set from the initial configuration
            rel_rotation: Mat3::identity(), // set from the initial configuration
        });
    }
    Ok(loops)
}

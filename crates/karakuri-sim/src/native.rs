//! The native engine: one karakuri [`Model`] for the whole world, velocity-level time stepping
//! in joint space with Springhead's contact model.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use karakuri::algorithms;
use karakuri::model::{Axis, FrameKind, JointId, JointType};
use karakuri::spatial::{exp3, quat_from_xyzw, Inertia, Mat3, Se3, Vec3};
use karakuri::linalg::Factorization;
use karakuri::{Data, Model, ModelBuilder, ModelError};
use nalgebra::DVector;
use parry3d_f64::shape::SharedShape;

use crate::collision::{make_shape, ColShape, Collider, RawContact};
use crate::engine::{BodyInfo, BodyState, ContactInfo, Engine, StageTimes};
use crate::scene::{
    ContactMode, ContactParams, EngineParams, Geometry, Integrator, JointSpec, Material, Pose, RobotCollision,
    RobotRoot, Scene, SolverKind,
};
use crate::solver::{direct_applies, solve_direct, solve_pgs, RowKind, Rows, SolveStats};
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
}

#[derive(Clone, Copy, Debug)]
struct Limit {
    dof: usize,
    iq: usize,
    lo: f64,
    hi: f64,
}

#[derive(Clone, Copy, Debug)]
struct LoopSpec {
    ja: usize,
    pa: Vec3,
    jb: usize,
    pb: Vec3,
    revolute: bool,
    axis_a: Vec3,
    axis_b: Vec3,
}

/// Which rows a contact owns.
#[derive(Clone, Copy, Debug)]
struct ContactRows {
    raw: usize,
    row: usize,
    nrows: usize,
    dirs: [Vec3; 3],
    penalty_force: Vec3,
}

type WarmKey = (usize, usize, u32, u32);

/// The reduced-coordinate engine (Featherstone + contact LCP). See the crate docs.
pub struct NativeEngine {
    contact: ContactParams,
    params: EngineParams,
    dt: f64,
    model: Model,
    data: Data,
    /// LᵀDL of the step's iteration matrix `M + armature + dt·damping + dt²·stiffness`.
    iteration_matrix: Factorization,
    bodies: Vec<SimBody>,
    collider: Collider,
    q: DVector<f64>,
    v: DVector<f64>,
    v_free: DVector<f64>,
    dv: Vec<f64>,
    bias: DVector<f64>,
    tau: DVector<f64>,
    tau_user: DVector<f64>,
    armature: Vec<f64>,
    damping: Vec<f64>,
    stiffness: Vec<f64>,
    spring_ref: Vec<f64>,
    limits: Vec<Limit>,
    loops: Vec<LoopSpec>,
    raw: Vec<RawContact>,
    contact_rows: Vec<ContactRows>,
    contacts: Vec<ContactInfo>,
    rows: Rows,
    warm: BTreeMap<WarmKey, [f64; 3]>,
    warm_other: Vec<f64>,
    loop_rows: Rows,
    loop_err: Vec<f64>,
    other_row_start: usize,
    time: f64,
    steps: u64,
    times: StageTimes,
    last_solve: SolveStats,
    loaded: bool,
}

impl Default for NativeEngine {
    fn default() -> Self {
        let model = ModelBuilder::new("empty").build().expect("the empty model builds");
        let data = Data::new(&model);
        NativeEngine {
            contact: ContactParams::default(),
            params: EngineParams::default(),
            dt: 0.001,
            data,
            iteration_matrix: Factorization::default(),
            bodies: vec![],
            collider: Collider::new(vec![], |_, _| None),
            q: DVector::zeros(0),
            v: DVector::zeros(0),
            v_free: DVector::zeros(0),
            dv: vec![],
            bias: DVector::zeros(0),
            tau: DVector::zeros(0),
            tau_user: DVector::zeros(0),
            armature: vec![],
            damping: vec![],
            stiffness: vec![],
            spring_ref: vec![],
            limits: vec![],
            loops: vec![],
            raw: vec![],
            contact_rows: vec![],
            contacts: vec![],
            rows: Rows::default(),
            warm: BTreeMap::new(),
            warm_other: vec![],
            loop_rows: Rows::default(),
            loop_err: vec![],
            other_row_start: 0,
            time: 0.0,
            steps: 0,
            times: StageTimes::default(),
            last_solve: SolveStats::default(),
            loaded: false,
            model,
        }
    }
}

fn se3(p: &Pose) -> Se3 {
    Se3::new(quat_from_xyzw(&p.orientation), Vec3::from(p.position))
}

fn v3(a: &[f64; 3]) -> Vec3 {
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
        let (shape, extra, unbounded) =
            make_shape(&s.geometry).map_err(|e| scene_err(scene, format!("bodies[{bi}].shapes[{si}]"), e))?;
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

/// Everything built from a scene.
struct Assembly {
    model: Model,
    bodies: Vec<SimBody>,
    shapes: Vec<ColShape>,
    q0: Vec<(usize, f64)>,
    free_init: Vec<(usize, Pose, [f64; 3], [f64; 3])>,
    v0: Vec<(usize, f64)>,
    dof_params: Vec<(usize, f64, f64, f64, f64)>,
    limits: Vec<(usize, f64, f64)>,
    loops: Vec<LoopSpec>,
}

fn assemble(scene: &Scene) -> Result<Assembly, SimError> {
    let mut b = ModelBuilder::new(&scene.name);
    b.set_gravity(v3(&scene.world.gravity));
    let mut bodies: Vec<SimBody> = Vec::new();
    let mut shapes = Vec::new();
    let mut q0 = Vec::new();
    let mut v0 = Vec::new();
    let mut free_init = Vec::new();
    let mut dof_params = Vec::new();
    let mut limits = Vec::new();
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
        } else if let JointSpec::Free { name, q0: pose, qd0 } = &bs.joints[0] {
            let j = b
                .add_joint(JointId::UNIVERSE, name, JointType::FreeFlyer, Se3::identity())
                .map_err(|e| model_err(scene, path("joints[0]"), e))?;
            b.add_body(j, &bs.name, inertia)
                .map_err(|e| model_err(scene, path("inertia"), e))?;
            b.set_body_name(j, &bs.name)
                .map_err(|e| model_err(scene, path("name"), e))?;
            free_init.push((j.0, *pose, qd0.linear, qd0.angular));
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
                    limits.push((j.0, l[0], l[1]));
                }
                q0.push((j.0, *jq));
                v0.push((j.0, *jv));
                dof_params.push((j.0, *damping, *stiffness, *spring_reference, *armature));
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
        };
        shapes.extend(body_shapes(scene, bi, &body, &bs.shapes)?);
        bodies.push(body);
    }
    // robots from URDF
    for (ri, rs) in scene.robots.iter().enumerate() {
        let path = scene.base_dir().join(&rs.urdf);
        let path = if path.exists() { path } else { PathBuf::from(&rs.urdf) };
        let opts = karakuri::io::urdf::LoadOptions {
            root: match rs.root {
                RobotRoot::Floating => karakuri::io::urdf::Root::FreeFlyer,
                RobotRoot::Fixed => karakuri::io::urdf::Root::Fixed,
            },
            package_dirs: rs
                .package_dirs
                .iter()
                .map(|d| crate::mesh::resolve(&scene.base_dir(), d))
                .chain([scene.base_dir()])
                .collect(),
        };
        let (rm, geom) = karakuri::io::urdf::load_with(&path, &opts).map_err(|e| {
            scene_err(
                scene,
                format!("robots[{ri}].urdf"),
                format!("cannot load '{}': {e}", rs.urdf),
            )
        })?;
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
                limits.push((id.0, lo[0], hi[0]));
            }
            let (iv, nv) = (rm.idx_v[j], rm.nvs[j]);
            if nv == 1 {
                let q_ref = rs
                    .q0
                    .iter()
                    .find(|(n, _)| n == &rm.joint_names[j])
                    .map_or(0.0, |(_, x)| *x);
                dof_params.push((id.0, rm.damping[iv] + rs.joint_damping, rs.joint_stiffness, q_ref, 0.0));
            }
            map[j] = id.0;
            link_body[j] = bodies.len();
            bodies.push(SimBody {
                name: bname,
                joint: id.0,
                placement: Se3::identity(),
                parent: Some(link_body[rm.parents[j]]),
                mass: rm.inertias[j].mass,
            });
        }
        if rs.collide && rs.collision != RobotCollision::None {
            let mat = scene.material(rs.material.as_deref());
            // hulls by mesh file and scale (robots reuse a mesh for several links)
            let mut hulls: BTreeMap<(PathBuf, [u64; 3]), (SharedShape, Se3, bool)> = BTreeMap::new();
            for g in &geom.collisions {
                let rj = g.parent_joint.0;
                // (shape, extra placement, unbounded) of the link's collision element
                let made = match &g.shape {
                    karakuri::io::urdf::Shape::Box { size } => make_shape(&Geometry::Box {
                        half_extents: [size.x / 2.0, size.y / 2.0, size.z / 2.0],
                    }),
                    karakuri::io::urdf::Shape::Sphere { radius } => make_shape(&Geometry::Sphere { radius: *radius }),
                    karakuri::io::urdf::Shape::Cylinder { radius, length } => make_shape(&Geometry::Cylinder {
                        radius: *radius,
                        half_length: length / 2.0,
                    }),
                    karakuri::io::urdf::Shape::Capsule { radius, length } => make_shape(&Geometry::Capsule {
                        radius: *radius,
                        half_length: length / 2.0,
                    }),
                    karakuri::io::urdf::Shape::Mesh {
                        filename,
                        resolved,
                        tried,
                        scale,
                    } => {
                        if rs.collision == RobotCollision::Primitives {
                            continue;
                        }
                        let at = || format!("robots[{ri}].collision");
                        let what = || format!("link '{}': collision mesh '{filename}'", g.link);
                        let Some(file) = resolved else {
                            let tried = if tried.is_empty() {
                                "nothing (only package://, file:// and plain paths are looked up)".to_string()
                            } else {
                                tried
                                    .iter()
                                    .map(|p| format!("'{}'", p.display()))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            };
                            return Err(scene_err(
                                scene,
                                at(),
                                format!(
                                    "{} not found; tried {tried} (add the directory holding the package to \
                                     robots[{ri}].package_dirs, or set robots[{ri}].collision to primitives or none)",
                                    what()
                                ),
                            ));
                        };
                        let key = (file.clone(), [scale.x.to_bits(), scale.y.to_bits(), scale.z.to_bits()]);
                        if !hulls.contains_key(&key) {
                            let mesh = crate::mesh::load(file, [scale.x, scale.y, scale.z])
                                .map_err(|e| scene_err(scene, at(), format!("{}: {e}", what())))?;
                            crate::mesh::check_hull_points(&mesh.vertices).map_err(|e| {
                                scene_err(scene, at(), format!("{} ('{}'): {e}", what(), file.display()))
                            })?;
                            let hull = make_shape(&Geometry::ConvexMesh {
                                vertices: mesh.vertices,
                                file: None,
                            })
                            .map_err(|e| scene_err(scene, at(), format!("{}: {e}", what())))?;
                            hulls.insert(key.clone(), hull);
                        }
                        Ok(hulls[&key].clone())
                    }
                };
                let (shape, extra, unbounded) = made.map_err(|e| scene_err(scene, format!("robots[{ri}]"), e))?;
                let placement = if rj == 0 {
                    base.compose(&g.placement)
                } else {
                    g.placement
                };
                shapes.push(ColShape {
                    body: link_body[rj],
                    joint: map[rj],
                    placement: placement.compose(&extra),
                    shape,
                    material: mat,
                    unbounded,
                });
            }
        }
        for (si, (link, spec)) in rs.shapes.iter().enumerate() {
            let path = format!("robots[{ri}].shapes[{si}]");
            let Some(f) = rm.frames.iter().find(|f| &f.name == link && f.kind == FrameKind::Body) else {
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
            free_init.push((map[1], rs.pose, rs.base_velocity.linear, rs.base_velocity.angular));
        }
    }
    let model = b.build().map_err(|e| model_err(scene, "bodies".into(), e))?;
    // robot joint initial values by name
    for rs in &scene.robots {
        for (name, x) in &rs.q0 {
            if let Some(j) = model.joint_id(&format!("{}/{}", rs.name, name)) {
                if model.nqs[j.0] == 1 {
                    q0.push((j.0, *x));
                }
            }
        }
        for (name, x) in &rs.v0 {
            if let Some(j) = model.joint_id(&format!("{}/{}", rs.name, name)) {
                if model.nvs[j.0] == 1 {
                    v0.push((j.0, *x));
                }
            }
        }
    }
    // loops
    let mut loops = Vec::new();
    for (li, l) in scene.loop_constraints.iter().enumerate() {
        let find = |n: &str| bodies.iter().position(|b| b.name == n);
        let (Some(a), Some(bb)) = (find(&l.body_a), find(&l.body_b)) else {
            return Err(scene_err(scene, format!("loop_constraints[{li}]"), "unknown body"));
        };
        let (ba, bb) = (&bodies[a], &bodies[bb]);
        loops.push(LoopSpec {
            ja: ba.joint,
            pa: ba.placement.transform_point(&v3(&l.anchor_a)),
            jb: bb.joint,
            pb: bb.placement.transform_point(&v3(&l.anchor_b)),
            revolute: l.kind == "revolute",
            axis_a: ba.placement.rotation * v3(&l.axis_a),
            axis_b: Vec3::zeros(), // set from the initial configuration
        });
    }
    Ok(Assembly {
        model,
        bodies,
        shapes,
        q0,
        free_init,
        v0,
        dof_params,
        limits,
        loops,
    })
}

impl NativeEngine {
    /// A native engine (load a scene with [`Engine::load`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// The world model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Joint positions.
    pub fn q(&self) -> &DVector<f64> {
        &self.q
    }

    /// Joint velocities (free flyers: `[linear; angular]` in the body frame).
    pub fn v(&self) -> &DVector<f64> {
        &self.v
    }

    /// Simulated bodies.
    pub fn bodies(&self) -> &[SimBody] {
        &self.bodies
    }

    /// Statistics of the last constraint solve.
    pub fn last_solve(&self) -> SolveStats {
        self.last_solve
    }

    fn body_of_joint(&self, joint: usize) -> String {
        self.bodies
            .iter()
            .find(|b| b.joint == joint)
            .map_or_else(|| self.model.body_names[joint].clone(), |b| b.name.clone())
    }

    /// Stage 1: the NaN / divergence guard.
    pub fn stage_check_state(&self) -> Result<(), SimError> {
        let m = &self.model;
        for j in 1..m.njoints {
            let (iq, nq, iv, nv) = (m.idx_q[j], m.nqs[j], m.idx_v[j], m.nvs[j]);
            let bad_q = self.q.as_slice()[iq..iq + nq].iter().any(|x| !x.is_finite());
            let bad_v = self.v.as_slice()[iv..iv + nv].iter().any(|x| !x.is_finite());
            let fast = self.v.as_slice()[iv..iv + nv]
                .iter()
                .map(|x| x.abs())
                .fold(0.0, f64::max);
            if bad_q || bad_v || fast > self.params.max_speed {
                let reason = if bad_q {
                    format!("joint '{}' position is not finite", m.joint_names[j])
                } else if bad_v {
                    format!("joint '{}' velocity is not finite", m.joint_names[j])
                } else {
                    format!(
                        "joint '{}' speed {fast:.3e} exceeds engine.max_speed {:.3e}",
                        m.joint_names[j], self.params.max_speed
                    )
                };
                return Err(SimError::Diverged {
                    step: self.steps,
                    time: self.time,
                    body: self.body_of_joint(j),
                    reason,
                });
            }
        }
        Ok(())
    }

    /// Stage 2: kinematics, world Jacobian columns, mass matrix and bias forces in one sweep
    /// (`compute_all_terms`), the LTDL factorisation of the iteration matrix (M with armature
    /// and the implicit damping and stiffness terms), collision detection.
    pub fn stage_position(&mut self) {
        let (m, d) = (&self.model, &mut self.data);
        algorithms::compute_all_terms(m, d, &self.q, &self.v);
        let dt = self.dt;
        let (arm, damp, stiff) = (&self.armature, &self.damping, &self.stiffness);
        let mm = d.mass_matrix().expect("compute_all_terms leaves M");
        self.iteration_matrix.factorize_shifted(mm, |k| arm[k] + dt * damp[k] + dt * dt * stiff[k]);
        let o_m_i = d.joint_placements().expect("compute_all_terms leaves world placements");
        self.collider
            .detect(o_m_i, self.contact.prediction_distance, &mut self.raw);
    }

    /// Stage 3: bias forces `h = C v + g` (computed by stage 2) and passive joint forces
    /// (damping, springs).
    pub fn stage_velocity(&mut self) {
        let h = self.data.nonlinear_effects().expect("stage_position computes all terms at (q, v)");
        self.bias.copy_from(h);
        let m = &self.model;
        self.tau.fill(0.0);
        for k in 0..m.nv {
            let (d, s) = (self.damping[k], self.stiffness[k]);
            if d != 0.0 || s != 0.0 {
                let j = m.dof_joint[k];
                let iq = m.idx_q[j] + (k - m.idx_v[j]);
                self.tau[k] = -d * self.v[k] - s * (self.q[iq] - self.spring_ref[k] + self.dt * self.v[k]);
            }
        }
    }

    /// Stage 4: actuation (the joint torques set by the user).
    pub fn stage_actuation(&mut self) {
        self.tau += &self.tau_user;
    }

    /// Stage 5: the smooth acceleration `M⁻¹ (τ - h)` and the free velocity after one step.
    /// Free-flyer linear velocities keep their world direction (the world-frame Euler step).
    pub fn stage_acceleration(&mut self) {
        let m = &self.model;
        let mut a = &self.tau - &self.bias;
        self.iteration_matrix.solve(a.as_mut_slice());
        self.v_free.copy_from(&self.v);
        self.v_free.axpy(self.dt, &a, 1.0);
        for j in 1..m.njoints {
            if m.joint_types[j] == JointType::FreeFlyer {
                let iv = m.idx_v[j];
                let lin = Vec3::new(self.v[iv], self.v[iv + 1], self.v[iv + 2]);
                let w = Vec3::new(self.v[iv + 3], self.v[iv + 4], self.v[iv + 5]);
                let corr = self.dt * w.cross(&lin);
                for c in 0..3 {
                    self.v_free[iv + c] += corr[c];
                }
            }
        }
    }

    /// Adds `sign · dirᵀ J_p` (linear velocity of world point `p` on `joint` along `dir`) to `row`.
    fn add_point_row(model: &Model, data: &Data, joint: usize, p: &Vec3, dir: &Vec3, sign: f64, row: &mut [f64]) {
        let jac = data.jacobians().expect("the step computes the Jacobians at q first");
        let mut j = joint;
        while j > 0 {
            for k in model.idx_v[j]..model.idx_v[j] + model.nvs[j] {
                let c = jac.column(k);
                let lin = Vec3::new(c[0], c[1], c[2]);
                let ang = Vec3::new(c[3], c[4], c[5]);
                row[k] += sign * dir.dot(&(lin + ang.cross(p)));
            }
            j = model.parents[j];
        }
    }

    /// Adds `sign · dirᵀ ω` (angular velocity of `joint` along `dir`) to `row`.
    fn add_angular_row(model: &Model, data: &Data, joint: usize, dir: &Vec3, sign: f64, row: &mut [f64]) {
        let jac = data.jacobians().expect("the step computes the Jacobians at q first");
        let mut j = joint;
        while j > 0 {
            for k in model.idx_v[j]..model.idx_v[j] + model.nvs[j] {
                let c = jac.column(k);
                row[k] += sign * dir.dot(&Vec3::new(c[3], c[4], c[5]));
            }
            j = model.parents[j];
        }
    }

    /// The dof range of the kinematic tree that moves `joint` (empty for the universe).
    fn tree_range(model: &Model, joint: usize) -> (usize, usize) {
        if joint == 0 {
            return (0, 0);
        }
        let mut root = joint;
        while model.parents[root] != 0 {
            root = model.parents[root];
        }
        (model.idx_v[root], model.subtree_end_v[root])
    }

    /// The dof ranges of the trees of two joints, sorted and disjoint.
    fn pair_ranges(model: &Model, ja: usize, jb: usize) -> [(usize, usize); 2] {
        let (a, b) = (Self::tree_range(model, ja), Self::tree_range(model, jb));
        if a == b || b.0 == b.1 {
            [a, (0, 0)]
        } else if a.0 == a.1 {
            [b, (0, 0)]
        } else if a.0 < b.0 {
            [a, b]
        } else {
            [b, a]
        }
    }

    fn row_dot(row: &[f64], v: &DVector<f64>) -> f64 {
        row.iter().zip(v.iter()).map(|(a, b)| a * b).sum()
    }

    /// Stage 6: contact, loop and limit rows with Springhead's targets, penalty forces, then
    /// the solve and `v⁺ = v_free + M⁻¹ Jᵀ λ`.
    pub fn stage_constraints(&mut self) {
        let nv = self.model.nv;
        self.rows.clear(nv);
        self.contact_rows.clear();
        let dt = self.dt;
        let cp = self.contact.clone();
        let mut scratch = vec![0.0; nv];
        for (ci, c) in self.raw.iter().enumerate() {
            let (sa, sb) = (&self.collider.shapes[c.shape_a], &self.collider.shapes[c.shape_b]);
            let (ja, jb) = (sa.joint, sb.joint);
            let n = c.normal;
            // relative velocity of B with respect to A at the contact point, before the step
            let rel = |v: &DVector<f64>, dir: &Vec3, scratch: &mut Vec<f64>| -> f64 {
                scratch.iter_mut().for_each(|x| *x = 0.0);
                Self::add_point_row(&self.model, &self.data, jb, &c.point, dir, 1.0, scratch);
                Self::add_point_row(&self.model, &self.data, ja, &c.point, dir, -1.0, scratch);
                Self::row_dot(scratch, v)
            };
            let (t1, t2) = tangents(&n);
            let vn = rel(&self.v, &n, &mut scratch);
            let vt = Vec3::new(rel(&self.v, &t1, &mut scratch), rel(&self.v, &t2, &mut scratch), 0.0);
            let mat = mean_material(&sa.material, &sb.material);
            let mu = if vt.norm() <= cp.friction_threshold_velocity {
                mat.static_friction
            } else {
                mat.dynamic_friction
            };
            if let ContactMode::Penalty { stiffness, damping } = c.mode {
                // spring-damper normal force and regularised Coulomb friction, as impulses on v_free
                let mut f = Vec3::zeros();
                if c.depth > 0.0 {
                    let fn_ = (stiffness * c.depth - damping * vn).max(0.0);
                    let vt_w = t1 * vt.x + t2 * vt.y;
                    let s = vt_w.norm();
                    let ft = if s > 1e-12 {
                        -vt_w / s * (mu * fn_).min(damping.max(stiffness * dt) * s)
                    } else {
                        Vec3::zeros()
                    };
                    f = n * fn_ + ft;
                    for dir in [n, t1, t2] {
                        let fd = f.dot(&dir);
                        if fd == 0.0 {
                            continue;
                        }
                        scratch.iter_mut().for_each(|x| *x = 0.0);
                        Self::add_point_row(&self.model, &self.data, jb, &c.point, &dir, 1.0, &mut scratch);
                        Self::add_point_row(&self.model, &self.data, ja, &c.point, &dir, -1.0, &mut scratch);
                        self.iteration_matrix.solve(&mut scratch);
                        self.v_free.axpy(fd * dt, &DVector::from_column_slice(&scratch), 1.0);
                    }
                }
                self.contact_rows.push(ContactRows {
                    raw: ci,
                    row: usize::MAX,
                    nrows: 0,
                    dirs: [n, t1, t2],
                    penalty_force: f,
                });
                continue;
            }
            // Springhead's normal target
            let e = mat.restitution;
            let impact = vn < -cp.restitution_threshold_velocity && e > 0.0;
            scratch.iter_mut().for_each(|x| *x = 0.0);
            Self::add_point_row(&self.model, &self.data, jb, &c.point, &n, 1.0, &mut scratch);
            Self::add_point_row(&self.model, &self.data, ja, &c.point, &n, -1.0, &mut scratch);
            let vfree_n = Self::row_dot(&scratch, &self.v_free);
            let b = if c.depth < 0.0 {
                let gap = -c.depth;
                if impact && vfree_n * dt < -gap {
                    -e * vn
                } else {
                    -gap / dt
                }
            } else if impact {
                -e * vn
            } else {
                cp.error_correction_rate * (c.depth - cp.penetration_tolerance).max(0.0) / dt
            };
            let friction = if mu > 0.0 { 2 } else { 0 };
            let key = (c.shape_a, c.shape_b, c.features.0, c.features.1);
            let w = if self.params.warm_start {
                self.warm.get(&key).copied().unwrap_or([0.0; 3])
            } else {
                [0.0; 3]
            };
            let ranges = Self::pair_ranges(&self.model, ja, jb);
            let r0 = self.rows.push_ranged(RowKind::Normal { friction, mu }, b, w[0], ranges);
            self.rows.j_row_mut(r0).copy_from_slice(&scratch);
            if friction == 2 {
                for (k, t) in [t1, t2].iter().enumerate() {
                    let r = self.rows.push_ranged(RowKind::Tangent, 0.0, w[1 + k], ranges);
                    let row = self.rows.j_row_mut(r);
                    Self::add_point_row(&self.model, &self.data, jb, &c.point, t, 1.0, row);
                    Self::add_point_row(&self.model, &self.data, ja, &c.point, t, -1.0, row);
                }
            }
            self.contact_rows.push(ContactRows {
                raw: ci,
                row: r0,
                nrows: 1 + friction,
                dirs: [n, t1, t2],
                penalty_force: Vec3::zeros(),
            });
        }
        // loop closures: point rows (and two rotational rows for revolute loops)
        self.other_row_start = self.rows.len();
        let mut other = 0usize;
        let beta = self.params.loop_correction_rate;
        Self::loop_rows_into(
            &self.model,
            &self.data,
            &self.loops,
            &mut self.loop_rows,
            &mut self.loop_err,
        );
        for (k, &c) in self.loop_err.iter().enumerate() {
            let w = self.warm_other.get(other).copied().unwrap_or(0.0);
            other += 1;
            let r = self.rows.push(RowKind::Bilateral, -beta * c / dt, w);
            let src = self.loop_rows.j_row(k).to_vec();
            self.rows.j_row_mut(r).copy_from_slice(&src);
        }
        // joint limits (speculative: active when the step could reach them)
        for lim in &self.limits {
            let (qk, vk) = (self.q[lim.iq], self.v_free[lim.dof]);
            let reach = vk.abs() * dt + 1e-9;
            for (sign, dist) in [(1.0, qk - lim.lo), (-1.0, lim.hi - qk)] {
                let w = self.warm_other.get(other).copied().unwrap_or(0.0);
                other += 1;
                if dist > reach {
                    let r = self.rows.push(RowKind::Unilateral, f64::NEG_INFINITY, 0.0);
                    self.rows.j_row_mut(r)[lim.dof] = 0.0;
                    continue;
                }
                let b = if dist < 0.0 {
                    -cp.error_correction_rate * dist / dt
                } else {
                    -dist / dt
                };
                let ranges = [Self::tree_range(&self.model, self.model.dof_joint[lim.dof]), (0, 0)];
                let r = self.rows.push_ranged(RowKind::Unilateral, b, w, ranges);
                self.rows.j_row_mut(r)[lim.dof] = sign;
            }
        }
        // solve
        self.dv.resize(nv, 0.0);
        self.dv.iter_mut().for_each(|x| *x = 0.0);
        if !self.rows.is_empty() {
            let fact = &self.iteration_matrix;
            self.rows.prepare(|x| fact.solve(x));
            let vf = self.v_free.as_slice();
            let direct =
                self.params.solver == SolverKind::Auto && direct_applies(&self.rows, self.params.direct_max_rows);
            let mut stats = None;
            if direct {
                let mut trial = self.rows.clone();
                if let Some(s) = solve_direct(&mut trial, vf, &mut self.dv) {
                    self.rows = trial;
                    stats = Some(s);
                }
            }
            self.last_solve = match stats {
                Some(s) => s,
                None => solve_pgs(
                    &mut self.rows,
                    vf,
                    &mut self.dv,
                    self.params.max_iterations,
                    self.params.tolerance,
                ),
            };
        } else {
            self.last_solve = SolveStats::default();
        }
        // warm-start memory
        self.warm.clear();
        for cr in &self.contact_rows {
            if cr.nrows == 0 {
                continue;
            }
            let c = &self.raw[cr.raw];
            let mut w = [0.0; 3];
            w[..cr.nrows].copy_from_slice(&self.rows.lambda[cr.row..cr.row + cr.nrows]);
            self.warm.insert((c.shape_a, c.shape_b, c.features.0, c.features.1), w);
        }
        self.warm_other.clear();
        self.warm_other
            .extend_from_slice(&self.rows.lambda[self.other_row_start..]);
        for k in 0..nv {
            self.v[k] = self.v_free[k] + self.dv[k];
        }
    }

    /// Stage 7: `q ← q ⊕ dt v⁺`. Free flyers move their origin along the world velocity and
    /// rotate by `exp(dt ω)`, and their body-frame linear velocity is re-expressed in the new
    /// orientation; other joints use the joint's own integration.
    pub fn stage_integrate(&mut self) {
        if self.params.loop_projection && !self.loops.is_empty() {
            self.shake_loops();
        }
        integrate_world(&self.model, &mut self.q, &mut self.v, self.dt);
        self.time = (self.steps + 1) as f64 * self.dt;
        self.steps += 1;
    }

    /// Rows of the loop constraints at the kinematics in `data` (world Jacobian columns
    /// needed) into `rows` (bilateral, targets zero) and their position errors `C` into `err`,
    /// one per row: the three components of `p_b - p_a`, and for revolute loops the
    /// misalignment of the two hinge axes about two directions normal to A's axis.
    fn loop_rows_into(model: &Model, data: &Data, loops: &[LoopSpec], rows: &mut Rows, err: &mut Vec<f64>) {
        rows.clear(model.nv);
        err.clear();
        let o_m_i = data.joint_placements().expect("the step computes the placements at q first");
        for l in loops {
            let (xa, xb) = (o_m_i[l.ja], o_m_i[l.jb]);
            let (pa, pb) = (xa.transform_point(&l.pa), xb.transform_point(&l.pb));
            let e = pb - pa;
            for dir in [Vec3::x(), Vec3::y(), Vec3::z()] {
                let r = rows.push(RowKind::Bilateral, 0.0, 0.0);
                let row = rows.j_row_mut(r);
                Self::add_point_row(model, data, l.jb, &pb, &dir, 1.0, row);
                Self::add_point_row(model, data, l.ja, &pa, &dir, -1.0, row);
                err.push(e.dot(&dir));
            }
            if l.revolute {
                let aa = xa.rotation * l.axis_a;
                let ab = xb.rotation * l.axis_b;
                let rot_err = ab.cross(&aa); // rotating B about this aligns its axis with A's
                let (u1, u2) = tangents(&aa);
                for dir in [u1, u2] {
                    let r = rows.push(RowKind::Bilateral, 0.0, 0.0);
                    let row = rows.j_row_mut(r);
                    Self::add_angular_row(model, data, l.jb, &dir, 1.0, row);
                    Self::add_angular_row(model, data, l.ja, &dir, -1.0, row);
                    err.push(-rot_err.dot(&dir));
                }
            }
        }
    }

    /// SHAKE: adds loop impulses along the step's loop rows `J(q_n)` until the configuration
    /// reached by the step satisfies the loop constraints, `C(q_n ⊕ dt v⁺) = 0` (Newton with
    /// the step's Delassus matrix). A first-order scheme whose velocity constraint is imposed
    /// at the end of the step keeps the energy of closed loops instead of dissipating it.
    fn shake_loops(&mut self) {
        let nv = self.model.nv;
        // the step's loop rows with their M⁻¹ Jᵀ (J at q_n, as the impulses of the step)
        let mut rows = self.loop_rows.clone();
        {
            let fact = &self.iteration_matrix;
            rows.prepare(|x| fact.solve(x));
        }
        let zero = vec![0.0; nv];
        let mut dv = vec![0.0; nv];
        let (q0, mut err, mut scratch) = (self.q.clone(), Vec::new(), Rows::default());
        let mut data = self.data.clone();
        for _ in 0..4 {
            let (mut q, mut v) = (q0.clone(), self.v.clone());
            integrate_world(&self.model, &mut q, &mut v, self.dt);
            algorithms::joint_jacobians(&self.model, &mut data, &q);
            Self::loop_rows_into(&self.model, &data, &self.loops, &mut scratch, &mut err);
            if err.iter().all(|e| e.abs() < 1e-12) {
                break;
            }
            for (k, e) in err.iter().enumerate() {
                rows.b[k] = -e / self.dt;
            }
            if solve_direct(&mut rows, &zero, &mut dv).is_none() {
                break;
            }
            for k in 0..nv {
                self.v[k] += dv[k];
            }
        }
    }

    /// Stage 8: kinematics at the new state and the contact forces of the step.
    pub fn stage_sensors(&mut self) {
        algorithms::forward_kinematics_velocity(&self.model, &mut self.data, &self.q, &self.v);
        self.contacts.clear();
        for cr in &self.contact_rows {
            let c = &self.raw[cr.raw];
            let mut f = cr.penalty_force;
            for k in 0..cr.nrows {
                f += cr.dirs[k] * (self.rows.lambda[cr.row + k] / self.dt);
            }
            self.contacts.push(ContactInfo {
                body_a: self.collider.shapes[c.shape_a].body,
                body_b: self.collider.shapes[c.shape_b].body,
                point: c.point,
                normal: c.normal,
                depth: c.depth,
                force: f,
            });
        }
    }

    /// Net contact wrench on each body over the last step: (force, torque about the body
    /// origin), world axes.
    pub fn body_wrenches(&self) -> Vec<(Vec3, Vec3)> {
        let mut out = vec![(Vec3::zeros(), Vec3::zeros()); self.bodies.len()];
        let mut states = vec![BodyState::default(); self.bodies.len()];
        self.write_states(&mut states);
        for c in &self.contacts {
            for (b, f) in [(c.body_b, c.force), (c.body_a, -c.force)] {
                let o = states[b].pose.translation;
                out[b].0 += f;
                out[b].1 += (c.point - o).cross(&f);
            }
        }
        out
    }

    /// Whether this step may use RK4 (no contacts, no loops, no active limits).
    fn smooth(&self) -> bool {
        self.raw.is_empty() && self.loops.is_empty() && self.limits.is_empty()
    }

    /// One classical RK4 step of the smooth dynamics (contact-free).
    fn rk4_step(&mut self) {
        let dt = self.dt;
        let m = &self.model;
        let mut fact = self.iteration_matrix.clone();
        let mut accel = |d: &mut Data, q: &DVector<f64>, v: &DVector<f64>, s: &Self| -> DVector<f64> {
            let mm = algorithms::mass_matrix(m, d, q);
            fact.factorize_shifted(mm, |k| s.armature[k]);
            let h = algorithms::nonlinear_effects(m, d, q, v).clone();
            let mut tau = s.tau_user.clone();
            for k in 0..m.nv {
                let j = m.dof_joint[k];
                let iq = m.idx_q[j] + (k - m.idx_v[j]);
                tau[k] += -s.damping[k] * v[k] - s.stiffness[k] * (q[iq] - s.spring_ref[k]);
            }
            let mut a = tau - h;
            fact.solve(a.as_mut_slice());
            a
        };
        let mut data = self.data.clone();
        let (q0, v0) = (self.q.clone(), self.v.clone());
        let k1v = accel(&mut data, &q0, &v0, self);
        let k1q = v0.clone();
        let q2 = algorithms::integrate(m, &q0, &(&k1q * (dt / 2.0)));
        let v2 = &v0 + &k1v * (dt / 2.0);
        let k2v = accel(&mut data, &q2, &v2, self);
        let k2q = v2.clone();
        let q3 = algorithms::integrate(m, &q0, &(&k2q * (dt / 2.0)));
        let v3_ = &v0 + &k2v * (dt / 2.0);
        let k3v = accel(&mut data, &q3, &v3_, self);
        let k3q = v3_.clone();
        let q4 = algorithms::integrate(m, &q0, &(&k3q * dt));
        let v4 = &v0 + &k3v * dt;
        let k4v = accel(&mut data, &q4, &v4, self);
        let k4q = v4;
        let dq = (k1q + k2q * 2.0 + k3q * 2.0 + k4q) * (dt / 6.0);
        let dvv = (k1v + k2v * 2.0 + k3v * 2.0 + k4v) * (dt / 6.0);
        self.q = algorithms::integrate(m, &q0, &dq);
        self.v = v0 + dvv;
        self.time = (self.steps + 1) as f64 * self.dt;
        self.steps += 1;
    }
}

/// Springhead's rule: the mean of the two materials.
fn mean_material(a: &Material, b: &Material) -> Material {
    Material {
        static_friction: 0.5 * (a.static_friction + b.static_friction),
        dynamic_friction: 0.5 * (a.dynamic_friction + b.dynamic_friction),
        restitution: 0.5 * (a.restitution + b.restitution),
    }
}

/// Two unit tangents completing `n` to a right-handed frame (deterministic).
fn tangents(n: &Vec3) -> (Vec3, Vec3) {
    let a = if n.x.abs() < 0.57 {
        Vec3::x()
    } else if n.y.abs() < 0.57 {
        Vec3::y()
    } else {
        Vec3::z()
    };
    let t1 = n.cross(&a).normalize();
    let t2 = n.cross(&t1);
    (t1, t2)
}

/// Quaternion product of `[x, y, z, w]` quaternions.
fn quat_mul(a: &[f64; 4], b: &[f64; 4]) -> [f64; 4] {
    let (x1, y1, z1, w1) = (a[0], a[1], a[2], a[3]);
    let (x2, y2, z2, w2) = (b[0], b[1], b[2], b[3]);
    [
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
    ]
}

/// The semi-implicit Euler configuration update (see [`NativeEngine::stage_integrate`]).
pub fn integrate_world(model: &Model, q: &mut DVector<f64>, v: &mut DVector<f64>, dt: f64) {
    for j in 1..model.njoints {
        let (iq, nq, iv, nv) = (model.idx_q[j], model.nqs[j], model.idx_v[j], model.nvs[j]);
        if model.joint_types[j] == JointType::FreeFlyer {
            let quat = [q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]];
            let r = quat_from_xyzw(&quat);
            let lin = Vec3::new(v[iv], v[iv + 1], v[iv + 2]);
            let w = Vec3::new(v[iv + 3], v[iv + 4], v[iv + 5]);
            let pv = r * lin * dt;
            for c in 0..3 {
                q[iq + c] += pv[c];
            }
            let th = w.norm() * dt;
            let dq = if th > 0.0 {
                let ax = w / w.norm();
                let s = (0.5 * th).sin();
                [ax.x * s, ax.y * s, ax.z * s, (0.5 * th).cos()]
            } else {
                [0.0, 0.0, 0.0, 1.0]
            };
            let mut nq_ = quat_mul(&quat, &dq);
            let n = nq_.iter().map(|x| x * x).sum::<f64>().sqrt();
            nq_.iter_mut().for_each(|x| *x /= n);
            q.as_mut_slice()[iq + 3..iq + 7].copy_from_slice(&nq_);
            // same world velocity, new body axes
            let rl = exp3(&(w * dt)).transpose() * lin;
            for c in 0..3 {
                v[iv + c] = rl[c];
            }
        } else {
            let qs: Vec<f64> = q.as_slice()[iq..iq + nq].to_vec();
            let vs: Vec<f64> = v.as_slice()[iv..iv + nv].iter().map(|x| x * dt).collect();
            model.joint_types[j].integrate(&qs, &vs, &mut q.as_mut_slice()[iq..iq + nq]);
        }
    }
}

impl Engine for NativeEngine {
    fn name(&self) -> &str {
        "native"
    }

    fn load(&mut self, scene: &Scene) -> Result<Vec<BodyInfo>, SimError> {
        let asm = assemble(scene)?;
        let model = asm.model;
        let mut data = Data::new(&model);
        let mut q = algorithms::neutral(&model);
        let mut v = DVector::zeros(model.nv);
        for (j, x) in &asm.q0 {
            q[model.idx_q[*j]] = *x;
        }
        for (j, x) in &asm.v0 {
            v[model.idx_v[*j]] = *x;
        }
        for (j, pose, lin, ang) in &asm.free_init {
            let (iq, iv) = (model.idx_q[*j], model.idx_v[*j]);
            q.as_mut_slice()[iq..iq + 3].copy_from_slice(&pose.position);
            q.as_mut_slice()[iq + 3..iq + 7].copy_from_slice(&pose.orientation);
            let rt = quat_from_xyzw(&pose.orientation).transpose();
            let (l, a) = (rt * v3(lin), rt * v3(ang));
            v.as_mut_slice()[iv..iv + 3].copy_from_slice(l.as_slice());
            v.as_mut_slice()[iv + 3..iv + 6].copy_from_slice(a.as_slice());
        }
        let nv = model.nv;
        let mut armature = vec![0.0; nv];
        let mut damping = vec![0.0; nv];
        let mut stiffness = vec![0.0; nv];
        let mut spring_ref = vec![0.0; nv];
        for (j, d, s, r, a) in &asm.dof_params {
            let k = model.idx_v[*j];
            damping[k] = *d;
            stiffness[k] = *s;
            spring_ref[k] = *r;
            armature[k] = *a;
        }
        let limits = asm
            .limits
            .iter()
            .map(|(j, lo, hi)| Limit {
                dof: model.idx_v[*j],
                iq: model.idx_q[*j],
                lo: *lo,
                hi: *hi,
            })
            .collect();
        // collision pairs
        let bodies = asm.bodies;
        let excluded: Vec<(usize, usize)> = scene
            .collision_exclude_pairs
            .iter()
            .filter_map(|[a, b]| {
                let ia = bodies.iter().position(|x| &x.name == a)?;
                let ib = bodies.iter().position(|x| &x.name == b)?;
                Some((ia.min(ib), ia.max(ib)))
            })
            .collect();
        let pair_modes: Vec<((usize, usize), ContactMode)> = scene
            .contact_pairs
            .iter()
            .filter_map(|p| {
                let ia = bodies.iter().position(|x| x.name == p.bodies[0])?;
                let ib = bodies.iter().position(|x| x.name == p.bodies[1])?;
                Some(((ia.min(ib), ia.max(ib)), p.mode))
            })
            .collect();
        let exclude_pc = scene.contact.exclude_parent_child;
        let default_mode = scene.contact.mode;
        let collider = Collider::new(asm.shapes, |a, b| {
            if a.joint == b.joint {
                return None;
            }
            let key = (a.body.min(b.body), a.body.max(b.body));
            if excluded.contains(&key) {
                return None;
            }
            if exclude_pc && (bodies[a.body].parent == Some(b.body) || bodies[b.body].parent == Some(a.body)) {
                return None;
            }
            Some(
                pair_modes
                    .iter()
                    .find(|(k, _)| *k == key)
                    .map_or(default_mode, |(_, m)| *m),
            )
        });
        // loop axes of B from the initial configuration
        algorithms::forward_kinematics(&model, &mut data, &q);
        let mut loops = asm.loops;
        let o_m_i = data.joint_placements().expect("forward_kinematics leaves placements");
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
        *self = NativeEngine {
            contact: scene.contact.clone(),
            params: scene.engine.clone(),
            dt: scene.world.dt,
            v_free: DVector::zeros(nv),
            dv: vec![0.0; nv],
            bias: DVector::zeros(nv),
            tau: DVector::zeros(nv),
            tau_user: DVector::zeros(nv),
            armature,
            damping,
            stiffness,
            spring_ref,
            limits,
            loops,
            bodies,
            collider,
            q,
            v,
            data,
            iteration_matrix: Factorization::new(&model),
            model,
            loaded: true,
            ..NativeEngine::default()
        };
        algorithms::forward_kinematics_velocity(&self.model, &mut self.data, &self.q, &self.v);
        Ok(infos)
    }

    fn step(&mut self) -> Result<(), SimError> {
        assert!(self.loaded, "NativeEngine::step before load");
        let mut t = StageTimes::default();
        let mut clock = Instant::now();
        let mut lap = |d: &mut std::time::Duration| {
            let now = Instant::now();
            *d = now - clock;
            clock = now;
        };
        self.stage_check_state()?;
        lap(&mut t.check_state);
        self.stage_position();
        lap(&mut t.position);
        if self.params.integrator == Integrator::Rk4 && self.smooth() {
            self.rk4_step();
            lap(&mut t.integrate);
            self.raw.clear();
            self.contact_rows.clear();
        } else {
            self.stage_velocity();
            lap(&mut t.velocity);
            self.stage_actuation();
            lap(&mut t.actuation);
            self.stage_acceleration();
            lap(&mut t.acceleration);
            self.stage_constraints();
            lap(&mut t.constraint);
            self.stage_integrate();
            lap(&mut t.integrate);
        }
        self.stage_sensors();
        lap(&mut t.sensors);
        self.times = t;
        Ok(())
    }

    fn write_states(&self, out: &mut [BodyState]) {
        let o_m_i = self.data.joint_placements().expect("every step ends with the kinematics at the new state");
        let vel = self.data.joint_velocities().expect("every step ends with the kinematics at the new state");
        for (o, b) in out.iter_mut().zip(&self.bodies) {
            let x = o_m_i[b.joint];
            let pose = x.compose(&b.placement);
            let vw = x.act_motion(&vel[b.joint]);
            let p = pose.translation;
            *o = BodyState {
                pose,
                linear: vw.linear + vw.angular.cross(&p),
                angular: vw.angular,
            };
            if b.joint != 0 && self.model.joint_types[b.joint] == JointType::FreeFlyer && b.placement == Se3::identity()
            {
                // exactly the integrated world velocity of the origin
                let iv = self.model.idx_v[b.joint];
                let lin = Vec3::new(self.v[iv], self.v[iv + 1], self.v[iv + 2]);
                o.linear = x.rotation * lin;
            }
        }
    }

    fn time(&self) -> f64 {
        self.time
    }

    fn steps(&self) -> u64 {
        self.steps
    }

    fn dt(&self) -> f64 {
        self.dt
    }

    fn contacts(&self) -> &[ContactInfo] {
        &self.contacts
    }

    fn stage_times(&self) -> StageTimes {
        self.times
    }

    fn energy(&self) -> f64 {
        let mut d = self.data.clone();
        algorithms::kinetic_energy(&self.model, &mut d, &self.q, &self.v)
            + algorithms::potential_energy(&self.model, &mut d, &self.q)
    }

    fn set_joint_torque(&mut self, joint: &str, torque: f64) -> Result<(), SimError> {
        let j = self
            .model
            .joint_id(joint)
            .ok_or_else(|| SimError::Input(format!("no joint named '{joint}'")))?;
        if self.model.nvs[j.0] != 1 {
            return Err(SimError::Input(format!(
                "joint '{joint}' has {} degrees of freedom, not 1",
                self.model.nvs[j.0]
            )));
        }
        self.tau_user[self.model.idx_v[j.0]] = torque;
        Ok(())
    }
}

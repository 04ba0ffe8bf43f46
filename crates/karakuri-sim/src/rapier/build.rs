//! The scene → rapier: what rapier cannot express is refused here (an error naming the scene
//! key and the feature), the rest becomes rigid bodies, multibody joints, impulse joints and
//! colliders. Reads the [`SimModel`] the native builder makes of the scene (the world's karakuri
//! model, bodies, parry shapes, pairs, limits, loops, actuators, sensors): as Choreonoid's ODE
//! plugin builds its bodies from the simulator's Body/Link trees, this engine builds its own
//! from that one description, so both engines see the same URDF repairs, merged links and
//! shapes.

use karakuri::algorithms;
use karakuri::model::JointType;
use karakuri::spatial::{Se3, Vec3};
use karakuri::Data;
use rapier3d_f64::math::{Matrix, Pose, Rotation, Vector};
use rapier3d_f64::prelude::*;

use crate::compile::CompiledWorld;
use crate::scene::{ActuatorMode, ContactMode, EngineParams, Integrator, LoopKind, Scene, SensorKind};
use crate::SimError;

/// karakuri vector → rapier (glam) vector.
pub(super) fn vec_to(v: &Vec3) -> Vector {
    Vector::new(v.x, v.y, v.z)
}

/// rapier (glam) vector → karakuri vector.
pub(super) fn vec_from(v: Vector) -> Vec3 {
    Vec3::new(v.x, v.y, v.z)
}

/// rapier pose → karakuri placement.
pub(super) fn se3_from(p: &Pose) -> Se3 {
    let r = p.rotation;
    Se3::new(
        karakuri::spatial::quat_from_xyzw(&[r.x, r.y, r.z, r.w]),
        vec_from(p.translation),
    )
}

/// How a one-dof joint of the world model lives in rapier: the multibody link of its body
/// and the coordinate (0: translation along x, 3: rotation about x) of its frame, whose x is
/// the joint axis.
#[derive(Clone, Copy, Debug)]
pub(super) struct Dof {
    /// The world model's joint.
    pub joint: usize,
    /// Its multibody joint.
    pub handle: MultibodyJointHandle,
    /// The rapier axis (`LinX` or `AngX`).
    pub axis: JointAxis,
    /// Index of the coordinate in rapier's spatial layout.
    pub coord: usize,
    /// The joint axis in the joint frame (karakuri).
    pub local_axis: Vec3,
    /// Prismatic.
    pub prismatic: bool,
}

/// Everything rapier steps, and how the world model's joints map onto it.
pub(super) struct Built {
    pub bodies: RigidBodySet,
    pub colliders: ColliderSet,
    pub impulse_joints: ImpulseJointSet,
    pub multibody_joints: MultibodyJointSet,
    /// The rigid body carrying each world-model joint's frame `(njoints)` (None: the universe).
    pub joint_body: Vec<Option<RigidBodyHandle>>,
    /// The rapier body a joint's parent side is (a fixed body at the world frame for joints of
    /// the universe) `(njoints)`.
    pub parent_body: Vec<Option<RigidBodyHandle>>,
    /// Every one-dof joint, in the order of [`CompiledWorld::one_dof`].
    pub dofs: Vec<Dof>,
    /// Per collider (its `user_data`): the world body index of the shape.
    pub shape_body: Vec<usize>,
    /// Which shape pairs may touch `(nshapes²)`.
    pub allowed: Vec<bool>,
}

fn scene_file(scene: &Scene) -> String {
    scene
        .source
        .as_ref()
        .map_or("scene".to_string(), |p| p.display().to_string())
}

/// What rapier cannot express in a scene: the first such thing as an error naming the key,
/// and remarks (native-only settings that differ from their defaults) as warnings.
pub(super) fn check(scene: &Scene, sim: &CompiledWorld) -> Result<Vec<String>, SimError> {
    let file = scene_file(scene);
    let refuse = |path: &str, reason: String| SimError::Scene {
        file: file.clone(),
        path: path.into(),
        reason: format!("the rapier engine cannot express {reason} (use engine.type: native)"),
    };
    if scene.engine.integrator == Integrator::Rk4 {
        return Err(refuse(
            "engine.integrator",
            "RK4: it integrates with its own substepped semi-implicit Euler".into(),
        ));
    }
    if let ContactMode::Penalty { .. } = scene.contact.mode {
        return Err(refuse(
            "contact.mode",
            "penalty contacts (a spring-damper in N/m, N·s/m): its contacts are constraints with its own softness"
                .into(),
        ));
    }
    for (i, p) in scene.contact_pairs.iter().enumerate() {
        if let ContactMode::Penalty { .. } = p.mode {
            return Err(refuse(
                &format!("contact_pairs[{i}].mode"),
                "penalty contacts (a spring-damper in N/m, N·s/m)".into(),
            ));
        }
    }
    let materials = scene
        .materials
        .iter()
        .map(|(n, m)| (format!("materials.{n}"), m))
        .chain(std::iter::once((
            "default_material".to_string(),
            &scene.default_material,
        )));
    for (path, m) in materials {
        if m.static_friction != m.dynamic_friction {
            return Err(refuse(
                &path,
                format!(
                    "separate static and dynamic friction ({} and {}): it has one Coulomb coefficient",
                    m.static_friction, m.dynamic_friction
                ),
            ));
        }
    }
    for (i, s) in scene.sensors.iter().enumerate() {
        if s.kind == SensorKind::Force {
            return Err(refuse(
                &format!("sensors[{i}]"),
                "force sensors: its multibodies do not report joint wrenches".into(),
            ));
        }
    }
    // features of the native engine not mapped onto rapier (yet): refused, never ignored
    for (i, s) in scene.sensors.iter().enumerate() {
        if s.noise.is_some() {
            return Err(refuse(&format!("sensors[{i}].noise"), "sensor noise (not mapped yet)".into()));
        }
    }
    if let Some((i, _)) = scene.bodies.iter().enumerate().find(|(_, b)| b.track.is_some()) {
        return Err(refuse(&format!("bodies[{i}].track"), "track surfaces (not mapped yet)".into()));
    }
    if !scene.perturbations.is_empty() {
        return Err(refuse("perturbations", "external wrenches (not mapped yet)".into()));
    }
    if let Some(a) = sim.actuators.iter().find(|a| a.mode == ActuatorMode::Prescribed) {
        let _ = a;
        return Err(refuse("actuators", "prescribed actuators (not mapped yet)".into()));
    }
    if !sim.frictions.is_empty() {
        return Err(refuse("bodies / robots", "Coulomb joint friction (not mapped yet)".into()));
    }
    for (i, l) in sim.loops.iter().enumerate() {
        if matches!(l.kind, LoopKind::Piston | LoopKind::Weld) {
            return Err(refuse(&format!("loop_constraints[{i}].type"), format!("{:?} extra joints (not mapped yet)", l.kind).to_lowercase()));
        }
    }
    let m = &sim.model;
    for j in 1..m.njoints {
        let name = &m.joint_names[j];
        match m.joint_types[j] {
            JointType::Revolute { .. } | JointType::RevoluteUnbounded { .. } | JointType::Prismatic { .. } => {}
            JointType::FreeFlyer if m.parents[j] == 0 => {}
            t => {
                return Err(refuse(
                    "bodies",
                    format!(
                        "joint '{name}' ({}): it takes hinges, sliders and free roots",
                        t.short_name()
                    ),
                ))
            }
        }
        if m.mimic[j].is_some() {
            return Err(refuse("robots", format!("mimic joint '{name}'")));
        }
    }
    let mut warnings = vec![];
    let d = EngineParams::default();
    let e = &scene.engine;
    let native_only: Vec<&str> = [
        ("solver", e.solver != d.solver),
        ("max_iterations", e.max_iterations != d.max_iterations),
        ("tolerance", e.tolerance != d.tolerance),
        ("warm_start", e.warm_start != d.warm_start),
        ("direct_max_rows", e.direct_max_rows != d.direct_max_rows),
        ("loop_correction_rate", e.loop_correction_rate != d.loop_correction_rate),
        ("loop_projection", e.loop_projection != d.loop_projection),
    ]
    .into_iter()
    .filter_map(|(k, differs)| differs.then_some(k))
    .collect();
    if !native_only.is_empty() {
        warnings.push(format!(
            "engine.{} set but used by the native engine only (rapier runs its own solver settings)",
            native_only.join(", engine.")
        ));
    }
    let c = &scene.contact;
    let dc = crate::scene::ContactParams::default();
    let springhead: Vec<&str> = [
        (
            "error_correction_rate",
            c.error_correction_rate != dc.error_correction_rate,
        ),
        (
            "penetration_tolerance",
            c.penetration_tolerance != dc.penetration_tolerance,
        ),
        (
            "restitution_threshold_velocity",
            c.restitution_threshold_velocity != dc.restitution_threshold_velocity,
        ),
        (
            "friction_threshold_velocity",
            c.friction_threshold_velocity != dc.friction_threshold_velocity,
        ),
    ]
    .into_iter()
    .filter_map(|(k, differs)| differs.then_some(k))
    .collect();
    if !springhead.is_empty() {
        warnings.push(format!(
            "contact.{} set but rapier has no equivalent of Springhead's parameter(s): its contacts use its own softness",
            springhead.join(", contact.")
        ));
    }
    if sim.actuators.iter().any(|a| a.mode == ActuatorMode::Velocity) {
        warnings.push(
            "velocity-mode actuators: rapier does not report a multibody motor's force, so --joints tau holds the user torque only for them"
                .into(),
        );
    }
    Ok(warnings)
}

/// A rotation taking x onto the unit vector `a`.
fn x_onto(a: &Vec3) -> Rotation {
    Rotation::from_rotation_arc(Vector::X, vec_to(a).normalize())
}

/// Builds rapier's sets from the world model at its initial state (`sim.q0`, `sim.v0`).
pub(super) fn build(scene: &Scene, sim: &CompiledWorld) -> Result<Built, SimError> {
    let m = &sim.model;
    let mut data = Data::new(m);
    algorithms::forward_kinematics(m, &mut data, &sim.q0);
    let o_m_i = data.joint_placements()?.to_vec();
    let mut bodies = RigidBodySet::new();
    let mut multibody_joints = MultibodyJointSet::new();
    let mut joint_body: Vec<Option<RigidBodyHandle>> = vec![None; m.njoints];
    let mut parent_body: Vec<Option<RigidBodyHandle>> = vec![None; m.njoints];
    let mut dofs_by_joint: Vec<Option<Dof>> = vec![None; m.njoints];
    let to_pose = crate::collision::to_parry;
    for j in 1..m.njoints {
        let inertia = &m.inertias[j];
        let mass = MassProperties::with_inertia_matrix(
            vec_to(&inertia.com),
            inertia.mass,
            Matrix::from_cols_array(&{
                let i = &inertia.inertia_com;
                [
                    i[(0, 0)],
                    i[(1, 0)],
                    i[(2, 0)],
                    i[(0, 1)],
                    i[(1, 1)],
                    i[(2, 1)],
                    i[(0, 2)],
                    i[(1, 2)],
                    i[(2, 2)],
                ]
            }),
        );
        let rb = RigidBodyBuilder::dynamic()
            .pose(to_pose(&o_m_i[j]))
            .additional_mass_properties(mass)
            .can_sleep(false)
            .build();
        let h = bodies.insert(rb);
        joint_body[j] = Some(h);
        let (axis, prismatic) = match m.joint_types[j] {
            JointType::FreeFlyer => continue,
            JointType::Revolute { axis } | JointType::RevoluteUnbounded { axis } => (axis.vector(), false),
            JointType::Prismatic { axis } => (axis.vector(), true),
            _ => unreachable!("refused by check"),
        };
        let parent = match joint_body[m.parents[j]] {
            Some(p) => p,
            // a tree on the universe: its own fixed root at the world frame
            None => bodies.insert(RigidBodyBuilder::fixed().build()),
        };
        parent_body[j] = Some(parent);
        let r_a = x_onto(&axis);
        let p = to_pose(&m.joint_placements[j]);
        let (locked, rapier_axis, coord) = if prismatic {
            (JointAxesMask::LOCKED_PRISMATIC_AXES, JointAxis::LinX, 0)
        } else {
            (JointAxesMask::LOCKED_REVOLUTE_AXES, JointAxis::AngX, 3)
        };
        let mut joint = GenericJointBuilder::new(locked)
            .local_frame1(p * Pose::from_rotation(r_a))
            .local_frame2(Pose::from_rotation(r_a))
            .build();
        let iv = m.idx_v[j];
        if let Some(l) = sim.limits.iter().find(|l| l.dof == iv) {
            joint.set_limits(rapier_axis, [l.lo, l.hi]);
        }
        let handle = multibody_joints
            .insert(parent, h, joint, true)
            .ok_or_else(|| SimError::Scene {
                file: scene_file(scene),
                path: "bodies".into(),
                reason: format!(
                    "rapier refused the multibody joint '{}' (a kinematic loop in the tree?)",
                    m.joint_names[j]
                ),
            })?;
        dofs_by_joint[j] = Some(Dof {
            joint: j,
            handle,
            axis: rapier_axis,
            coord,
            local_axis: axis,
            prismatic,
        });
    }
    let dofs: Vec<Dof> = sim
        .one_dof
        .iter()
        .map(|&j| dofs_by_joint[j].expect("one-dof joints are hinges or sliders"))
        .collect();

    // the initial state: joint coordinates and velocities, passive parameters, free bodies' twists
    let mut vel = Data::new(m);
    algorithms::forward_kinematics_velocity(m, &mut vel, &sim.q0, &sim.v0);
    let twists = vel.joint_velocities()?.to_vec();
    for d in &dofs {
        let (iq, iv) = (m.idx_q[d.joint], m.idx_v[d.joint]);
        let (mb, link) = multibody_joints.get_mut(d.handle).expect("inserted above");
        let a = mb.link(link).expect("its link").assembly_id();
        let mut disp = vec![0.0; mb.ndofs()];
        disp[a] = sim.q0[iq];
        mb.apply_displacements(&disp);
        mb.generalized_velocity_mut()[a] = sim.v0[iv];
        // rapier gives angular dofs a default damping of 0.1: none here; the scene's springs
        // and dampers (and URDF damping) are the model's joint forces, applied each step
        mb.damping_mut()[a] = 0.0;
        mb.armature_mut()[a] = sim.dofs.armature[iv];
    }
    for j in 1..m.njoints {
        let Some(h) = joint_body[j] else { continue };
        // world twist of the body frame origin → rapier's (centre-of-mass velocity, ω)
        let x = &o_m_i[j];
        let v = x.act_motion(&twists[j]);
        let c = x.transform_point(&m.inertias[j].com);
        let lin = v.linear + v.angular.cross(&c);
        let rb = &mut bodies[h];
        rb.set_linvel(vec_to(&lin), true);
        rb.set_angvel(vec_to(&v.angular), true);
        if let Some(link) = multibody_joints.rigid_body_link(h).copied() {
            let mb = multibody_joints
                .get_multibody_mut(link.multibody)
                .expect("its multibody");
            if link.id == 0 && m.joint_types[j] == JointType::FreeFlyer {
                let mut gv = mb.generalized_velocity_mut();
                for k in 0..3 {
                    gv[k] = lin[k];
                    gv[3 + k] = v.angular[k];
                }
            }
        }
    }
    let handles: Vec<_> = multibody_joints
        .multibodies()
        .map(|mb| mb.root().rigid_body_handle())
        .collect();
    for root in handles {
        let link = *multibody_joints.rigid_body_link(root).expect("a root");
        let mb = multibody_joints
            .get_multibody_mut(link.multibody)
            .expect("its multibody");
        mb.forward_kinematics(&bodies, true);
        mb.update_rigid_bodies(&mut bodies, true);
    }

    // colliders: the native builder's parry shapes, on their joint's body (static: no body)
    let mut colliders = ColliderSet::new();
    let shapes = &sim.collider.shapes;
    let mut shape_body = Vec::with_capacity(shapes.len());
    for (i, s) in shapes.iter().enumerate() {
        let c = ColliderBuilder::new(s.shape.clone())
            .position(to_pose(&s.placement))
            .friction(s.material.dynamic_friction)
            .restitution(s.material.restitution)
            .friction_combine_rule(CoefficientCombineRule::Average)
            .restitution_combine_rule(CoefficientCombineRule::Average)
            .density(0.0)
            .active_hooks(ActiveHooks::FILTER_CONTACT_PAIRS)
            .user_data(i as u128)
            .build();
        match joint_body[s.joint] {
            Some(h) => colliders.insert_with_parent(c, h, &mut bodies),
            None => colliders.insert(c),
        };
        shape_body.push(s.body);
    }
    let n = shapes.len();
    let mut allowed = vec![false; n * n];
    for i in 0..n {
        for k in 0..n {
            allowed[i * n + k] = matches!(sim.collider.pair_mode(i, k), Some(ContactMode::Lcp));
        }
    }

    // loop closures: impulse joints between the two bodies (the world: a fixed body)
    let mut impulse_joints = ImpulseJointSet::new();
    for l in &sim.loops {
        let mut side = |j: usize| match joint_body[j] {
            Some(h) => h,
            None => bodies.insert(RigidBodyBuilder::fixed().build()),
        };
        let (ha, hb) = (side(l.ja), side(l.jb));
        let revolute = l.kind == LoopKind::Revolute;
        let mut b = GenericJointBuilder::new(if revolute {
            JointAxesMask::LOCKED_REVOLUTE_AXES
        } else {
            JointAxesMask::LOCKED_SPHERICAL_AXES
        })
        .local_anchor1(vec_to(&l.pa))
        .local_anchor2(vec_to(&l.pb));
        if revolute {
            b = b.local_axis1(vec_to(&l.axis_a)).local_axis2(vec_to(&l.axis_b));
        }
        impulse_joints.insert(ha, hb, b.contacts_enabled(false).build(), true);
    }
    Ok(Built {
        bodies,
        colliders,
        impulse_joints,
        multibody_joints,
        joint_body,
        parent_body,
        dofs,
        shape_body,
        allowed,
    })
}

//! The compiled world → rapier (what rapier cannot express is refused before, in `check.rs`):
//! rigid bodies, multibody joints, impulse joints and colliders. Reads the [`CompiledWorld`] the
//! compile step makes of the scene (the world's karakuri model, bodies, parry shapes, pairs,
//! limits, loops, initial state), as the native engine does: as Choreonoid's ODE plugin builds
//! its bodies from the simulator's Body/Link trees, this engine builds its own from that one
//! description, so both engines see the same URDF repairs, merged links and shapes.

use karakuri::algorithms;
use karakuri::model::JointType;
use karakuri::spatial::{Inertia, Se3, Vec3};
use karakuri::Data;
use rapier3d_f64::math::{Matrix, Pose, Rotation, Vector};
use rapier3d_f64::prelude::*;

use crate::compile::CompiledWorld;
use crate::scene::{ContactMode, LoopKind, Scene};
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


/// A rotation taking x onto the unit vector `a`.
fn x_onto(a: &Vec3) -> Rotation {
    Rotation::from_rotation_arc(Vector::X, vec_to(a).normalize())
}

/// Builds rapier's sets from the compiled world at its initial state (`w.q0`, `w.v0`).
pub(super) fn build(scene: &Scene, w: &CompiledWorld) -> Result<Built, SimError> {
    let m = &w.model;
    let mut data = Data::new(m);
    algorithms::forward_kinematics(m, &mut data, &w.q0);
    let o_m_i = data.joint_placements()?.to_vec();
    let mut built = Built {
        bodies: RigidBodySet::new(),
        colliders: ColliderSet::new(),
        impulse_joints: ImpulseJointSet::new(),
        multibody_joints: MultibodyJointSet::new(),
        joint_body: vec![None; m.njoints],
        parent_body: vec![None; m.njoints],
        dofs: Vec::new(),
        shape_body: Vec::new(),
        allowed: Vec::new(),
    };
    multibodies(scene, w, &o_m_i, &mut built)?;
    initial_state(w, &o_m_i, &mut built)?;
    colliders(w, &mut built);
    loop_joints(w, &mut built);
    Ok(built)
}

/// A world-model inertia as rapier's mass properties.
fn mass_properties(inertia: &Inertia) -> MassProperties {
    let i = &inertia.inertia_com;
    let columns = [i[(0, 0)], i[(1, 0)], i[(2, 0)], i[(0, 1)], i[(1, 1)], i[(2, 1)], i[(0, 2)], i[(1, 2)], i[(2, 2)]];
    MassProperties::with_inertia_matrix(vec_to(&inertia.com), inertia.mass, Matrix::from_cols_array(&columns))
}

/// A rigid body per world-model joint at its initial placement `o_m_i`, and a multibody joint
/// per hinge or slider (its x the joint axis, its limits the joint's); a tree on the universe
/// gets its own fixed root at the world frame. Writes the bodies, multibody joints,
/// `joint_body`, `parent_body` and `dofs` (in the order of [`CompiledWorld::one_dof`]).
fn multibodies(scene: &Scene, w: &CompiledWorld, o_m_i: &[Se3], out: &mut Built) -> Result<(), SimError> {
    let m = &w.model;
    let to_pose = crate::collision::to_parry;
    let mut dofs_by_joint: Vec<Option<Dof>> = vec![None; m.njoints];
    for j in 1..m.njoints {
        let rb = RigidBodyBuilder::dynamic()
            .pose(to_pose(&o_m_i[j]))
            .additional_mass_properties(mass_properties(&m.inertias[j]))
            .can_sleep(false)
            .build();
        let h = out.bodies.insert(rb);
        out.joint_body[j] = Some(h);
        let (axis, prismatic) = match m.joint_types[j] {
            JointType::FreeFlyer => continue,
            JointType::Revolute { axis } | JointType::RevoluteUnbounded { axis } => (axis.vector(), false),
            JointType::Prismatic { axis } => (axis.vector(), true),
            _ => unreachable!("refused by check"),
        };
        let parent = match out.joint_body[m.parents[j]] {
            Some(p) => p,
            // a tree on the universe: its own fixed root at the world frame
            None => out.bodies.insert(RigidBodyBuilder::fixed().build()),
        };
        out.parent_body[j] = Some(parent);
        let r_a = x_onto(&axis);
        let (locked, rapier_axis, coord) = if prismatic {
            (JointAxesMask::LOCKED_PRISMATIC_AXES, JointAxis::LinX, 0)
        } else {
            (JointAxesMask::LOCKED_REVOLUTE_AXES, JointAxis::AngX, 3)
        };
        let mut joint = GenericJointBuilder::new(locked)
            .local_frame1(to_pose(&m.joint_placements[j]) * Pose::from_rotation(r_a))
            .local_frame2(Pose::from_rotation(r_a))
            .build();
        if let Some(l) = w.limits.iter().find(|l| l.dof == m.idx_v[j]) {
            joint.set_limits(rapier_axis, [l.lo, l.hi]);
        }
        let handle = out.multibody_joints.insert(parent, h, joint, true).ok_or_else(|| SimError::Scene {
            file: scene.source.as_ref().map_or("scene".to_string(), |p| p.display().to_string()),
            path: "bodies".into(),
            reason: format!("rapier refused the multibody joint '{}' (a kinematic loop in the tree?)", m.joint_names[j]),
        })?;
        let local_axis = axis;
        dofs_by_joint[j] = Some(Dof { joint: j, handle, axis: rapier_axis, coord, local_axis, prismatic });
    }
    let one_dof = w.one_dof.iter().map(|&j| dofs_by_joint[j].expect("one-dof joints are hinges or sliders"));
    out.dofs = one_dof.collect();
    Ok(())
}

/// The initial state (placements `o_m_i`): the one-dof joints' coordinates, velocities and
/// armature (no damping of rapier's own: the scene's springs and dampers are applied each
/// step), every body's twist, then the multibodies' kinematics.
fn initial_state(w: &CompiledWorld, o_m_i: &[Se3], out: &mut Built) -> Result<(), SimError> {
    let m = &w.model;
    let mut vel = Data::new(m);
    algorithms::forward_kinematics_velocity(m, &mut vel, &w.q0, &w.v0);
    let twists = vel.joint_velocities()?.to_vec();
    for d in &out.dofs {
        let (iq, iv) = (m.idx_q[d.joint], m.idx_v[d.joint]);
        let (mb, link) = out.multibody_joints.get_mut(d.handle).expect("inserted above");
        let a = mb.link(link).expect("its link").assembly_id();
        let mut disp = vec![0.0; mb.ndofs()];
        disp[a] = w.q0[iq];
        mb.apply_displacements(&disp);
        mb.generalized_velocity_mut()[a] = w.v0[iv];
        // rapier gives angular dofs a default damping of 0.1: none here
        mb.damping_mut()[a] = 0.0;
        mb.armature_mut()[a] = w.dofs.armature[iv];
    }
    for j in 1..m.njoints {
        let Some(h) = out.joint_body[j] else { continue };
        // world twist of the body frame origin → rapier's (centre-of-mass velocity, ω)
        let x = &o_m_i[j];
        let v = x.act_motion(&twists[j]);
        let c = x.transform_point(&m.inertias[j].com);
        let lin = v.linear + v.angular.cross(&c);
        let rb = &mut out.bodies[h];
        rb.set_linvel(vec_to(&lin), true);
        rb.set_angvel(vec_to(&v.angular), true);
        let Some(link) = out.multibody_joints.rigid_body_link(h).copied() else { continue };
        let mb = out.multibody_joints.get_multibody_mut(link.multibody).expect("its multibody");
        if link.id == 0 && m.joint_types[j] == JointType::FreeFlyer {
            let mut gv = mb.generalized_velocity_mut();
            for k in 0..3 {
                gv[k] = lin[k];
                gv[3 + k] = v.angular[k];
            }
        }
    }
    let roots: Vec<_> = out.multibody_joints.multibodies().map(|mb| mb.root().rigid_body_handle()).collect();
    for root in roots {
        let link = *out.multibody_joints.rigid_body_link(root).expect("a root");
        let mb = out.multibody_joints.get_multibody_mut(link.multibody).expect("its multibody");
        mb.forward_kinematics(&out.bodies, true);
        mb.update_rigid_bodies(&mut out.bodies, true);
    }
    Ok(())
}

/// The compiled parry shapes as colliders on their joint's body (static: no body), friction
/// and restitution averaged as the native engine does, and the pair table (`lcp` pairs touch).
fn colliders(w: &CompiledWorld, out: &mut Built) {
    let shapes = &w.collider.shapes;
    for (i, s) in shapes.iter().enumerate() {
        let c = ColliderBuilder::new(s.shape.clone())
            .position(crate::collision::to_parry(&s.placement))
            .friction(s.material.dynamic_friction)
            .restitution(s.material.restitution)
            .friction_combine_rule(CoefficientCombineRule::Average)
            .restitution_combine_rule(CoefficientCombineRule::Average)
            .density(0.0)
            .active_hooks(ActiveHooks::FILTER_CONTACT_PAIRS)
            .user_data(i as u128)
            .build();
        match out.joint_body[s.joint] {
            Some(h) => out.colliders.insert_with_parent(c, h, &mut out.bodies),
            None => out.colliders.insert(c),
        };
        out.shape_body.push(s.body);
    }
    let n = shapes.len();
    out.allowed = (0..n * n).map(|ik| matches!(w.collider.pair_mode(ik / n, ik % n), Some(ContactMode::Lcp))).collect();
}

/// Loop closures as impulse joints between the two bodies (the world: a fixed body).
fn loop_joints(w: &CompiledWorld, out: &mut Built) {
    for l in &w.loops {
        let mut side = |j: usize| match out.joint_body[j] {
            Some(h) => h,
            None => out.bodies.insert(RigidBodyBuilder::fixed().build()),
        };
        let (ha, hb) = (side(l.ja), side(l.jb));
        let revolute = l.kind == LoopKind::Revolute;
        let mask = if revolute { JointAxesMask::LOCKED_REVOLUTE_AXES } else { JointAxesMask::LOCKED_SPHERICAL_AXES };
        let mut b = GenericJointBuilder::new(mask).local_anchor1(vec_to(&l.pa)).local_anchor2(vec_to(&l.pb));
        if revolute {
            b = b.local_axis1(vec_to(&l.axis_a)).local_axis2(vec_to(&l.axis_b));
        }
        out.impulse_joints.insert(ha, hb, b.contacts_enabled(false).build(), true);
    }
}

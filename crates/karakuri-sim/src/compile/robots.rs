//! The robots pass: each scene robot is loaded from its source and grafted onto the world as
//! a subtree (its joints `robot/joint`, its links bodies `robot/link`; the robot's universe a
//! static body at its pose). Its one-dof joints' passive parameters and finite limits are
//! recorded by joint id, a floating root gets its initial state, and the names its `q0` and
//! `v0` give are checked.
//!
//! A robot source is anything that gives a karakuri [`Model`] of the robot with its collision
//! geometry and remarks ([`UrdfRobot`]): URDF today ([`load`]). An MJCF or Choreonoid `.body`
//! loader returns the same and takes an arm in [`load`]; grafting and the later passes stay
//! as they are.

use karakuri::model::{JointId, JointType};
use karakuri::spatial::Se3;
use karakuri::Model;

use super::builder::{model_err, scene_err, se3, Builder, DofSetting, FreeStart, Grafted, LimitSetting};
use super::model::SimBody;
use crate::scene::geometry::UrdfRobot;
use crate::scene::{RobotRoot, Scene};
use crate::SimError;

/// Loads robot `ri` of the scene from its source (today a URDF file, or one built into the
/// binary; the loader checks and repairs it and reads its collision meshes).
pub(super) fn load(scene: &Scene, ri: usize) -> Result<UrdfRobot, SimError> {
    crate::scene::geometry::load_robot(scene, ri)
}

/// Loads and grafts every scene robot, in scene order.
pub(super) fn robots(b: &mut Builder) -> Result<(), SimError> {
    for ri in 0..b.scene.robots.len() {
        let mut robot = load(b.scene, ri)?;
        b.warnings.append(&mut robot.warnings);
        let g = graft(b, ri, robot)?;
        check_joint_names(b.scene, ri, &g.robot.model)?;
        let rs = &b.scene.robots[ri];
        if rs.root == RobotRoot::Floating && g.robot.model.njoints > 1 {
            let (linear, angular) = (rs.base_velocity.linear, rs.base_velocity.angular);
            b.free_start.push(FreeStart { joint: g.joint[1], pose: rs.pose, linear, angular });
        }
        b.robots.push(g);
    }
    Ok(())
}

/// Robot `ri`'s joints and links onto the world: a static body for its universe's links, then
/// a world joint and body per robot joint (its parent's world joint; a joint on the robot's
/// universe placed at the robot's pose, unless it is the floating root), each one-dof joint's
/// settings recorded.
fn graft(b: &mut Builder, ri: usize, robot: UrdfRobot) -> Result<Grafted, SimError> {
    let scene = b.scene;
    let rs = &scene.robots[ri];
    let rm = &robot.model;
    let base = se3(&rs.pose);
    let mut joint = vec![0usize; rm.njoints];
    let mut body = vec![usize::MAX; rm.njoints];
    body[0] = b.bodies.len();
    let root = SimBody {
        name: format!("{}/{}", rs.name, rm.body_names[0]),
        joint: 0,
        placement: base,
        parent: None,
        mass: 0.0,
        bounds: None,
    };
    b.bodies.push(root);
    let err = |e| model_err(scene, format!("robots[{ri}]"), e);
    for j in 1..rm.njoints {
        let placement = if rm.parents[j] == 0 && rm.joint_types[j] != JointType::FreeFlyer {
            base.compose(&rm.joint_placements[j])
        } else {
            rm.joint_placements[j]
        };
        let name = format!("{}/{}", rs.name, rm.joint_names[j]);
        let id = b.model.add_joint(JointId(joint[rm.parents[j]]), &name, rm.joint_types[j], placement).map_err(err)?;
        let bname = format!("{}/{}", rs.name, rm.body_names[j]);
        b.model.add_inertia(id, &bname, rm.inertias[j]).map_err(err)?;
        b.model.set_body_name(id, &bname).map_err(err)?;
        link_settings(b, ri, rm, j, id.0);
        joint[j] = id.0;
        body[j] = b.bodies.len();
        let parent = Some(body[rm.parents[j]]);
        b.bodies.push(SimBody { name: bname, joint: id.0, placement: Se3::identity(), parent, mass: rm.inertias[j].mass, bounds: None });
    }
    Ok(Grafted { robot, base, joint, body })
}

/// Records robot joint `j` (world joint `id`): its finite limits (revolute, prismatic) and, for
/// a one-dof joint, its passive parameters (the URDF's damping plus the robot's
/// `joint_damping`, the robot's `joint_stiffness` about its `q0`, the URDF's friction).
fn link_settings(b: &mut Builder, ri: usize, rm: &Model, j: usize, id: usize) {
    let rs = &b.scene.robots[ri];
    let (iq, nq) = (rm.idx_q[j], rm.nqs[j]);
    let (lo, hi) = (&rm.lower_position_limit[iq..iq + nq], &rm.upper_position_limit[iq..iq + nq]);
    let limited = matches!(rm.joint_types[j], JointType::Revolute { .. } | JointType::Prismatic { .. });
    if nq == 1 && lo[0].is_finite() && hi[0].is_finite() && limited {
        b.limits.push(LimitSetting { joint: id, lower: lo[0], upper: hi[0] });
    }
    let (iv, nv) = (rm.idx_v[j], rm.nvs[j]);
    if nv == 1 {
        let q_ref = rs.q0.iter().find(|(n, _)| n == &rm.joint_names[j]).map_or(0.0, |(_, x)| *x);
        b.dofs.push(DofSetting {
            joint: id,
            damping: rm.damping[iv] + rs.joint_damping,
            stiffness: rs.joint_stiffness,
            spring_reference: q_ref,
            armature: 0.0,
            friction: rm.friction[iv],
        });
    }
}

/// Every joint robot `ri`'s `q0` and `v0` name is one of the robot's.
fn check_joint_names(scene: &Scene, ri: usize, rm: &Model) -> Result<(), SimError> {
    let rs = &scene.robots[ri];
    for (key, list) in [("q0", &rs.q0), ("v0", &rs.v0)] {
        for (name, _) in list {
            if rm.joint_id(name).is_none() {
                let path = format!("robots[{ri}].{key}.{name}");
                return Err(scene_err(scene, path, format!("the robot has no joint '{name}'")));
            }
        }
    }
    Ok(())
}

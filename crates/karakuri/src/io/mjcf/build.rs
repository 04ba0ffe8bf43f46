//! Pass 3, build: the resolved bodies to a [`Model`] through [`ModelBuilder`].
//!
//! A MuJoCo joint at `pos` with axis `a` in its body's frame becomes a karakuri joint whose
//! frame is the body's frame moved to `pos` (and turned by `-ref` about `a`, so that karakuri's
//! q is MuJoCo's qpos); the body's frame is then at `-pos` in the joint's child frame. Several
//! joints in one body become a chain, the body's inertia on the last. A body without joints is
//! merged into the body that carries it (inertia added, a `Body` frame kept). A free joint
//! (on a body fixed to the world) is placed at the world origin: its q is the body's pose.

use super::bodies::{BodySpec, JointKind, JointSpec};
use super::MjcfError;
use crate::model::{Axis, FrameKind, JointId, JointType, Model, ModelBuilder};
use crate::spatial::{rotation_about, Se3, Vec3};

/// The name of body `i`: as written, else `body<i>` (`i` MuJoCo's body id).
pub(super) fn body_name(b: &BodySpec, i: usize) -> String {
    b.name.clone().unwrap_or_else(|| format!("body{i}"))
}

/// The name of joint `k` of a body: as written, else `<body>_joint<k>`.
fn joint_name(j: &JointSpec, body: &str, k: usize) -> String {
    j.name.clone().unwrap_or_else(|| format!("{body}_joint{k}"))
}

fn axis(a: Vec3) -> Axis {
    Axis::from_unit(a)
}

/// Builds the model; also returns the names of the dofs whose forward dynamics is undefined.
pub(super) fn build(name: &str, bodies: &[BodySpec], gravity: Vec3) -> Result<(Model, Vec<usize>), MjcfError> {
    let mut b = ModelBuilder::new(name);
    b.set_gravity(gravity);
    // per body: the joint that moves it and its frame in that joint's frame
    let mut attach: Vec<(JointId, Se3)> = vec![(JointId::UNIVERSE, Se3::identity())];
    for (k, (sname, sx)) in bodies[0].sites.iter().enumerate() {
        let sname = sname.clone().unwrap_or_else(|| format!("world_site{k}"));
        b.add_frame(&sname, JointId::UNIVERSE, *sx, FrameKind::Operational).map_err(|e| bodies[0].at.error(e.to_string()))?;
    }
    for (i, body) in bodies.iter().enumerate().skip(1) {
        let bname = body_name(body, i);
        let err = |e: crate::ModelError| body.at.error(e.to_string());
        let (pj, px) = attach[body.parent];
        let x = px.compose(&body.local);
        let (joint, in_joint) = if body.joints.is_empty() {
            (pj, x)
        } else {
            add_joints(&mut b, body, &bname, pj, x)?
        };
        b.add_inertia(joint, &bname, body.inertia.transformed(&in_joint)).map_err(err)?;
        b.add_frame(&bname, joint, in_joint, FrameKind::Body).map_err(err)?;
        for (k, (sname, sx)) in body.sites.iter().enumerate() {
            let sname = sname.clone().unwrap_or_else(|| format!("{bname}_site{k}"));
            b.add_frame(&sname, joint, in_joint.compose(sx), FrameKind::Operational).map_err(err)?;
        }
        attach.push((joint, in_joint));
    }
    b.build_listing_massless_dofs().map_err(|e| bodies[0].at.error(e.to_string()))
}

/// Adds a body's joints as a chain under `parent` (the body's frame at `x` in `parent`'s
/// frame); returns the last joint and the body's frame in it.
fn add_joints(b: &mut ModelBuilder, body: &BodySpec, bname: &str, parent: JointId, x: Se3) -> Result<(JointId, Se3), MjcfError> {
    let mut parent = parent;
    let mut before = x;
    for (k, j) in body.joints.iter().enumerate() {
        let err = |e: crate::ModelError| j.at.error(e.to_string());
        let name = joint_name(j, bname, k);
        let at_pos = before.compose(&Se3::from_translation(j.pos));
        let (kind, placement) = match j.kind {
            JointKind::Free => {
                if parent != JointId::UNIVERSE || body.joints.len() > 1 {
                    return Err(j.at.error("a free joint must be the only joint of a body fixed to the world"));
                }
                (JointType::FreeFlyer, Se3::identity())
            }
            JointKind::Ball => (JointType::Spherical, at_pos),
            JointKind::Hinge => {
                let kind = match j.limits {
                    Some(_) => JointType::Revolute { axis: axis(j.axis) },
                    None => JointType::RevoluteUnbounded { axis: axis(j.axis) },
                };
                let turn = if j.reference != 0.0 { Se3::new(rotation_about(&j.axis, -j.reference), Vec3::zeros()) } else { Se3::identity() };
                (kind, at_pos.compose(&turn))
            }
            JointKind::Slide => {
                let shift = if j.reference != 0.0 { Se3::from_translation(-j.reference * j.axis) } else { Se3::identity() };
                (JointType::Prismatic { axis: axis(j.axis) }, at_pos.compose(&shift))
            }
        };
        let id = b.add_joint(parent, &name, kind, placement).map_err(err)?;
        let nv = kind.nv();
        if let Some((lo, hi)) = j.limits {
            b.set_position_limits(id, &[lo], &[hi]).map_err(err)?;
        }
        b.set_damping_friction(id, &vec![j.damping; nv], &vec![j.frictionloss; nv]).map_err(err)?;
        b.set_armature(id, &vec![j.armature; nv]).map_err(err)?;
        parent = id;
        before = Se3::from_translation(-j.pos);
    }
    b.set_body_name(parent, bname).map_err(|e| body.at.error(e.to_string()))?;
    Ok((parent, before))
}

//! The bodies pass: each scene body becomes a free flyer (a `free` joint), a chain of hinges
//! and sliders (one world joint per scene joint; the intermediate bodies are named
//! `<body>#<k>`, the body itself carries the last joint), or a frame fixed to its parent (no
//! joints: its inertia joins the parent's). Its hinges' initial values, passive parameters,
//! limits and actuators are recorded by joint id, and a body with a `track` gets its track.

use karakuri::model::{Axis, JointId, JointType};
use karakuri::spatial::{Inertia, Se3, Vec3};

use super::builder::{
    model_err, scene_err, se3, v3, ActuatorSetting, Builder, DofSetting, FreeStart, JointValue, LimitSetting,
};
use super::model::{SimBody, Track, TrackOwner};
use crate::scene::JointSpec;
use crate::SimError;

/// Adds every scene body, in scene order (a body's parent comes before it).
pub(super) fn scene_bodies(b: &mut Builder) -> Result<(), SimError> {
    let scene = b.scene;
    for (bi, bs) in scene.bodies.iter().enumerate() {
        let parent = if bs.parent == "world" { None } else { scene.body_index(&bs.parent) };
        let (pj, px) = parent.map_or((0, Se3::identity()), |p| (b.bodies[p].joint, b.bodies[p].placement));
        let base = px.compose(&se3(&bs.pose_in_parent));
        // as given, or from the shapes and `density` (validated)
        let inertia = bs.mass_properties().map_err(|e| scene_err(scene, format!("bodies[{bi}].density"), e))?;
        let (joint, placement) = match bs.joints.first() {
            None => {
                if pj != 0 {
                    b.model
                        .add_inertia(JointId(pj), &bs.name, inertia.transformed(&base))
                        .map_err(|e| model_err(scene, format!("bodies[{bi}].inertia"), e))?;
                }
                (pj, base)
            }
            Some(JointSpec::Free { .. }) => free_body(b, bi, inertia)?,
            Some(JointSpec::Hinge { .. }) => hinge_chain(b, bi, JointId(pj), base, inertia)?,
        };
        let body = SimBody { name: bs.name.clone(), joint, placement, parent, mass: inertia.mass, bounds: None };
        if let Some(t) = bs.track {
            let axis = body.placement.rotation * v3(&t.axis);
            let (speed, lateral_friction) = (t.speed, t.lateral_friction);
            b.tracks.push(Track { name: bs.name.clone(), owner: TrackOwner::Body(bi), joint, axis, speed, lateral_friction });
        }
        b.bodies.push(body);
    }
    Ok(())
}

/// Scene body `bi` on a free flyer of the universe; its joint and its frame in the joint's.
fn free_body(b: &mut Builder, bi: usize, inertia: Inertia) -> Result<(usize, Se3), SimError> {
    let scene = b.scene;
    let bs = &scene.bodies[bi];
    let JointSpec::Free { name, q0: pose, qd0 } = &bs.joints[0] else { unreachable!("a free joint") };
    let path = |s: &str| format!("bodies[{bi}].{s}");
    let j = b
        .model
        .add_joint(JointId::UNIVERSE, name, JointType::FreeFlyer, Se3::identity())
        .map_err(|e| model_err(scene, path("joints[0]"), e))?;
    b.model.add_body(j, &bs.name, inertia).map_err(|e| model_err(scene, path("inertia"), e))?;
    b.model.set_body_name(j, &bs.name).map_err(|e| model_err(scene, path("name"), e))?;
    b.free_start.push(FreeStart { joint: j.0, pose: *pose, linear: qd0.linear, angular: qd0.angular });
    Ok((j.0, Se3::identity()))
}

/// Scene body `bi` at the end of its chain of hinges and sliders from joint `parent` (the
/// first anchor placed at `base` in the parent's frame, each next anchor relative to the
/// last); its joint and its frame in the joint's.
fn hinge_chain(
    b: &mut Builder,
    bi: usize,
    mut parent: JointId,
    base: Se3,
    inertia: Inertia,
) -> Result<(usize, Se3), SimError> {
    let scene = b.scene;
    let bs = &scene.bodies[bi];
    let path = |s: &str| format!("bodies[{bi}].{s}");
    let mut prev_anchor = Vec3::zeros();
    let n = bs.joints.len();
    for (k, js) in bs.joints.iter().enumerate() {
        let JointSpec::Hinge { anchor, .. } = js else {
            let reason = "a free joint must be the body's only joint";
            return Err(scene_err(scene, path(&format!("joints[{k}]")), reason));
        };
        let a = v3(anchor);
        let placement =
            if k == 0 { base.compose(&Se3::from_translation(a)) } else { Se3::from_translation(a - prev_anchor) };
        prev_anchor = a;
        let j = hinge(b, bi, k, parent, placement)?;
        if k + 1 == n {
            let x = Se3::from_translation(-a);
            b.model.add_body(j, &bs.name, inertia.transformed(&x)).map_err(|e| model_err(scene, path("inertia"), e))?;
            b.model.set_body_name(j, &bs.name).map_err(|e| model_err(scene, path("name"), e))?;
        } else {
            let name = format!("{}#{}", bs.name, k);
            b.model.set_body_name(j, &name).map_err(|e| model_err(scene, path("name"), e))?;
        }
        parent = j;
    }
    Ok((parent.0, Se3::from_translation(-prev_anchor)))
}

/// Joint `k` of scene body `bi` (a hinge or slider) on `parent` at `placement`, with its
/// initial value and speed, passive parameters, limits and actuator recorded.
fn hinge(b: &mut Builder, bi: usize, k: usize, parent: JointId, placement: Se3) -> Result<JointId, SimError> {
    let scene = b.scene;
    let JointSpec::Hinge {
        name,
        prismatic,
        axis,
        q0,
        qd0,
        limits,
        damping,
        stiffness,
        spring_reference,
        armature,
        actuator,
        friction,
        ..
    } = &scene.bodies[bi].joints[k]
    else {
        unreachable!("a hinge")
    };
    let path = format!("bodies[{bi}].joints[{k}]");
    let ax = Axis::from_unit(v3(axis));
    let kind = match (prismatic, limits.is_some()) {
        (true, _) => JointType::Prismatic { axis: ax },
        (false, true) => JointType::Revolute { axis: ax },
        (false, false) => JointType::RevoluteUnbounded { axis: ax },
    };
    let j = b.model.add_joint(parent, name, kind, placement).map_err(|e| model_err(scene, path.clone(), e))?;
    if let Some(l) = limits {
        b.model.set_position_limits(j, &[l[0]], &[l[1]]).map_err(|e| model_err(scene, format!("{path}.limits"), e))?;
        b.limits.push(LimitSetting { joint: j.0, lower: l[0], upper: l[1] });
    }
    b.q0.push(JointValue { joint: j.0, value: *q0 });
    b.v0.push(JointValue { joint: j.0, value: *qd0 });
    b.dofs.push(DofSetting {
        joint: j.0,
        damping: *damping,
        stiffness: *stiffness,
        spring_reference: *spring_reference,
        armature: *armature,
        friction: *friction,
    });
    if let Some(a) = actuator {
        b.actuators.push(ActuatorSetting { joint: j.0, spec: a.clone(), bias: 0.0 });
    }
    Ok(j)
}

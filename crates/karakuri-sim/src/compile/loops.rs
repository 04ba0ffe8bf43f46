//! The loops pass: the scene's loop constraints (Choreonoid's extra joints) on the world
//! model. Each body name (`world`, a scene body, a robot link, also one merged into another
//! through fixed joints) resolves to its joint and frame; anchors and A's axis go into joint
//! frames, B's axis and the relative orientation come from the initial configuration.

use karakuri::model::FrameKind;
use karakuri::spatial::Se3;
use karakuri::Model;

use super::builder::{scene_err, v3, Builder};
use super::model::LoopSpec;
use crate::SimError;

/// Every link of every robot by name (`robot/link`, those merged through fixed joints too):
/// its world joint and its frame in that joint's.
fn robot_links(b: &Builder) -> Vec<(String, usize, Se3)> {
    let mut links = Vec::new();
    for (g, rs) in b.robots.iter().zip(&b.scene.robots) {
        for f in g.robot.model.frames.iter().filter(|f| f.kind == FrameKind::Body) {
            let (joint, placement) = g.on_world(f.parent_joint.0, &f.placement);
            links.push((format!("{}/{}", rs.name, f.name), joint, placement));
        }
    }
    links
}

/// The loop closures, with the joint placements `o_m_i` of the initial configuration. Errors
/// name `loop_constraints[i].body_a` / `.body_b` for a name that is not found and the loop for
/// two bodies that move as one (a loop between them would hold nothing and give the solver
/// empty rows).
pub(super) fn loops(b: &Builder, model: &Model, o_m_i: &[Se3]) -> Result<Vec<LoopSpec>, SimError> {
    let scene = b.scene;
    let links = robot_links(b);
    let find = |li: usize, key: &str, n: &str| -> Result<(usize, Se3), SimError> {
        if n == "world" {
            return Ok((0, Se3::identity()));
        }
        if let Some(b) = b.bodies.iter().find(|b| b.name == n) {
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
    let mut loops = Vec::with_capacity(scene.loop_constraints.len() + b.body_loops.len());
    for (li, l) in scene.loop_constraints.iter().chain(&b.body_loops).enumerate() {
        let (ja, xa) = find(li, "body_a", &l.body_a)?;
        let (jb, xb) = find(li, "body_b", &l.body_b)?;
        if ja == jb {
            let with = if ja == 0 { "the world".to_string() } else { format!("joint '{}'", model.joint_names[ja]) };
            let reason = format!(
                "'{}' and '{}' are rigidly joined (both move with {with}): the loop would hold nothing",
                l.body_a, l.body_b
            );
            return Err(scene_err(scene, format!("loop_constraints[{li}]"), reason));
        }
        let axis_a = xa.rotation * v3(&l.axis_a);
        // B's axis and the relative orientation from the initial configuration
        let (ra, rb) = (o_m_i[ja].rotation, o_m_i[jb].rotation);
        loops.push(LoopSpec {
            kind: l.kind,
            ja,
            pa: xa.transform_point(&v3(&l.anchor_a)),
            jb,
            pb: xb.transform_point(&v3(&l.anchor_b)),
            axis_a,
            axis_b: rb.transpose() * (ra * axis_a),
            rel_rotation: ra.transpose() * rb,
        });
    }
    Ok(loops)
}

//! The build pass: the link tree checked (names, root, parents, cycles), then walked depth
//! first (children in file order) into a [`ModelBuilder`]: a joint per moving link, fixed and
//! track links merged into their parent's body as frames; shapes and devices placed on the
//! joints; `standardPose` by joint id; extra joints and collision rules resolved.

use std::collections::BTreeMap;

use super::types::BodyError;
use super::types::{FileDesc, LinkDesc};
use super::types::{BodyDevice, BodyJointKind, BodyLink, BodyModel, BodyShape, CollisionRules, ExtraJoint};
use super::values::R;
use super::yaml::Node;
use crate::model::{Axis, FrameKind, JointId, JointType, ModelBuilder};
use crate::spatial::{Inertia, Se3};

/// Each link's parent index (`None` for the root) and the root's index.
fn tree(f: &FileDesc) -> R<(Vec<Option<usize>>, usize)> {
    let mut index = BTreeMap::new();
    for (i, l) in f.links.iter().enumerate() {
        if index.insert(l.name.as_str(), i).is_some() {
            return Err(BodyError::new(&l.file, l.line, "name", format!("link '{}' is defined twice", l.name)));
        }
    }
    let root = match &f.root {
        Some((r, line)) => *index.get(r.as_str()).ok_or_else(|| BodyError::new(&f.file, *line, "rootLink", format!("link '{r}' is not defined")))?,
        None => 0,
    };
    let mut parents = vec![None; f.links.len()];
    for (i, l) in f.links.iter().enumerate() {
        match (&l.parent, i == root) {
            (Some((_, line)), true) => {
                return Err(BodyError::new(&l.file, *line, "parent", format!("the root link '{}' has a parent", l.name)))
            }
            (None, false) => {
                let why = format!("link '{}' has no parent (only the root link '{}' may have none)", l.name, f.links[root].name);
                return Err(BodyError::new(&l.file, l.line, "parent", why));
            }
            (Some((p, line)), false) => {
                let pi = *index.get(p.as_str()).ok_or_else(|| BodyError::new(&l.file, *line, "parent", format!("parent link '{p}' of '{}' is not defined", l.name)))?;
                parents[i] = Some(pi);
            }
            (None, true) => {}
        }
    }
    Ok((parents, root))
}

/// Depth-first order from the root, children in file order; a link never reached is on a cycle.
fn order(f: &FileDesc, parents: &[Option<usize>], root: usize) -> R<Vec<usize>> {
    let n = f.links.len();
    let mut children = vec![vec![]; n];
    for (i, p) in parents.iter().enumerate() {
        if let Some(p) = p {
            children[*p].push(i);
        }
    }
    let mut out = Vec::with_capacity(n);
    let mut stack = vec![root];
    while let Some(i) = stack.pop() {
        out.push(i);
        stack.extend(children[i].iter().rev());
    }
    if out.len() < n {
        let mut seen = vec![false; n];
        out.iter().for_each(|&i| seen[i] = true);
        let first = (0..n).find(|&i| !seen[i]).unwrap_or(0);
        let mut chain = vec![f.links[first].name.clone()];
        let mut i = first;
        while let Some(p) = parents[i] {
            chain.push(f.links[p].name.clone());
            if p == first || chain.len() > n {
                break;
            }
            i = p;
        }
        let l = &f.links[first];
        let line = l.parent.as_ref().map_or(l.line, |(_, line)| *line);
        return Err(BodyError::new(&l.file, line, "parent", format!("the parents form a cycle: {}", chain.join(" -> "))));
    }
    Ok(out)
}

/// The joint a moving link adds.
fn joint_type(l: &LinkDesc) -> Option<JointType> {
    let axis = Axis::from_unit(l.axis);
    match l.kind {
        BodyJointKind::Free => Some(JointType::FreeFlyer),
        BodyJointKind::Revolute => Some(JointType::Revolute { axis }),
        BodyJointKind::Prismatic => Some(JointType::Prismatic { axis }),
        BodyJointKind::Fixed | BodyJointKind::PseudoContinuousTrack => None,
    }
}

/// Builds the [`BodyModel`] of a file as read.
pub(super) fn build(f: FileDesc, mut warnings: Vec<String>) -> R<BodyModel> {
    let (parents, root) = tree(&f)?;
    let order = order(&f, &parents, root)?;
    let mut b = ModelBuilder::new(if f.name.is_empty() { "body" } else { &f.name });
    let mut placed: Vec<(usize, Se3)> = vec![(0, Se3::identity()); f.links.len()];
    let mut position = vec![0usize; f.links.len()];
    let mut links = Vec::with_capacity(f.links.len());
    let (mut shapes, mut devices) = (vec![], vec![]);
    let (mut merged, mut names) = (vec![Inertia::zero()], vec![String::new()]);
    for (k, &i) in order.iter().enumerate() {
        let l = &f.links[i];
        let err = |e: crate::ModelError| BodyError::new(&l.file, l.line, &l.name, e.to_string());
        let (pj, pp) = parents[i].map_or((0, Se3::identity()), |p| placed[p]);
        let x = pp.compose(&l.offset);
        let (joint, place) = match joint_type(l) {
            Some(JointType::FreeFlyer) if i == root => (b.add_joint(JointId(0), &l.name, JointType::FreeFlyer, Se3::identity()).map_err(err)?.0, Se3::identity()),
            Some(t) => (b.add_joint(JointId(pj), &l.name, t, x).map_err(err)?.0, Se3::identity()),
            None => (pj, x),
        };
        if joint_type(l).is_some() && merged.len() != joint {
            return Err(BodyError::new(&l.file, l.line, &l.name, "internal: joint numbering"));
        }
        placed[i] = (joint, place);
        position[i] = k;
        let rigid = l.rigid.unwrap_or(super::types::Rigid { m: 0.0, c: Default::default(), i: Default::default() });
        let inertia = Inertia::new(rigid.m, rigid.c, rigid.i).transformed(&place);
        if joint_type(l).is_some() {
            b.add_body(JointId(joint), &l.name, Inertia::zero()).map_err(err)?;
            limits(&mut b, l, joint).map_err(err)?;
            merged.push(Inertia::zero());
            names.push(l.name.clone());
        }
        merged[joint] = merged[joint].combined(&inertia);
        if joint_type(l).is_none() {
            b.add_frame(&l.name, JointId(joint), place, FrameKind::Body).map_err(err)?;
        }
        for s in &l.shapes {
            let (geometry, visual, collision, at) = (s.geometry.clone(), s.visual, s.collision, s.at.clone());
            shapes.push(BodyShape { link: k, joint, placement: place.compose(&s.placement), geometry, visual, collision, at });
        }
        for d in &l.devices {
            let (kind, name, id, at) = (d.kind.clone(), d.name.clone(), d.id, d.at.clone());
            devices.push(BodyDevice { kind, name, id, link: k, joint, placement: place.compose(&d.placement), at });
        }
        let inertia = rigid.i.transpose().as_slice().try_into().unwrap_or([0.0; 9]);
        let (name, parent, kind, axis, joint_id) = (l.name.clone(), parents[i].map(|p| position[p]), l.kind, l.axis, l.joint_id);
        links.push(BodyLink { name, joint, placement: place, parent, kind, axis, joint_id, mass: rigid.m, com: rigid.c, inertia, at: format!("{}:{}", l.file, l.line) });
    }
    add_inertias(&mut b, &merged, &names, &f.file, &mut warnings)?;
    let model = b.build().map_err(|e| BodyError::new(&f.file, 0, "links", e.to_string()))?;
    let standard_pose = standard_pose(&f, &mut warnings);
    let initial_q = f.links.iter().filter_map(|l| l.q_init.map(|q| (l.name.clone(), q))).collect();
    let extra_joints = extra_joints(&f)?;
    let collision_rules = match &f.rules {
        Some(n) => rules(&f, n, &mut warnings)?,
        None => CollisionRules::default(),
    };
    let root_placement = f.links[root].offset;
    Ok(BodyModel { model, name: f.name, links, shapes, devices, root_placement, standard_pose, initial_q, extra_joints, collision_rules, warnings })
}

/// Each joint's merged body (joint 0's, fixed to the world, is unused). A merged body that is
/// not physical (principal moments violating the triangle inequality, as some of Choreonoid's
/// samples state) gets the nearest physical inertia, as the URDF loader does (0010), and a
/// warning says how much changed.
fn add_inertias(b: &mut ModelBuilder, merged: &[Inertia], names: &[String], file: &str, warnings: &mut Vec<String>) -> R<()> {
    for (j, i) in merged.iter().enumerate().skip(1) {
        let i = match crate::io::urdf::inertia_defect(i) {
            Some(defect) => {
                let fixed = crate::io::urdf::nearest_physical(i);
                let change = (fixed.inertia_com - i.inertia_com).amax();
                warnings.push(format!("{file}: link '{}': merged inertia {defect}: the nearest physical one is used (largest entry change {change:.3e} kg·m²)", names[j]));
                fixed
            }
            None => *i,
        };
        b.add_inertia(JointId(j), &names[j], i).map_err(|e| BodyError::new(file, 0, &names[j], e.to_string()))?;
    }
    Ok(())
}

/// A moving link's range, velocity and effort limits and armature.
fn limits(b: &mut ModelBuilder, l: &LinkDesc, joint: usize) -> Result<(), crate::ModelError> {
    if matches!(l.kind, BodyJointKind::Revolute | BodyJointKind::Prismatic) {
        b.set_position_limits(JointId(joint), &[l.range.0], &[l.range.1])?;
        b.set_velocity_effort_limits(JointId(joint), &[l.velocity], &[l.effort])?;
        b.set_armature(JointId(joint), &[l.armature])?;
    }
    Ok(())
}

/// `standardPose[i]` is the joint whose `jointId` is i (radians from degrees for a revolute
/// joint in degree mode).
fn standard_pose(f: &FileDesc, warnings: &mut Vec<String>) -> Vec<(String, f64)> {
    let Some((values, line)) = &f.standard_pose else { return vec![] };
    let mut out = vec![];
    for (id, &v) in values.iter().enumerate() {
        let l = f.links.iter().find(|l| l.joint_id == Some(id as i32) && matches!(l.kind, BodyJointKind::Revolute | BodyJointKind::Prismatic));
        match l {
            Some(l) if l.kind == BodyJointKind::Revolute && f.degree => out.push((l.name.clone(), v.to_radians())),
            Some(l) => out.push((l.name.clone(), v)),
            None => warnings.push(format!("{}:{line}: standardPose[{id}]: no revolute or prismatic joint has jointId {id} (value left out)", f.file)),
        }
    }
    out
}

/// `extraJoints` with their links checked.
fn extra_joints(f: &FileDesc) -> R<Vec<ExtraJoint>> {
    let mut out = vec![];
    for e in &f.extra {
        for (name, line) in [&e.link1, &e.link2] {
            if !f.links.iter().any(|l| &l.name == name) {
                return Err(BodyError::new(&e.file, *line, "extraJoints", format!("link '{name}' is not defined")));
            }
        }
        let at = format!("{}:{}", e.file, e.line);
        let (link1, link2) = (e.link1.0.clone(), e.link2.0.clone());
        out.push(ExtraJoint { kind: e.kind, link1, link2, point1: e.point1, point2: e.point2, axis: e.axis, at });
    }
    Ok(out)
}

/// `collision_detection_rules`: a list of rules, each `disabled_link_chain_level`,
/// `disabled_link_group` or `disabled_links`; others named in a warning.
fn rules(f: &FileDesc, n: &Node, warnings: &mut Vec<String>) -> R<CollisionRules> {
    let mut out = CollisionRules::default();
    let err = |n: &Node, k: &str, why: String| BodyError::new(&f.file, n.line, k, why);
    let names = |n: &Node, k: &str| -> R<Vec<String>> {
        let items = n.seq().ok_or_else(|| err(n, k, "expected a list of link names".into()))?;
        items.iter().map(|i| {
            let s = i.scalar().ok_or_else(|| err(i, k, "expected a link name".into()))?;
            if !f.links.iter().any(|l| l.name == s) {
                return Err(err(i, k, format!("link '{s}' is not defined")));
            }
            Ok(s.to_string())
        }).collect()
    };
    let rules: Vec<&Node> = n.seq().map_or_else(|| vec![n], |s| s.iter().collect());
    for r in rules {
        for (k, v) in r.map().unwrap_or_default() {
            match super::yaml::camel(k).as_str() {
                "disabledLinkChainLevel" => {
                    let lv = v.scalar().and_then(|s| s.trim().parse::<usize>().ok());
                    out.disabled_link_chain_level = Some(lv.ok_or_else(|| err(v, k, "expected a non-negative integer".into()))?);
                }
                "disabledLinkGroup" => {
                    let g = names(v, k)?;
                    for (a, x) in g.iter().enumerate() {
                        out.disabled_pairs.extend(g[a + 1..].iter().map(|y| (x.clone(), y.clone())));
                    }
                }
                "disabledLinks" => out.disabled_links.extend(names(v, k)?),
                _ => warnings.push(format!("{}:{}: collision_detection_rules: '{k}' is not read", f.file, v.line)),
            }
        }
    }
    Ok(out)
}

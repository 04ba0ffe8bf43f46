//! The colliders pass: every collision element becomes a parry shape in its joint's frame
//! (scene bodies' `shapes`, then per robot its URDF `<collision>` elements and its extra
//! `shapes`), each body gets the bounds of its shapes, and the pair table says which shapes
//! may touch and how (the scene's exclusions and pair modes, parent/child pairs, and a
//! robot's links that overlap at the initial configuration).

use karakuri::spatial::Se3;
use parry3d_f64::shape::SharedShape;

use super::builder::{scene_err, se3, Builder};
use super::model::SimBody;
use crate::collision::{joint_frame_bounds, make_shape, ColShape, Collider};
use crate::scene::mjcf_contacts::MjcfContactRules;
use crate::scene::{ContactMode, Material, Scene, ShapeSpec};
use crate::SimError;

pub use crate::collision::mean_material;

/// Every collision shape, in scene order: scene bodies' (body by body), then each robot's
/// URDF collisions and extra shapes.
pub(super) fn shapes(b: &Builder) -> Result<Vec<ColShape>, SimError> {
    let mut out = Vec::new();
    for (bi, bs) in b.scene.bodies.iter().enumerate() {
        body_shapes(b.scene, bi, &b.bodies[bi], &bs.shapes, &mut out)?;
    }
    for ri in 0..b.robots.len() {
        urdf_shapes(b, ri, &mut out)?;
        extra_shapes(b, ri, &mut out)?;
    }
    Ok(out)
}

/// The colliding shapes of scene body `bi` onto `out`.
fn body_shapes(
    scene: &Scene,
    bi: usize,
    body: &SimBody,
    specs: &[ShapeSpec],
    out: &mut Vec<ColShape>,
) -> Result<(), SimError> {
    for (si, s) in specs.iter().enumerate().filter(|(_, s)| s.collide) {
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
    Ok(())
}

/// Robot `ri`'s collision elements onto `out`, with the robot's material (a mesh shared by
/// several links is one hull).
fn urdf_shapes(b: &Builder, ri: usize, out: &mut Vec<ColShape>) -> Result<(), SimError> {
    let (g, rs) = (&b.robots[ri], &b.scene.robots[ri]);
    let material = b.scene.material(rs.material.as_deref());
    let mut made: Vec<(SharedShape, Se3, bool)> = Vec::with_capacity(g.robot.collisions.len());
    for (ci, c) in g.robot.collisions.iter().enumerate() {
        // an MJCF geom's own sliding friction, unless the scene robot names a material
        let material = match (&g.robot.mjcf, &rs.material) {
            (Some(rules), None) => mjcf_material(rules.geoms[ci].friction),
            _ => material,
        };
        let (shape, extra, unbounded) = match c.same_mesh_as {
            Some(first) => made[first].clone(),
            None => make_shape(&c.geometry).map_err(|e| {
                scene_err(b.scene, format!("robots[{ri}].collision"), format!("link '{}': {e}", c.link))
            })?,
        };
        made.push((shape.clone(), extra, unbounded));
        let (joint, placement) = g.on_world(c.parent_joint, &c.placement);
        let body = g.body[c.parent_joint];
        out.push(ColShape { body, joint, placement: placement.compose(&extra), shape, material, unbounded });
    }
    Ok(())
}

/// The material of an MJCF geom (or pair) of sliding friction `mu`: MuJoCo has one friction
/// coefficient and no restitution.
fn mjcf_material(mu: f64) -> Material {
    Material { static_friction: mu, dynamic_friction: mu, restitution: 0.0 }
}

/// Each shape's MJCF origin, in [`shapes`]' order: `(robot, collision)` for an MJCF robot's
/// geom, None for the others (scene bodies, URDF robots, extra shapes).
pub(super) fn mjcf_origins(b: &Builder) -> Vec<Option<(usize, usize)>> {
    let mut out: Vec<Option<(usize, usize)>> = vec![];
    for bs in &b.scene.bodies {
        out.extend(bs.shapes.iter().filter(|s| s.collide).map(|_| None));
    }
    for (ri, g) in b.robots.iter().enumerate() {
        let mjcf = g.robot.mjcf.is_some();
        out.extend((0..g.robot.collisions.len()).map(|ci| mjcf.then_some((ri, ci))));
        out.extend(b.scene.robots[ri].shapes.iter().filter(|(_, s)| s.collide).map(|_| None));
    }
    out
}

/// Robot `ri`'s extra `shapes` (each on a link by name) onto `out`; a shape's own material,
/// else the robot's.
fn extra_shapes(b: &Builder, ri: usize, out: &mut Vec<ColShape>) -> Result<(), SimError> {
    let (g, rs, scene) = (&b.robots[ri], &b.scene.robots[ri], b.scene);
    let rm = &g.robot.model;
    for (si, (link, spec)) in rs.shapes.iter().enumerate() {
        let path = format!("robots[{ri}].shapes[{si}]");
        let is_link = |f: &&karakuri::model::Frame| &f.name == link && f.kind == karakuri::model::FrameKind::Body;
        let Some(f) = rm.frames.iter().find(is_link) else {
            return Err(scene_err(scene, format!("{path}.link"), format!("the robot has no link '{link}'")));
        };
        if !spec.collide {
            continue;
        }
        let rj = f.parent_joint.0;
        let (shape, extra, unbounded) = make_shape(&spec.geometry).map_err(|e| scene_err(scene, path.clone(), e))?;
        let (joint, placement) = g.on_world(rj, &f.placement.compose(&se3(&spec.pose)));
        let material = scene.material(spec.material.as_deref().or(rs.material.as_deref()));
        out.push(ColShape { body: g.body[rj], joint, placement: placement.compose(&extra), shape, material, unbounded });
    }
    Ok(())
}

/// Each body's bounds: the centre of its shapes' bounding box in the joint frame and the box's
/// smallest extent (None: no bounded shape).
pub(super) fn bounds(bodies: &mut [SimBody], shapes: &[ColShape]) {
    for (bi, b) in bodies.iter_mut().enumerate() {
        let boxes = shapes.iter().filter(|s| s.body == bi).filter_map(joint_frame_bounds);
        b.bounds = boxes
            .reduce(|(lo, hi), (l, h)| (lo.inf(&l), hi.sup(&h)))
            .map(|(lo, hi)| ((lo + hi) / 2.0, (hi - lo).min()));
    }
}

/// The shapes with their pair table: every pair the scene allows, less the robots' links that
/// overlap at the initial placements `o_m_i` (a warning per robot lists them).
pub(super) fn collider(
    b: &Builder,
    bodies: &[SimBody],
    shapes: Vec<ColShape>,
    o_m_i: &[Se3],
    warnings: &mut Vec<String>,
) -> Collider {
    let scene = b.scene;
    let rules = b.robots.iter().map(|g| g.robot.mjcf.as_ref()).collect();
    let own_friction = scene.robots.iter().map(|r| r.material.is_none()).collect();
    let mjcf = Mjcf { origins: mjcf_origins(b), rules, own_friction };
    // `.body` robots' collision_detection_rules first: pairs they turn off are not overlaps
    let all = pair_table(scene, bodies, shapes.clone(), &mjcf, &b.rule_excluded);
    let overlapping = overlapping_links(scene, bodies, &all, o_m_i, warnings);
    if overlapping.is_empty() {
        all
    } else {
        let more = [&b.rule_excluded[..], &overlapping[..]].concat();
        pair_table(scene, bodies, shapes, &mjcf, &more)
    }
}

/// MJCF robots' contact rules by shape: each shape's origin ([`mjcf_origins`]) and each
/// robot's rules (None: not an MJCF robot).
struct Mjcf<'a> {
    origins: Vec<Option<(usize, usize)>>,
    rules: Vec<Option<&'a MjcfContactRules>>,
    /// Each robot's geoms keep their MJCF friction (the scene robot names no material).
    own_friction: Vec<bool>,
}

impl Mjcf<'_> {
    /// MuJoCo's verdict on shapes `i` and `j` when both are an MJCF robot's geoms: None when
    /// it is not MuJoCo's to say, `Some(None)` when they never touch, `Some(Some(mu))` when
    /// they do with sliding friction `mu` (two robots: the `contype`/`conaffinity` bits only).
    fn verdict(&self, i: usize, j: usize) -> Option<Option<f64>> {
        let ((ra, ca), (rb, cb)) = (self.origins.get(i).copied()??, self.origins.get(j).copied()??);
        let (a, b) = (self.rules[ra]?, self.rules[rb]?);
        if ra == rb {
            return Some(a.pair(ca, cb));
        }
        let (ga, gb) = (&a.geoms[ca], &b.geoms[cb]);
        Some(ga.bits_meet(gb).then(|| ga.mixed_friction(gb)))
    }

    /// MuJoCo's contact distances: each shape's `margin` when it is an MJCF geom, and the
    /// shape pairs of `<pair>`s with their own (for [`Collider::with_margins`]).
    fn margins(&self) -> (Vec<Option<f64>>, Vec<((usize, usize), f64)>) {
        let rule = |k: usize| self.origins.get(k).copied().flatten().and_then(|(r, c)| Some((r, c, self.rules[r]?)));
        let per_shape = (0..self.origins.len()).map(|k| rule(k).map(|(_, c, ru)| ru.geoms[c].margin)).collect();
        let mut own = vec![];
        for (r, rules) in self.rules.iter().enumerate() {
            let Some(rules) = rules else { continue };
            let shape = |c: usize| self.origins.iter().position(|o| *o == Some((r, c)));
            for (&(ca, cb, _), &m) in rules.pairs.iter().zip(&rules.pair_margins) {
                if let (Some(i), Some(j)) = (shape(ca), shape(cb)) {
                    own.push(((i.min(j), i.max(j)), m));
                }
            }
        }
        (per_shape, own)
    }
}

/// The body pairs `(a, b)`, `a < b`, of one robot whose collision shapes overlap at the
/// initial placements `o_m_i` (penetration > 0), unless the robot keeps them
/// (`keep_overlapping_self_collisions`) or is an MJCF robot (MuJoCo's filters decide: a
/// keyframe's feet slightly in the floor must stay on it); one warning per robot lists them
/// with the depth, as MoveIt's "disabled collisions". Reads the shapes and pairs of `all`
/// (every pair the scene allows).
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
        let kept = scene.robots[ra].keep_overlapping_self_collisions || scene.robots[ra].mjcf.is_some();
        if ra != rb || kept {
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
fn pair_table(scene: &Scene, bodies: &[SimBody], shapes: Vec<ColShape>, mjcf: &Mjcf, more: &[(usize, usize)]) -> Collider {
    let index = |n: &str| bodies.iter().position(|x| x.name == n);
    let sorted = |a: usize, b: usize| (a.min(b), a.max(b));
    let mut excluded: Vec<(usize, usize)> = scene
        .collision_exclude_pairs
        .iter()
        .filter_map(|[a, b]| Some(sorted(index(a)?, index(b)?)))
        .collect();
    excluded.extend_from_slice(more);
    let pair_modes: Vec<((usize, usize), ContactMode)> = scene
        .contact_pairs
        .iter()
        .filter_map(|p| Some((sorted(index(&p.bodies[0])?, index(&p.bodies[1])?), p.mode)))
        .collect();
    let exclude_pc = scene.contact.exclude_parent_child;
    let default_mode = scene.contact.mode;
    let materials = std::cell::RefCell::new(vec![]);
    let collider = Collider::by_index(shapes, |s, i, j| {
        let (a, b) = (&s[i], &s[j]);
        if a.joint == b.joint {
            return None;
        }
        let key = sorted(a.body, b.body);
        if excluded.contains(&key) {
            return None;
        }
        match mjcf.verdict(i, j) {
            Some(None) => return None,
            Some(Some(mu)) => {
                let m = mjcf_material(mu);
                let own = |k: usize| mjcf.origins[k].is_some_and(|(r, _)| mjcf.own_friction[r]);
                if own(i) && own(j) && m != mean_material(&a.material, &b.material) {
                    materials.borrow_mut().push(((i, j), m));
                }
            }
            None if exclude_pc && (bodies[a.body].parent == Some(b.body) || bodies[b.body].parent == Some(a.body)) => {
                return None
            }
            None => {}
        }
        Some(pair_modes.iter().find(|(k, _)| *k == key).map_or(default_mode, |(_, m)| *m))
    });
    let (margins, own) = mjcf.margins();
    collider.with_pair_materials(materials.into_inner()).with_margins(margins, own)
}

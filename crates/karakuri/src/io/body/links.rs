//! The file pass: the header (`format`, `formatVersion`, `angleUnit`), `links` (each link's
//! joint, offset, mass properties and elements), sub-bodies read recursively and renamed, and
//! the top-level sections the build reads (`rootLink`, `standardPose`, `extraJoints`,
//! `collision_detection_rules`). A link's joint keys (`jointType`, `jointAxis`, `jointRange`,
//! `jointId`, velocity and effort limits, rotor inertia, initial value), its own mass keys and
//! the `extraJoints` entries.

use std::path::{Path, PathBuf};

use super::elements::{self, Mode};
use super::types::BodyError;
use super::types::{BodyJointKind, ExtraDesc, ExtraJointKind, FileDesc, LinkDesc, Rigid};
use super::values::{rigid_of, show, Ctx, R};
use super::yaml::{self, Node};
use crate::spatial::{Mat3, Se3, Vec3};

/// Deepest nesting of sub-bodies.
const MAX_SUB_BODIES: usize = 16;

/// Reads a `.body` text (`path` names it and places its resources).
pub(super) fn read_text(text: &str, path: &Path, stack: Vec<PathBuf>, warnings: &mut Vec<String>) -> R<FileDesc> {
    let file = path.display().to_string();
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let top = yaml::parse(text).map_err(|e| BodyError::new(&file, e.line, "", format!("YAML: {}", e.reason)))?;
    let mut ctx = Ctx { file: file.clone(), dir, degree: true, stack };
    if top.map().is_none() {
        return Err(ctx.err(&top, "", "the file is not a YAML mapping"));
    }
    header(&mut ctx, &top)?;
    let links = top.get("links").ok_or_else(|| ctx.err(&top, "links", "there is no 'links' list"))?;
    let items = links.seq().ok_or_else(|| ctx.err(links, "links", "expected a list of links"))?;
    if items.is_empty() {
        return Err(ctx.err(links, "links", "the list of links is empty"));
    }
    let mut out = FileDesc {
        name: top.get("name").and_then(Node::scalar).unwrap_or_default().to_string(),
        file,
        links: vec![],
        root: None,
        standard_pose: None,
        degree: ctx.degree,
        extra: vec![],
        rules: top.get("collisionDetectionRules").cloned(),
    };
    for (i, node) in items.iter().enumerate() {
        let key = format!("links[{i}]");
        if node.map().is_none() {
            return Err(ctx.err(node, &key, "a link must be a mapping"));
        }
        match node.get("type").and_then(Node::scalar).unwrap_or("Link") {
            "Link" => out.links.push(link(&ctx, node, &key, warnings)?),
            "SubBody" => sub_body(&ctx, node, &key, &mut out, warnings)?,
            "Skip" => {}
            other => return Err(ctx.err(node, &format!("{key}.type"), format!("a '{other}' node cannot be in links"))),
        }
    }
    if let Some(n) = top.get("rootLink") {
        out.root = Some((ctx.string(n, "rootLink")?, n.line));
    }
    if let Some(n) = top.get("standardPose") {
        let items = n.seq().ok_or_else(|| ctx.err(n, "standardPose", "expected a list of numbers"))?;
        let v = items.iter().map(|x| ctx.num(x, "standardPose")).collect::<R<Vec<f64>>>()?;
        out.standard_pose = Some((v, n.line));
    }
    if let Some(n) = top.get("extraJoints") {
        let items = n.seq().ok_or_else(|| ctx.err(n, "extraJoints", "expected a list"))?;
        for (i, e) in items.iter().enumerate() {
            out.extra.push(extra_joint(&ctx, e, &format!("extraJoints[{i}]"))?);
        }
    }
    Ok(out)
}

/// `format`, `formatVersion` (1.x or 2.0) and `angleUnit`.
fn header(ctx: &mut Ctx, top: &Node) -> R<()> {
    if let Some(n) = top.get("format") {
        if n.scalar() != Some("ChoreonoidBody") {
            return Err(ctx.err(n, "format", format!("expected 'ChoreonoidBody', found {}", super::values::show(n))));
        }
    }
    let Some(v) = top.get("formatVersion") else {
        return Err(ctx.err(top, "formatVersion", "the format version is not given"));
    };
    let version = ctx.num(v, "formatVersion")?;
    if !(1.0..2.1).contains(&version) {
        return Err(ctx.err(v, "formatVersion", format!("version {version} is not supported (1.0 to 2.0)")));
    }
    if let Some(n) = top.get("angleUnit") {
        match n.scalar() {
            Some("degree") => ctx.degree = true,
            Some("radian") if version >= 2.0 => return Err(ctx.err(n, "angleUnit", "radian is not allowed in format version 2.0")),
            Some("radian") => ctx.degree = false,
            _ => return Err(ctx.err(n, "angleUnit", "expected 'degree' or 'radian'")),
        }
    }
    Ok(())
}

/// A `Link` node.
fn link(ctx: &Ctx, node: &Node, key: &str, warnings: &mut Vec<String>) -> R<LinkDesc> {
    let name = match node.get("name") {
        Some(n) => ctx.string(n, &format!("{key}.name"))?,
        None => return Err(ctx.err(node, &format!("{key}.name"), "a link must have a name")),
    };
    let mut l = LinkDesc {
        name,
        file: ctx.file.clone(),
        line: node.line,
        parent: None,
        offset: Se3::identity(),
        kind: BodyJointKind::Fixed,
        axis: Vec3::z(),
        range: (f64::NEG_INFINITY, f64::INFINITY),
        velocity: f64::INFINITY,
        effort: f64::INFINITY,
        armature: 0.0,
        joint_id: None,
        q_init: None,
        rigid: None,
        shapes: vec![],
        devices: vec![],
    };
    contents(ctx, node, key, &mut l, true, warnings)?;
    Ok(l)
}

/// A link node's contents over `l` (a sub-body's node overrides its root link's: everything
/// given but the mass properties, which the sub-body's file keeps).
fn contents(ctx: &Ctx, node: &Node, key: &str, l: &mut LinkDesc, mass: bool, warnings: &mut Vec<String>) -> R<()> {
    if let Some(p) = node.get("parent") {
        l.parent = Some((ctx.string(p, &format!("{key}.parent"))?, p.line));
    }
    if node.get("translation").is_some() || node.get("rotation").is_some() {
        let t = ctx.transform(node)?;
        if node.get("translation").is_some() {
            l.offset.translation = t.translation;
        }
        if node.get("rotation").is_some() {
            l.offset.rotation = t.rotation;
        }
    }
    joint_contents(ctx, node, key, l)?;
    let mut bodies = vec![];
    if let Some(e) = node.get("elements") {
        elements::elements(ctx, e, &Se3::identity(), Mode::Both, l, &mut bodies, warnings)?;
    }
    if mass {
        let own = own_rigid(ctx, node, key)?;
        bodies.extend(own);
        if !bodies.is_empty() {
            l.rigid = Some(merge(&bodies));
        }
    }
    Ok(())
}

/// Choreonoid's sum of rigid bodies: total mass, the mass-weighted centre, inertias shifted to
/// it (all zero when the total mass is not positive).
fn merge(bodies: &[Rigid]) -> Rigid {
    if let [one] = bodies {
        return Rigid { m: one.m.max(0.0), ..*one };
    }
    let m: f64 = bodies.iter().map(|b| b.m).sum();
    if m <= 0.0 {
        return Rigid { m: m.max(0.0), c: Vec3::zeros(), i: Mat3::zeros() };
    }
    let c = bodies.iter().map(|b| b.m * b.c).sum::<Vec3>() / m;
    let mut i = Mat3::zeros();
    for b in bodies {
        let o = c - b.c;
        i += b.i + b.m * (Mat3::identity() * o.dot(&o) - o * o.transpose());
    }
    Rigid { m, c, i }
}

/// A `SubBody` node: its file read (relative to this one), its links renamed with `prefix` and
/// `suffix`, joint ids shifted by `jointIdOffset`, its root under the node's `parent` with the
/// node's contents over it.
fn sub_body(ctx: &Ctx, node: &Node, key: &str, out: &mut FileDesc, warnings: &mut Vec<String>) -> R<()> {
    let uri_node = node.get("uri").ok_or_else(|| ctx.err(node, &format!("{key}.uri"), "a SubBody needs a 'uri'"))?;
    let uri = ctx.string(uri_node, &format!("{key}.uri"))?;
    let path = ctx.dir.join(uri.strip_prefix("file://").unwrap_or(&uri));
    if ctx.stack.len() >= MAX_SUB_BODIES || ctx.stack.iter().any(|p| same_file(p, &path)) {
        return Err(ctx.err(uri_node, &format!("{key}.uri"), format!("'{uri}' includes itself (sub-bodies nest as {})", ctx.stack.len())));
    }
    let text = std::fs::read_to_string(&path)
        .map_err(|e| ctx.err(uri_node, &format!("{key}.uri"), format!("cannot read sub-body '{}': {e}", path.display())))?;
    let mut stack = ctx.stack.clone();
    stack.push(path.clone());
    let sub = read_text(&text, &path, stack, warnings)?;
    let get = |k: &str| -> R<String> { node.get(k).map_or(Ok(String::new()), |n| ctx.string(n, &format!("{key}.{k}"))) };
    let (prefix, suffix) = (get("prefix")?, get("suffix")?);
    let device_prefix = if node.get("devicePrefix").is_some() { get("devicePrefix")? } else { prefix.clone() };
    let id_offset = match node.get("jointIdOffset") {
        Some(n) => ctx.int(n, &format!("{key}.jointIdOffset"))?,
        None => 0,
    };
    let root = match &sub.root {
        Some((r, line)) => sub.links.iter().position(|l| &l.name == r)
            .ok_or_else(|| BodyError::new(&sub.file, *line, "rootLink", format!("link '{r}' is not defined")))?,
        None => 0,
    };
    let first = out.links.len();
    for mut l in sub.links {
        l.name = format!("{prefix}{}{suffix}", l.name);
        if let Some((p, _)) = &mut l.parent {
            *p = format!("{prefix}{p}{suffix}");
        }
        l.joint_id = l.joint_id.map(|i| i + id_offset);
        for d in &mut l.devices {
            d.name = format!("{device_prefix}{}", d.name);
        }
        out.links.push(l);
    }
    for mut e in sub.extra {
        e.link1.0 = format!("{prefix}{}{suffix}", e.link1.0);
        e.link2.0 = format!("{prefix}{}{suffix}", e.link2.0);
        out.extra.push(e);
    }
    let r = &mut out.links[first + root];
    r.parent = None;
    contents(ctx, node, key, r, false, warnings)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

// ---- a link's joint keys, its own mass keys, extraJoints entries ----

/// The joint keys present in `node`, over `l`.
pub(super) fn joint_contents(ctx: &Ctx, node: &Node, key: &str, l: &mut LinkDesc) -> R<()> {
    if let Some(n) = node.get("jointId") {
        l.joint_id = Some(ctx.int(n, &format!("{key}.jointId"))?);
    }
    if let Some(n) = node.get("jointType") {
        l.kind = match n.scalar().unwrap_or_default() {
            "revolute" => BodyJointKind::Revolute,
            "prismatic" | "slide" => BodyJointKind::Prismatic,
            "free" => BodyJointKind::Free,
            "fixed" => BodyJointKind::Fixed,
            "pseudo_continuous_track" | "pseudoContinuousTrack" => BodyJointKind::PseudoContinuousTrack,
            _ => return Err(ctx.err(n, &format!("{key}.jointType"), format!("unknown joint type {}", show(n)))),
        };
    }
    if let Some(n) = node.get("jointAxis") {
        l.axis = axis(ctx, n, &format!("{key}.jointAxis"))?;
    }
    let revolute = l.kind == BodyJointKind::Revolute;
    let unit = |x: f64| if revolute && x.is_finite() { ctx.angle(x) } else { x };
    if let Some(n) = node.get("jointRange") {
        let k = format!("{key}.jointRange");
        let (lo, hi) = match n.seq() {
            Some([a, b]) => (ctx.limit(a, &k, false)?, ctx.limit(b, &k, true)?),
            Some(_) => return Err(ctx.err(n, &k, "expected [lower, upper]")),
            None => {
                let u = ctx.limit(n, &k, true)?;
                (-u, u)
            }
        };
        if lo > hi {
            return Err(ctx.err(n, &k, format!("lower {lo} above upper {hi}")));
        }
        l.range = (unit(lo), unit(hi));
    }
    for k in ["maxJointVelocity", "jointVelocityRange"] {
        if let Some(n) = node.get(k) {
            let kk = format!("{key}.{k}");
            let v = match n.seq() {
                Some([a, b]) => ctx.limit(a, &kk, false)?.abs().max(ctx.limit(b, &kk, true)?.abs()),
                _ => ctx.limit(n, &kk, true)?.abs(),
            };
            l.velocity = unit(v);
        }
    }
    if let Some(n) = node.get("maxJointEffort") {
        l.effort = ctx.limit(n, &format!("{key}.maxJointEffort"), true)?.abs();
    }
    armature(ctx, node, key, l)?;
    for k in ["jointAngle", "jointDisplacement"] {
        if let Some(n) = node.get(k) {
            l.q_init = Some(unit(ctx.num(n, &format!("{key}.{k}"))?));
        }
    }
    Ok(())
}

/// `jointAxisInertia`, else `rotorInertia` × `gearRatio`²: the joint's armature.
fn armature(ctx: &Ctx, node: &Node, key: &str, l: &mut LinkDesc) -> R<()> {
    let get = |k: &str| -> R<Option<f64>> {
        node.get(k).map(|n| ctx.num(n, &format!("{key}.{k}"))).transpose()
    };
    let a = match get("jointAxisInertia")? {
        Some(a) => Some(a),
        None => get("rotorInertia")?.map(|r| r * get("gearRatio").map(|g| g.unwrap_or(1.0).powi(2)).unwrap_or(1.0)),
    };
    if let Some(a) = a {
        if a < 0.0 {
            return Err(ctx.err(node, &format!("{key}.rotorInertia"), format!("negative rotor inertia {a}")));
        }
        l.armature = a;
    }
    Ok(())
}

/// A joint axis: `X`, `-Y`, ... or a vector (normalised; zero refused).
pub(super) fn axis(ctx: &Ctx, n: &Node, key: &str) -> R<Vec3> {
    if let Some(s) = n.scalar() {
        return match s.trim().to_ascii_uppercase().as_str() {
            "X" => Ok(Vec3::x()),
            "-X" => Ok(-Vec3::x()),
            "Y" => Ok(Vec3::y()),
            "-Y" => Ok(-Vec3::y()),
            "Z" => Ok(Vec3::z()),
            "-Z" => Ok(-Vec3::z()),
            _ => Err(ctx.err(n, key, format!("unknown axis {}", show(n)))),
        };
    }
    let v = ctx.vec3(n, key)?;
    let norm = v.norm();
    if norm < 1e-9 {
        return Err(ctx.err(n, key, "the axis is the zero vector"));
    }
    Ok(v / norm)
}

/// The link's own `mass`, `centerOfMass`, `inertia` as a rigid body (none when all three are
/// absent).
pub(super) fn own_rigid(ctx: &Ctx, node: &Node, key: &str) -> R<Option<Rigid>> {
    let (m, c, i) = (node.get("mass"), node.get("centerOfMass"), node.get("inertia"));
    if m.is_none() && c.is_none() && i.is_none() {
        return Ok(None);
    }
    rigid_of(ctx, node, key).map(Some)
}

/// One `extraJoints` entry.
pub(super) fn extra_joint(ctx: &Ctx, e: &Node, key: &str) -> R<ExtraDesc> {
    let name = |k: &str| -> R<(String, u32)> {
        let n = e.get(k).ok_or_else(|| ctx.err(e, &format!("{key}.{k}"), format!("'{k}' is not given")))?;
        Ok((ctx.string(n, &format!("{key}.{k}"))?, n.line))
    };
    let (link1, link2) = (name("link1Name")?, name("link2Name")?);
    let t = e.get("jointType").ok_or_else(|| ctx.err(e, &format!("{key}.jointType"), "the joint type is not given"))?;
    let kind = match t.scalar().unwrap_or_default() {
        "ball" => ExtraJointKind::Ball,
        "hinge" => ExtraJointKind::Hinge,
        "piston" => ExtraJointKind::Piston,
        "fixed" => ExtraJointKind::Fixed,
        _ => return Err(ctx.err(t, &format!("{key}.jointType"), format!("unknown extra joint type {}", show(t)))),
    };
    let v = |ks: &[&str]| -> R<Vec3> {
        for k in ks {
            if let Some(n) = e.get(k) {
                return ctx.vec3(n, &format!("{key}.{k}"));
            }
        }
        Ok(Vec3::zeros())
    };
    let point1 = v(&["translationInLink1", "link1LocalPos"])?;
    let point2 = v(&["translationInLink2", "link2LocalPos"])?;
    let axis = match e.get("axis").or_else(|| e.get("jointAxis")) {
        Some(n) => axis(ctx, n, &format!("{key}.axis"))?,
        None => Vec3::z(),
    };
    Ok(ExtraDesc { kind, link1, link2, point1, point2, axis, file: ctx.file.clone(), line: e.line })
}

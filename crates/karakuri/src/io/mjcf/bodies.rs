//! Pass 2c, resolve: `<worldbody>` to a flat list of bodies in MuJoCo's order (depth first,
//! document order), each with its frame in its parent body's frame, its joints, its inertia
//! and its sites, `<frame>` elements folded into what they hold and defaults applied.

use super::defaults::{Compiler, Defaults, InertiaFromGeom, Resolved, JOINT_ATTRS, SITE_ATTRS};
use super::inertia::{bounded, from_geoms, geom_mass, inertial, GeomMass};
use super::mesh_inertia::MeshAssets;
use super::geoms::{geom, SOLIMP, SOLREF};
use super::orient::{frame, fromto};
use super::types::{Geom, JointProps};
use super::xml::{numbers, Element};
use super::MjcfError;
use crate::spatial::{Inertia, Se3, Vec3};

/// MuJoCo's joint kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum JointKind {
    Hinge,
    Slide,
    Ball,
    Free,
}

/// A joint as resolved: position and unit axis in its body's frame, angles in radians.
#[derive(Clone, Debug)]
pub(super) struct JointSpec {
    pub name: Option<String>,
    pub kind: JointKind,
    pub pos: Vec3,
    pub axis: Vec3,
    /// `ref`: the value of qpos at which the body is at its written frame (hinge, slide).
    pub reference: f64,
    pub limits: Option<(f64, f64)>,
    pub armature: f64,
    pub damping: f64,
    pub frictionloss: f64,
    /// Everything a simulator needs of the joint (name filled by the caller).
    pub props: JointProps,
    pub at: Element,
}

/// A body as resolved.
pub(super) struct BodySpec {
    pub name: Option<String>,
    /// Index of the parent body in the list (the world is 0, its own parent).
    pub parent: usize,
    /// Its frame in its parent's (frames folded in).
    pub local: Se3,
    pub joints: Vec<JointSpec>,
    /// Its inertia in its own frame (bounded by boundmass and boundinertia).
    pub inertia: Inertia,
    /// Named sites and their frames in the body's frame.
    pub sites: Vec<(Option<String>, Se3)>,
    /// Its geoms as collision shapes, frames in the body's frame.
    pub geoms: Vec<Geom>,
    pub at: Element,
}

/// What a body holds, its `<frame>`s folded in.
#[derive(Default)]
struct Contents<'a> {
    joints: Vec<JointSpec>,
    geoms: Vec<GeomMass>,
    shapes: Vec<Geom>,
    sites: Vec<(Option<String>, Se3)>,
    inertial: Option<Inertia>,
    children: Vec<(&'a Element, Se3, &'a str)>,
}

const BODY_ATTRS: &[&str] = &["name", "childclass", "pos", "quat", "axisangle", "xyaxes", "zaxis", "euler", "mocap", "gravcomp", "user", "sleep", "simple"];
const FRAME_ATTRS: &[&str] = &["name", "childclass", "pos", "quat", "axisangle", "xyaxes", "zaxis", "euler"];

/// The bodies of `<worldbody>` elements (the world first).
pub(super) fn resolve(worldbodies: &[&Element], defaults: &Defaults, c: &Compiler, meshes: &MeshAssets) -> Result<Vec<BodySpec>, MjcfError> {
    let first = worldbodies.first().copied();
    let at = first.cloned().unwrap_or_else(|| Element { tag: "worldbody".into(), attrs: vec![], children: vec![], file: "".into(), line: 0 });
    let mut out = vec![BodySpec { name: Some("world".into()), parent: 0, local: Se3::identity(), joints: vec![], inertia: Inertia::zero(), sites: vec![], geoms: vec![], at }];
    let mut contents = Contents::default();
    for w in worldbodies {
        w.check_attrs(&["childclass"])?;
        let class = w.attr("childclass").unwrap_or("main");
        if !defaults.has(class) {
            return Err(w.error(format!("undefined default class '{class}'")));
        }
        collect(w, &Se3::identity(), class, defaults, c, &mut contents, true)?;
    }
    if let Some(j) = contents.joints.first() {
        return Err(j.at.error("a joint on the world body: joints belong in a <body>"));
    }
    out[0].sites = contents.sites;
    out[0].geoms = contents.shapes;
    for (e, x, class) in contents.children {
        body(e, x, class, 0, (defaults, c, meshes), &mut out)?;
    }
    Ok(out)
}

/// What every body reads: the default classes, the compiler settings, the mesh assets.
type Context<'a, 's> = (&'a Defaults, &'a Compiler, &'a MeshAssets<'s>);

fn body(e: &Element, parent_frame: Se3, class: &str, parent: usize, ctx: Context, out: &mut Vec<BodySpec>) -> Result<(), MjcfError> {
    let (defaults, c, meshes) = ctx;
    e.check_attrs(BODY_ATTRS)?;
    let local = parent_frame.compose(&frame(e, |k| e.attr(k), c)?);
    let class = e.attr("childclass").unwrap_or(class);
    if !defaults.has(class) {
        return Err(e.error(format!("undefined default class '{class}'")));
    }
    let mut contents = Contents::default();
    collect(e, &Se3::identity(), class, defaults, c, &mut contents, false)?;
    let from_geoms_now = match c.inertia_from_geom {
        InertiaFromGeom::True => true,
        InertiaFromGeom::Auto => contents.inertial.is_none(),
        InertiaFromGeom::False => false,
    };
    let inertia = if from_geoms_now { from_geoms(&contents.geoms, c, meshes)? } else { contents.inertial.unwrap_or_else(Inertia::zero) };
    let index = out.len();
    out.push(BodySpec {
        name: e.attr("name").map(str::to_string),
        parent,
        local,
        joints: contents.joints,
        inertia: bounded(inertia, c),
        sites: contents.sites,
        geoms: contents.shapes,
        at: Element { children: vec![], ..e.clone() },
    });
    for (child, x, class) in contents.children {
        body(child, x, class, index, ctx, out)?;
    }
    Ok(())
}

/// Reads what `e` (a body, the world or a `<frame>`) holds into `acc`; `x` is `e`'s frame in
/// the body's.
fn collect<'a>(e: &'a Element, x: &Se3, class: &'a str, defaults: &'a Defaults, c: &Compiler, acc: &mut Contents<'a>, world: bool) -> Result<(), MjcfError> {
    for ch in &e.children {
        match ch.tag.as_str() {
            "body" => acc.children.push((ch, *x, class)),
            "frame" => {
                ch.check_attrs(FRAME_ATTRS)?;
                let fx = x.compose(&frame(ch, |k| ch.attr(k), c)?);
                let class = ch.attr("childclass").unwrap_or(class);
                if !defaults.has(class) {
                    return Err(ch.error(format!("undefined default class '{class}'")));
                }
                collect(ch, &fx, class, defaults, c, acc, world)?;
            }
            "inertial" if !world => {
                if acc.inertial.is_some() {
                    return Err(ch.error("a body has at most one <inertial>"));
                }
                acc.inertial = Some(inertial(ch, c)?.transformed(x));
            }
            "joint" | "freejoint" => acc.joints.push(joint(ch, x, class, defaults, c)?),
            "geom" => {
                let g = Resolved::new(ch, class, defaults)?;
                ch.check_attrs(super::defaults::GEOM_ATTRS)?;
                if !world {
                    if let Some(m) = geom_mass(&g, x, c)? {
                        acc.geoms.push(m);
                    }
                }
                acc.shapes.push(geom(&g, x, c)?);
            }
            "site" => {
                ch.check_attrs(SITE_ATTRS)?;
                let s = Resolved::new(ch, class, defaults)?;
                let local = match s.get("fromto") {
                    Some(t) => fromto(ch, t)?.0,
                    None => frame(ch, |k| s.get(k), c)?,
                };
                acc.sites.push((ch.attr("name").map(str::to_string), x.compose(&local)));
            }
            // cameras and lights: for viewers, not the dynamics
            "camera" | "light" => {}
            "composite" | "flexcomp" | "plugin" | "replicate" | "attach" | "skin" => {
                return Err(ch.error(format!("<{}> is not supported by this loader", ch.tag)))
            }
            other => return Err(ch.error(format!("unknown element <{other}> inside <{}>", e.tag))),
        }
    }
    Ok(())
}

fn joint(e: &Element, x: &Se3, class: &str, defaults: &Defaults, c: &Compiler) -> Result<JointSpec, MjcfError> {
    let free = e.tag == "freejoint";
    if free {
        e.check_attrs(&["name", "group", "align"])?;
        if e.attr("align") == Some("true") {
            return Err(e.error("align=\"true\" is not supported (it moves the body's frame)"));
        }
    } else {
        e.check_attrs(JOINT_ATTRS)?;
    }
    let r = Resolved::new(e, class, defaults)?;
    let get = |k: &str| if free { None } else { r.get(k) };
    let kind = match (free, get("type").unwrap_or("hinge")) {
        (true, _) | (false, "free") => JointKind::Free,
        (_, "hinge") => JointKind::Hinge,
        (_, "slide") => JointKind::Slide,
        (_, "ball") => JointKind::Ball,
        (_, t) => return Err(e.error(format!("unknown joint type '{t}' (hinge, slide, ball or free)"))),
    };
    let num = |k: &str, d: f64| match get(k) {
        Some(t) => numbers::<1>(e, k, t).map(|v| v[0]),
        None => Ok(d),
    };
    let angle = if c.degree && kind == JointKind::Hinge { std::f64::consts::PI / 180.0 } else { 1.0 };
    let pos = match get("pos") {
        Some(t) if kind != JointKind::Free => Vec3::from(numbers::<3>(e, "pos", t)?),
        _ => Vec3::zeros(),
    };
    let axis = match get("axis") {
        Some(t) if matches!(kind, JointKind::Hinge | JointKind::Slide) => Vec3::from(numbers::<3>(e, "axis", t)?),
        _ => Vec3::z(),
    };
    let axis = x.rotation * axis;
    if axis.norm() < 1e-14 {
        return Err(e.error("axis too small"));
    }
    let range = get("range").map(|t| numbers::<2>(e, "range", t)).transpose()?;
    let limited = match get("limited").unwrap_or("auto") {
        "true" => true,
        "false" => false,
        "auto" => c.autolimits && range.is_some_and(|r| r != [0.0, 0.0]),
        v => return Err(e.error(format!("limited must be true, false or auto, not '{v}'"))),
    };
    let limits = match (limited, range, kind) {
        (true, _, JointKind::Free | JointKind::Ball) | (false, _, _) => None,
        (true, r, _) => {
            let [lo, hi] = r.unwrap_or([0.0, 0.0]);
            if lo >= hi {
                return Err(e.error("range[0] must be below range[1]"));
            }
            Some((lo * angle, hi * angle))
        }
    };
    let (armature, damping, frictionloss) = (num("armature", 0.0)?, num("damping", 0.0)?, num("frictionloss", 0.0)?);
    if armature < 0.0 || damping < 0.0 || frictionloss < 0.0 {
        return Err(e.error("armature, damping and frictionloss must be non-negative"));
    }
    let r_angle = if c.degree && matches!(kind, JointKind::Hinge | JointKind::Ball) { std::f64::consts::PI / 180.0 } else { 1.0 };
    let props = JointProps {
        name: String::new(),
        damping,
        stiffness: num("stiffness", 0.0)?,
        springref: num("springref", 0.0)? * angle,
        frictionloss,
        armature,
        range: match (kind, limited, range) {
            (JointKind::Ball, true, r) => r.map(|[lo, hi]| (lo * r_angle, hi * r_angle)),
            _ => limits,
        },
        solref_limit: if free { SOLREF } else { r.filled("solreflimit", SOLREF)? },
        solimp_limit: if free { SOLIMP } else { r.filled("solimplimit", SOLIMP)? },
        margin: num("margin", 0.0)?,
        actuator_force_range: actuator_force_range(e, get("actuatorfrclimited"), get("actuatorfrcrange"), c)?,
    };
    Ok(JointSpec {
        name: e.attr("name").map(str::to_string),
        kind,
        pos: if kind == JointKind::Free { Vec3::zeros() } else { x.transform_point(&pos) },
        axis: axis / axis.norm(),
        reference: if matches!(kind, JointKind::Hinge | JointKind::Slide) { num("ref", 0.0)? * angle } else { 0.0 },
        limits,
        armature,
        damping,
        frictionloss,
        props,
        at: Element { children: vec![], ..e.clone() },
    })
}

/// A `*limited` flag with its range: `true`, `false`, or `auto` (limited when the range is
/// written and `autolimits` holds, as MuJoCo); the range must be increasing when limited.
pub(super) fn limited_range(e: &Element, flag: Option<&str>, range: Option<&str>, name: &str, c: &Compiler) -> Result<Option<(f64, f64)>, MjcfError> {
    let range = range.map(|t| numbers::<2>(e, name, t)).transpose()?;
    let limited = match flag.unwrap_or("auto") {
        "true" => true,
        "false" => false,
        "auto" => c.autolimits && range.is_some(),
        v => return Err(e.error(format!("{name}: limited flag must be true, false or auto, not '{v}'"))),
    };
    if !limited {
        return Ok(None);
    }
    let [lo, hi] = range.unwrap_or([0.0, 0.0]);
    if lo > hi || (lo == hi && range.is_none()) {
        return Err(e.error(format!("{name} must be increasing when limited")));
    }
    Ok(Some((lo, hi)))
}

fn actuator_force_range(e: &Element, flag: Option<&str>, range: Option<&str>, c: &Compiler) -> Result<Option<(f64, f64)>, MjcfError> {
    limited_range(e, flag, range, "actuatorfrcrange", c)
}

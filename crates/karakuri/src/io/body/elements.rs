//! A link's `elements`: `Shape`, `Transform`, `Group`, `Visual` / `Collision`, `Resource`,
//! `RigidBody` (merged into the link) and devices, as a list of typed nodes or a mapping from
//! type to node; any element's `translation` / `rotation` places it and what it holds.
//! Resource files by extension (STL, OBJ, DAE; VRML not read), `Extrusion` as points.

use super::types::{DeviceDesc, LinkDesc, Rigid, ShapeDesc};
use super::types::{BodyGeometry, DeviceKind};
use super::values::{show, Ctx, R};
use super::yaml::Node;
use crate::spatial::{Se3, Vec3};

/// Which model an element belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    /// Outside `Visual` and `Collision`: both.
    Both,
    /// Inside `Visual`.
    Visual,
    /// Inside `Collision`.
    Collision,
}

/// Devices read as karakuri's sensors.
const SENSORS: [(&str, DeviceKind); 4] = [
    ("ForceSensor", DeviceKind::ForceSensor),
    ("RateGyroSensor", DeviceKind::RateGyroSensor),
    ("AccelerationSensor", DeviceKind::AccelerationSensor),
    ("IMU", DeviceKind::Imu),
];

/// Devices listed but not simulated.
const OTHER_DEVICES: [&str; 9] = ["Holder", "Camera", "RangeCamera", "RangeSensor", "PointLight", "SpotLight", "DirectionalLight", "Light", "Microphone"];

/// Reads an `elements` value (a list of typed mappings, or a mapping of type to node or list)
/// placed at `t` in the link frame; rigid bodies into `bodies`.
pub(super) fn elements(ctx: &Ctx, node: &Node, t: &Se3, mode: Mode, l: &mut LinkDesc, bodies: &mut Vec<Rigid>, w: &mut Vec<String>) -> R<()> {
    if let Some(items) = node.seq() {
        for item in items {
            let Some(ty) = item.get("type") else {
                return Err(ctx.err(item, "elements", "an element needs a 'type'"));
            };
            let ty = ctx.string(ty, "elements.type")?;
            element(ctx, item, &ty, t, mode, l, bodies, w)?;
        }
        return Ok(());
    }
    let Some(entries) = node.map() else {
        return Err(ctx.err(node, "elements", format!("expected a list or a mapping, found {}", show(node))));
    };
    for (ty, item) in entries {
        match item.seq() {
            Some(items) => {
                for i in items {
                    element(ctx, i, ty, t, mode, l, bodies, w)?;
                }
            }
            None => element(ctx, item, ty, t, mode, l, bodies, w)?,
        }
    }
    Ok(())
}

/// One element of type `ty`.
#[allow(clippy::too_many_arguments)]
fn element(ctx: &Ctx, node: &Node, ty: &str, t: &Se3, mode: Mode, l: &mut LinkDesc, bodies: &mut Vec<Rigid>, w: &mut Vec<String>) -> R<()> {
    if node.map().is_none() {
        return Err(ctx.err(node, ty, format!("expected a mapping, found {}", show(node))));
    }
    let t = t.compose(&ctx.transform(node)?);
    let sub = |ctx: &Ctx, l: &mut LinkDesc, bodies: &mut Vec<Rigid>, w: &mut Vec<String>, mode: Mode| -> R<()> {
        match node.get("elements") {
            Some(e) => elements(ctx, e, &t, mode, l, bodies, w),
            None => Ok(()),
        }
    };
    match ty {
        "Transform" | "Group" => sub(ctx, l, bodies, w, mode)?,
        "Shape" => shape(ctx, node, &t, mode, l, w)?,
        "Resource" => {
            if let Some(g) = resource(ctx, node, w)? {
                push_shape(ctx, node, t, g, mode, l);
            }
        }
        "Visual" | "Collision" => {
            let inner = if ty == "Visual" { Mode::Visual } else { Mode::Collision };
            if mode != Mode::Both && mode != inner {
                return Err(ctx.err(node, ty, format!("a {ty} node inside a {mode:?} node")));
            }
            if let Some(r) = node.get("resource") {
                let rt = t.compose(&ctx.transform(r)?);
                if let Some(g) = resource(ctx, r, w)? {
                    push_shape(ctx, r, rt, g, inner, l);
                }
            }
            if let Some(s) = node.get("shape") {
                let st = t.compose(&ctx.transform(s)?);
                shape(ctx, s, &st, inner, l, w)?;
            }
            sub(ctx, l, bodies, w, inner)?;
        }
        "RigidBody" => {
            let r = super::values::rigid_of(ctx, node, ty)?;
            bodies.push(Rigid { m: r.m, c: t.transform_point(&r.c), i: t.rotation * r.i * t.rotation.transpose() });
            sub(ctx, l, bodies, w, mode)?;
        }
        _ => device(ctx, node, ty, t, l, w)?,
    }
    Ok(())
}

/// A device element: a sensor karakuri simulates, one it lists, or an unknown element (left
/// out with a warning).
fn device(ctx: &Ctx, node: &Node, ty: &str, t: Se3, l: &mut LinkDesc, w: &mut Vec<String>) -> R<()> {
    let kind = match SENSORS.iter().find(|(n, _)| *n == ty) {
        Some((_, k)) => k.clone(),
        None if OTHER_DEVICES.contains(&ty) => DeviceKind::Other(ty.into()),
        None => {
            w.push(format!("{}: element type '{ty}' is not read (left out)", ctx.at(node)));
            return Ok(());
        }
    };
    let name = match node.get("name") {
        Some(n) => ctx.string(n, &format!("{ty}.name"))?,
        None => format!("{}_{ty}{}", l.name, l.devices.len()),
    };
    let id = node.get("id").map(|n| ctx.int(n, &format!("{ty}.id"))).transpose()?;
    l.devices.push(DeviceDesc { kind, name, id, placement: t, at: ctx.at(node) });
    Ok(())
}

fn push_shape(ctx: &Ctx, node: &Node, placement: Se3, geometry: BodyGeometry, mode: Mode, l: &mut LinkDesc) {
    l.shapes.push(ShapeDesc { placement, geometry, visual: mode != Mode::Collision, collision: mode != Mode::Visual, at: ctx.at(node) });
}

/// A `Shape` element: its `geometry` (appearance is not read).
fn shape(ctx: &Ctx, node: &Node, t: &Se3, mode: Mode, l: &mut LinkDesc, w: &mut Vec<String>) -> R<()> {
    let Some(g) = node.get("geometry") else {
        return Err(ctx.err(node, "Shape.geometry", "a Shape needs a 'geometry'"));
    };
    if let Some(geometry) = geometry(ctx, g, w)? {
        push_shape(ctx, g, *t, geometry, mode, l);
    }
    Ok(())
}

/// A positive size (Choreonoid's default where absent).
fn size(ctx: &Ctx, g: &Node, k: &str, default: f64) -> R<f64> {
    let Some(n) = g.get(k) else { return Ok(default) };
    let v = ctx.num(n, &format!("geometry.{k}"))?;
    if v <= 0.0 {
        return Err(ctx.err(n, &format!("geometry.{k}"), format!("must be positive, found {v}")));
    }
    Ok(v)
}

/// A `geometry` mapping; `None` for a kind not read (a warning says so).
fn geometry(ctx: &Ctx, g: &Node, w: &mut Vec<String>) -> R<Option<BodyGeometry>> {
    let ty = g.get("type").ok_or_else(|| ctx.err(g, "geometry.type", "a geometry needs a 'type'"))?;
    let ty = ctx.string(ty, "geometry.type")?;
    let r = |ctx| size(ctx, g, "radius", 1.0);
    let h = |ctx| size(ctx, g, "height", 1.0);
    Ok(Some(match ty.as_str() {
        "Box" => {
            let s = match g.get("size") {
                Some(n) => ctx.vec3(n, "geometry.size")?,
                None => Vec3::new(1.0, 1.0, 1.0),
            };
            if s.iter().any(|&x| x <= 0.0) {
                return Err(ctx.err(g, "geometry.size", "box sizes must be positive"));
            }
            BodyGeometry::Box { size: [s.x, s.y, s.z] }
        }
        "Sphere" => BodyGeometry::Sphere { radius: r(ctx)? },
        "Cylinder" => BodyGeometry::Cylinder { radius: r(ctx)?, height: h(ctx)? },
        "Capsule" => BodyGeometry::Capsule { radius: r(ctx)?, height: h(ctx)? },
        "Cone" => BodyGeometry::Cone { radius: r(ctx)?, height: h(ctx)? },
        "Extrusion" => extrusion(ctx, g)?,
        "Resource" => return resource(ctx, g, w),
        other => {
            w.push(format!("{}: geometry type '{other}' is not read (shape left out)", ctx.at(g)));
            return Ok(None);
        }
    }))
}

/// A resource node (`uri`, optional `scale`): STL, OBJ and DAE as meshes (the file must
/// exist), VRML as a visual not read; other kinds left out with a warning.
fn resource(ctx: &Ctx, node: &Node, w: &mut Vec<String>) -> R<Option<BodyGeometry>> {
    let u = node.get("uri").ok_or_else(|| ctx.err(node, "resource.uri", "a resource needs a 'uri'"))?;
    let uri = ctx.string(u, "resource.uri")?;
    let rel = uri.strip_prefix("file://").unwrap_or(&uri);
    let path = ctx.dir.join(rel);
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
    match ext.as_str() {
        "stl" | "obj" | "dae" => {
            if !path.is_file() {
                return Err(ctx.err(u, "resource.uri", format!("resource '{uri}' not found (tried '{}')", path.display())));
            }
            let scale = match node.get("scale") {
                Some(n) if n.seq().is_some() => {
                    let s = ctx.vec3(n, "resource.scale")?;
                    [s.x, s.y, s.z]
                }
                Some(n) => [ctx.num(n, "resource.scale")?; 3],
                None => [1.0; 3],
            };
            if scale.iter().any(|&s| s <= 0.0) {
                return Err(ctx.err(node, "resource.scale", "scales must be positive"));
            }
            Ok(Some(BodyGeometry::Mesh { path, scale }))
        }
        "wrl" | "vrml" => Ok(Some(BodyGeometry::Vrml { path })),
        _ => {
            w.push(format!("{}: resource '{uri}' of a kind not read (only STL, OBJ, DAE and VRML): left out", ctx.at(u)));
            Ok(None)
        }
    }
}

/// The smallest rotation taking +y onto `d`'s direction (identity for a zero `d`).
fn y_onto(d: Vec3) -> crate::spatial::Mat3 {
    let n = d.norm();
    if n < 1e-12 {
        return crate::spatial::Mat3::identity();
    }
    let t = d / n;
    let axis = Vec3::y().cross(&t);
    let s = axis.norm();
    let c = t.y;
    if s < 1e-12 {
        let flip = if c < 0.0 { std::f64::consts::PI } else { 0.0 };
        return crate::spatial::rotation_about(&Vec3::x(), flip);
    }
    crate::spatial::rotation_about(&(axis / s), s.atan2(c))
}

/// An `Extrusion` as points: each cross-section point `(x, z)` scaled and set at each spine
/// point, in the plane across the spine there (y turned onto the spine's direction by the
/// smallest rotation; exact for a straight spine, close to the hull of a curved one).
fn extrusion(ctx: &Ctx, g: &Node) -> R<BodyGeometry> {
    let flat = |k: &str, d: &[f64]| -> R<Vec<f64>> {
        match g.get(k) {
            Some(n) => {
                let items = n.seq().ok_or_else(|| ctx.err(n, &format!("geometry.{k}"), "expected a list of numbers"))?;
                let items: Vec<&Node> = items.iter().flat_map(|i| i.seq().map_or_else(|| vec![i], |s| s.iter().collect())).collect();
                items.into_iter().map(|x| ctx.num(x, &format!("geometry.{k}"))).collect()
            }
            None => Ok(d.to_vec()),
        }
    };
    let cs = flat("crossSection", &[1.0, 1.0, 1.0, -1.0, -1.0, -1.0, -1.0, 1.0, 1.0, 1.0])?;
    let spine = flat("spine", &[0.0, 0.0, 0.0, 0.0, 1.0, 0.0])?;
    let mut scale = flat("scale", &[1.0, 1.0])?;
    if scale.len() % 2 == 1 {
        scale.pop(); // a trailing odd value (as in Choreonoid's Tank) is not a pair
    }
    if cs.len() < 6 || cs.len() % 2 != 0 || spine.len() < 6 || spine.len() % 3 != 0 || scale.len() < 2 {
        return Err(ctx.err(g, "geometry", "an Extrusion needs crossSection pairs, spine triples and scale pairs"));
    }
    let points: Vec<Vec3> = spine.chunks(3).map(|s| Vec3::new(s[0], s[1], s[2])).collect();
    let n = points.len();
    let mut vertices = vec![];
    for (i, p) in points.iter().enumerate() {
        let d = points[(i + 1).min(n - 1)] - points[i.saturating_sub(1)];
        let r = y_onto(d);
        let k = (2 * i).min(scale.len() - 2);
        for c in cs.chunks(2) {
            let x = p + r * Vec3::new(scale[k] * c[0], 0.0, scale[k + 1] * c[1]);
            vertices.push([x.x, x.y, x.z]);
        }
    }
    Ok(BodyGeometry::Points { vertices })
}

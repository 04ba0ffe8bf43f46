//! A `<geom>` as a collision shape ([`Geom`]): type, MuJoCo's `geom_size` (with `fromto`
//! resolved as user_objects.cc `mjCGeom::Compile`), its frame in the body and its contact
//! parameters, defaults applied (vector attributes written short keep the class's tail).

use super::defaults::{Compiler, Resolved};
use super::orient::{frame, fromto};
use super::types::{Geom, GeomShape};
use super::MjcfError;
use crate::spatial::{Se3, Vec3};

/// MuJoCo's default `solref`.
pub(super) const SOLREF: [f64; 2] = [0.02, 1.0];
/// MuJoCo's default `solimp`.
pub(super) const SOLIMP: [f64; 5] = [0.9, 0.95, 0.001, 0.5, 2.0];

/// Reads a geom whose enclosing frames put it at `parent` in its body's frame (body id set by
/// the caller). Mesh and hfield shapes name their asset; the caller resolves the file.
pub(super) fn geom(g: &Resolved, parent: &Se3, c: &Compiler) -> Result<Geom, MjcfError> {
    let e = g.e;
    let kind = match (g.get("type"), g.get("mesh")) {
        (Some(t), _) => t,
        (None, Some(_)) => "mesh",
        (None, None) => "sphere",
    };
    let mut size = g.filled("size", [0.0; 3])?;
    let mut local = frame(e, |k| g.get(k), c)?;
    if let Some(t) = g.get("fromto") {
        let (x, half) = fromto(e, t)?;
        match kind {
            "capsule" | "cylinder" => size[1] = half,
            "box" | "ellipsoid" => {
                size[1] = size[0];
                size[2] = half;
            }
            _ => return Err(e.error("fromto requires a capsule, cylinder, box or ellipsoid")),
        }
        local = x;
    }
    let asset = |attr: &str| {
        g.get(attr).map(str::to_string).ok_or_else(|| e.error(format!("a {kind} geom needs a '{attr}' attribute")))
    };
    let shape = match kind {
        "plane" => GeomShape::Plane,
        "sphere" => GeomShape::Sphere,
        "capsule" => GeomShape::Capsule,
        "cylinder" => GeomShape::Cylinder,
        "box" => GeomShape::Box,
        "ellipsoid" => GeomShape::Ellipsoid,
        "mesh" => GeomShape::Mesh { name: asset("mesh")?, file: Default::default(), scale: Vec3::repeat(1.0) },
        "hfield" => GeomShape::HeightField { name: asset("hfield")?, extents: [0.0; 4], grid: None },
        "sdf" => {
            return Err(e.error("SDF geoms (plugins) are not supported: replace the geom by a mesh (collides as its convex hull) or by primitives"))
        }
        other => return Err(e.error(format!("unknown geom type '{other}'"))),
    };
    let int = |attr: &str, d: f64| -> Result<f64, MjcfError> {
        let v = g.num(attr, d)?;
        if v.fract() != 0.0 {
            return Err(e.error(format!("attribute '{attr}' must be an integer, not {v}")));
        }
        Ok(v)
    };
    let condim = int("condim", 3.0)?;
    if ![1.0, 3.0, 4.0, 6.0].contains(&condim) {
        return Err(e.error(format!("condim must be 1, 3, 4 or 6, not {condim}")));
    }
    let (contype, conaffinity) = (int("contype", 1.0)?, int("conaffinity", 1.0)?);
    if !(0.0..=u32::MAX as f64).contains(&contype) || !(0.0..=u32::MAX as f64).contains(&conaffinity) {
        return Err(e.error("contype and conaffinity must be non-negative 32-bit integers"));
    }
    Ok(Geom {
        name: e.attr("name").map(str::to_string),
        body: 0,
        shape,
        size,
        frame: parent.compose(&local),
        friction: g.filled("friction", [1.0, 0.005, 0.0001])?,
        contype: contype as u32,
        conaffinity: conaffinity as u32,
        condim: condim as u8,
        priority: int("priority", 0.0)? as i32,
        solref: g.filled("solref", SOLREF)?,
        solimp: g.filled("solimp", SOLIMP)?,
        solmix: g.num("solmix", 1.0)?,
        margin: g.num("margin", 0.0)?,
        gap: g.num("gap", 0.0)?,
        group: int("group", 0.0)? as i32,
        at: format!("{}:{}", e.file, e.line),
    })
}

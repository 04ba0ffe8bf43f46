//! Pass 2b: the mass and inertia of geoms and bodies, as MuJoCo's compiler finds them
//! (user_objects.cc `mjCGeom::GetVolume`, `mjCGeom::SetInertia`, `mjCBody::InertiaFromGeom`):
//! a geom's mass is `mass`, else `density` (1000) times its volume; a body's inertia is its
//! `<inertial>`, else (or with `inertiafromgeom="true"`) the sum of its geoms whose group lies
//! in `inertiagrouprange`; `boundmass` and `boundinertia` bound the mass and the principal
//! moments from below. Mesh geoms are weighed by [`super::mesh_inertia`] when their body needs
//! them (their files are read then, through the loader's mesh reader).

use super::defaults::{Compiler, Resolved};
use super::mesh_inertia::{MeshAssets, MeshGeom};
use super::orient::{frame, fromto};
use super::xml::{numbers, numbers_vec, Element};
use super::MjcfError;
use crate::spatial::{Inertia, Mat3, Se3, Solid, Vec3};

/// Masses at or below this are ignored (MuJoCo's `mjEPS`).
const EPS: f64 = 1e-14;

/// A geom's mass, its frame in its body's frame and its principal moments in that frame; a
/// mesh geom's are found from its mesh when its body needs them (`mesh`).
pub(super) struct GeomMass {
    pub mass: f64,
    pub frame: Se3,
    pub moments: Vec3,
    pub group: i64,
    pub mesh: Option<MeshGeom>,
}

/// The mass properties of a geom whose frame in the body is `parent` (the enclosing
/// `<frame>`s). `None` for a geom that weighs nothing.
pub(super) fn geom_mass(g: &Resolved, parent: &Se3, c: &Compiler) -> Result<Option<GeomMass>, MjcfError> {
    let e = g.e;
    let mut kind = g.get("type").unwrap_or("sphere");
    if g.get("type").is_none() && g.get("mesh").is_some() {
        kind = "mesh";
    }
    let size = match g.get("size") {
        Some(t) => numbers_vec(e, "size", t)?,
        None => vec![],
    };
    let mut s = [0.0; 3];
    for (d, x) in s.iter_mut().zip(&size) {
        *d = *x;
    }
    let group = g.num("group", 0.0)? as i64;
    let mut local = frame(e, |k| g.get(k), c)?;
    if let Some(t) = g.get("fromto") {
        if !matches!(kind, "capsule" | "cylinder" | "ellipsoid" | "box") {
            return Err(e.error("fromto requires a capsule, cylinder, box or ellipsoid"));
        }
        let (x, half) = fromto(e, t)?;
        s[1] = half;
        if matches!(kind, "ellipsoid" | "box") {
            s[2] = half;
            s[1] = s[0];
        }
        local = x;
    }
    let volume = match kind {
        "sphere" | "capsule" | "cylinder" | "ellipsoid" | "box" => solid(kind, s).map_or(0.0, |x| x.volume()),
        "plane" => 0.0,
        "mesh" => return mesh_geom(g, parent.compose(&local), group),
        "sdf" | "hfield" => f64::NAN,
        _ => return Err(e.error(format!("unknown geom type '{kind}'"))),
    };
    if s.iter().any(|x| *x < 0.0) {
        return Err(e.error("geom sizes must be non-negative"));
    }
    if g.get("shellinertia").is_some_and(|v| v == "true") {
        return Err(e.error("shellinertia=\"true\" is not supported"));
    }
    let mass = match g.get("mass") {
        Some(t) => {
            let m = numbers::<1>(e, "mass", t)?[0];
            if m < 0.0 {
                return Err(e.error(format!("negative mass {m}")));
            }
            if m == 0.0 || (volume.is_finite() && volume <= EPS) {
                return Ok(None);
            }
            if volume.is_nan() {
                f64::NAN
            } else {
                m
            }
        }
        None => {
            let density = g.num("density", 1000.0)?;
            if density < 0.0 {
                return Err(e.error(format!("negative density {density}")));
            }
            if density == 0.0 {
                return Ok(None);
            }
            density * volume
        }
    };
    if mass.is_nan() {
        return Err(e.error(format!(
            "the inertia of a {kind} geom is not computed by this loader: give its body an <inertial>, or the geom mass=\"0\" or density=\"0\""
        )));
    }
    if mass <= EPS {
        return Ok(None);
    }
    let moments = moments(kind, mass, s);
    Ok(Some(GeomMass { mass, frame: parent.compose(&local), moments, group, mesh: None }))
}

/// A mesh geom's mass or density, its mass properties left for [`from_geoms`].
fn mesh_geom(g: &Resolved, frame: Se3, group: i64) -> Result<Option<GeomMass>, MjcfError> {
    let e = g.e;
    let mesh = g.get("mesh").ok_or_else(|| e.error("a mesh geom needs a 'mesh'"))?.to_string();
    let mass = match g.get("mass") {
        Some(t) => Some(numbers::<1>(e, "mass", t)?[0]),
        None => None,
    };
    let density = g.num("density", 1000.0)?;
    if mass.is_some_and(|m| m < 0.0) || (mass.is_none() && density < 0.0) {
        return Err(e.error("negative mass or density"));
    }
    if mass == Some(0.0) || (mass.is_none() && density == 0.0) {
        return Ok(None);
    }
    let at = Element { children: vec![], ..e.clone() };
    Ok(Some(GeomMass { mass: f64::NAN, frame, moments: Vec3::zeros(), group, mesh: Some(MeshGeom { mesh, mass, density, at }) }))
}

/// The solid of a primitive geom of MuJoCo's half sizes `s` (the one place of the formulas:
/// [`Solid`]).
fn solid(kind: &str, s: [f64; 3]) -> Option<Solid> {
    Some(match kind {
        "sphere" => Solid::Sphere { radius: s[0] },
        "capsule" => Solid::Capsule { radius: s[0], half_length: s[1] },
        "cylinder" => Solid::Cylinder { radius: s[0], half_length: s[1] },
        "ellipsoid" => Solid::Ellipsoid { radii: Vec3::new(s[0], s[1], s[2]) },
        "box" => Solid::Box { half_extents: Vec3::new(s[0], s[1], s[2]) },
        _ => return None,
    })
}

/// Principal moments of a solid shape of mass `m`, sizes `s` (MuJoCo's half sizes).
fn moments(kind: &str, m: f64, s: [f64; 3]) -> Vec3 {
    solid(kind, s).map_or(Vec3::zeros(), |x| x.moments(m))
}

/// The inertia of the selected geoms, in the body frame (mesh geoms' from their meshes).
pub(super) fn from_geoms(geoms: &[GeomMass], c: &Compiler, meshes: &MeshAssets) -> Result<Inertia, MjcfError> {
    let mut total = Inertia::zero();
    for g in geoms.iter().filter(|g| g.group >= c.group_range.0 && g.group <= c.group_range.1) {
        let one = match &g.mesh {
            Some(m) => match meshes.inertia(m, &g.frame)? {
                Some(i) => i,
                None => continue,
            },
            None if g.mass > EPS => {
                let r = g.frame.rotation;
                Inertia::new(g.mass, g.frame.translation, r * Mat3::from_diagonal(&g.moments) * r.transpose())
            }
            None => continue,
        };
        total = if total.mass == 0.0 { one } else { total.combined(&one) };
    }
    Ok(total)
}

/// An `<inertial>` element: the inertia it gives, in the body frame.
pub(super) fn inertial(e: &Element, c: &Compiler) -> Result<Inertia, MjcfError> {
    e.check_attrs(&["pos", "quat", "axisangle", "xyaxes", "zaxis", "euler", "mass", "diaginertia", "fullinertia"])?;
    let get = |k: &str| e.attr(k);
    if get("pos").is_none() || get("mass").is_none() {
        return Err(e.error("<inertial> needs 'pos' and 'mass'"));
    }
    let x = frame(e, get, c)?;
    let mass = numbers::<1>(e, "mass", get("mass").unwrap_or_default())?[0];
    if mass < 0.0 {
        return Err(e.error(format!("negative mass {mass}")));
    }
    let full = match (get("diaginertia"), get("fullinertia")) {
        (Some(_), Some(_)) => return Err(e.error("write diaginertia or fullinertia, not both")),
        (Some(t), None) => Mat3::from_diagonal(&Vec3::from(numbers::<3>(e, "diaginertia", t)?)),
        (None, Some(t)) => {
            let written = ["quat", "axisangle", "xyaxes", "zaxis", "euler"].iter().any(|k| get(k).is_some());
            if written {
                return Err(e.error("fullinertia and an inertial orientation cannot both be given"));
            }
            let [xx, yy, zz, xy, xz, yz] = numbers::<6>(e, "fullinertia", t)?;
            Mat3::new(xx, xy, xz, xy, yy, yz, xz, yz, zz)
        }
        (None, None) => return Err(e.error("<inertial> needs diaginertia or fullinertia")),
    };
    let rot = x.rotation * full * x.rotation.transpose();
    if rot.symmetric_eigenvalues().iter().any(|&m| m < 0.0) {
        return Err(e.error("negative principal moment of inertia"));
    }
    Ok(Inertia::new(mass, x.translation, rot))
}

/// `boundmass` and `boundinertia` (MuJoCo applies them to every body but the world).
pub(super) fn bounded(i: Inertia, c: &Compiler) -> Inertia {
    let mut out = i;
    out.mass = out.mass.max(c.boundmass);
    if c.boundinertia > 0.0 {
        let eig = out.inertia_com.symmetric_eigen();
        if eig.eigenvalues.iter().any(|&m| m < c.boundinertia) {
            let d = eig.eigenvalues.map(|m| m.max(c.boundinertia));
            out.inertia_com = eig.eigenvectors * Mat3::from_diagonal(&d) * eig.eigenvectors.transpose();
        }
    }
    out
}

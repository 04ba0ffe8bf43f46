//! Mesh geoms' mass properties as MuJoCo 4.0.0's compiler finds them (user_mesh.cc
//! `mjCMesh::Process`, `ComputeVolume`, `ComputeInertia`), for bodies whose inertia comes from
//! their geoms.
//!
//! The core reads no mesh format: a [`MeshSource`] (karakuri-sim's `mesh::MeshFiles`, built on
//! mesh-loader) gives the triangles of a file and the convex hull of points. Without one, a
//! body that needs a mesh's inertia is an error naming the geom (`mjcf::load` stays
//! dependency-free); bodies with an `<inertial>` never read their meshes.
//!
//! A `<mesh>`'s `inertia` attribute picks the rule (MuJoCo 4.0.0's default is `legacy`):
//! * `exact`: the signed volumes of the tetrahedra from each face to a centre (a closed,
//!   consistently oriented mesh: the exact solid);
//! * `legacy`: the same with each tetrahedron's volume taken positive (overcounts a non-convex
//!   mesh, as MuJoCo does);
//! * `convex`: `exact` on the mesh's convex hull;
//! * `shell`: the mass spread on the surface, by area.
//!
//! Two passes as MuJoCo's: the volume and centre of mass from tetrahedra whose apex is the
//! area-weighted centroid of the faces, then the second moments (and the volume again) from
//! tetrahedra whose apex is that centre of mass. A geom's mass is its `mass`, else density ×
//! that volume; its inertia is the moments scaled by mass / volume, in the geom's frame (MuJoCo
//! moves the mesh to its principal frame and the geom with it: the same body inertia).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::defaults::{Compiler, Defaults, Resolved};
use super::xml::{numbers, Element};
use super::MjcfError;
use crate::spatial::{Inertia, Mat3, Se3, Vec3};

/// MuJoCo's `mjMINVAL`: smaller areas and volumes count as zero.
const MINVAL: f64 = 1e-15;

/// The vertices and triangles of a mesh file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshTriangles {
    /// Vertices in the file's units (not scaled).
    pub vertices: Vec<[f64; 3]>,
    /// Triangles as indices into `vertices`, oriented as in the file.
    pub triangles: Vec<[u32; 3]>,
}

/// Reads mesh files for the MJCF loader (mesh geoms' inertia) and height fields' PNG images.
pub trait MeshSource {
    /// The vertices and triangles of the mesh file at `path`; the error is a plain reason.
    fn read(&self, path: &Path) -> Result<MeshTriangles, String>;
    /// The convex hull of `points`: its vertices and its triangles, facing outward.
    fn convex_hull(&self, points: &[[f64; 3]]) -> Result<MeshTriangles, String>;
    /// A height field's PNG image as MuJoCo decodes it: `(width, height, pixels)`, 8-bit, rows
    /// from the top, the grey level (the red channel of a colour image, the high byte of 16-bit
    /// samples). The default has no decoder.
    fn read_png_grey(&self, path: &Path) -> Result<(usize, usize, Vec<u8>), String> {
        Err(format!("no PNG decoder to read '{}': load with a reader that has one (karakuri-sim's MeshFiles)", path.display()))
    }
}

/// A `<mesh>`'s `inertia` rule (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshInertia {
    /// Tetrahedra volumes taken positive (MuJoCo 4.0.0's default).
    Legacy,
    /// The exact solid of a closed, consistently oriented mesh.
    Exact,
    /// The exact solid of the convex hull.
    Convex,
    /// Mass on the surface.
    Shell,
}

/// A mesh's volume (or area, for a shell), centre of mass and second moments about it per unit
/// density, in the mesh's frame.
#[derive(Clone, Copy, Debug)]
pub struct MeshMass {
    /// Volume (area for a shell).
    pub volume: f64,
    /// Centre of mass.
    pub com: Vec3,
    /// Inertia about the centre of mass of a unit density.
    pub inertia: Mat3,
}

/// Area, unit normal and centre of a triangle; area 0 for a sliver (MuJoCo's `triangle`).
fn triangle(a: Vec3, b: Vec3, c: Vec3) -> (f64, Vec3, Vec3) {
    let center = (a + b + c) / 3.0;
    let n = (b - a).cross(&(c - a));
    let len = n.norm();
    if len < MINVAL {
        return (0.0, n, center);
    }
    (0.5 * len, n / len, center)
}

/// The mass properties of a mesh by MuJoCo's rule `kind`; `hull` (the convex hull) is used
/// for [`MeshInertia::Convex`].
pub fn mesh_mass(vertices: &[[f64; 3]], faces: &[[u32; 3]], hull: Option<&MeshTriangles>, kind: MeshInertia) -> Result<MeshMass, String> {
    let at = |vs: &[[f64; 3]], i: u32| -> Result<Vec3, String> {
        vs.get(i as usize).map(|p| Vec3::from(*p)).ok_or_else(|| format!("a face names vertex {i} of {}", vs.len()))
    };
    let v = |i: u32| at(vertices, i);
    if kind == MeshInertia::Exact {
        check_orientation(vertices, faces)?;
    }
    // the faces' area-weighted centroid
    let (mut facecen, mut area) = (Vec3::zeros(), 0.0);
    for f in faces {
        let (a, _, c) = triangle(v(f[0])?, v(f[1])?, v(f[2])?);
        facecen += a * c;
        area += a;
    }
    if area < MINVAL {
        return Err("mesh surface area is too small".into());
    }
    facecen /= area;
    let (used_vertices, used) = match (kind, hull) {
        (MeshInertia::Convex, Some(h)) => (&h.vertices[..], &h.triangles[..]),
        (MeshInertia::Convex, None) => return Err("the convex hull is missing".into()),
        _ => (vertices, faces),
    };
    let v = |i: u32| at(used_vertices, i);
    // pass 1: volume and centre of mass, apex at the centroid of the faces
    let (mut com, mut total) = (Vec3::zeros(), 0.0);
    for f in used {
        let (a, n, c) = triangle(v(f[0])?, v(f[1])?, v(f[2])?);
        let vol = match kind {
            MeshInertia::Shell => a,
            MeshInertia::Legacy => ((c - facecen).dot(&n) * a / 3.0).abs(),
            _ => (c - facecen).dot(&n) * a / 3.0,
        };
        total += vol;
        com += vol * (c * 0.75 + facecen * 0.25);
    }
    if total < MINVAL {
        return Err(if total < 0.0 {
            "mesh volume is negative (misoriented triangles)".into()
        } else {
            "mesh volume is too small (try inertia=\"shell\")".into()
        });
    }
    com /= total;
    // pass 2: second moments and the volume again, apex at the centre of mass
    let (mut p, mut volume) = ([0.0; 6], 0.0);
    const K: [(usize, usize); 6] = [(0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)];
    for f in used {
        let (d, e, g) = (v(f[0])? - com, v(f[1])? - com, v(f[2])? - com);
        let (a, n, c) = triangle(d, e, g);
        let (vol, denom) = match kind {
            MeshInertia::Shell => (a, 12.0),
            MeshInertia::Legacy => ((c.dot(&n) * a / 3.0).abs(), 20.0),
            _ => (c.dot(&n) * a / 3.0, 20.0),
        };
        volume += vol;
        for (j, &(r, s)) in K.iter().enumerate() {
            p[j] += vol / denom
                * (2.0 * (d[r] * d[s] + e[r] * e[s] + g[r] * g[s]) + d[r] * e[s] + d[s] * e[r] + d[r] * g[s] + d[s] * g[r] + e[r] * g[s] + e[s] * g[r]);
        }
    }
    let raw = Mat3::new(p[1] + p[2], -p[3], -p[4], -p[3], p[0] + p[2], -p[5], -p[4], -p[5], p[0] + p[1]);
    let e = raw.symmetric_eigenvalues();
    if !(e.min() > 0.0) || !volume.is_finite() {
        return Err("eigenvalue of mesh inertia must be positive".into());
    }
    for (a, b, c) in [(0, 1, 2), (0, 2, 1), (1, 2, 0)] {
        if e[a] + e[b] < e[c] * (1.0 - 1e-6) - 1e-9 {
            return Err("eigenvalues of mesh inertia violate A + B >= C".into());
        }
    }
    let inertia = raw / volume;
    Ok(MeshMass { volume, com, inertia })
}

/// MuJoCo's check for `exact`: no directed edge twice among the faces that are not slivers.
fn check_orientation(vertices: &[[f64; 3]], faces: &[[u32; 3]]) -> Result<(), String> {
    let mut edges = Vec::with_capacity(3 * faces.len());
    for f in faces {
        let p = f.map(|i| vertices.get(i as usize).map_or(Vec3::zeros(), |v| Vec3::from(*v)));
        if triangle(p[0], p[1], p[2]).0 > MINVAL.sqrt() {
            edges.extend([(f[0], f[1]), (f[1], f[2]), (f[2], f[0])]);
        }
    }
    edges.sort_unstable();
    match edges.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => Err(format!(
            "faces have inconsistent orientation (the faces with vertices {} and {}); inertia=\"exact\" needs a consistently oriented mesh",
            w[0].0 + 1,
            w[0].1 + 1
        )),
        None => Ok(()),
    }
}

/// A `<mesh>` asset as the inertia needs it.
struct MeshAsset {
    path: PathBuf,
    /// `vertex` (and `face`, else the hull's) written in the element instead of a file.
    inline: Option<MeshTriangles>,
    scale: Vec3,
    kind: MeshInertia,
    at: Element,
}

/// The model's `<mesh>` assets by name and the reader of their files.
pub(super) struct MeshAssets<'s> {
    meshes: HashMap<String, MeshAsset>,
    source: Option<&'s dyn MeshSource>,
}

/// A mesh geom whose mass properties wait for its body to need them.
pub(super) struct MeshGeom {
    pub mesh: String,
    pub mass: Option<f64>,
    pub density: f64,
    pub at: Element,
}

impl<'s> MeshAssets<'s> {
    /// Reads the `<mesh>` elements of the `<asset>` sections (class defaults applied).
    pub fn read(assets: &[&Element], defaults: &Defaults, c: &Compiler, base_dir: Option<&Path>, source: Option<&'s dyn MeshSource>) -> Result<Self, MjcfError> {
        let mut meshes = HashMap::new();
        for m in assets.iter().flat_map(|a| a.children.iter()).filter(|m| m.tag == "mesh") {
            let r = Resolved::new(m, "main", defaults)?;
            let inline = match r.get("vertex") {
                Some(t) => {
                    let v = super::xml::numbers_vec(m, "vertex", t)?;
                    let f = r.get("face").map(|t| super::xml::numbers_vec(m, "face", t)).transpose()?.unwrap_or_default();
                    if v.len() < 12 || v.len() % 3 != 0 || f.len() % 3 != 0 || f.iter().any(|&i| i < 0.0 || i.fract() != 0.0 || i as usize >= v.len() / 3) {
                        return Err(m.error("'vertex' needs at least 4 points (3 numbers each), 'face' vertex indices in threes"));
                    }
                    let vertices = v.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
                    let triangles = f.chunks_exact(3).map(|c| [c[0] as u32, c[1] as u32, c[2] as u32]).collect();
                    Some(MeshTriangles { vertices, triangles })
                }
                None => None,
            };
            let Some(file) = r.get("file").or(inline.as_ref().map(|_| "")) else { continue };
            let file = Path::new(file);
            let name = r.get("name").map(str::to_string).unwrap_or_else(|| file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
            let path = c.asset_path(file, base_dir);
            let scale = match r.get("scale") {
                Some(t) => Vec3::from(numbers::<3>(m, "scale", t)?),
                None => Vec3::repeat(1.0),
            };
            let kind = match r.get("inertia").unwrap_or("legacy") {
                "legacy" => MeshInertia::Legacy,
                "exact" => MeshInertia::Exact,
                "convex" => MeshInertia::Convex,
                "shell" => MeshInertia::Shell,
                o => return Err(m.error(format!("unknown mesh inertia '{o}' (legacy, exact, convex or shell)"))),
            };
            meshes.insert(name, MeshAsset { path, inline, scale, kind, at: Element { children: vec![], ..m.clone() } });
        }
        Ok(Self { meshes, source })
    }

    /// Mesh `name`'s file (`None`: written inline) and scale; `None` without such a mesh.
    pub fn file(&self, name: &str) -> Option<(Option<&Path>, Vec3)> {
        self.meshes.get(name).map(|m| (m.inline.is_none().then_some(m.path.as_path()), m.scale))
    }

    /// The inertia of a mesh geom whose frame in the body is `frame` (`None`: it weighs nothing).
    pub fn inertia(&self, g: &MeshGeom, frame: &Se3) -> Result<Option<Inertia>, MjcfError> {
        let asset = self.meshes.get(&g.mesh).ok_or_else(|| g.at.error(format!("no mesh asset named '{}' (with a file)", g.mesh)))?;
        let no_reader = || {
            g.at.error(format!(
                "the inertia of mesh '{}' needs a mesh reader: load with mjcf::load_with (as the simulator and the Python package do), or give the body an <inertial>, or the geom mass=\"0\" or density=\"0\"",
                g.mesh
            ))
        };
        let why = |e: String| asset.at.error(format!("mesh '{}' ('{}'): {e}", g.mesh, asset.path.display()));
        let mut mesh = match &asset.inline {
            Some(m) if !m.triangles.is_empty() => m.clone(),
            Some(m) => self.source.ok_or_else(no_reader)?.convex_hull(&m.vertices).map_err(why)?,
            None => self.source.ok_or_else(no_reader)?.read(&asset.path).map_err(why)?,
        };
        let s = asset.scale;
        for p in &mut mesh.vertices {
            *p = [p[0] * s.x, p[1] * s.y, p[2] * s.z];
        }
        if s.x * s.y * s.z < 0.0 {
            for t in &mut mesh.triangles {
                t.swap(1, 2);
            }
        }
        let hull = match asset.kind {
            MeshInertia::Convex => Some(self.source.ok_or_else(no_reader)?.convex_hull(&mesh.vertices).map_err(why)?),
            _ => None,
        };
        let mm = mesh_mass(&mesh.vertices, &mesh.triangles, hull.as_ref(), asset.kind).map_err(why)?;
        let mass = g.mass.unwrap_or(g.density * mm.volume);
        if mass <= 1e-14 {
            return Ok(None);
        }
        let r = frame.rotation;
        Ok(Some(Inertia::new(mass, frame.transform_point(&mm.com), r * (mm.inertia * mass) * r.transpose())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A box of sides `s` at `o`, as 12 outward triangles.
    fn cuboid(o: [f64; 3], s: [f64; 3]) -> (Vec<[f64; 3]>, Vec<[u32; 3]>) {
        let v: Vec<[f64; 3]> = (0..8)
            .map(|i| [o[0] + s[0] * f64::from(i >> 2 & 1), o[1] + s[1] * f64::from(i >> 1 & 1), o[2] + s[2] * f64::from(i & 1)])
            .collect();
        let quads = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]];
        let t = quads.iter().flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]]).collect();
        (v, t)
    }

    #[test]
    fn a_box_has_its_textbook_volume_centre_and_moments() {
        let s = [0.2, 0.4, 0.6];
        let (v, t) = cuboid([1.0, -2.0, 0.5], s);
        for kind in [MeshInertia::Exact, MeshInertia::Legacy] {
            let m = mesh_mass(&v, &t, None, kind).unwrap();
            assert!((m.volume - 0.048).abs() < 1e-15, "{}", m.volume);
            assert!((m.com - Vec3::new(1.1, -1.8, 0.8)).amax() < 1e-14);
            // I = (b² + c²) / 12 per unit mass
            let want = Vec3::new(s[1] * s[1] + s[2] * s[2], s[0] * s[0] + s[2] * s[2], s[0] * s[0] + s[1] * s[1]) / 12.0;
            assert!((m.inertia.diagonal() - want).amax() < 1e-14, "{}", m.inertia);
            assert!(m.inertia[(0, 1)].abs() < 1e-15);
        }
    }

    #[test]
    fn two_cubes_in_one_mesh_give_mujocos_exact_and_legacy_volumes() {
        // unit cubes at x = 0 and x = 3: exact 2 m³; legacy counts every tetrahedron from the
        // centroid (2, 0.5, 0.5) positive: per cube 2/3 + 1/3 + 4 · 1/6 = 5/3
        let (mut v, mut t) = cuboid([0.0; 3], [1.0; 3]);
        let (v2, t2) = cuboid([3.0, 0.0, 0.0], [1.0; 3]);
        t.extend(t2.iter().map(|f| f.map(|i| i + 8)));
        v.extend(v2);
        let exact = mesh_mass(&v, &t, None, MeshInertia::Exact).unwrap();
        assert!((exact.volume - 2.0).abs() < 1e-14);
        let legacy = mesh_mass(&v, &t, None, MeshInertia::Legacy).unwrap();
        assert!((legacy.volume - 10.0 / 3.0).abs() < 1e-14, "{}", legacy.volume);
        // MuJoCo 4.0.0 on this mesh (an OBJ in a free body, density 1000: body_mass and the
        // sorted body_inertia per rule): legacy 3333.33 kg, (5700, 5700, 466.667); exact 2000,
        // (4833.33, 4833.33, 333.333); convex 4000, (5666.67, 5666.67, 666.667); shell 12000,
        // (30333.3, 30333.3, 3333.33)
        let hull = {
            let (hv, ht) = cuboid([0.0; 3], [4.0, 1.0, 1.0]);
            MeshTriangles { vertices: hv, triangles: ht }
        };
        for (kind, mass, big, small) in [
            (MeshInertia::Legacy, 10000.0 / 3.0, 5700.0, 1400.0 / 3.0),
            (MeshInertia::Exact, 2000.0, 14500.0 / 3.0, 1000.0 / 3.0),
            (MeshInertia::Convex, 4000.0, 17000.0 / 3.0, 2000.0 / 3.0),
            (MeshInertia::Shell, 12000.0, 91000.0 / 3.0, 10000.0 / 3.0),
        ] {
            let m = mesh_mass(&v, &t, Some(&hull), kind).unwrap();
            let got_mass = 1000.0 * m.volume;
            let mut eig: Vec<f64> = (m.inertia * got_mass).symmetric_eigenvalues().iter().copied().collect();
            eig.sort_by(f64::total_cmp);
            assert!((got_mass - mass).abs() < 1e-9 * mass, "{kind:?}: mass {got_mass}");
            assert!((eig[2] - big).abs() < 1e-9 * big && (eig[1] - big).abs() < 1e-9 * big, "{kind:?}: {eig:?}");
            assert!((eig[0] - small).abs() < 1e-9 * big, "{kind:?}: {eig:?}");
            assert!((m.com - Vec3::new(2.0, 0.5, 0.5)).amax() < 1e-12);
        }
        // a flipped face: exact refuses it, legacy does not care
        t[0].swap(1, 2);
        assert!(mesh_mass(&v, &t, None, MeshInertia::Exact).unwrap_err().contains("inconsistent orientation"));
        assert!(mesh_mass(&v, &t, None, MeshInertia::Legacy).is_ok());
    }

    #[test]
    fn an_inline_mesh_with_faces_needs_no_reader() {
        // a tetrahedron with its corner at the origin and edges 1, 2, 3 · 0.5 along the axes,
        // density 500, placed at (0.1, 0.2, 0.3), on a hinge about x: mass 500 · 0.5 = 250,
        // centre (0.35, 0.7, 0.675), and about the hinge ∫(y² + z²) dm = m (b²/10 + 0.2 b/2 +
        // 0.04 + c²/10 + 0.3 c/2 + 0.09) = 295 (MuJoCo 4.0.0: 250, 295.0000000546)
        let xml = r#"<mujoco><asset><mesh name="t" vertex="0 0 0 1 0 0 0 2 0 0 0 3" face="0 2 1 0 1 3 0 3 2 1 2 3" scale="1 1 0.5"/></asset>
          <worldbody><body name="b"><joint type="hinge" axis="1 0 0"/><geom type="mesh" mesh="t" pos="0.1 0.2 0.3" density="500"/></body></worldbody></mujoco>"#;
        let (model, _) = crate::io::mjcf::parse_str(xml, "tetra.xml").unwrap();
        let i = &model.inertias[1];
        assert!((i.mass - 250.0).abs() < 1e-12 && (i.com - Vec3::new(0.35, 0.7, 0.675)).amax() < 1e-12);
        let about_x = i.inertia_com[(0, 0)] + i.mass * (i.com.y * i.com.y + i.com.z * i.com.z);
        assert!((about_x - 295.0).abs() < 1e-9 * 295.0, "{about_x}");
        // without faces the hull is needed, so a reader
        let e = crate::io::mjcf::parse_str(&xml.replace(r#" face="0 2 1 0 1 3 0 3 2 1 2 3""#, ""), "tetra.xml").unwrap_err();
        assert!(e.reason.contains("mesh reader") && e.reason.contains("<inertial>"), "{e}");
    }

    #[test]
    fn a_flat_mesh_is_refused_unless_a_shell() {
        let v = vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        let t = vec![[0, 1, 2], [0, 2, 1]];
        assert!(mesh_mass(&v, &t, None, MeshInertia::Legacy).unwrap_err().contains("too small"));
        let shell = mesh_mass(&v, &t, None, MeshInertia::Shell).unwrap();
        assert!((shell.volume - 1.0).abs() < 1e-15);
    }
}

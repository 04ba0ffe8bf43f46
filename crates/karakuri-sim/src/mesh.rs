//! Mesh files: STL (binary and ASCII), Wavefront OBJ and COLLADA (`.dae`), all read through
//! the `mesh-loader` crate (0055). Positions and triangles only: materials, normals and texture
//! coordinates are ignored, polygons are triangulated, every mesh of the file is merged into one.
//!
//! COLLADA as ROS reads it (rviz since 1.13.22, MoveIt's geometric_shapes): `<unit meter>` scales
//! the vertices and node transforms of the visual scene place them; `<up_axis>` is ignored (a
//! robot's meshes are drawn in the link frame as written, whatever axis the exporter called up).
//! Vertices that are equal bit for bit are merged (COLLADA and OBJ readers repeat a vertex per
//! face corner), keeping the first one's place, so the output is the same on every run.
//!
//! Errors are plain reasons (the caller adds the scene file and the path inside it).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Vertices and triangles read from a mesh file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshData {
    /// Vertices, in metres (COLLADA's unit applied) times the scale.
    pub vertices: Vec<[f64; 3]>,
    /// Triangles (indices into `vertices`), as oriented in the file.
    pub triangles: Vec<[u32; 3]>,
}

/// Where a relative mesh path of a scene points: `base_dir.join(file)` (absolute paths are kept).
pub fn resolve(base_dir: &Path, file: &str) -> PathBuf {
    let p = Path::new(file);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base_dir.join(p)
    }
}

/// Reads an `.stl`, `.obj` or `.dae` file (by extension, case-insensitive) and scales its
/// vertices.
pub fn load(path: &Path, scale: [f64; 3]) -> Result<MeshData, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read mesh file '{}': {e}", path.display()))?;
    let mut mesh = parse(&bytes, path).map_err(|e| format!("'{}': {e}", path.display()))?;
    for v in &mut mesh.vertices {
        for k in 0..3 {
            v[k] *= scale[k];
        }
    }
    Ok(mesh)
}

/// Parses the bytes of a mesh file whose format `path`'s extension names; the file is not read
/// (an OBJ's `mtllib` is not opened either). Every vertex is finite and every index in range.
pub fn parse(bytes: &[u8], path: &Path) -> Result<MeshData, String> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let loader = mesh_loader::Loader::default();
    let scene = match ext.as_str() {
        "stl" => loader
            .load_stl_from_slice(bytes, path)
            .map_err(|e| format!("not a readable STL file ({e})")),
        "obj" => loader
            .load_obj_from_slice_with_reader(bytes, path, |_| Err(std::io::ErrorKind::Unsupported.into()))
            .map_err(|e| format!("not a readable OBJ file ({e})")),
        "dae" => {
            check_collada_references(bytes)?;
            // mesh-loader 0.1.13 panics on some broken COLLADA files (found by
            // tests/mesh_fuzz.rs); such a panic is this file's error, not the program's end
            std::panic::catch_unwind(|| loader.load_collada_from_slice(bytes, path))
                .map_err(|_| "not a readable COLLADA file (the reader failed on it)".to_string())?
                .map_err(|e| format!("not a readable COLLADA file ({e})"))
        }
        o => Err(format!(
            "unsupported mesh format '{}' (supported: .stl, .obj, .dae)",
            if o.is_empty() {
                "no extension".to_string()
            } else {
                format!(".{o}")
            }
        )),
    }?;
    let mut out = MeshData::default();
    let mut index: HashMap<[u64; 3], u32> = HashMap::new();
    for m in &scene.meshes {
        let mut ids = Vec::with_capacity(m.vertices.len());
        for v in &m.vertices {
            let v = v.map(f64::from);
            if let Some(bad) = v.iter().find(|x| !x.is_finite()) {
                return Err(format!("non-finite vertex coordinate {bad}"));
            }
            let key = v.map(f64::to_bits);
            let next = out.vertices.len() as u32;
            let id = *index.entry(key).or_insert_with(|| {
                out.vertices.push(v);
                next
            });
            ids.push(id);
        }
        for f in &m.faces {
            let t = f.map(|i| ids.get(i as usize).copied());
            let [Some(a), Some(b), Some(c)] = t else {
                return Err(format!("a face {f:?} names a vertex past the {} of its mesh", ids.len()));
            };
            out.triangles.push([a, b, c]);
        }
    }
    if out.vertices.is_empty() {
        return Err("the mesh has no vertices".to_string());
    }
    Ok(out)
}

/// Every `#id` a COLLADA document's `source`, `url`, `target` or `material` attribute names must
/// be an element's `id`: mesh-loader 0.1.13 panics on a dangling one instead of refusing it.
fn check_collada_references(bytes: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(bytes);
    let values = |attr: &str| -> Vec<String> {
        let key = format!("{attr}=\"");
        text.match_indices(&key)
            .filter(|(i, _)| *i == 0 || text.as_bytes()[i - 1].is_ascii_whitespace())
            .filter_map(|(i, _)| text[i + key.len()..].split('"').next().map(str::to_string))
            .collect()
    };
    let ids: std::collections::HashSet<String> = values("id").into_iter().collect();
    for attr in ["source", "url", "target"] {
        for v in values(attr) {
            if let Some(id) = v.strip_prefix('#') {
                if !ids.contains(id) {
                    return Err(format!("not a readable COLLADA file ({attr}=\"{v}\" names no element)"));
                }
            }
        }
    }
    Ok(())
}

/// The mesh reader the MJCF loader uses for mesh geoms' inertia
/// (`karakuri::io::mjcf::load_with(path, &MeshFiles)`): files through [`load`], convex hulls
/// through parry.
#[derive(Clone, Copy, Debug, Default)]
pub struct MeshFiles;

impl karakuri::io::mjcf::MeshSource for MeshFiles {
    fn read(&self, path: &Path) -> Result<karakuri::io::mjcf::MeshTriangles, String> {
        let m = load(path, [1.0; 3])?;
        Ok(karakuri::io::mjcf::MeshTriangles { vertices: m.vertices, triangles: m.triangles })
    }

    fn convex_hull(&self, points: &[[f64; 3]]) -> Result<karakuri::io::mjcf::MeshTriangles, String> {
        check_hull_points(points)?;
        let pts: Vec<parry3d_f64::math::Vector> = points.iter().map(|p| parry3d_f64::math::Vector::new(p[0], p[1], p[2])).collect();
        let (v, t) = parry3d_f64::transformation::try_convex_hull(&pts).map_err(|e| format!("no convex hull ({e:?})"))?;
        Ok(karakuri::io::mjcf::MeshTriangles { vertices: v.iter().map(|p| [p.x, p.y, p.z]).collect(), triangles: t })
    }

    fn read_png_grey(&self, path: &Path) -> Result<(usize, usize, Vec<u8>), String> {
        png_grey(&std::fs::read(path).map_err(|e| e.to_string())?)
    }
}

/// A PNG image as MuJoCo's decoder gives a height field (lodepng to 8-bit grey): `(width,
/// height, pixels)` rows from the top, the first sample of each pixel after palette expansion
/// and 16-to-8-bit stripping (the grey level, or the red channel), alpha ignored.
pub fn png_grey(bytes: &[u8]) -> Result<(usize, usize, Vec<u8>), String> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().map_err(|e| format!("PNG: {e}"))?;
    let size = reader.output_buffer_size().ok_or("PNG: the image is too large")?;
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf).map_err(|e| format!("PNG: {e}"))?;
    let (w, h) = (info.width as usize, info.height as usize);
    let samples = info.color_type.samples();
    if info.bit_depth != png::BitDepth::Eight || w == 0 || h == 0 || info.line_size < w * samples || buf.len() < h * info.line_size {
        return Err(format!("PNG: unexpected {w} × {h} image of {:?} {:?}", info.color_type, info.bit_depth));
    }
    let pixels = buf.chunks(info.line_size).take(h).flat_map(|row| row[..w * samples].iter().step_by(samples).copied()).collect();
    Ok((w, h, pixels))
}

/// Checks that points span a volume (a convex hull needs at least 4 non-coplanar points).
pub fn check_hull_points(vertices: &[[f64; 3]]) -> Result<(), String> {
    use karakuri::spatial::Vec3;
    let pts: Vec<Vec3> = vertices.iter().map(|v| Vec3::new(v[0], v[1], v[2])).collect();
    let n = pts.len();
    let why = |what: &str| {
        Err(format!(
            "a convex hull needs at least 4 non-coplanar points; the {n} point{} {what}",
            if n == 1 { "" } else { "s" }
        ))
    };
    if n < 4 {
        return why("are too few");
    }
    let size = pts.iter().map(|p| (p - pts[0]).norm()).fold(0.0, f64::max);
    let tol = 1e-9 * size.max(1e-12);
    if size <= 1e-12 {
        return why("all coincide");
    }
    // the farthest point from the first, then the farthest from that line, then from that plane
    let a = pts[0];
    let b = *pts
        .iter()
        .max_by(|p, q| (*p - a).norm().total_cmp(&(*q - a).norm()))
        .unwrap();
    let ab = (b - a).normalize();
    let off_line = |p: &Vec3| (p - a - ab * ab.dot(&(p - a))).norm();
    let c = *pts.iter().max_by(|p, q| off_line(p).total_cmp(&off_line(q))).unwrap();
    if off_line(&c) <= tol {
        return why("are all on one line");
    }
    let normal = ab.cross(&(c - a)).normalize();
    let off_plane = pts.iter().map(|p| normal.dot(&(p - a)).abs()).fold(0.0, f64::max);
    if off_plane <= tol {
        return why("are all in one plane");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(rel: &str) -> PathBuf {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(rel)
    }

    /// The numbers of every `<float_array id="...-positions-array">` of a COLLADA text, read
    /// naively (enough for a file whose nodes are identity matrices and whose unit is 1 m).
    fn positions_in_text(text: &str) -> Vec<[f64; 3]> {
        let mut out = Vec::new();
        for part in text.split("<float_array").skip(1) {
            let (head, body) = part.split_once('>').unwrap();
            if !head.contains("positions-array") {
                continue;
            }
            let numbers: Vec<f64> = body
                .split('<')
                .next()
                .unwrap()
                .split_whitespace()
                .map(|x| x.parse::<f32>().unwrap().into())
                .collect();
            out.extend(numbers.chunks_exact(3).map(|c| [c[0], c[1], c[2]]));
        }
        out
    }

    fn bounds(v: &[[f64; 3]]) -> ([f64; 3], [f64; 3]) {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for p in v {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        (lo, hi)
    }

    #[test]
    fn panda_finger_collada_has_the_files_vertices_and_triangles() {
        let path = repo("tests/data/meshes/panda/finger.dae");
        let text = std::fs::read_to_string(&path).unwrap();
        let m = load(&path, [1.0; 3]).unwrap();
        // every position the file lists, once
        let mut expected = positions_in_text(&text);
        assert_eq!(expected.len(), 318, "the file's two accessors list 133 + 185 positions");
        expected.sort_by(|a, b| a.partial_cmp(b).unwrap());
        expected.dedup();
        let mut got = m.vertices.clone();
        got.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(got, expected);
        // the triangle counts its two <triangles> elements state
        let stated: usize = text
            .split("<triangles ")
            .skip(1)
            .map(|p| p.split("count=\"").nth(1).unwrap().split('"').next().unwrap().parse::<usize>().unwrap())
            .sum();
        assert_eq!(m.triangles.len(), stated);
        assert!(m.triangles.iter().flatten().all(|&i| (i as usize) < m.vertices.len()));
        // the same finger's collision STL (a coarser mesh of the same part) spans the same box
        let hull = load(&repo("tests/data/meshes/panda/finger_collision.stl"), [1.0; 3]).unwrap();
        let ((lo, hi), (clo, chi)) = (bounds(&m.vertices), bounds(&hull.vertices));
        for k in 0..3 {
            assert!((lo[k] - clo[k]).abs() < 2e-3 && (hi[k] - chi[k]).abs() < 2e-3, "{lo:?} {hi:?} vs {clo:?} {chi:?}");
        }
    }

    /// A one-triangle COLLADA document with the given `<asset>` body and node matrix.
    fn dae(asset: &str, matrix: &str) -> String {
        format!(
            r##"<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
 <asset>{asset}</asset>
 <library_geometries><geometry id="g"><mesh>
  <source id="p"><float_array id="pa" count="9">0 0 0 1 0 0 0 2 0</float_array>
   <technique_common><accessor source="#pa" count="3" stride="3">
    <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
   </accessor></technique_common></source>
  <vertices id="v"><input semantic="POSITION" source="#p"/></vertices>
  <triangles count="1"><input semantic="VERTEX" source="#v" offset="0"/><p>0 1 2</p></triangles>
 </mesh></geometry></library_geometries>
 <library_visual_scenes><visual_scene id="s"><node id="n">
  <matrix>{matrix}</matrix><instance_geometry url="#g"/>
 </node></visual_scene></library_visual_scenes>
 <scene><instance_visual_scene url="#s"/></scene>
</COLLADA>"##
        )
    }

    #[test]
    fn collada_units_and_nodes_apply_and_the_up_axis_does_not() {
        let id = "1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1";
        let at = Path::new("t.dae");
        // millimetres: every coordinate times 0.001
        let mm = parse(dae(r#"<unit meter="0.001" name="millimeter"/><up_axis>Z_UP</up_axis>"#, id).as_bytes(), at).unwrap();
        for (g, e) in mm.vertices.iter().zip([[0.0, 0.0, 0.0], [1e-3, 0.0, 0.0], [0.0, 2e-3, 0.0]]) {
            for k in 0..3 {
                assert!((g[k] - e[k]).abs() < 1e-9, "{:?}", mm.vertices);
            }
        }
        // Y_UP is not turned into Z_UP (ROS's rviz and MoveIt ignore <up_axis>)
        let y_up = parse(dae("<up_axis>Y_UP</up_axis>", id).as_bytes(), at).unwrap();
        assert_eq!(y_up.vertices, vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]);
        assert_eq!(y_up.triangles, vec![[0, 1, 2]]);
        // a node's matrix (row-major: a quarter turn about z, then 3 m along x) places the vertices
        let turned = parse(dae("", "0 -1 0 3 1 0 0 0 0 0 1 0 0 0 0 1").as_bytes(), at).unwrap();
        assert_eq!(turned.vertices, vec![[3.0, 0.0, 0.0], [3.0, 1.0, 0.0], [1.0, 0.0, 0.0]]);
    }

    #[test]
    fn unreadable_and_unknown_files_are_named_errors() {
        let e = parse(b"<COLLADA><broken", Path::new("x.dae")).unwrap_err();
        assert!(e.contains("not a readable COLLADA file"), "{e}");
        let e = parse(b"", Path::new("x.ply")).unwrap_err();
        assert!(e.contains("unsupported mesh format '.ply'") && e.contains(".dae"), "{e}");
        let e = parse(b"v 0 0 0\nf 1 2 3\n", Path::new("x.obj")).unwrap_err();
        assert!(e.contains("OBJ") || e.contains("past"), "{e}");
    }
}

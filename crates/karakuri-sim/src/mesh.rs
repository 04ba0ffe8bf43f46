//! Mesh files for collision shapes: STL (binary and ASCII, through `stl_io`) and Wavefront OBJ
//! (through `tobj`, positions and faces only: materials, normals and texture coordinates are
//! ignored, polygons are triangulated, every object of the file is merged into one mesh).
//!
//! Errors are plain reasons (the caller adds the scene file and the path inside it).

use std::path::{Path, PathBuf};

/// Vertices and triangles read from a mesh file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshData {
    /// Vertices, in the file's units times the scale.
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

/// Reads an `.stl` or `.obj` file (by extension, case-insensitive) and scales its vertices.
pub fn load(path: &Path, scale: [f64; 3]) -> Result<MeshData, String> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read mesh file '{}': {e}", path.display()))?;
    let mut mesh = match ext.as_str() {
        "stl" => read_stl(bytes),
        "obj" => read_obj(&bytes),
        o => Err(format!(
            "unsupported mesh format '{}' (supported: .stl, .obj)",
            if o.is_empty() {
                "no extension".to_string()
            } else {
                format!(".{o}")
            }
        )),
    }
    .map_err(|e| format!("'{}': {e}", path.display()))?;
    if mesh.vertices.is_empty() {
        return Err(format!("'{}': the mesh has no vertices", path.display()));
    }
    if let Some(bad) = mesh.vertices.iter().find(|v| v.iter().any(|x| !x.is_finite())) {
        return Err(format!("'{}': non-finite vertex {bad:?}", path.display()));
    }
    for v in &mut mesh.vertices {
        for k in 0..3 {
            v[k] *= scale[k];
        }
    }
    Ok(mesh)
}

fn read_stl(mut bytes: Vec<u8>) -> Result<MeshData, String> {
    // A binary STL's 80-byte header is free text, and many exporters start it with "solid",
    // which stl_io takes for ASCII. A file whose size is exactly 84 + 50 n (n read at byte
    // 80) is binary: blank the header's first bytes so that stl_io reads it as such.
    if bytes.len() >= 84 {
        let n = u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]) as usize;
        if bytes.len() == 84 + 50 * n && bytes.starts_with(b"solid") {
            bytes[..5].copy_from_slice(b"     ");
        }
    }
    let mut cursor = std::io::Cursor::new(bytes);
    let m = stl_io::read_stl(&mut cursor).map_err(|e| format!("not a readable STL file ({e})"))?;
    Ok(MeshData {
        vertices: m
            .vertices
            .iter()
            .map(|v| [f64::from(v.0[0]), f64::from(v.0[1]), f64::from(v.0[2])])
            .collect(),
        triangles: m
            .faces
            .iter()
            .map(|f| [f.vertices[0] as u32, f.vertices[1] as u32, f.vertices[2] as u32])
            .collect(),
    })
}

fn read_obj(bytes: &[u8]) -> Result<MeshData, String> {
    let opts = tobj::LoadOptions {
        triangulate: true,
        ignore_points: true,
        ignore_lines: true,
        ..Default::default()
    };
    let mut reader = std::io::BufReader::new(bytes);
    // materials are not needed: every `mtllib` resolves to nothing
    let (models, _) = tobj::load_obj_buf(&mut reader, &opts, |_| Ok(Default::default()))
        .map_err(|e| format!("not a readable OBJ file ({e})"))?;
    let mut out = MeshData::default();
    for m in &models {
        let base = out.vertices.len() as u32;
        let p = &m.mesh.positions;
        out.vertices.extend(
            p.chunks_exact(3)
                .map(|c| [c[0], c[1], c[2]]),
        );
        out.triangles.extend(
            m.mesh
                .indices
                .chunks_exact(3)
                .map(|t| [base + t[0], base + t[1], base + t[2]]),
        );
    }
    Ok(out)
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

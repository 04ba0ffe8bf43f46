//! `<hfield>` assets: a height field's size and elevation grid as MuJoCo 4.0.0's compiler makes
//! them (`mjModel.hfield_size`, `hfield_nrow`, `hfield_ncol`, `hfield_data`).
//!
//! The elevations come from, in this order:
//! * `file` ending in `.png` (or `content_type="image/png"`): an image read through the
//!   [`MeshSource`] (karakuri-sim's decoder), 8-bit grey as MuJoCo's PNG decoder gives it: the
//!   grey level of a grey image, the **red** channel of a colour or palette image (not a mean:
//!   checked against MuJoCo 4.0.0), the high byte of 16-bit samples, alpha ignored. The image's
//!   top row is the grid's last row (the +y edge);
//! * another `file`: MuJoCo's binary format, `int32 nrow, int32 ncol` then `nrow·ncol` float32
//!   (little-endian), rows as stored (row 0 at −y);
//! * `elevation` with `nrow`, `ncol`: numbers written top row first, as an image (the first
//!   written row is the +y edge);
//! * only `nrow`, `ncol` (data left to a program, as dm_control's quadruped): all zeros, flat.
//!
//! Then, as MuJoCo, the data are shifted and scaled to [0, 1] in single precision: `(e −
//! min) / (max − min)` (all zeros when `max − min ≤ 1e-15`). The surface at grid point (row
//! `r`, column `c`) is `(−sx + 2 sx c / (ncol − 1), −sy + 2 sy r / (nrow − 1), data · sz)` in
//! the geom's frame, for `size = (sx, sy, sz, base)`; the solid reaches down to `−base`.
//! Non-finite elevations, fewer than 2 rows or columns and non-positive sizes are refused
//! (MuJoCo accepts a NaN with a warning).

use std::path::Path;
use std::sync::Arc;

use super::defaults::Compiler;
use super::mesh_inertia::MeshSource;
use super::xml::{numbers, numbers_vec, Element};
use super::MjcfError;

/// A height field's elevation grid, as MuJoCo's `hfield_data` (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct HeightGrid {
    /// Rows, along y (row 0 at −y).
    pub nrow: usize,
    /// Columns, along x (column 0 at −x).
    pub ncol: usize,
    /// `nrow · ncol` elevations in [0, 1], row after row, single precision as MuJoCo keeps them.
    pub data: Vec<f32>,
}

impl HeightGrid {
    /// The normalised elevation at row `r`, column `c`.
    pub fn at(&self, r: usize, c: usize) -> f32 {
        self.data[r * self.ncol + c]
    }
}

/// A `<hfield>` asset: MuJoCo's `size` and its grid (`None`: flat, no data or all equal).
#[derive(Clone, Debug)]
pub(super) struct HfieldAsset {
    pub size: [f64; 4],
    pub grid: Option<Arc<HeightGrid>>,
}

/// Reads a `<hfield>` element (`source` decodes PNG files; `None`: a PNG file is an error).
pub(super) fn read(h: &Element, c: &Compiler, base_dir: Option<&Path>, source: Option<&dyn MeshSource>) -> Result<HfieldAsset, MjcfError> {
    let size = numbers::<4>(h, "size", h.attr("size").unwrap_or(""))?;
    if size.iter().any(|s| !(*s > 0.0) || !s.is_finite()) {
        return Err(h.error(format!("hfield size {size:?}: all four (x, y, elevation, base) must be positive")));
    }
    let dim = |attr: &str| -> Result<usize, MjcfError> {
        let v = h.attr(attr).map(|t| numbers::<1>(h, attr, t)).transpose()?.map_or(0.0, |v| v[0]);
        if v.fract() != 0.0 || !(0.0..=1e8).contains(&v) {
            return Err(h.error(format!("'{attr}' must be a non-negative integer, not {v}")));
        }
        Ok(v as usize)
    };
    let (nrow, ncol) = (dim("nrow")?, dim("ncol")?);
    let grid = match h.attr("file") {
        Some(file) => from_file(h, &c.asset_path(Path::new(file), base_dir), source)?,
        None => match h.attr("elevation") {
            Some(t) => {
                let e = numbers_vec(h, "elevation", t)?;
                if nrow.checked_mul(ncol) != Some(e.len()) {
                    return Err(h.error(format!("{} elevation numbers for nrow {nrow} × ncol {ncol}", e.len())));
                }
                // written as an image, top row first: the first written row is the +y edge
                let rows: Vec<f32> = e.chunks(ncol.max(1)).rev().flatten().map(|&x| x as f32).collect();
                HeightGrid { nrow, ncol, data: rows }
            }
            None if nrow > 0 || ncol > 0 => HeightGrid { nrow, ncol, data: vec![] },
            None => return Ok(HfieldAsset { size, grid: None }),
        },
    };
    if grid.nrow < 2 || grid.ncol < 2 {
        return Err(h.error(format!("hfield of {} × {}: at least 2 rows and 2 columns", grid.nrow, grid.ncol)));
    }
    if grid.data.is_empty() {
        return Ok(HfieldAsset { size, grid: None });
    }
    let from = h.attr("file").map_or("'elevation'".to_string(), |f| format!("file '{f}'"));
    Ok(HfieldAsset { size, grid: normalise(h, &from, grid)? })
}

/// The grid of a PNG (through `source`) or MuJoCo's binary file.
fn from_file(h: &Element, path: &Path, source: Option<&dyn MeshSource>) -> Result<HeightGrid, MjcfError> {
    let why = |e: String| h.error(format!("hfield file '{}': {e}", path.display()));
    let png = match h.attr("content_type") {
        Some(t) => t == "image/png",
        None => path.extension().is_some_and(|e| e.eq_ignore_ascii_case("png")),
    };
    if png {
        let Some(source) = source else {
            return Err(why("a PNG height field needs an image reader: load with mjcf::load_world_with (as the simulator does)".into()));
        };
        let (w, ht, pixels) = source.read_png_grey(path).map_err(why)?;
        if pixels.len() != w * ht {
            return Err(why(format!("the decoder gave {} pixels for {w} × {ht}", pixels.len())));
        }
        // the image's top row is the grid's last (+y) row
        let data = pixels.chunks(w.max(1)).rev().flatten().map(|&p| f32::from(p)).collect();
        return Ok(HeightGrid { nrow: ht, ncol: w, data });
    }
    let bytes = std::fs::read(path).map_err(|e| why(e.to_string()))?;
    let word = |k: usize| bytes.get(4 * k..4 * k + 4).map(|b| [b[0], b[1], b[2], b[3]]);
    let (Some(r), Some(c)) = (word(0), word(1)) else { return Err(why("shorter than its 8-byte header (int32 nrow, ncol)".into())) };
    let (nrow, ncol) = (i32::from_le_bytes(r), i32::from_le_bytes(c));
    let n = usize::try_from(nrow).ok().zip(usize::try_from(ncol).ok()).and_then(|(r, c)| r.checked_mul(c));
    if nrow < 1 || ncol < 1 || n.and_then(|n| n.checked_mul(4)).and_then(|b| b.checked_add(8)) != Some(bytes.len()) {
        return Err(why(format!("{} bytes for nrow {nrow} × ncol {ncol} (8 + 4 · nrow · ncol expected)", bytes.len())));
    }
    let data = (0..n.unwrap_or(0)).map(|k| f32::from_le_bytes(word(k + 2).unwrap_or_default())).collect();
    Ok(HeightGrid { nrow: nrow as usize, ncol: ncol as usize, data })
}

/// MuJoCo's `(e − min) / (max − min)` in single precision (no division when `max − min ≤ 1e-15`);
/// `None` when all are equal (flat).
fn normalise(h: &Element, from: &str, mut grid: HeightGrid) -> Result<Option<Arc<HeightGrid>>, MjcfError> {
    if let Some(k) = grid.data.iter().position(|x| !x.is_finite()) {
        return Err(h.error(format!("hfield {from}: elevation {} (row {}, column {}) is not a finite number", grid.data[k], k / grid.ncol, k % grid.ncol)));
    }
    let lo = grid.data.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = grid.data.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let range = hi - lo;
    if !range.is_finite() {
        return Err(h.error(format!("hfield {from}: elevations from {lo:e} to {hi:e}: the range is not a finite number")));
    }
    let divide = f64::from(range) > 1e-15;
    for x in &mut grid.data {
        *x -= lo;
        if divide {
            *x /= range;
        }
    }
    Ok(grid.data.iter().any(|x| *x != 0.0).then(|| Arc::new(grid)))
}

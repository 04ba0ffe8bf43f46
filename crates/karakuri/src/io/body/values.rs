//! Reading values from YAML nodes: numbers, vectors, rotations (axis-angle, several composed),
//! inertia matrices, limits; every error names file, line and key. The file's context
//! ([`Ctx`]): its name, directory, angle unit and the warnings.

use std::path::PathBuf;

use super::types::{BodyError, Rigid};
use super::yaml::Node;
use crate::spatial::rotation_about;
use crate::spatial::{Mat3, Se3, Vec3};

/// The largest magnitude of a number (lengths, masses, inertias, angles), as the URDF loader's.
const MAX_QUANTITY: f64 = 1e15;

/// One file's reading context.
pub(super) struct Ctx {
    /// The file as named in errors.
    pub file: String,
    /// Its directory (resources and sub-bodies are relative to it).
    pub dir: PathBuf,
    /// Angles in degrees (`angleUnit: degree`, the default).
    pub degree: bool,
    /// The sub-body files being read, outermost first (a file including itself is an error).
    pub stack: Vec<PathBuf>,
}

/// The result type of the loader.
pub(super) type R<T> = Result<T, BodyError>;

impl Ctx {
    /// An error at `node`'s line about `key`.
    pub fn err(&self, node: &Node, key: &str, reason: impl Into<String>) -> BodyError {
        BodyError::new(&self.file, node.line, key, reason)
    }

    /// `file:line` of a node.
    pub fn at(&self, node: &Node) -> String {
        format!("{}:{}", self.file, node.line)
    }

    /// An angle as written, in radians.
    pub fn angle(&self, x: f64) -> f64 {
        if self.degree {
            x.to_radians()
        } else {
            x
        }
    }

    /// A finite number within ±[`MAX_QUANTITY`].
    pub fn num(&self, node: &Node, key: &str) -> R<f64> {
        match node.number() {
            Some(x) if x.is_finite() && x.abs() > MAX_QUANTITY => {
                Err(self.err(node, key, format!("{x:e} is out of range: values must be within ±{MAX_QUANTITY:e} (SI units, degrees)")))
            }
            Some(x) if x.is_finite() => Ok(x),
            _ => Err(self.err(node, key, format!("expected a finite number, found {}", show(node)))),
        }
    }

    /// A list of `n` finite numbers.
    pub fn nums(&self, node: &Node, key: &str, n: usize) -> R<Vec<f64>> {
        let Some(items) = node.seq() else {
            return Err(self.err(node, key, format!("expected a list of {n} numbers, found {}", show(node))));
        };
        if items.len() != n {
            return Err(self.err(node, key, format!("expected {n} numbers, found {}", items.len())));
        }
        items.iter().map(|x| self.num(x, key)).collect()
    }

    /// A 3-vector.
    pub fn vec3(&self, node: &Node, key: &str) -> R<Vec3> {
        let v = self.nums(node, key, 3)?;
        Ok(Vec3::new(v[0], v[1], v[2]))
    }

    /// A rotation: one `[x, y, z, angle]` or a list of them composed left to right.
    pub fn rotation(&self, node: &Node, key: &str) -> R<Mat3> {
        let items = node.seq().ok_or_else(|| self.err(node, key, "expected [x, y, z, angle] or a list of them"))?;
        if items.first().is_some_and(|n| n.seq().is_some()) {
            let mut r = Mat3::identity();
            for item in items {
                r *= self.axis_angle(item, key)?;
            }
            return Ok(r);
        }
        self.axis_angle(node, key)
    }

    fn axis_angle(&self, node: &Node, key: &str) -> R<Mat3> {
        let v = self.nums(node, key, 4)?;
        let axis = Vec3::new(v[0], v[1], v[2]);
        let n = axis.norm();
        if n < 1e-6 {
            return Err(self.err(node, key, "the rotation axis is the zero vector"));
        }
        Ok(rotation_about(&(axis / n), self.angle(v[3])))
    }

    /// A node's `translation` and `rotation` (identity where absent).
    pub fn transform(&self, map: &Node) -> R<Se3> {
        let p = match map.get("translation") {
            Some(n) => self.vec3(n, "translation")?,
            None => Vec3::zeros(),
        };
        let r = match map.get("rotation") {
            Some(n) => self.rotation(n, "rotation")?,
            None => Mat3::identity(),
        };
        Ok(Se3::new(r, p))
    }

    /// An inertia matrix: 9 numbers (row-major) or 6 (xx, xy, xz, yy, yz, zz); symmetric.
    pub fn inertia(&self, node: &Node, key: &str) -> R<Mat3> {
        let n = node.seq().map_or(0, <[Node]>::len);
        let v = self.nums(node, key, if n == 6 { 6 } else { 9 })?;
        let m = if n == 6 {
            Mat3::new(v[0], v[1], v[2], v[1], v[3], v[4], v[2], v[4], v[5])
        } else {
            Mat3::from_row_slice(&v)
        };
        let scale = m.amax().max(1e-300);
        if (m - m.transpose()).amax() > 1e-9 * scale {
            return Err(self.err(node, key, "the inertia matrix is not symmetric"));
        }
        let eig = m.symmetric_eigenvalues();
        if eig.iter().any(|&e| e < -1e-9 * scale) {
            return Err(self.err(node, key, format!("the inertia matrix is not positive semi-definite (eigenvalues {:.3e}, {:.3e}, {:.3e})", eig[0], eig[1], eig[2])));
        }
        Ok(m)
    }

    /// A limit value: a number, or `unlimited` / `inf` (then infinite with the sign of `upper`).
    pub fn limit(&self, node: &Node, key: &str, upper: bool) -> R<f64> {
        let inf = if upper { f64::INFINITY } else { f64::NEG_INFINITY };
        match node.scalar().map(str::trim) {
            Some("unlimited" | "infinity" | "inf" | ".inf") => Ok(inf),
            Some("-unlimited" | "-infinity" | "-inf" | "-.inf") => Ok(inf),
            _ => self.num(node, key),
        }
    }

    /// A string scalar.
    pub fn string(&self, node: &Node, key: &str) -> R<String> {
        node.scalar().map(str::to_string).ok_or_else(|| self.err(node, key, format!("expected a string, found {}", show(node))))
    }

    /// An integer.
    pub fn int(&self, node: &Node, key: &str) -> R<i32> {
        node.scalar().and_then(|s| s.trim().parse::<i32>().ok()).ok_or_else(|| self.err(node, key, format!("expected an integer, found {}", show(node))))
    }
}

/// A node in a few words for an error.
pub(super) fn show(node: &Node) -> String {
    match (node.scalar(), node.seq(), node.map()) {
        (Some(s), _, _) => format!("'{}'", s.chars().take(40).collect::<String>()),
        (_, Some(s), _) => format!("a list of {}", s.len()),
        _ => "a mapping".into(),
    }
}

/// `mass`, `centerOfMass`, `inertia` of a node (zero where absent); a negative mass refused.
pub(super) fn rigid_of(ctx: &Ctx, node: &Node, key: &str) -> R<Rigid> {
    let m = match node.get("mass") {
        Some(n) => {
            let m = ctx.num(n, &format!("{key}.mass"))?;
            if m < 0.0 {
                return Err(ctx.err(n, &format!("{key}.mass"), format!("negative mass {m}")));
            }
            m
        }
        None => 0.0,
    };
    let c = match node.get("centerOfMass") {
        Some(n) => ctx.vec3(n, &format!("{key}.centerOfMass"))?,
        None => Vec3::zeros(),
    };
    let i = match node.get("inertia") {
        Some(n) => ctx.inertia(n, &format!("{key}.inertia"))?,
        None => Mat3::zeros(),
    };
    Ok(Rigid { m, c, i })
}

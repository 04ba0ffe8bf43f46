//! Frames as MJCF writes them: `pos` and one of `quat`, `axisangle`, `euler` (in
//! `compiler/@eulerseq`), `xyaxes`, `zaxis`, with MuJoCo's arithmetic (user_objects.cc
//! `ResolveOrientation`, user_util.cc `mjuu_z2quat`, `mjuu_frame2quat`), angles in
//! `compiler/@angle` units.

use nalgebra::{Quaternion, UnitQuaternion};

use super::defaults::Compiler;
use super::xml::{numbers, Element};
use super::MjcfError;
use crate::spatial::{Mat3, Se3, Vec3};

/// Below this a vector is too short to give a direction (MuJoCo's `mjEPS`).
const EPS: f64 = 1e-14;

/// The rotation of the unit quaternion `(w, x, y, z)` (normalised first).
pub(super) fn quat_wxyz(q: [f64; 4]) -> Mat3 {
    UnitQuaternion::from_quaternion(Quaternion::new(q[0], q[1], q[2], q[3])).to_rotation_matrix().into_inner()
}

fn mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

/// The minimal rotation from +z to `v` (`mjuu_z2quat`), as a quaternion `(w, x, y, z)`.
pub(super) fn z_to(v: Vec3) -> [f64; 4] {
    let v = v / v.norm();
    let mut a = Vec3::z().cross(&v);
    let s = a.norm();
    if s < 1e-10 {
        a = Vec3::x();
    } else {
        a /= s;
    }
    let ang = s.atan2(v.z);
    let (sn, c) = (ang / 2.0).sin_cos();
    [c, a.x * sn, a.y * sn, a.z * sn]
}

/// The rotation an element's orientation attributes give (identity when none is written);
/// `get` reads an attribute (with defaults where the element has them).
pub(super) fn rotation<'a>(e: &Element, get: impl Fn(&str) -> Option<&'a str>, c: &Compiler) -> Result<Mat3, MjcfError> {
    let written: Vec<&str> =
        ["quat", "axisangle", "euler", "xyaxes", "zaxis"].into_iter().filter(|k| get(k).is_some()).collect();
    if written.len() > 1 {
        return Err(e.error(format!("several orientations given ({}): write one", written.join(", "))));
    }
    let unit = if c.degree { std::f64::consts::PI / 180.0 } else { 1.0 };
    let Some(&kind) = written.first() else { return Ok(Mat3::identity()) };
    let text = get(kind).unwrap_or_default();
    let too_small = |what: &str| e.error(format!("{kind}: {what} too small"));
    let q = match kind {
        "quat" => {
            let q = numbers::<4>(e, kind, text)?;
            if q.iter().map(|x| x * x).sum::<f64>().sqrt() < EPS {
                return Err(too_small("quaternion"));
            }
            q
        }
        "axisangle" => {
            let [x, y, z, a] = numbers::<4>(e, kind, text)?;
            let axis = Vec3::new(x, y, z);
            if axis.norm() < EPS {
                return Err(too_small("axis"));
            }
            let axis = axis / axis.norm();
            let (s, cs) = (a * unit / 2.0).sin_cos();
            [cs, s * axis.x, s * axis.y, s * axis.z]
        }
        "euler" => {
            let angles = numbers::<3>(e, kind, text)?;
            let mut q = [1.0, 0.0, 0.0, 0.0];
            for (i, &axis) in c.eulerseq.iter().enumerate() {
                let (s, cs) = (angles[i] * unit / 2.0).sin_cos();
                let mut r = [cs, 0.0, 0.0, 0.0];
                r[1 + (axis.to_ascii_lowercase() - b'x') as usize] = s;
                q = if axis.is_ascii_lowercase() { mul(q, r) } else { mul(r, q) };
            }
            q
        }
        "xyaxes" => {
            let v = numbers::<6>(e, kind, text)?;
            let x = Vec3::new(v[0], v[1], v[2]);
            if x.norm() < EPS {
                return Err(too_small("x axis"));
            }
            let x = x / x.norm();
            let y = Vec3::new(v[3], v[4], v[5]);
            let y = y - x * x.dot(&y);
            if y.norm() < EPS {
                return Err(too_small("y axis (orthogonal to x)"));
            }
            let y = y / y.norm();
            let z = x.cross(&y);
            let z = z / z.norm();
            let r = Mat3::from_columns(&[x, y, z]);
            let u = UnitQuaternion::from_matrix(&r);
            [u.w, u.i, u.j, u.k]
        }
        _ => {
            let v = numbers::<3>(e, kind, text)?;
            let z = Vec3::new(v[0], v[1], v[2]);
            if z.norm() < EPS {
                return Err(too_small("z axis"));
            }
            z_to(z)
        }
    };
    Ok(quat_wxyz(q))
}

/// A `fromto` attribute's frame (at the midpoint, z from `to` towards `from`, as MuJoCo's
/// `mjuu_z2quat` of `from - to`) and half length.
pub(super) fn fromto(e: &Element, text: &str) -> Result<(Se3, f64), MjcfError> {
    let f = numbers::<6>(e, "fromto", text)?;
    let (a, b) = (Vec3::new(f[0], f[1], f[2]), Vec3::new(f[3], f[4], f[5]));
    let half = (a - b).norm() / 2.0;
    if half < EPS {
        return Err(e.error("fromto points too close"));
    }
    Ok((Se3::new(quat_wxyz(z_to(a - b)), (a + b) / 2.0), half))
}

/// `pos` and the orientation: the element's frame in its parent's.
pub(super) fn frame<'a>(e: &Element, get: impl Fn(&str) -> Option<&'a str> + Copy, c: &Compiler) -> Result<Se3, MjcfError> {
    let pos = match get("pos") {
        Some(t) => Vec3::from(numbers::<3>(e, "pos", t)?),
        None => Vec3::zeros(),
    };
    Ok(Se3::new(rotation(e, get, c)?, pos))
}

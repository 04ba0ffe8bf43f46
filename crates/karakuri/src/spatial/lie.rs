//! Exponential and logarithm maps of SO(3) and SE(3), and quaternion helpers.

use super::{Mat3, Motion, Se3, Vec3};
use nalgebra::{Quaternion, Rotation3, UnitQuaternion};

/// The skew-symmetric matrix `[v]ₓ` with `[v]ₓ w = v × w`.
#[inline]
pub fn skew(v: &Vec3) -> Mat3 {
    Mat3::new(0.0, -v.z, v.y, v.z, 0.0, -v.x, -v.y, v.x, 0.0)
}

/// Rotation by `angle` about the unit `axis`: `c 1 + s [a]ₓ + (1 − c) a aᵀ`, written out
/// (no matrix product).
#[inline]
pub fn rotation_about(axis: &Vec3, angle: f64) -> Mat3 {
    let (s, c) = super::sin_cos(angle);
    rotation_about_sin_cos(axis, s, c)
}

/// [`rotation_about`] from the sine and cosine of the angle.
#[inline]
pub fn rotation_about_sin_cos(axis: &Vec3, s: f64, c: f64) -> Mat3 {
    let (x, y, z) = (axis.x, axis.y, axis.z);
    let t = 1.0 - c;
    let (tx, ty, tz) = (t * x, t * y, t * z);
    let (txy, txz, tyz) = (tx * y, tx * z, ty * z);
    let (sx, sy, sz) = (s * x, s * y, s * z);
    Mat3::new(
        c + tx * x, txy - sz, txz + sy,
        txy + sz, c + ty * y, tyz - sx,
        txz - sy, tyz + sx, c + tz * z,
    )
}

/// SO(3) exponential: the rotation by the rotation vector `w` (Rodrigues).
pub fn exp3(w: &Vec3) -> Mat3 {
    let t2 = w.norm_squared();
    let k = skew(w);
    let (a, b) = if t2 < 1e-8 {
        (1.0 - t2 / 6.0, 0.5 - t2 / 24.0)
    } else {
        let t = t2.sqrt();
        (t.sin() / t, (1.0 - t.cos()) / t2)
    };
    Mat3::identity() + a * k + b * k * k
}

/// SO(3) logarithm: the rotation vector of `r` (angle in [0, π]).
pub fn log3(r: &Mat3) -> Vec3 {
    UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(*r)).scaled_axis()
}

/// The left Jacobian of SO(3), `V(w)`, with `exp6([v; w]).translation = V(w) v` and
/// `exp(w + δ) ≈ exp(V(w) δ) exp(w)`; the right Jacobian is `V(-w)`.
pub fn left_jacobian3(w: &Vec3) -> Mat3 {
    let t2 = w.norm_squared();
    let k = skew(w);
    let (b, c) = if t2 < 1e-8 {
        (0.5 - t2 / 24.0, 1.0 / 6.0 - t2 / 120.0)
    } else {
        let t = t2.sqrt();
        ((1.0 - t.cos()) / t2, (t - t.sin()) / (t2 * t))
    };
    Mat3::identity() + b * k + c * k * k
}

/// SE(3) exponential of a twist `[v; w]` held for unit time, in the moving (local) frame.
pub fn exp6(m: &Motion) -> Se3 {
    Se3::new(exp3(&m.angular), left_jacobian3(&m.angular) * m.linear)
}

/// SE(3) logarithm: the twist whose exponential is `x`.
pub fn log6(x: &Se3) -> Motion {
    let w = log3(&x.rotation);
    let t2 = w.norm_squared();
    let k = skew(&w);
    let c = if t2 < 1e-8 {
        1.0 / 12.0 + t2 / 720.0
    } else {
        let t = t2.sqrt();
        (1.0 - t * t.sin() / (2.0 * (1.0 - t.cos()))) / t2
    };
    let v_inv = Mat3::identity() - 0.5 * k + c * k * k;
    Motion::new(v_inv * x.translation, w)
}

/// Rotation matrix of the quaternion `[x, y, z, w]` (normalised first).
pub fn quat_from_xyzw(q: &[f64]) -> Mat3 {
    UnitQuaternion::from_quaternion(Quaternion::new(q[3], q[0], q[1], q[2]))
        .to_rotation_matrix()
        .into_inner()
}

/// The quaternion `[x, y, z, w]` of a rotation matrix, with `w ≥ 0`.
pub fn quat_to_xyzw(r: &Mat3) -> [f64; 4] {
    let q = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(*r));
    let c = q.quaternion().coords; // (x, y, z, w)
    let s = if c[3] < 0.0 { -1.0 } else { 1.0 };
    [s * c[0], s * c[1], s * c[2], s * c[3]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_log_roundtrip() {
        let m = Motion::new(Vec3::new(0.3, -1.2, 0.5), Vec3::new(0.7, 0.2, -1.1));
        let x = exp6(&m);
        let back = log6(&x);
        assert!((back - m).amax() < 1e-12);
        let small = Motion::new(Vec3::new(1e-9, 2e-9, 0.0), Vec3::new(1e-10, 0.0, 3e-10));
        assert!((log6(&exp6(&small)) - small).amax() < 1e-20);
        let r = exp3(&Vec3::new(0.1, 2.0, -0.4));
        assert!((exp3(&log3(&r)) - r).amax() < 1e-12);
        assert!((quat_from_xyzw(&quat_to_xyzw(&r)) - r).amax() < 1e-12);
    }
}

#[cfg(test)]
mod rotation_tests {
    use super::*;

    #[test]
    fn rotation_about_is_the_exponential() {
        let a = Vec3::new(0.3, -0.5, 0.81).normalize();
        for angle in [-7.0, -1.0, 0.0, 0.4, 3.1, 12.0] {
            assert!((rotation_about(&a, angle) - exp3(&(a * angle))).amax() < 1e-14);
        }
    }
}

//! Joint kinds and the one place they are dispatched (Featherstone's `jcalc`): joint transform,
//! motion subspace, and the configuration-space operations of each kind.

use crate::spatial::{exp3, exp6, log3, log6, quat_from_xyzw, quat_to_xyzw, sin_cos, Mat3, Motion, Se3, Vec3};

/// A joint axis: the three aligned axes are fast paths; any other unit axis is `Unaligned`
/// (as Pinocchio, `-x` is unaligned).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Axis {
    /// +x.
    X,
    /// +y.
    Y,
    /// +z.
    Z,
    /// Any other unit vector.
    Unaligned(Vec3),
}

impl Axis {
    /// Classifies a unit vector, snapping exact +x, +y, +z to the aligned variants.
    pub fn from_unit(v: Vec3) -> Axis {
        if v == Vec3::x() {
            Axis::X
        } else if v == Vec3::y() {
            Axis::Y
        } else if v == Vec3::z() {
            Axis::Z
        } else {
            Axis::Unaligned(v)
        }
    }
    /// `(c, σ)` when the axis is σ·e_c (c = 0, 1, 2 for x, y, z; σ = ±1), e.g. Pinocchio's
    /// "unaligned" −y axis of icub and panda: a rotation by q about −e_c is one by −q about e_c,
    /// so the closed forms of the aligned axes serve it too.
    #[inline]
    pub fn signed_basis(&self) -> Option<(usize, f64)> {
        match self {
            Axis::X => Some((0, 1.0)),
            Axis::Y => Some((1, 1.0)),
            Axis::Z => Some((2, 1.0)),
            Axis::Unaligned(v) => {
                let c = (0..3).find(|&c| v[c] == -1.0)?;
                (v.iter().filter(|&&x| x == 0.0).count() == 2).then_some((c, -1.0))
            }
        }
    }
    /// The unit vector.
    #[inline]
    pub fn vector(&self) -> Vec3 {
        match self {
            Axis::X => Vec3::x(),
            Axis::Y => Vec3::y(),
            Axis::Z => Vec3::z(),
            Axis::Unaligned(v) => *v,
        }
    }
}

/// The kinds of joint. Fixed URDF joints are not joints here: they are merged into their
/// parent body when the model is built and stay available as frames.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JointType {
    /// The universe (joint 0 only): no degree of freedom.
    Universe,
    /// Revolute with position limits (nq = nv = 1).
    Revolute {
        /// Rotation axis in the joint frame.
        axis: Axis,
    },
    /// Revolute without limits, URDF `continuous`: one plain angle (nq = nv = 1), unlike
    /// Pinocchio's (cos, sin).
    RevoluteUnbounded {
        /// Rotation axis in the joint frame.
        axis: Axis,
    },
    /// Prismatic (nq = nv = 1).
    Prismatic {
        /// Translation axis in the joint frame.
        axis: Axis,
    },
    /// Six degrees of freedom: q = [x, y, z, qx, qy, qz, qw], v = [linear; angular] in the
    /// child (local) frame.
    FreeFlyer,
    /// Ball joint: q = [qx, qy, qz, qw], v = angular velocity in the child frame.
    Spherical,
    /// Motion in the joint's xy plane: q = [x, y, θ], v = [vx, vy, ω] in the child frame.
    Planar,
}

impl JointType {
    /// Number of configuration variables.
    pub fn nq(&self) -> usize {
        match self {
            JointType::Universe => 0,
            JointType::Revolute { .. } | JointType::RevoluteUnbounded { .. } | JointType::Prismatic { .. } => 1,
            JointType::FreeFlyer => 7,
            JointType::Spherical => 4,
            JointType::Planar => 3,
        }
    }
    /// Number of velocity variables (degrees of freedom).
    pub fn nv(&self) -> usize {
        match self {
            JointType::Universe => 0,
            JointType::Revolute { .. } | JointType::RevoluteUnbounded { .. } | JointType::Prismatic { .. } => 1,
            JointType::FreeFlyer => 6,
            JointType::Spherical => 3,
            JointType::Planar => 3,
        }
    }
    /// A short name for tables (`revolute_z`, `free_flyer`, ...).
    pub fn short_name(&self) -> String {
        let ax = |a: &Axis| match a {
            Axis::X => "x".to_string(),
            Axis::Y => "y".to_string(),
            Axis::Z => "z".to_string(),
            Axis::Unaligned(v) => format!("({:.3},{:.3},{:.3})", v.x, v.y, v.z),
        };
        match self {
            JointType::Universe => "universe".into(),
            JointType::Revolute { axis } => format!("revolute_{}", ax(axis)),
            JointType::RevoluteUnbounded { axis } => format!("continuous_{}", ax(axis)),
            JointType::Prismatic { axis } => format!("prismatic_{}", ax(axis)),
            JointType::FreeFlyer => "free_flyer".into(),
            JointType::Spherical => "spherical".into(),
            JointType::Planar => "planar".into(),
        }
    }

    /// The motion subspace S, one column per degree of freedom, in the child frame. It is
    /// constant for every kind here (so the bias c_J = Ṡ q̇ is zero).
    pub fn motion_subspace(&self) -> Vec<Motion> {
        let lin = |v: Vec3| Motion::new(v, Vec3::zeros());
        let ang = |v: Vec3| Motion::new(Vec3::zeros(), v);
        match self {
            JointType::Universe => vec![],
            JointType::Revolute { axis } | JointType::RevoluteUnbounded { axis } => vec![ang(axis.vector())],
            JointType::Prismatic { axis } => vec![lin(axis.vector())],
            JointType::FreeFlyer => vec![
                lin(Vec3::x()),
                lin(Vec3::y()),
                lin(Vec3::z()),
                ang(Vec3::x()),
                ang(Vec3::y()),
                ang(Vec3::z()),
            ],
            JointType::Spherical => vec![ang(Vec3::x()), ang(Vec3::y()), ang(Vec3::z())],
            JointType::Planar => vec![lin(Vec3::x()), lin(Vec3::y()), ang(Vec3::z())],
        }
    }

    /// The joint transform X_J(q): child (after the joint) in the joint frame before it.
    #[inline]
    pub fn transform(&self, q: &[f64]) -> Se3 {
        match self {
            JointType::Universe => Se3::identity(),
            JointType::Revolute { axis } | JointType::RevoluteUnbounded { axis } => {
                Se3::new(axis_rotation(axis, q[0]), Vec3::zeros())
            }
            JointType::Prismatic { axis } => Se3::from_translation(axis.vector() * q[0]),
            JointType::FreeFlyer => Se3::new(quat_from_xyzw(&q[3..7]), Vec3::new(q[0], q[1], q[2])),
            JointType::Spherical => Se3::new(quat_from_xyzw(&q[0..4]), Vec3::zeros()),
            JointType::Planar => Se3::new(axis_rotation(&Axis::Z, q[2]), Vec3::new(q[0], q[1], 0.0)),
        }
    }

    /// `placement ∘ X_J(q)`: the joint's child frame in the parent joint frame, with closed
    /// forms for aligned revolute and prismatic joints (no 3x3 product).
    #[inline]
    pub fn placement_after(&self, placement: &Se3, q: &[f64]) -> Se3 {
        match self {
            JointType::Revolute { axis } | JointType::RevoluteUnbounded { axis } => {
                let (s, c) = sin_cos(q[0]);
                revolute_placement_after(axis, placement, s, c)
            }
            JointType::Prismatic { axis } => Se3::new(
                placement.rotation,
                placement.translation + placement.rotation * (axis.vector() * q[0]),
            ),
            _ => placement.compose(&self.transform(q)),
        }
    }

    /// Writes the neutral configuration (zero angles, identity quaternions).
    pub fn neutral(&self, q: &mut [f64]) {
        q.fill(0.0);
        match self {
            JointType::FreeFlyer => q[6] = 1.0,
            JointType::Spherical => q[3] = 1.0,
            _ => {}
        }
    }

    /// `q_out = q ⊕ v`: moves along `v` (in the child frame) for unit time.
    pub fn integrate(&self, q: &[f64], v: &[f64], q_out: &mut [f64]) {
        match self {
            JointType::Universe => {}
            JointType::Revolute { .. } | JointType::RevoluteUnbounded { .. } | JointType::Prismatic { .. } => {
                q_out[0] = q[0] + v[0]
            }
            JointType::FreeFlyer => {
                let x = self.transform(q).compose(&exp6(&Motion::from_slice(v)));
                q_out[..3].copy_from_slice(x.translation.as_slice());
                write_quat(&x.rotation, &q[3..7], &mut q_out[3..7]);
            }
            JointType::Spherical => {
                let r = quat_from_xyzw(q) * exp3(&Vec3::new(v[0], v[1], v[2]));
                let prev = [q[0], q[1], q[2], q[3]];
                write_quat(&r, &prev, &mut q_out[..4]);
            }
            JointType::Planar => {
                let (s, c) = q[2].sin_cos();
                let (dx, dy) = se2_exp_translation(v[0], v[1], v[2]);
                q_out[0] = q[0] + c * dx - s * dy;
                q_out[1] = q[1] + s * dx + c * dy;
                q_out[2] = q[2] + v[2];
            }
        }
    }

    /// `v = q1 ⊖ q0`: the velocity that [`JointType::integrate`] maps `q0` to `q1` with.
    pub fn difference(&self, q0: &[f64], q1: &[f64], v: &mut [f64]) {
        match self {
            JointType::Universe => {}
            JointType::Revolute { .. } | JointType::RevoluteUnbounded { .. } | JointType::Prismatic { .. } => {
                v[0] = q1[0] - q0[0]
            }
            JointType::FreeFlyer => {
                let m = log6(&self.transform(q0).inv_compose(&self.transform(q1)));
                v[..3].copy_from_slice(m.linear.as_slice());
                v[3..6].copy_from_slice(m.angular.as_slice());
            }
            JointType::Spherical => {
                let w = log3(&(quat_from_xyzw(q0).transpose() * quat_from_xyzw(q1)));
                v[..3].copy_from_slice(w.as_slice());
            }
            JointType::Planar => {
                let th = q1[2] - q0[2];
                let (s, c) = q0[2].sin_cos();
                let (gx, gy) = (q1[0] - q0[0], q1[1] - q0[1]);
                // translation in the q0 frame, then the inverse of the SE(2) left Jacobian
                let (lx, ly) = (c * gx + s * gy, -s * gx + c * gy);
                let (a, b) = se2_v_coeffs(th);
                let det = a * a + b * b;
                v[0] = (a * lx + b * ly) / det;
                v[1] = (-b * lx + a * ly) / det;
                v[2] = th;
            }
        }
    }

    /// Renormalises the quaternion of free-flyer and spherical joints.
    pub fn normalize(&self, q: &mut [f64]) {
        let quat = match self {
            JointType::FreeFlyer => &mut q[3..7],
            JointType::Spherical => &mut q[0..4],
            _ => return,
        };
        let n = quat.iter().map(|x| x * x).sum::<f64>().sqrt();
        if n > 0.0 {
            quat.iter_mut().for_each(|x| *x /= n);
        }
    }
}

// --- the fast-path tags the builder stores in the model, dispatched in `algorithms/jcalc.rs` ---

/// `Model::dof_axis`: `Some(c)` when the motion subspace column `s` is the basis vector `e_c`
/// of `[linear; angular]`, so `S x`, `Sᵀ f` and `I S` read or write one component.
pub(crate) fn dof_axis(s: &Motion) -> Option<usize> {
    let v = s.to_vec6();
    let ones: Vec<usize> = (0..6).filter(|&c| v[c] == 1.0).collect();
    let zeros = (0..6).filter(|&c| v[c] == 0.0).count();
    (ones.len() == 1 && zeros == 5).then(|| ones[0])
}

/// `Model::signed_dof_axis`: `Some((c, σ))` when `s` is `σ e_c` (σ = ±1) of `[linear; angular]`.
pub(crate) fn signed_dof_axis(s: &Motion) -> Option<(usize, f64)> {
    let v = s.to_vec6();
    let units: Vec<usize> = (0..6).filter(|&c| v[c].abs() == 1.0).collect();
    let zeros = (0..6).filter(|&c| v[c] == 0.0).count();
    (units.len() == 1 && zeros == 5).then(|| (units[0], v[units[0]]))
}

/// `Model::elementary_rotation_axis`: `Some(c)` for a revolute joint about ±e_c behind a
/// placement whose rotation is a quarter turn (`quarter_turn`, from
/// `Model::placement_quarter_turn`), so that `λX_i` is an elementary rotation with its
/// entries moved, plus a translation.
pub(crate) fn elementary_rotation_axis(kind: &JointType, quarter_turn: Option<u8>) -> Option<usize> {
    match kind {
        JointType::Revolute { axis } | JointType::RevoluteUnbounded { axis } if quarter_turn.is_some() => {
            axis.signed_basis().map(|(c, _)| c)
        }
        _ => None,
    }
}

/// `r · R_axis(θ)` for the x, y or z axis (`axis` 0, 1, 2) given `(sin θ, cos θ)`: two
/// columns of `r` mixed, no matrix product.
#[inline(always)]
pub(crate) fn mul_axis_rotation(r: &Mat3, axis: usize, s: f64, c: f64) -> Mat3 {
    let (c0, c1, c2) = (r.column(0), r.column(1), r.column(2));
    match axis {
        // R · Rx(θ): columns (c0, c c1 + s c2, −s c1 + c c2)
        0 => Mat3::from_columns(&[c0.into(), c * c1 + s * c2, c * c2 - s * c1]),
        // R · Ry(θ): columns (c c0 − s c2, c1, s c0 + c c2)
        1 => Mat3::from_columns(&[c * c0 - s * c2, c1.into(), s * c0 + c * c2]),
        // R · Rz(θ): columns (c c0 + s c1, −s c0 + c c1, c2)
        _ => Mat3::from_columns(&[c * c0 + s * c1, c * c1 - s * c0, c2.into()]),
    }
}

/// `placement ∘ X_J` for a revolute joint about `axis` at the angle whose sine and cosine are
/// `s`, `c`: for ±x, ±y, ±z the placement rotation's columns mixed, no 3x3 product.
#[inline(always)]
pub(crate) fn revolute_placement_after(axis: &Axis, placement: &Se3, s: f64, c: f64) -> Se3 {
    let rotation = match axis.signed_basis() {
        Some((k, sign)) => mul_axis_rotation(&placement.rotation, k, sign * s, c),
        None => placement.rotation * crate::spatial::rotation_about_sin_cos(&axis.vector(), s, c),
    };
    Se3::new(rotation, placement.translation)
}

/// Rotation by `angle` about an axis, with closed forms for the aligned ones.
#[inline]
pub(crate) fn axis_rotation(axis: &Axis, angle: f64) -> Mat3 {
    let (s, c) = sin_cos(angle);
    match axis.signed_basis() {
        Some((0, sign)) => Mat3::new(1.0, 0.0, 0.0, 0.0, c, -sign * s, 0.0, sign * s, c),
        Some((1, sign)) => Mat3::new(c, 0.0, sign * s, 0.0, 1.0, 0.0, -sign * s, 0.0, c),
        Some((_, sign)) => Mat3::new(c, -sign * s, 0.0, sign * s, c, 0.0, 0.0, 0.0, 1.0),
        None => crate::spatial::rotation_about_sin_cos(&axis.vector(), s, c),
    }
}

/// Writes the quaternion of `r`, choosing the sign closest to `prev` so trajectories stay
/// continuous.
fn write_quat(r: &Mat3, prev: &[f64], out: &mut [f64]) {
    let q = quat_to_xyzw(r);
    let dot: f64 = q.iter().zip(prev).map(|(a, b)| a * b).sum();
    let s = if dot < 0.0 { -1.0 } else { 1.0 };
    for k in 0..4 {
        out[k] = s * q[k];
    }
}

/// Coefficients (a, b) of the SE(2) left Jacobian [[a, -b], [b, a]] for angle `th`.
fn se2_v_coeffs(th: f64) -> (f64, f64) {
    if th.abs() < 1e-6 {
        (1.0 - th * th / 6.0, th / 2.0 - th * th * th / 24.0)
    } else {
        (th.sin() / th, (1.0 - th.cos()) / th)
    }
}

/// Translation, in the starting frame, of the SE(2) exponential of (vx, vy, ω).
fn se2_exp_translation(vx: f64, vy: f64, w: f64) -> (f64, f64) {
    let (a, b) = se2_v_coeffs(w);
    (a * vx - b * vy, b * vx + a * vy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_basis_axes_use_the_closed_forms_correctly() {
        for c in 0..3 {
            let mut v = Vec3::zeros();
            v[c] = -1.0;
            let axis = Axis::from_unit(v);
            assert_eq!(axis.signed_basis(), Some((c, -1.0)));
            for q in [-2.0, 0.3, 1.7] {
                assert!((axis_rotation(&axis, q) - exp3(&(v * q))).amax() < 1e-15);
                let placement = Se3::new(exp3(&Vec3::new(0.2, 0.1, -0.4)), Vec3::new(0.1, 0.0, 0.3));
                let fast = JointType::Revolute { axis }.placement_after(&placement, &[q]);
                assert!((fast.rotation - placement.rotation * exp3(&(v * q))).amax() < 1e-15);
            }
        }
        assert_eq!(Axis::Unaligned(Vec3::new(0.6, 0.0, -0.8)).signed_basis(), None);
    }

    #[test]
    fn placement_after_equals_compose_with_the_joint_transform() {
        let placement = Se3::new(exp3(&Vec3::new(0.3, -0.7, 1.1)), Vec3::new(0.1, 0.2, -0.3));
        let kinds = [
            JointType::Revolute { axis: Axis::X },
            JointType::Revolute { axis: Axis::Y },
            JointType::RevoluteUnbounded { axis: Axis::Z },
            JointType::Revolute { axis: Axis::Unaligned(Vec3::new(0.0, -1.0, 0.0)) },
            JointType::Prismatic { axis: Axis::Y },
            JointType::Prismatic { axis: Axis::Unaligned(Vec3::new(0.6, 0.0, 0.8)) },
        ];
        for kind in kinds {
            let q = [0.83];
            let fast = kind.placement_after(&placement, &q);
            let slow = placement.compose(&kind.transform(&q));
            assert!(fast.max_abs_diff(&slow) < 1e-15, "{kind:?}");
        }
    }
}

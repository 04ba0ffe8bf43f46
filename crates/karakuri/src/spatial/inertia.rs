use super::quarter_turn::{apply_quarter_turn, conjugate_quarter_turn, QUARTER_TURNS};
use super::{skew, Force, Mat3, Mat6, Motion, Se3, Vec3};

/// Spatial inertia of a rigid body: mass, centre of mass `com` (in the body frame) and the
/// rotational inertia `inertia_com` about the centre of mass, in body-frame axes (symmetric).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Inertia {
    /// Mass (kg).
    pub mass: f64,
    /// Centre of mass in the body frame (m).
    pub com: Vec3,
    /// Rotational inertia about the centre of mass, body-frame axes (kg m²).
    pub inertia_com: Mat3,
}

/// A homogeneous solid in its own frame, centred on its bounding box, with its axis (if it
/// has one) along z: the one place the primitive mass formulas live (the scene's `density`
/// bodies and MJCF geoms use them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Solid {
    /// A ball.
    Sphere {
        /// Radius (m).
        radius: f64,
    },
    /// A box.
    Box {
        /// Half side lengths (m).
        half_extents: Vec3,
    },
    /// A cylinder along z.
    Cylinder {
        /// Radius (m).
        radius: f64,
        /// Half length (m).
        half_length: f64,
    },
    /// A capsule along z: a cylinder of half length `half_length` and two hemispheres.
    Capsule {
        /// Radius (m).
        radius: f64,
        /// Half length of the cylindrical part (m).
        half_length: f64,
    },
    /// A cone along z, its base at `z = −half_length`, its apex at `+half_length`.
    Cone {
        /// Base radius (m).
        radius: f64,
        /// Half its height (m).
        half_length: f64,
    },
    /// An ellipsoid of semi-axes along x, y, z.
    Ellipsoid {
        /// Semi-axes (m).
        radii: Vec3,
    },
}

impl Solid {
    /// Volume (m³).
    pub fn volume(&self) -> f64 {
        let pi = std::f64::consts::PI;
        match *self {
            Solid::Sphere { radius: r } => 4.0 * pi * r.powi(3) / 3.0,
            Solid::Box { half_extents: h } => 8.0 * h.x * h.y * h.z,
            Solid::Cylinder { radius: r, half_length: l } => pi * r * r * 2.0 * l,
            Solid::Capsule { radius: r, half_length: l } => pi * (r * r * 2.0 * l + 4.0 * r.powi(3) / 3.0),
            Solid::Cone { radius: r, half_length: l } => pi * r * r * 2.0 * l / 3.0,
            Solid::Ellipsoid { radii: a } => 4.0 * pi * a.x * a.y * a.z / 3.0,
        }
    }

    /// Centre of mass in the solid's frame (the cone's is a quarter of its height above the
    /// base).
    pub fn com(&self) -> Vec3 {
        match *self {
            Solid::Cone { half_length, .. } => Vec3::new(0.0, 0.0, -half_length / 2.0),
            _ => Vec3::zeros(),
        }
    }

    /// Principal moments about the centre of mass (the solid's axes) for mass `m`.
    pub fn moments(&self, m: f64) -> Vec3 {
        match *self {
            Solid::Sphere { radius: r } => Vec3::repeat(2.0 * m * r * r / 5.0),
            Solid::Box { half_extents: s } => Vec3::new(
                m * (s.y * s.y + s.z * s.z) / 3.0,
                m * (s.x * s.x + s.z * s.z) / 3.0,
                m * (s.x * s.x + s.y * s.y) / 3.0,
            ),
            Solid::Cylinder { radius: r, half_length } => {
                let h = 2.0 * half_length;
                let xy = m * (3.0 * r * r + h * h) / 12.0;
                Vec3::new(xy, xy, m * r * r / 2.0)
            }
            Solid::Capsule { radius: r, half_length } => {
                // the hemispheres about their own centres, moved to the capsule's (exact)
                let h = 2.0 * half_length;
                let sphere_mass = m * 4.0 * r / (4.0 * r + 3.0 * h);
                let cyl_mass = m - sphere_mass;
                let sphere_inertia = 2.0 * sphere_mass * r * r / 5.0;
                let xy = cyl_mass * (3.0 * r * r + h * h) / 12.0 + sphere_inertia + sphere_mass * h * (3.0 * r + 2.0 * h) / 8.0;
                Vec3::new(xy, xy, cyl_mass * r * r / 2.0 + sphere_inertia)
            }
            Solid::Cone { radius: r, half_length } => {
                let h = 2.0 * half_length;
                let xy = 3.0 * m * r * r / 20.0 + 3.0 * m * h * h / 80.0;
                Vec3::new(xy, xy, 3.0 * m * r * r / 10.0)
            }
            Solid::Ellipsoid { radii: s } => Vec3::new(
                m * (s.y * s.y + s.z * s.z) / 5.0,
                m * (s.x * s.x + s.z * s.z) / 5.0,
                m * (s.x * s.x + s.y * s.y) / 5.0,
            ),
        }
    }

    /// The spatial inertia of the solid at density `density` (kg/m³), in its own frame.
    pub fn inertia(&self, density: f64) -> Inertia {
        let m = density * self.volume();
        Inertia::new(m, self.com(), Mat3::from_diagonal(&self.moments(m)))
    }
}

impl Default for Inertia {
    fn default() -> Self {
        Self::zero()
    }
}

impl Inertia {
    /// A massless inertia.
    pub fn zero() -> Self {
        Self { mass: 0.0, com: Vec3::zeros(), inertia_com: Mat3::zeros() }
    }
    /// An inertia from mass, centre of mass and rotational inertia about the centre of mass.
    pub fn new(mass: f64, com: Vec3, inertia_com: Mat3) -> Self {
        Self { mass, com, inertia_com }
    }
    /// The rotational inertia about the frame origin (parallel-axis theorem).
    #[inline]
    pub fn inertia_origin(&self) -> Mat3 {
        let c = skew(&self.com);
        self.inertia_com - self.mass * c * c
    }
    /// `I v`: the momentum of a body moving with spatial velocity `v` (same frame).
    #[inline]
    pub fn mul_motion(&self, v: &Motion) -> Force {
        let linear = self.mass * (v.linear - self.com.cross(&v.angular));
        Force { linear, angular: self.inertia_com * v.angular + self.com.cross(&linear) }
    }
    /// Expresses in the parent frame an inertia given in the child frame of `x` (parent_from_child).
    #[inline]
    pub fn transformed(&self, x: &Se3) -> Inertia {
        Inertia {
            mass: self.mass,
            com: x.transform_point(&self.com),
            inertia_com: x.rotation * self.inertia_com * x.rotation.transpose(),
        }
    }
    /// Expresses in the child frame of `x` an inertia given in its parent frame.
    #[inline]
    pub fn inv_transformed(&self, x: &Se3) -> Inertia {
        let rt = x.rotation.transpose();
        Inertia {
            mass: self.mass,
            com: rt * (self.com - x.translation),
            inertia_com: rt * self.inertia_com * x.rotation,
        }
    }
    /// The inertia of two bodies rigidly joined (both expressed in the same frame).
    pub fn combined(&self, o: &Inertia) -> Inertia {
        let mass = self.mass + o.mass;
        if mass <= 0.0 {
            return Inertia::zero();
        }
        let com = (self.mass * self.com + o.mass * o.com) / mass;
        let d1 = skew(&(self.com - com));
        let d2 = skew(&(o.com - com));
        let inertia_com =
            self.inertia_com - self.mass * d1 * d1 + o.inertia_com - o.mass * d2 * d2;
        Inertia { mass, com, inertia_com }
    }
    /// The 6x6 matrix acting on `[linear; angular]` motions.
    pub fn to_matrix(&self) -> Mat6 {
        let c = skew(&self.com);
        let mc = self.mass * c;
        let mut m = Mat6::zeros();
        m.fixed_view_mut::<3, 3>(0, 0).copy_from(&(Mat3::identity() * self.mass));
        m.fixed_view_mut::<3, 3>(0, 3).copy_from(&(-mc));
        m.fixed_view_mut::<3, 3>(3, 0).copy_from(&mc);
        m.fixed_view_mut::<3, 3>(3, 3).copy_from(&(self.inertia_com - mc * c));
        m
    }
    /// Kinetic energy `½ vᵀ I v` of the body moving with `v`.
    #[inline]
    pub fn kinetic_energy(&self, v: &Motion) -> f64 {
        0.5 * v.dot(&self.mul_motion(v))
    }
}

impl std::ops::Add for Inertia {
    type Output = Inertia;
    fn add(self, o: Inertia) -> Inertia {
        self.combined(&o)
    }
}

/// A rigid-body inertia about the frame origin, in the form that adds and moves cheaply:
/// mass `m`, first moment `h = m c` and rotational inertia `i_o` about the origin (symmetric).
/// Composite inertias (CRBA, hybrid dynamics) accumulate in this form: a sum is a plain sum.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OriginInertia {
    /// Mass.
    pub mass: f64,
    /// First moment of mass `m c`.
    pub h: Vec3,
    /// Rotational inertia about the origin.
    pub i_o: Mat3,
}

impl Default for OriginInertia {
    fn default() -> Self {
        Self::zero()
    }
}

impl From<&Inertia> for OriginInertia {
    fn from(i: &Inertia) -> Self {
        OriginInertia { mass: i.mass, h: i.mass * i.com, i_o: i.inertia_origin() }
    }
}

impl OriginInertia {
    /// The massless inertia.
    #[inline]
    pub fn zero() -> Self {
        OriginInertia { mass: 0.0, h: Vec3::zeros(), i_o: Mat3::zeros() }
    }
    /// `I v`: momentum of a body moving with `v`.
    #[inline]
    pub fn mul_motion(&self, v: &Motion) -> Force {
        Force {
            linear: self.mass * v.linear - self.h.cross(&v.angular),
            angular: self.i_o * v.angular + self.h.cross(&v.linear),
        }
    }
    /// Adds an inertia expressed in the same frame.
    #[inline]
    pub fn add(&mut self, o: &OriginInertia) {
        self.mass += o.mass;
        self.h += o.h;
        self.i_o += o.i_o;
    }
    /// Expresses in the parent frame an inertia given in the child frame of `x`
    /// (parallel-axis theorem written with outer products: no skew-matrix products).
    #[inline(always)]
    pub fn transformed(&self, x: &Se3) -> OriginInertia {
        let mut out = OriginInertia::zero();
        out.add_transformed(self, x);
        out
    }
    /// `self += X* y`: [`OriginInertia::transformed`] fused with [`OriginInertia::add`].
    #[inline(always)]
    pub fn add_transformed(&mut self, y: &OriginInertia, x: &Se3) {
        let r = &x.rotation;
        let s = rotate_symmetric(r, &y.i_o);
        self.add_shifted(y.mass, r * y.h, [s[(0, 0)], s[(1, 1)], s[(2, 2)], s[(0, 1)], s[(0, 2)], s[(1, 2)]], &x.translation);
    }
    /// `self += X* y` for `X` = (rotation `P R_K(θ)`, then the translation `x.translation`):
    /// `R_K(θ)` the elementary rotation about axis `K` in the plane `(I, J)` and `P` the
    /// quarter turn `Q` of the joint placement (0: none), both read from `x.rotation`. CRBA's
    /// composite-inertia step for the usual URDF joint: the rotation touches a 2x2 block and a
    /// pair of entries and `P` only moves them, about 20 flops instead of 60.
    #[inline(always)]
    pub(crate) fn add_transformed_plane<const Q: u8, const I: usize, const J: usize, const K: usize>(
        &mut self,
        y: &OriginInertia,
        x: &Se3,
    ) {
        // R_K = Pᵀ x.rotation: row r of R_K is σ_r times row π(r) of x.rotation
        let (index, sign) = QUARTER_TURNS[Q as usize];
        let (s, c) = (sign[J] * x.rotation[(index[J], I)], sign[I] * x.rotation[(index[I], I)]);
        let a = &y.i_o;
        let (aii, ajj, aij, aik, ajk) = (a[(I, I)], a[(J, J)], a[(I, J)], a[(I, K)], a[(J, K)]);
        // [[c, −s], [s, c]] [[aii, aij], [aij, ajj]] [[c, s], [−s, c]] with double angles
        let (c2, s2) = (c * c - s * s, 2.0 * s * c);
        let (half_sum, half_diff) = (0.5 * (aii + ajj), 0.5 * (aii - ajj));
        let rii = half_sum + half_diff * c2 - aij * s2;
        let rjj = (aii + ajj) - rii;
        let rij = half_diff * s2 + aij * c2;
        let rik = c * aik - s * ajk;
        let rjk = s * aik + c * ajk;
        let mut h = Vec3::zeros();
        h[I] = c * y.h[I] - s * y.h[J];
        h[J] = s * y.h[I] + c * y.h[J];
        h[K] = y.h[K];
        let mut r = [[0.0; 3]; 3];
        r[I][I] = rii;
        r[J][J] = rjj;
        r[K][K] = a[(K, K)];
        (r[I][J], r[J][I]) = (rij, rij);
        (r[I][K], r[K][I]) = (rik, rik);
        (r[J][K], r[K][J]) = (rjk, rjk);
        if Q != 0 {
            h = apply_quarter_turn::<Q>(&h);
            r = conjugate_quarter_turn::<Q>(&r);
        }
        self.add_shifted(y.mass, h, [r[0][0], r[1][1], r[2][2], r[0][1], r[0][2], r[1][2]], &x.translation);
    }
    /// `self +=` the inertia of mass `m`, first moment `h_r` and rotational inertia `s` = (xx,
    /// yy, zz, xy, xz, yz) about a point `p` away (parent axes), moved to the origin.
    #[inline(always)]
    fn add_shifted(&mut self, m: f64, h_r: Vec3, s: [f64; 6], p: &Vec3) {
        // I_P = I_R − [h]ₓ[p]ₓ − [p]ₓ[h]ₓ − m [p]ₓ², with [a]ₓ[b]ₓ = b aᵀ − (a·b) 1:
        // I_P = I_R − (p gᵀ + g pᵀ) + 2 (g·p) 1 with g = h + m p / 2
        let g = h_r + (0.5 * m) * p;
        let d = 2.0 * g.dot(p);
        let io = &mut self.i_o;
        io[(0, 0)] += s[0] - 2.0 * p.x * g.x + d;
        io[(1, 1)] += s[1] - 2.0 * p.y * g.y + d;
        io[(2, 2)] += s[2] - 2.0 * p.z * g.z + d;
        let xy = s[3] - (p.x * g.y + g.x * p.y);
        let xz = s[4] - (p.x * g.z + g.x * p.z);
        let yz = s[5] - (p.y * g.z + g.y * p.z);
        io[(0, 1)] += xy;
        io[(1, 0)] += xy;
        io[(0, 2)] += xz;
        io[(2, 0)] += xz;
        io[(1, 2)] += yz;
        io[(2, 1)] += yz;
        self.h += h_r + m * p;
        self.mass += m;
    }
    /// The 6x6 matrix acting on `[linear; angular]` motions.
    pub fn to_matrix(&self) -> Mat6 {
        let hx = skew(&self.h);
        let mut m = Mat6::zeros();
        m.fixed_view_mut::<3, 3>(0, 0).copy_from(&(Mat3::identity() * self.mass));
        m.fixed_view_mut::<3, 3>(0, 3).copy_from(&(-hx));
        m.fixed_view_mut::<3, 3>(3, 0).copy_from(&hx);
        m.fixed_view_mut::<3, 3>(3, 3).copy_from(&self.i_o);
        m
    }
    /// Back to (mass, centre of mass, inertia about the centre of mass).
    pub fn to_inertia(&self) -> Inertia {
        if self.mass <= 0.0 {
            return Inertia::new(0.0, Vec3::zeros(), self.i_o);
        }
        let c = self.h / self.mass;
        let cx = skew(&c);
        Inertia::new(self.mass, c, self.i_o + self.mass * cx * cx)
    }
}

/// `R S Rᵀ` for a symmetric S, computing the upper triangle only: with S' = S − s₂₂ 1
/// (R S Rᵀ = R S' Rᵀ + s₂₂ 1, and S' has a zero corner) two rows of R S' suffice, the last
/// diagonal entry following from the trace (invariant under rotation): 31 products, not 45.
#[inline(always)]
pub(crate) fn rotate_symmetric(r: &Mat3, s: &Mat3) -> Mat3 {
    let (s00, s01, s02, s11, s12, s22) = (s[(0, 0)], s[(0, 1)], s[(0, 2)], s[(1, 1)], s[(1, 2)], s[(2, 2)]);
    let (d0, d1) = (s00 - s22, s11 - s22);
    let row = |i: usize| -> (f64, f64, f64) { (r[(i, 0)], r[(i, 1)], r[(i, 2)]) };
    let (r0, r1, r2) = (row(0), row(1), row(2));
    // S' v (S' symmetric with a zero (2, 2) entry)
    let sv = |v: (f64, f64, f64)| -> (f64, f64, f64) {
        (d0 * v.0 + s01 * v.1 + s02 * v.2, s01 * v.0 + d1 * v.1 + s12 * v.2, s02 * v.0 + s12 * v.1)
    };
    let dot = |a: (f64, f64, f64), b: (f64, f64, f64)| a.0 * b.0 + a.1 * b.1 + a.2 * b.2;
    let (a0, a1) = (sv(r0), sv(r1));
    let xx = dot(a0, r0) + s22;
    let yy = dot(a1, r1) + s22;
    let zz = (s00 + s11 + s22) - xx - yy;
    let (xy, xz, yz) = (dot(a0, r1), dot(a0, r2), dot(a1, r2));
    Mat3::new(xx, xy, xz, xy, yy, yz, xz, yz, zz)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spatial::exp3;

    #[test]
    fn rotate_symmetric_and_transformed_match_the_dense_formulas() {
        let r = exp3(&Vec3::new(0.4, -1.3, 0.7));
        let a = Mat3::new(0.3, 0.02, -0.05, 0.02, 0.2, 0.01, -0.05, 0.01, 0.4);
        let dense = r * a * r.transpose();
        assert!((rotate_symmetric(&r, &a) - dense).amax() < 1e-15);
        let body = Inertia::new(2.5, Vec3::new(0.1, -0.2, 0.3), a);
        let x = Se3::new(r, Vec3::new(0.5, 0.7, -0.9));
        let fast = OriginInertia::from(&body).transformed(&x);
        let slow = OriginInertia::from(&body.transformed(&x));
        assert!((fast.i_o - slow.i_o).amax() < 1e-13 && (fast.h - slow.h).amax() < 1e-14);
        assert_eq!(fast.mass, slow.mass);
        fn plane<const Q: u8>(axis: usize, y: &OriginInertia, x: &Se3) -> OriginInertia {
            let mut out = OriginInertia::zero();
            match axis {
                0 => out.add_transformed_plane::<Q, 1, 2, 0>(y, x),
                1 => out.add_transformed_plane::<Q, 2, 0, 1>(y, x),
                _ => out.add_transformed_plane::<Q, 0, 1, 2>(y, x),
            }
            out
        }
        let y = OriginInertia::from(&body);
        for (axis, v) in [(0, Vec3::x()), (1, Vec3::y()), (2, Vec3::z())] {
            let x = Se3::new(crate::spatial::rotation_about(&v, 0.77), Vec3::new(0.5, 0.7, -0.9));
            // no placement rotation, and quarter turn 13 before the joint's: P R_axis(θ)
            let turned = Se3::new(crate::spatial::quarter_turn::quarter_turn_matrix(13) * x.rotation, x.translation);
            for (fast, x) in [(plane::<0>(axis, &y, &x), x), (plane::<13>(axis, &y, &turned), turned)] {
                let slow = y.transformed(&x);
                assert!((fast.i_o - slow.i_o).amax() < 1e-14 && (fast.h - slow.h).amax() < 1e-14, "axis {axis}");
            }
        }
    }
}

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
    #[inline]
    pub fn transformed(&self, x: &Se3) -> OriginInertia {
        let r = &x.rotation;
        let p = &x.translation;
        let h_r = r * self.h; // first moment about the child origin, parent axes
        let i_r = rotate_symmetric(r, &self.i_o);
        // I_P = I_R − [h]ₓ[p]ₓ − [p]ₓ[h]ₓ − m [p]ₓ², with [a]ₓ[b]ₓ = b aᵀ − (a·b) 1
        let hp = h_r.dot(p);
        let pp = p.dot(p);
        let mut i_p = i_r - (p * h_r.transpose() + h_r * p.transpose()) - self.mass * (p * p.transpose());
        let diag = 2.0 * hp + self.mass * pp;
        i_p[(0, 0)] += diag;
        i_p[(1, 1)] += diag;
        i_p[(2, 2)] += diag;
        OriginInertia { mass: self.mass, h: h_r + self.mass * p, i_o: i_p }
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

/// `R S Rᵀ` for a symmetric S, computing the upper triangle only.
#[inline]
pub(crate) fn rotate_symmetric(r: &Mat3, s: &Mat3) -> Mat3 {
    let a = r * s;
    let r0 = r.row(0);
    let r1 = r.row(1);
    let r2 = r.row(2);
    let a0 = a.row(0);
    let a1 = a.row(1);
    let a2 = a.row(2);
    let (xx, xy, xz) = (a0.dot(&r0), a0.dot(&r1), a0.dot(&r2));
    let (yy, yz, zz) = (a1.dot(&r1), a1.dot(&r2), a2.dot(&r2));
    Mat3::new(xx, xy, xz, xy, yy, yz, xz, yz, zz)
}

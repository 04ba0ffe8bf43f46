//! Four states in SIMD lanes through the recursions: every scalar of the single-state kernel
//! becomes an [`L`], four `f64` side by side (one per state), and every operation is done lane
//! by lane in the single-state kernel's order (the products and sums of nalgebra's 3-vector
//! and 3x3 kernels, written out), so each lane holds the single call's bits. Written as plain
//! loops over `[f64; 4]` for LLVM to vectorise: one 256-bit instruction per operation when the
//! functions are compiled for AVX2, two 128-bit ones in the portable build.
//!
//! Dispatch (each kernel's `*_chunk`): on x86-64 each kernel is compiled twice by the crate's
//! `twice!` macro (`lib.rs`), once inside a `#[target_feature(enable = "avx2")]` function
//! chosen at run time by `is_x86_feature_detected!`, once portable. Calling a target-feature
//! function is `unsafe` (the CPU must have the feature): the macro's dispatch is the crate's
//! one `unsafe` block besides the AVX stores, right after the check (0064, 0118).
//!
//! The joint placements `λX_i(q)` of the usual revolute joints (about ±x, ±y, ±z, any
//! placement) are computed in lanes, sines and cosines included, and so are those of prismatic
//! and free-flyer joints; the other joints' per lane by the scalar code; then the rest of the
//! recursion runs in lanes.

use crate::model::{mul_axis_rotation, revolute_placement_after, JointType, Model};
use crate::spatial::{Mat3, Mat6, Motion, Se3, Vec3};
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// States per lane group.
pub const LANES: usize = 4;

/// How far ahead of the entry being stored (`f64` entries of an output row, four lines) the
/// batched stores ask for the row's cache line (record 0141; record 0145: 16 and 32 alike, 64
/// slower).
pub(crate) const AHEAD: usize = 32;

/// Asks for the cache line of `row` [`AHEAD`] entries past entry `e`, which the stores are about
/// to write (record 0141: a store that misses L1 waits for its line, and stores retire in
/// order), so that the line is on its way while the entries before it are computed and stored.
/// A hint: it writes nothing and never faults, whatever the address (`wrapping_add`), so the
/// results are the same bits. `_MM_HINT_ET0` compiles to `prefetcht0` (`prefetchw` needs the
/// `prfchw` target feature, unstable; record 0145): the line comes exclusive when no other core
/// holds it. Nothing off x86-64.
#[inline(always)]
pub(crate) fn ask_ahead(row: *const f64, e: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads and writes nothing and never faults; SSE is baseline on x86-64.
    #[allow(unsafe_code)]
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_ET0};
        _mm_prefetch::<_MM_HINT_ET0>(row.wrapping_add(e + AHEAD).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (row, e);
}

/// [`ask_ahead`] for the four rows of a group, `per` entries apart from `o`.
#[inline(always)]
pub(crate) fn ask_ahead4(o: *const f64, per: usize, e: usize) {
    for l in 0..LANES {
        ask_ahead(o.wrapping_add(l * per), e);
    }
}

/// Four `f64`, one per state, aligned for one 256-bit load.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(32))]
pub(crate) struct L(pub(crate) [f64; LANES]);

macro_rules! lane_op {
    ($tr:ident, $f:ident, $op:tt, $tra:ident, $fa:ident) => {
        impl $tr for L {
            type Output = L;
            #[inline(always)]
            fn $f(self, o: L) -> L {
                L([self.0[0] $op o.0[0], self.0[1] $op o.0[1], self.0[2] $op o.0[2], self.0[3] $op o.0[3]])
            }
        }
        impl $tra for L {
            #[inline(always)]
            fn $fa(&mut self, o: L) {
                *self = *self $op o;
            }
        }
    };
}
lane_op!(Add, add, +, AddAssign, add_assign);
lane_op!(Sub, sub, -, SubAssign, sub_assign);
lane_op!(Mul, mul, *, MulAssign, mul_assign);
lane_op!(Div, div, /, DivAssign, div_assign);

impl Neg for L {
    type Output = L;
    #[inline(always)]
    fn neg(self) -> L {
        L([-self.0[0], -self.0[1], -self.0[2], -self.0[3]])
    }
}

impl L {
    /// `x` in every lane.
    #[inline(always)]
    pub(crate) fn splat(x: f64) -> L {
        L([x; LANES])
    }
}

/// A 3-vector of lanes.
pub(crate) type V3 = [L; 3];
/// A 3x3 matrix of lanes, `m[row][col]`.
pub(crate) type M3 = [[L; 3]; 3];
/// A 6-vector of lanes, `[linear; angular]`.
pub(crate) type V6 = [L; 6];
/// A 6x6 matrix of lanes, `m[row][col]`.
pub(crate) type M6 = [[L; 6]; 6];
/// A symmetric 6x6 matrix of lanes: the upper triangle, row by row (entry `(r, c)`, `r ≤ c`, at
/// `IX[r][c]`).
pub(crate) type S6 = [L; 21];

/// Where entry `(r, c)` of a symmetric 6x6 matrix is in an [`S6`].
pub(crate) const IX: [[usize; 6]; 6] = {
    let mut t = [[0; 6]; 6];
    let (mut r, mut k) = (0, 0);
    while r < 6 {
        let mut c = r;
        while c < 6 {
            t[r][c] = k;
            t[c][r] = k;
            k += 1;
            c += 1;
        }
        r += 1;
    }
    t
};

/// An [`S6`] from a scalar symmetric 6x6 matrix (its upper triangle).
pub(crate) fn pack(m: &Mat6) -> [f64; 21] {
    let mut out = [0.0; 21];
    for r in 0..6 {
        for c in r..6 {
            out[IX[r][c]] = m[(r, c)];
        }
    }
    out
}


#[inline(always)]
pub(crate) fn splat3(x: &crate::spatial::Vec3) -> V3 {
    [L::splat(x.x), L::splat(x.y), L::splat(x.z)]
}
#[inline(always)]
pub(crate) fn add3(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
#[inline(always)]
pub(crate) fn sub3(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
/// `s * a` (nalgebra's scalar times vector: each entry `s * a_i`).
#[inline(always)]
pub(crate) fn scale3(s: L, a: V3) -> V3 {
    [s * a[0], s * a[1], s * a[2]]
}
/// `a × b` in nalgebra's order.
#[inline(always)]
pub(crate) fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
/// `a · b`: `(a0 b0 + a1 b1) + a2 b2`, nalgebra's 3-vector dot.
#[inline(always)]
pub(crate) fn dot3(a: V3, b: V3) -> L {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
/// `m x`: row i is `(m_i0 x0 + m_i1 x1) + m_i2 x2` (nalgebra's gemv, a column at a time).
#[inline(always)]
pub(crate) fn mul_mv(m: &M3, x: V3) -> V3 {
    [m[0][0] * x[0] + m[0][1] * x[1] + m[0][2] * x[2], m[1][0] * x[0] + m[1][1] * x[1] + m[1][2] * x[2], m[2][0] * x[0] + m[2][1] * x[1] + m[2][2] * x[2]]
}
/// `mᵀ x`, as nalgebra's product by the transposed matrix.
#[inline(always)]
pub(crate) fn tr_mul_mv(m: &M3, x: V3) -> V3 {
    [m[0][0] * x[0] + m[1][0] * x[1] + m[2][0] * x[2], m[0][1] * x[0] + m[1][1] * x[1] + m[2][1] * x[2], m[0][2] * x[0] + m[1][2] * x[1] + m[2][2] * x[2]]
}

/// `I v` of a body inertia `(m, c, I_c)` (`Inertia::mul_motion`).
#[inline(always)]
pub(crate) fn inertia_mul(m: &Model, i: usize, v: LMotion) -> LMotion {
    let y = &m.inertias[i];
    let c = splat3(&y.com);
    let lin = scale3(L::splat(y.mass), sub3(v.lin, cross(c, v.ang)));
    let mut ic: M3 = [[L::splat(0.0); 3]; 3];
    for (r, row) in ic.iter_mut().enumerate() {
        for (k, e) in row.iter_mut().enumerate() {
            *e = L::splat(y.inertia_com[(r, k)]);
        }
    }
    LMotion { lin, ang: add3(mul_mv(&ic, v.ang), cross(c, lin)) }
}

/// A motion or force in lanes, `[linear; angular]`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LMotion {
    pub(crate) lin: V3,
    pub(crate) ang: V3,
}

impl LMotion {
    #[inline(always)]
    pub(crate) fn add(self, o: LMotion) -> LMotion {
        LMotion { lin: add3(self.lin, o.lin), ang: add3(self.ang, o.ang) }
    }
    #[inline(always)]
    pub(crate) fn splat(m: &Motion) -> LMotion {
        LMotion { lin: splat3(&m.linear), ang: splat3(&m.angular) }
    }
    /// `self ×ₘ m` (`Motion::cross`).
    #[inline(always)]
    pub(crate) fn cross(self, m: LMotion) -> LMotion {
        LMotion { lin: add3(cross(self.ang, m.lin), cross(self.lin, m.ang)), ang: cross(self.ang, m.ang) }
    }
    /// `self ×* f` (`Motion::cross_force`).
    #[inline(always)]
    pub(crate) fn cross_force(self, f: LMotion) -> LMotion {
        LMotion { lin: cross(self.ang, f.lin), ang: add3(cross(self.ang, f.ang), cross(self.lin, f.lin)) }
    }
    /// `self · f` (`Motion::dot`).
    #[inline(always)]
    pub(crate) fn dot(self, f: LMotion) -> L {
        dot3(self.lin, f.lin) + dot3(self.ang, f.ang)
    }
}

/// A rigid transform in lanes (`Se3`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LSe3 {
    pub(crate) r: M3,
    pub(crate) p: V3,
}

impl LSe3 {
    /// `Se3::inv_act_motion`.
    #[inline(always)]
    pub(crate) fn inv_act_motion(&self, m: LMotion) -> LMotion {
        LMotion { lin: tr_mul_mv(&self.r, sub3(m.lin, cross(self.p, m.ang))), ang: tr_mul_mv(&self.r, m.ang) }
    }
    /// `Se3::act_force`.
    #[inline(always)]
    pub(crate) fn act_force(&self, f: LMotion) -> LMotion {
        let lin = mul_mv(&self.r, f.lin);
        LMotion { lin, ang: add3(mul_mv(&self.r, f.ang), cross(self.p, lin)) }
    }
    /// Lane `l` set to `x`.
    #[inline(always)]
    pub(crate) fn set_lane(&mut self, l: usize, x: &Se3) {
        for r in 0..3 {
            for c in 0..3 {
                self.r[r][c].0[l] = x.rotation[(r, c)];
            }
            self.p[r].0[l] = x.translation[r];
        }
    }
}

/// `S_i x_i` of joint `i` in lanes: `Motion::zero()` plus each dof's `S_k x_k`, in order
/// (`jcalc::joint_motion`).
#[inline(always)]
#[allow(clippy::needless_range_loop)] // `S` and `x` indexed by the same dof
pub(crate) fn joint_motion(model: &Model, i: usize, x: &[L]) -> LMotion {
    let iv = model.idx_v[i];
    let mut m = LMotion::default();
    for k in iv..iv + model.nvs[i] {
        let s = LMotion::splat(&model.motion_subspace[k]);
        let xk = x[k];
        m = m.add(LMotion { lin: [s.lin[0] * xk, s.lin[1] * xk, s.lin[2] * xk], ang: [s.ang[0] * xk, s.ang[1] * xk, s.ang[2] * xk] });
    }
    m
}

/// `λX_i(q)` of joint `i` at one state's `q`, as `jcalc::place_joints` computes `li_m_i`.
#[inline]
pub(crate) fn parent_placement(model: &Model, i: usize, q: &[f64]) -> Se3 {
    let placement = &model.joint_placements[i];
    if let JointType::Revolute { axis } | JointType::RevoluteUnbounded { axis } = model.joint_types[i] {
        let (s, cos) = crate::spatial::sin_cos(q[model.idx_q[i]]);
        match axis.signed_basis() {
            Some((c, sign)) if model.placement_quarter_turn[i] == Some(0) => {
                Se3::new(mul_axis_rotation(&Mat3::identity(), c, sign * s, cos), placement.translation)
            }
            _ => revolute_placement_after(&axis, placement, s, cos),
        }
    } else {
        let (iq, nq) = (model.idx_q[i], model.nqs[i]);
        model.joint_types[i].placement_after(placement, &q[iq..iq + nq])
    }
}

/// `λX_i` in lanes for a revolute joint about ±x, ±y, ±z (the usual URDF joint,
/// `jcalc::update_joint_placement`'s fast path: the angles' sines and cosines in lanes
/// ([`sin_cos`]), then [`revolute_in_lanes`]) and for a prismatic joint
/// ([`prismatic_in_lanes`]); `angle(l)` is lane `l`'s joint coordinate. `None` for every other
/// joint (placed lane by lane by the scalar code).
#[inline(always)]
pub(crate) fn placement_in_lanes(model: &Model, i: usize, angle: impl Fn(usize) -> f64) -> Option<LSe3> {
    match model.joint_types[i] {
        JointType::Revolute { axis } | JointType::RevoluteUnbounded { axis } => {
            let (c, sign) = axis.signed_basis()?;
            let (s, cos) = sin_cos(L(std::array::from_fn(angle)));
            Some(revolute_in_lanes(model, i, c, sign, s, cos))
        }
        JointType::Prismatic { axis } => Some(prismatic_in_lanes(model, i, &axis.vector(), L(std::array::from_fn(angle)))),
        _ => None,
    }
}

/// `λX_i` of a revolute joint about `sign · e_c` at the angles of sines `s` and cosines `cos`:
/// the rotation as `mul_axis_rotation(P, c, sign · s, cos)` computes it (`P` the placement
/// rotation, the identity if unrotated), `revolute_placement_after` operation for operation.
#[inline(always)]
pub(crate) fn revolute_in_lanes(model: &Model, i: usize, c: usize, sign: f64, s: L, cos: L) -> LSe3 {
    let s = L::splat(sign) * s;
    let (o, z) = (L::splat(1.0), L::splat(0.0));
    // the placement rotation's columns (the identity's for an unrotated placement, as the
    // scalar code takes it then)
    let pr = &model.joint_placements[i].rotation;
    let e: [V3; 3] = if model.placement_quarter_turn[i] == Some(0) {
        [[o, z, z], [z, o, z], [z, z, o]]
    } else {
        [0, 1, 2].map(|k| [L::splat(pr[(0, k)]), L::splat(pr[(1, k)]), L::splat(pr[(2, k)])])
    };
    let comb = |a: L, u: &V3, b: L, w: &V3| -> V3 { [a * u[0] + b * w[0], a * u[1] + b * w[1], a * u[2] + b * w[2]] };
    let diff = |a: L, u: &V3, b: L, w: &V3| -> V3 { [a * u[0] - b * w[0], a * u[1] - b * w[1], a * u[2] - b * w[2]] };
    let cols: [V3; 3] = match c {
        0 => [e[0], comb(cos, &e[1], s, &e[2]), diff(cos, &e[2], s, &e[1])],
        1 => [diff(cos, &e[0], s, &e[2]), e[1], comb(s, &e[0], cos, &e[2])],
        _ => [comb(cos, &e[0], s, &e[1]), diff(cos, &e[1], s, &e[0]), e[2]],
    };
    LSe3 { r: std::array::from_fn(|r| std::array::from_fn(|k| cols[k][r])), p: splat3(&model.joint_placements[i].translation) }
}

/// `λX_i` of a prismatic joint along `a` at the displacements `x`, as
/// `JointType::placement_after` computes it for one state: `(P, t + P (a x))` (each entry of
/// `a x` is `a_k x`, the product `P (a x)` is nalgebra's: [`mul_mv`]).
#[inline(always)]
pub(crate) fn prismatic_in_lanes(model: &Model, i: usize, a: &Vec3, x: L) -> LSe3 {
    let placement = &model.joint_placements[i];
    let pr: M3 = std::array::from_fn(|r| std::array::from_fn(|k| L::splat(placement.rotation[(r, k)])));
    let d = mul_mv(&pr, [L::splat(a.x) * x, L::splat(a.y) * x, L::splat(a.z) * x]);
    LSe3 { r: pr, p: add3(splat3(&placement.translation), d) }
}

/// `a b` of 3x3 matrices in nalgebra's order (a column of the product at a time, each entry
/// `(a_i0 b_0j + a_i1 b_1j) + a_i2 b_2j`).
#[inline(always)]
pub(crate) fn mul33(a: &M3, b: &M3) -> M3 {
    let mut o = *a;
    for i in 0..3 {
        for j in 0..3 {
            o[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
        }
    }
    o
}

/// `λX_i` of a free-flyer joint in lanes at the coordinates `c` (`[t; x, y, z, w]`, one state
/// per lane), as `JointType::placement_after` computes it for one state: `placement ∘ (R, t)`,
/// `R` from the quaternion normalised and turned into a matrix as nalgebra's
/// `UnitQuaternion::from_quaternion` and `to_rotation_matrix` do (its 4-vector dot
/// `(x² + z²) + (y² + w²)`, the square root, four divisions, then the products and sums of
/// `to_rotation_matrix`), operation for operation.
#[inline(always)]
pub(crate) fn free_flyer_in_lanes(model: &Model, i: usize, c: &[L; 7]) -> LSe3 {
    let t = [c[0], c[1], c[2]];
    let (x, y, z, w) = (c[3], c[4], c[5], c[6]);
    let n2 = L::splat(0.0) + ((x * x + z * z) + (y * y + w * w));
    let mut n = n2;
    for l in 0..LANES {
        n.0[l] = n2.0[l].sqrt();
    }
    let (qi, qj, qk, qw) = (x / n, y / n, z / n, w / n);
    let two = L::splat(2.0);
    let (ww, ii, jj, kk) = (qw * qw, qi * qi, qj * qj, qk * qk);
    let (ij, wk, wj, ik, jk, wi) = (qi * qj * two, qw * qk * two, qw * qj * two, qi * qk * two, qj * qk * two, qw * qi * two);
    let r = [[ww + ii - jj - kk, ij - wk, wj + ik], [wk + ij, ww - ii + jj - kk, jk - wi], [ik - wj, wi + jk, ww - ii - jj + kk]];
    let placement = &model.joint_placements[i];
    let mut pr: M3 = [[L::splat(0.0); 3]; 3];
    for a in 0..3 {
        for b in 0..3 {
            pr[a][b] = L::splat(placement.rotation[(a, b)]);
        }
    }
    LSe3 { r: mul33(&pr, &r), p: add3(mul_mv(&pr, t), splat3(&placement.translation)) }
}

/// `spatial::sin_cos` in lanes, operation for operation (Cody–Waite reduction, Estrin
/// polynomials, the quadrant as products by 0 and ±1); a group with a lane outside |x| < 1e5
/// (or NaN) takes the scalar function lane by lane (libm's `sin_cos` there, as the scalar
/// function does). The constants are trig.rs's. The test for far lanes comes first and the
/// quadrant is read in plain loops, so that the polynomials stay in vector registers (a
/// per-lane fix-up after them, and `array::from_fn` closures, made LLVM compute them one lane
/// at a time: record 0075).
#[inline(always)]
pub(crate) fn sin_cos(x: L) -> (L, L) {
    const PIO2_HI: f64 = 1.5707963267341256;
    const PIO2_MID: f64 = 6.077100506506192e-11;
    const PIO2_LO: f64 = 3.5215598651832e-27;
    const ROUND: f64 = 6755399441055744.0;
    let mut far = false;
    for l in 0..LANES {
        #[allow(clippy::neg_cmp_op_on_partial_ord)] // NaN takes libm's path too
        {
            far |= !(x.0[l].abs() < 1e5);
        }
    }
    if far {
        let (mut sn, mut cs) = (L::splat(0.0), L::splat(0.0));
        for l in 0..LANES {
            (sn.0[l], cs.0[l]) = crate::spatial::sin_cos(x.0[l]);
        }
        return (sn, cs);
    }
    let sp = L::splat;
    let t = x * sp(std::f64::consts::FRAC_2_PI) + sp(ROUND);
    let k = t - sp(ROUND);
    let r = ((x - k * sp(PIO2_HI)) - k * sp(PIO2_MID)) - k * sp(PIO2_LO);
    let z = r * r;
    let z2 = z * z;
    let z4 = z2 * z2;
    let sin_poly = ((sp(-1.0 / 6.0) + z * sp(1.0 / 120.0)) + z2 * (sp(-1.0 / 5040.0) + z * sp(1.0 / 362880.0)))
        + z4 * ((sp(-1.0 / 39916800.0) + z * sp(1.0 / 6227020800.0)) + z2 * sp(-1.0 / 1307674368000.0));
    let s = r + (r * z) * sin_poly;
    let cos_poly = ((sp(-0.5) + z * sp(1.0 / 24.0)) + z2 * (sp(-1.0 / 720.0) + z * sp(1.0 / 40320.0)))
        + z4 * ((sp(-1.0 / 3628800.0) + z * sp(1.0 / 479001600.0)) + z2 * (sp(-1.0 / 87178291200.0) + z * sp(1.0 / 20922789888000.0)));
    let c = sp(1.0) + z * cos_poly;
    // trig.rs's QUADRANT rows ((1, 0, 0, 1), (0, −1, 1, 0), (−1, 0, 0, −1), (0, 1, −1, 0))
    // built from the quadrant's two bits with integer lane operations (a
    // table read per lane moved every lane to the integer registers and back): a 0 row entry
    // is +0.0, a ±1 one takes its sign from the quadrant's high bit
    const ONE: u64 = 0x3ff0_0000_0000_0000;
    let mut m = [L::splat(0.0); 4];
    for l in 0..LANES {
        let quadrant = t.0[l].to_bits() & 3;
        let (odd, high) = (quadrant & 1, (quadrant & 2) << 62);
        let (even_mask, odd_mask) = ((odd ^ 1).wrapping_neg(), odd.wrapping_neg());
        let row0 = (ONE | high) & even_mask;
        m[0].0[l] = f64::from_bits(row0);
        m[1].0[l] = f64::from_bits((ONE | (high ^ (1 << 63))) & odd_mask);
        m[2].0[l] = f64::from_bits((ONE | high) & odd_mask);
        m[3].0[l] = f64::from_bits(row0);
    }
    (m[0] * s + m[2] * c, m[1] * s + m[3] * c)
}

/// `λX_i`'s rotation as `P R_a(θ)` for a revolute joint about ±x, ±y, ±z (`a`) behind a placement
/// whose rotation `P` is a quarter turn: row `i` of `P` is `sign[i]` at column `perm[i]`, and
/// `inv` is `perm`'s inverse. ABA in lanes turns vectors and inertias with it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AxisRot {
    pub(crate) a: usize,
    pub(crate) perm: [usize; 3],
    pub(crate) inv: [usize; 3],
    pub(crate) sign: [f64; 3],
    /// `P` is the identity.
    pub(crate) identity: bool,
}

impl AxisRot {
    fn of(model: &Model, i: usize) -> Option<AxisRot> {
        let a = model.elementary_rotation_axis[i]?;
        let r = &model.joint_placements[i].rotation;
        let mut out = AxisRot { a, perm: [0; 3], inv: [0; 3], sign: [0.0; 3], identity: false };
        for row in 0..3 {
            let col = (0..3).find(|&c| r[(row, c)].abs() == 1.0)?;
            if (0..3).any(|c| c != col && r[(row, c)] != 0.0) {
                return None;
            }
            (out.perm[row], out.inv[col], out.sign[row]) = (col, row, r[(row, col)]);
        }
        out.identity = out.perm == [0, 1, 2] && out.sign == [1.0; 3];
        Some(out)
    }
}

/// The lane buffers of one thread, sized for the model once.
pub(crate) struct LaneWorkspace {
    /// `λX_i` per joint.
    pub(crate) li: Vec<LSe3>,
    /// Body velocities per joint.
    pub(crate) v: Vec<LMotion>,
    /// Body accelerations with gravity per joint.
    pub(crate) a_gf: Vec<LMotion>,
    /// Body forces per joint.
    pub(crate) f: Vec<LMotion>,
    /// The group's q̇, q̈ (or τ), result, per dof.
    pub(crate) x1: Vec<L>,
    pub(crate) x2: Vec<L>,
    pub(crate) out: Vec<L>,
    /// ABA: `c = v × v_J`, `IA` (upper triangle), `D⁻¹` per joint; `U` columns and `u` per
    /// dof; each body's 6x6 inertia (constant, scalar, upper triangle).
    pub(crate) c: Vec<LMotion>,
    pub(crate) ia: Vec<S6>,
    pub(crate) d_inv: Vec<M6>,
    pub(crate) u_cols: Vec<V6>,
    pub(crate) u: Vec<L>,
    pub(crate) inertia21: Vec<[f64; 21]>,
    /// Each joint's [`AxisRot`], if it has one.
    pub(crate) axis_rot: Vec<Option<AxisRot>>,
}

impl LaneWorkspace {
    pub(crate) fn new(model: &Model) -> Self {
        let (nj, nv) = (model.njoints, model.nv);
        LaneWorkspace {
            li: vec![LSe3::default(); nj],
            v: vec![LMotion::default(); nj],
            a_gf: vec![LMotion::default(); nj],
            f: vec![LMotion::default(); nj],
            x1: vec![L::default(); nv],
            x2: vec![L::default(); nv],
            out: vec![L::default(); nv],
            c: vec![LMotion::default(); nj],
            ia: vec![[L::default(); 21]; nj],
            d_inv: vec![[[L::default(); 6]; 6]; nj],
            u_cols: vec![[L::default(); 6]; nv],
            u: vec![L::default(); nv],
            inertia21: model.inertias.iter().map(|y| pack(&y.to_matrix())).collect(),
            axis_rot: (0..nj).map(|i| AxisRot::of(model, i)).collect(),
        }
    }

    /// Loads the group of states `g * LANES ..` (of `k`): `λX_i` of every joint, and the rows
    /// of `x1`, `x2` (`nv` per state) into the lane vectors. Lanes past `k` repeat the last
    /// state (their results are not stored).
    #[inline(always)]
    pub(crate) fn load(&mut self, model: &Model, g: usize, k: usize, q: &[f64], x1: &[f64], x2: Option<&[f64]>) {
        let (nq, nv) = (model.nq, model.nv);
        let row = |l: usize| (g * LANES + l).min(k - 1);
        for i in 1..model.njoints {
            if let Some(x) = placement_in_lanes(model, i, |l| q[row(l) * nq + model.idx_q[i]]) {
                self.li[i] = x;
                continue;
            }
            if model.joint_types[i] == JointType::FreeFlyer {
                let c = std::array::from_fn(|k| L(std::array::from_fn(|l| q[row(l) * nq + model.idx_q[i] + k])));
                self.li[i] = free_flyer_in_lanes(model, i, &c);
                continue;
            }
            for l in 0..LANES {
                let s = row(l);
                let x = parent_placement(model, i, &q[s * nq..(s + 1) * nq]);
                self.li[i].set_lane(l, &x);
            }
        }
        for l in 0..LANES {
            let s = row(l);
            for d in 0..nv {
                self.x1[d].0[l] = x1[s * nv + d];
            }
            if let Some(x2) = x2 {
                for d in 0..nv {
                    self.x2[d].0[l] = x2[s * nv + d];
                }
            }
        }
    }

    /// Stores the lanes of `out` that hold states (`< k`) into their rows of `dst`.
    #[inline(always)]
    pub(crate) fn store(&self, model: &Model, g: usize, k: usize, dst: &mut [f64]) {
        let nv = model.nv;
        for l in 0..LANES.min(k - g * LANES) {
            let s = g * LANES + l;
            for d in 0..nv {
                dst[s * nv + d] = self.out[d].0[l];
            }
        }
    }
}

/// [`sin_cos`] for the derivative kernels (`batch/rnea_derivatives_lanes.rs`).
#[inline(always)]
pub(crate) fn lanes_sin_cos(x: L) -> (L, L) {
    sin_cos(x)
}

/// [`placement_in_lanes`] for the derivative kernels.
#[inline(always)]
pub(crate) fn lanes_placement(model: &Model, i: usize, angle: impl Fn(usize) -> f64) -> Option<LSe3> {
    placement_in_lanes(model, i, angle)
}

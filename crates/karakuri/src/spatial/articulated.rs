//! The articulated-body inertia `IA` of the articulated-body algorithm (RBDA Table 7.1) as its
//! 21 distinct entries: a symmetric 6x6 `[[A, B], [Bᵀ, C]]` acting on `[linear; angular]`
//! motions, `A` and `C` symmetric (six entries each), `B` a general 3x3. Its products read the
//! structure a dense 6x6 would multiply through: a column for a unit motion subspace, the
//! upper entries for a symmetric update, and a revolute joint's rotation as 2x2 plane turns.

use super::inertia::rotate_symmetric;
use super::quarter_turn::QUARTER_TURNS;
use super::{Mat3, OriginInertia, Se3, Vec3};

/// Index of entry `(i, j)` of a symmetric 3x3 in its six stored entries (xx, yy, zz, xy, xz,
/// yz).
#[inline(always)]
pub(crate) const fn sym(i: usize, j: usize) -> usize {
    if i == j {
        i
    } else {
        i + j + 2
    }
}

/// A symmetric 6x6 `[[A, B], [Bᵀ, C]]` (an articulated-body inertia), `A` and `C` by their six
/// entries (see [`sym`]), `B` by rows.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ArticulatedInertia {
    /// Linear-linear block (symmetric).
    pub(crate) a: [f64; 6],
    /// Linear-angular block, rows.
    pub(crate) b: [[f64; 3]; 3],
    /// Angular-angular block (symmetric).
    pub(crate) c: [f64; 6],
}

/// `(x, y)` turned in their plane by the angle of cosine `c` and sine `s`.
#[inline(always)]
fn turn(c: f64, s: f64, x: f64, y: f64) -> (f64, f64) {
    (c * x - s * y, s * x + c * y)
}

/// `R S Rᵀ` of a symmetric `S` (six entries) for `R` the rotation about axis `K` in the plane
/// `(I, J)` by the angle of cosine `c`, sine `s` (`c2`, `s2` those of the double angle).
#[inline(always)]
fn turn_symmetric<const I: usize, const J: usize, const K: usize>(m: &[f64; 6], c: f64, s: f64, c2: f64, s2: f64) -> [f64; 6] {
    let (aii, ajj, aij) = (m[sym(I, I)], m[sym(J, J)], m[sym(I, J)]);
    let (half_sum, half_diff) = (0.5 * (aii + ajj), 0.5 * (aii - ajj));
    let rii = half_sum + half_diff * c2 - aij * s2;
    let mut o = [0.0; 6];
    o[sym(I, I)] = rii;
    o[sym(J, J)] = (aii + ajj) - rii;
    o[sym(I, J)] = half_diff * s2 + aij * c2;
    o[sym(K, K)] = m[sym(K, K)];
    (o[sym(I, K)], o[sym(J, K)]) = turn(c, s, m[sym(I, K)], m[sym(J, K)]);
    o
}

/// `P S Pᵀ` of a symmetric `S` (six entries) for quarter turn `Q`.
#[inline(always)]
fn conjugate_symmetric<const Q: u8>(m: &[f64; 6]) -> [f64; 6] {
    let (index, sign) = QUARTER_TURNS[Q as usize];
    let mut o = [0.0; 6];
    for a in 0..3 {
        for b in a..3 {
            o[sym(index[a], index[b])] = sign[a] * sign[b] * m[sym(a, b)];
        }
    }
    o
}

impl ArticulatedInertia {
    /// The 6x6 of a rigid body's inertia about its frame origin: `[[m 1, −[h]×], [[h]×, I_o]]`.
    #[inline(always)]
    pub(crate) fn from_origin(y: &OriginInertia) -> Self {
        let (m, h, i) = (y.mass, &y.h, &y.i_o);
        ArticulatedInertia {
            a: [m, m, m, 0.0, 0.0, 0.0],
            b: [[0.0, h.z, -h.y], [-h.z, 0.0, h.x], [h.y, -h.x, 0.0]],
            c: [i[(0, 0)], i[(1, 1)], i[(2, 2)], i[(0, 1)], i[(0, 2)], i[(1, 2)]],
        }
    }

    /// Column `e` of the 6x6 (`IA e_e`, `e` in `0..6`).
    #[inline(always)]
    pub(crate) fn column(&self, e: usize) -> [f64; 6] {
        let (a, b, c) = (&self.a, &self.b, &self.c);
        if e < 3 {
            [a[sym(0, e)], a[sym(1, e)], a[sym(2, e)], b[e][0], b[e][1], b[e][2]]
        } else {
            let k = e - 3;
            [b[0][k], b[1][k], b[2][k], c[sym(0, k)], c[sym(1, k)], c[sym(2, k)]]
        }
    }

    /// `IA x` for a flattened `[linear; angular]` vector.
    #[inline(always)]
    pub(crate) fn mul6(&self, x: &[f64; 6]) -> [f64; 6] {
        let (a, b, c) = (&self.a, &self.b, &self.c);
        let mut o = [0.0; 6];
        for r in 0..3 {
            o[r] = (a[sym(r, 0)] * x[0] + a[sym(r, 1)] * x[1] + a[sym(r, 2)] * x[2]) + (b[r][0] * x[3] + b[r][1] * x[4] + b[r][2] * x[5]);
            o[3 + r] = (b[0][r] * x[0] + b[1][r] * x[1] + b[2][r] * x[2]) + (c[sym(r, 0)] * x[3] + c[sym(r, 1)] * x[4] + c[sym(r, 2)] * x[5]);
        }
        o
    }

    /// `self −= w uᵀ` on the stored (upper) entries: the update `IA − U D⁻¹ Uᵀ` with `w` a
    /// column of `U D⁻¹`, `u` the matching column of `U`.
    #[inline(always)]
    pub(crate) fn sub_outer(&mut self, w: &[f64; 6], u: &[f64; 6]) {
        for i in 0..3 {
            for j in i..3 {
                self.a[sym(i, j)] -= w[i] * u[j];
                self.c[sym(i, j)] -= w[3 + i] * u[3 + j];
            }
            for j in 0..3 {
                self.b[i][j] -= w[i] * u[3 + j];
            }
        }
    }

    /// `self += X* y X⁻¹`: `y` given in the child frame of `x` (parent_from_child), expressed in
    /// the parent frame, for any rotation (three 3x3 conjugations).
    #[inline(always)]
    pub(crate) fn add_transformed(&mut self, y: &ArticulatedInertia, x: &Se3) {
        let r = &x.rotation;
        let full = |m: &[f64; 6]| Mat3::new(m[0], m[3], m[4], m[3], m[1], m[5], m[4], m[5], m[2]);
        let six = |m: &Mat3| [m[(0, 0)], m[(1, 1)], m[(2, 2)], m[(0, 1)], m[(0, 2)], m[(1, 2)]];
        let a = six(&rotate_symmetric(r, &full(&y.a)));
        let c = six(&rotate_symmetric(r, &full(&y.c)));
        let bm = Mat3::from_fn(|i, j| y.b[i][j]);
        let b1 = r * bm * r.transpose();
        let b = [[b1[(0, 0)], b1[(0, 1)], b1[(0, 2)]], [b1[(1, 0)], b1[(1, 1)], b1[(1, 2)]], [b1[(2, 0)], b1[(2, 1)], b1[(2, 2)]]];
        self.add_translated(&a, &b, &c, &x.translation);
    }

    /// [`ArticulatedInertia::add_transformed`] for `x.rotation = P R_K(θ)`: `R_K(θ)` the
    /// elementary rotation about axis `K` in the plane `(I, J)` and `P` the quarter turn `Q`
    /// of the joint placement (0: none), both read from `x.rotation` (as
    /// `OriginInertia::add_transformed_plane`). The rotation turns rows and columns `I`, `J` in
    /// their plane and `P` only moves and negates entries: about 40 products instead of 150.
    #[inline(always)]
    pub(crate) fn add_transformed_plane<const Q: u8, const I: usize, const J: usize, const K: usize>(&mut self, y: &ArticulatedInertia, x: &Se3) {
        let (index, sign) = QUARTER_TURNS[Q as usize];
        let (s, c) = (sign[J] * x.rotation[(index[J], I)], sign[I] * x.rotation[(index[I], I)]);
        let (c2, s2) = (c * c - s * s, 2.0 * s * c);
        let mut a = turn_symmetric::<I, J, K>(&y.a, c, s, c2, s2);
        let mut cc = turn_symmetric::<I, J, K>(&y.c, c, s, c2, s2);
        // B: rows I, J turned, then columns I, J
        let mut r = y.b;
        for col in 0..3 {
            (r[I][col], r[J][col]) = turn(c, s, y.b[I][col], y.b[J][col]);
        }
        let mut b = r;
        for row in 0..3 {
            (b[row][I], b[row][J]) = turn(c, s, r[row][I], r[row][J]);
        }
        if Q != 0 {
            a = conjugate_symmetric::<Q>(&a);
            cc = conjugate_symmetric::<Q>(&cc);
            let mut o = [[0.0; 3]; 3];
            for i in 0..3 {
                for j in 0..3 {
                    o[index[i]][index[j]] = sign[i] * sign[j] * b[i][j];
                }
            }
            b = o;
        }
        self.add_translated(&a, &b, &cc, &x.translation);
    }

    /// `self +=` the articulated inertia of blocks `a`, `b`, `c` (already in parent axes)
    /// moved by the translation `p`: `B' = B − A [p]×`, `C' = C + [p]× B' + ([p]× B)ᵀ`
    /// (`[[1, 0], [[p]×, 1]] [[A, B], [Bᵀ, C]] [[1, −[p]×], [0, 1]]`), upper entries only.
    #[inline(always)]
    fn add_translated(&mut self, a: &[f64; 6], b: &[[f64; 3]; 3], c: &[f64; 6], p: &Vec3) {
        let (px, py, pz) = (p.x, p.y, p.z);
        let mut b2 = *b;
        for i in 0..3 {
            let (ai0, ai1, ai2) = (a[sym(i, 0)], a[sym(i, 1)], a[sym(i, 2)]);
            b2[i][0] -= ai1 * pz - ai2 * py;
            b2[i][1] -= ai2 * px - ai0 * pz;
            b2[i][2] -= ai0 * py - ai1 * px;
        }
        // [p]× m, row i
        let skew_row = |m: &[[f64; 3]; 3], i: usize, j: usize| match i {
            0 => py * m[2][j] - pz * m[1][j],
            1 => pz * m[0][j] - px * m[2][j],
            _ => px * m[1][j] - py * m[0][j],
        };
        for i in 0..3 {
            for j in i..3 {
                self.a[sym(i, j)] += a[sym(i, j)];
                self.c[sym(i, j)] += (c[sym(i, j)] + skew_row(&b2, i, j)) + skew_row(b, j, i);
            }
            for j in 0..3 {
                self.b[i][j] += b2[i][j];
            }
        }
    }

    /// The full 6x6 (tests).
    #[cfg(test)]
    pub(crate) fn to_matrix(&self) -> super::Mat6 {
        let mut m = super::Mat6::zeros();
        for i in 0..3 {
            for j in 0..3 {
                m[(i, j)] = self.a[sym(i, j)];
                m[(i, 3 + j)] = self.b[i][j];
                m[(3 + j, i)] = self.b[i][j];
                m[(3 + i, 3 + j)] = self.c[sym(i, j)];
            }
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spatial::quarter_turn::{dispatch_quarter_turn, quarter_turn_matrix};
    use crate::spatial::{rotation_about, Inertia, Mat6};

    fn sample() -> ArticulatedInertia {
        // a rigid body's inertia minus a rank-one update: symmetric, not a rigid inertia
        let y = OriginInertia::from(&Inertia::new(1.7, Vec3::new(0.1, -0.2, 0.3), Mat3::new(0.3, 0.01, -0.02, 0.01, 0.2, 0.03, -0.02, 0.03, 0.25)));
        let mut ia = ArticulatedInertia::from_origin(&y);
        let u = ia.column(4);
        let w = u.map(|x| x / (u[4] + 0.1));
        ia.sub_outer(&w, &u);
        ia
    }

    /// `X* I X⁻¹` as 6x6 products, for `x` parent_from_child.
    fn dense_transform(m: &Mat6, x: &Se3) -> Mat6 {
        let (r, p) = (x.rotation, crate::spatial::skew(&x.translation));
        let mut xf = Mat6::zeros(); // X*: forces child -> parent
        xf.fixed_view_mut::<3, 3>(0, 0).copy_from(&r);
        xf.fixed_view_mut::<3, 3>(3, 3).copy_from(&r);
        xf.fixed_view_mut::<3, 3>(3, 0).copy_from(&(p * r));
        xf * m * xf.transpose()
    }

    #[test]
    fn from_origin_matches_the_rigid_inertia() {
        let y = OriginInertia::from(&Inertia::new(1.7, Vec3::new(0.1, -0.2, 0.3), Mat3::new(0.3, 0.01, -0.02, 0.01, 0.2, 0.03, -0.02, 0.03, 0.25)));
        assert!((ArticulatedInertia::from_origin(&y).to_matrix() - y.to_matrix()).amax() < 1e-15);
    }

    #[test]
    fn products_and_updates_match_the_dense_matrix() {
        let ia = sample();
        let m = ia.to_matrix();
        let x = [0.3, -0.1, 0.7, 0.2, -0.5, 0.4];
        let y = ia.mul6(&x);
        let ym = m * crate::spatial::Vec6::from_column_slice(&x);
        for e in 0..6 {
            assert!((y[e] - ym[e]).abs() < 1e-15);
            let col = ia.column(e);
            for r in 0..6 {
                assert_eq!(col[r], m[(r, e)]);
            }
        }
    }

    #[test]
    fn transforms_match_the_dense_product() {
        let ia = sample();
        let m = ia.to_matrix();
        let p = Vec3::new(0.2, -0.4, 0.1);
        let x = Se3::new(crate::spatial::exp3(&Vec3::new(0.3, -0.5, 0.9)), p);
        let mut out = ArticulatedInertia::default();
        out.add_transformed(&ia, &x);
        assert!((out.to_matrix() - dense_transform(&m, &x)).amax() < 1e-14);
        fn plane<const Q: u8>(ia: &ArticulatedInertia, m: &Mat6, p: Vec3) {
            let axes = [Vec3::x(), Vec3::y(), Vec3::z()];
            for (k, axis) in axes.iter().enumerate() {
                let x = Se3::new(quarter_turn_matrix(Q) * rotation_about(axis, 0.7), p);
                let mut out = ArticulatedInertia::default();
                match k {
                    0 => out.add_transformed_plane::<Q, 1, 2, 0>(ia, &x),
                    1 => out.add_transformed_plane::<Q, 2, 0, 1>(ia, &x),
                    _ => out.add_transformed_plane::<Q, 0, 1, 2>(ia, &x),
                }
                assert!((out.to_matrix() - dense_transform(m, &x)).amax() < 1e-14, "turn {Q}, axis {k}");
            }
        }
        for q in 0..24u8 {
            dispatch_quarter_turn!(q, plane(&ia, &m, p));
        }
    }
}

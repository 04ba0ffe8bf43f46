//! The condensation of a robot's servo rows out of the active-set solve's sets
//! (`active.rs`): a Schur complement formed once per try, so that each set solves over the
//! contact rows only (0079).

use super::lu::{chol_factor, chol_lower, chol_lower_rows, chol_upper, sub_dots, sub_rows};
use super::rows::RowKind;
use super::active::held;
use super::kernels::rows_to_lanes;
use super::workspace::{Dense, State, EXACT_MAX_ROWS};

/// Servo rows (bounded rows free in a try's first set) from which a try condenses them out
/// of its sets: fewer are not worth the complement's cost.
const SCHUR_MIN_SERVOS: usize = 4;

impl Dense {
    /// Condenses the servo rows (bounded rows free in the try's first set, at least
    /// [`SCHUR_MIN_SERVOS`] of them) out of the try's sets, a Schur complement: factors
    /// `W_SS + eps I` once and forms `wr = W_CC − W_CS (W_SS + eps I)⁻¹ W_SC` over the other
    /// rows. A set's equations and unknowns are combinations of the contact rows and columns
    /// only (slides, held rows), so its condensed matrix is the same combinations of `wr`.
    /// With `W_SS + eps I = Uᵀ U` (a Cholesky factor, `ss`) and `z = U⁻ᵀ W_SC`, `wr = W_CC − zᵀ z`.
    /// Reads `state`, `w`; writes `servo` (empty: none condensed), `in_servo`, `ctr`, `ss`, `z`, `zt`, `wr`.
    pub(super) fn schur_start(&mut self, kind: &[RowKind], eps: f64) {
        let k = self.rows.len();
        self.servo.clear();
        self.servo.extend((0..k).filter(|&p| matches!(kind[self.rows[p]], RowKind::Bounded { .. }) && self.state[p] == State::Free));
        self.in_servo.clear();
        self.in_servo.resize(k, false);
        let m = self.servo.len();
        if m < SCHUR_MIN_SERVOS || m == k {
            self.servo.clear();
            return;
        }
        self.ss.clear();
        self.ss.resize(m * m, 0.0);
        for (x, &p) in self.servo.iter().enumerate() {
            self.in_servo[p] = true;
            let wp = &self.w[p * k..][..k];
            for (s, &q) in self.ss[x * m..(x + 1) * m].iter_mut().zip(&self.servo) {
                *s = wp[q];
            }
            self.ss[x * m + x] += eps;
        }
        if !chol_factor(&mut self.ss, m, 1e-3 * eps) {
            self.servo.clear();
            self.in_servo.iter_mut().for_each(|s| *s = false);
            return;
        }
        self.ctr.clear();
        self.schur_cover();
    }

    /// Forms `z = U⁻ᵀ W_SC` (`W_SS + eps I = Uᵀ U`), `zt` and `wr` over the rows of C a set
    /// reads (`ctr`: the rows not condensed out that are free or sliding, a set's equations'
    /// and unknowns'; a separated contact's and a held row's are not read, their impulses
    /// zero in the servo impulses' sums): the try's first set over its rows, a later set
    /// that reads more (a contact joining) over all of them again. Each entry is the same
    /// sum whichever other rows are in C (`z`'s columns solved each on its own, `wr`'s entries
    /// by [`schur_lower`]).
    pub(super) fn schur_cover(&mut self) {
        let (k, m) = (self.rows.len(), self.servo.len());
        let read = |d: &Dense, p: usize| !d.in_servo[p] && matches!(d.state[p], State::Free | State::Slide);
        // the rows in C so far and those read now, merged in place from the back (`ctr`
        // ascending; the union holds at least as many rows after any row as `ctr` did)
        let old = self.ctr.len();
        let mut at = 0;
        let mut nc = 0;
        for p in 0..k {
            let was = at < old && self.ctr[at] == p;
            at += usize::from(was);
            nc += usize::from(was || read(self, p));
        }
        if nc == old {
            return;
        }
        self.ctr.resize(nc, 0);
        let (mut i, mut j) = (old, nc);
        for p in (0..k).rev() {
            let was = i > 0 && self.ctr[i - 1] == p;
            i -= usize::from(was);
            if was || read(self, p) {
                j -= 1;
                self.ctr[j] = p;
            }
        }
        // z over C, its rows solved together, each padded with zeros to a multiple of four
        // entries (`schur_lower`'s tiles)
        let nz = padded(nc);
        self.z.clear();
        for &s in &self.servo {
            let ws = &self.w[s * k..][..k];
            self.z.extend(self.ctr.iter().map(|&q| ws[q]));
            self.z.resize(self.z.len() + nz - nc, 0.0);
        }
        chol_lower_rows(&self.ss[..m * m], &mut self.z[..m * nz], nz);
        // zᵀ, for the servo impulses' sums side by side (`servo_impulses`); `zt` keeps its
        // length (no entry is read before it is written)
        if self.zt.len() < nc * m {
            self.zt.resize(nc * m, 0.0);
        }
        let mut offs = [0; EXACT_MAX_ROWS];
        for (x, o) in offs[..m].iter_mut().enumerate() {
            *o = x * nz;
        }
        rows_to_lanes(&self.z[..m * nz], &offs[..m], nc, &mut self.zt[..nc * m], m);
        // only `wr`'s C x C entries are read, and it is symmetric: its lower triangle formed,
        // mirrored
        self.wr.resize(k * k, 0.0);
        schur_lower((&self.w, k), &self.ctr, (&self.z, m, nz), &mut self.wr);
    }

    /// Whether this set's servo rows are condensed out (all of them still free).
    #[inline]
    pub(super) fn schur_on(&self) -> bool {
        !self.servo.is_empty() && self.servo.iter().all(|&p| self.state[p] == State::Free)
    }

    /// The servo rows' right-hand side `rs` (`g` and the proximal term at the current
    /// impulses), `ys = U⁻ᵀ rs` and the other rows' `gr = g − W_CS (W_SS + eps I)⁻¹ rs = g −
    /// zᵀ ys`.
    pub(super) fn reduce(&mut self, kind: &[RowKind], eps: f64) {
        let (k, m) = (self.rows.len(), self.servo.len());
        self.rs.clear();
        for x in 0..m {
            let s = self.servo[x];
            let r = self.g[s] + eps * self.prox(kind, s);
            self.rs.push(r);
        }
        self.ys.clear();
        self.ys.extend_from_slice(&self.rs);
        chol_lower(&self.ss[..m * m], &mut self.ys[..m]);
        // on C's rows (the servo rows' entries of `gr` are never read)
        let nz = padded(self.ctr.len());
        self.crow.clear();
        self.crow.extend(self.ctr.iter().map(|&q| self.g[q]));
        self.crow.resize(nz, 0.0);
        sub_rows(&mut self.crow[..nz], &self.z[..m * nz], &self.ys[..m]);
        self.gr.clear();
        self.gr.extend_from_slice(&self.g[..k]);
        for (&q, &g) in self.ctr.iter().zip(&self.crow) {
            self.gr[q] = g;
        }
    }

    /// The servo rows' impulses from the other rows' (in `lambda`): `(W_SS + eps I)⁻¹ (rs −
    /// W_SC λ_C) = U⁻¹ (ys − z λ_C)`, the held rows' part being in `rs` already.
    pub(super) fn servo_impulses(&mut self, kind: &[RowKind]) {
        let (m, nc) = (self.servo.len(), self.ctr.len());
        // z is over C's rows; the held rows' are masked here
        self.crow.clear();
        self.crow.extend(self.ctr.iter().map(|&q| if held(self.state[q], kind[self.rows[q]]) == 0.0 { self.lambda[q] } else { 0.0 }));
        sub_dots(&mut self.ys[..m], &self.zt[..nc * m], &self.crow);
        chol_upper(&self.ss[..m * m], &mut self.ys[..m]);
        for x in 0..m {
            self.lambda[self.servo[x]] = self.ys[x];
        }
    }
}

twice! {
    /// `wr`'s lower triangle over C (mirrored): `W_CC − zᵀ z` (`w`: `W`, `k x k`; `z`: `m` rows
    /// over `ctr`, `nz` apart, `nz` a multiple of four at least `ctr.len()`), each entry from
    /// `W`'s less the servos' terms in order, in tiles of 4 x 4 entries (a tile's sixteen sums
    /// in registers, per servo one row of four `z` entries against four broadcast ones). Every
    /// term is subtracted, also where the row's `z` entry is zero: `W`'s entries are never −0
    /// (each is `0 +` its sum, `w_lower` and `cross_dot`), so no sum is ever −0 and a ±0 term
    /// leaves it as it is; the same bits as skipping it.
    fn schur_lower((w, k): (&[f64], usize), ctr: &[usize], (z, m, nz): (&[f64], usize, usize), wr: &mut [f64]) {
        let nc = ctr.len();
        let z = &z[..m * nz];
        for a0 in (0..nc).step_by(4) {
            for b0 in (0..=a0).step_by(4) {
                // a whole tile over runs of W's rows (C's next four rows in a row): its quads
                // read and written as quads
                let run = |x0: usize| x0 + 4 <= nc && ctr[x0 + 3] == ctr[x0] + 3;
                if run(a0) && run(b0) {
                    schur_run_tile((w, k), (ctr[a0], ctr[b0]), (z, nz), (a0, b0), wr);
                    continue;
                }
                // the tile's entries of `W` (rows and columns past C: zeros, not written)
                let mut acc = [[0.0f64; 4]; 4];
                for (i, row) in acc.iter_mut().enumerate().take(nc - a0) {
                    let wp = &w[ctr[a0 + i] * k..][..k];
                    for (c, &q) in row.iter_mut().zip(&ctr[b0..(b0 + 4).min(nc)]) {
                        *c = wp[q];
                    }
                }
                minus_zz(&mut acc, (z, nz), (a0, b0));
                for (i, row) in acc.iter().enumerate().take(nc - a0) {
                    let (a, p) = (a0 + i, ctr[a0 + i]);
                    for (j, &c) in row.iter().enumerate().take((a + 1 - b0).min(4)) {
                        let q = ctr[b0 + j];
                        wr[p * k + q] = c;
                        wr[q * k + p] = c;
                    }
                }
            }
        }
    }
}

/// `acc −= z_aᵀ z_b` over `z`'s rows (`nz` wide), `z_a` = a row's entries `a0..a0 + 4`, `z_b`
/// its `b0..b0 + 4`: the condensed tile's update, row by row in `z`'s order.
#[inline(always)]
fn minus_zz(acc: &mut [[f64; 4]; 4], (z, nz): (&[f64], usize), (a0, b0): (usize, usize)) {
    for zx in z.chunks_exact(nz) {
        let za: &[f64; 4] = zx[a0..a0 + 4].try_into().expect("4 entries");
        let zb: &[f64; 4] = zx[b0..b0 + 4].try_into().expect("4 entries");
        for i in 0..4 {
            for j in 0..4 {
                acc[i][j] -= za[i] * zb[j];
            }
        }
    }
}

/// [`schur_lower`]'s tile of rows `p0..p0 + 4` and columns `q0..q0 + 4` of `W` (C's rows
/// `a0..`, `b0..`): the same sums, the tile's `W` read as four quads, written as four and,
/// mirrored, four more (a diagonal tile, `p0 = q0`: its lower triangle's entries, mirrored,
/// written as four quads).
#[inline(always)]
fn schur_run_tile((w, k): (&[f64], usize), (p0, q0): (usize, usize), (z, nz): (&[f64], usize), (a0, b0): (usize, usize), wr: &mut [f64]) {
    let quad = |m: &[f64], r: usize, c: usize| -> [f64; 4] { m[r * k + c..][..4].try_into().expect("4 entries") };
    let mut acc: [[f64; 4]; 4] = std::array::from_fn(|i| quad(w, p0 + i, q0));
    minus_zz(&mut acc, (z, nz), (a0, b0));
    if p0 == q0 {
        for i in 0..4 {
            let row: [f64; 4] = std::array::from_fn(|j| if j <= i { acc[i][j] } else { acc[j][i] });
            wr[(p0 + i) * k + q0..][..4].copy_from_slice(&row);
        }
        return;
    }
    for (i, row) in acc.iter().enumerate() {
        wr[(p0 + i) * k + q0..][..4].copy_from_slice(row);
    }
    for j in 0..4 {
        let col = [acc[0][j], acc[1][j], acc[2][j], acc[3][j]];
        wr[(q0 + j) * k + p0..][..4].copy_from_slice(&col);
    }
}

/// `n` rounded up to a multiple of four: the length of `z`'s rows over `n` rows of C.
#[inline]
fn padded(n: usize) -> usize {
    (n + 3) & !3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schur_tiles_are_the_entry_by_entry_sums_bit_for_bit() {
        // k = 13 rows, C = 9 of them (not a multiple of four, out of order in `W`), 4 servos;
        // `W` without −0 entries (as `w_lower` and `cross_dot` make it), `z` with zeros (the
        // terms the entry-by-entry sums skipped) and −0s
        let (k, m) = (13, 4);
        for ctr in [&[0, 2, 3, 5, 6, 8, 9, 11, 12][..], &[0, 1, 2, 3, 5, 6, 7, 8, 10, 11][..]] {
            schur_tiles_case(k, m, ctr);
        }
    }

    /// [`schur_lower`] against the entry-by-entry sums over C rows `ctr` of `k`, `m` servos.
    fn schur_tiles_case(k: usize, m: usize, ctr: &[usize]) {
        let nc = ctr.len();
        let nz = padded(nc);
        let w: Vec<f64> = (0..k * k).map(|i| 0.0 + ((i * 37 % 29) as f64 - 14.0) / 7.0).collect();
        let mut z = vec![0.0; m * nz];
        for x in 0..m {
            for c in 0..nc {
                z[x * nz + c] = match (x + 2 * c) % 7 {
                    0 => 0.0,
                    1 => -0.0,
                    r => (r as f64 - 3.5) * (1.0 + x as f64 * 0.31) / (1.0 + c as f64),
                };
            }
        }
        let mut wr = vec![f64::NAN; k * k];
        schur_lower((&w, k), ctr, (&z, m, nz), &mut wr);
        for a in 0..nc {
            for b in 0..=a {
                let (p, q) = (ctr[a], ctr[b]);
                let mut c = w[p * k + q];
                for x in 0..m {
                    let f = z[x * nz + a];
                    if f != 0.0 {
                        c -= f * z[x * nz + b];
                    }
                }
                assert_eq!(wr[p * k + q].to_bits(), c.to_bits(), "({a}, {b})");
                assert_eq!(wr[q * k + p].to_bits(), c.to_bits(), "({b}, {a})");
            }
        }
        // the servo rows' entries are not written
        let servo: Vec<usize> = (0..k).filter(|p| !ctr.contains(p)).collect();
        assert!(servo.iter().all(|&s| (0..k).all(|q| wr[s * k + q].is_nan() && wr[q * k + s].is_nan())));
    }
}

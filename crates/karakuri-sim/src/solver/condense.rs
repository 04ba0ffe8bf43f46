//! The condensation of a robot's servo rows out of the active-set solve's sets
//! (`active.rs`): a Schur complement formed once per try, so that each set solves over the
//! contact rows only (0079).

use super::lu::{chol_factor, chol_lower, chol_lower_rows, chol_upper, sub_dots, sub_rows};
use super::rows::RowKind;
use super::active::held;
use super::workspace::{Dense, State};

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
            for (y, &q) in self.servo.iter().enumerate() {
                self.ss[x * m + y] = self.w[p * k + q];
            }
            self.ss[x * m + x] += eps;
        }
        if !chol_factor(&mut self.ss, m, 1e-3 * eps) {
            self.servo.clear();
            self.in_servo.iter_mut().for_each(|s| *s = false);
            return;
        }
        // z = U⁻ᵀ W_SC over the other rows C (`ctr`), `W_SS + eps I = Uᵀ U`, its rows solved
        // together
        self.ctr.clear();
        self.ctr.extend((0..k).filter(|&p| !self.in_servo[p]));
        let nc = self.ctr.len();
        self.z.clear();
        for &s in &self.servo {
            self.z.extend(self.ctr.iter().map(|&q| self.w[s * k + q]));
        }
        chol_lower_rows(&self.ss[..m * m], &mut self.z[..m * nc], nc);
        // zᵀ, for the servo impulses' sums side by side (`servo_impulses`)
        self.zt.clear();
        self.zt.extend((0..nc * m).map(|i| self.z[(i % m) * nc + i / m]));
        // only `wr`'s C x C entries are read (a set's equations and unknowns are C's; the
        // others are not copied), and it is symmetric: its lower triangle formed, mirrored
        self.wr.resize(k * k, 0.0);
        schur_lower((&self.w, k), &self.ctr, (&self.z, m), (&mut self.wr, &mut self.crow));
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
        let nc = self.ctr.len();
        self.crow.clear();
        self.crow.extend(self.ctr.iter().map(|&q| self.g[q]));
        sub_rows(&mut self.crow[..nc], &self.z[..m * nc], &self.ys[..m]);
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

/// `wr`'s lower triangle over C (mirrored): `W_CC − zᵀ z` (`w`: `W`, `k x k`; `z`: `m` rows
/// over `ctr`), each entry from `W`'s less the servos' terms in order.
fn schur_lower((w, k): (&[f64], usize), ctr: &[usize], (z, m): (&[f64], usize), (wr, crow): (&mut [f64], &mut Vec<f64>)) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked on the line above.
        #[allow(unsafe_code)]
        return unsafe { schur_lower_avx2((w, k), ctr, (z, m), (wr, crow)) };
    }
    schur_lower_in((w, k), ctr, (z, m), (wr, crow));
}

/// [`schur_lower`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn schur_lower_avx2((w, k): (&[f64], usize), ctr: &[usize], (z, m): (&[f64], usize), (wr, crow): (&mut [f64], &mut Vec<f64>)) {
    schur_lower_in((w, k), ctr, (z, m), (wr, crow));
}

/// [`schur_lower`]'s body.
#[inline(always)]
fn schur_lower_in((w, k): (&[f64], usize), ctr: &[usize], (z, m): (&[f64], usize), (wr, crow): (&mut [f64], &mut Vec<f64>)) {
    let nc = ctr.len();
    crow.clear();
    crow.resize(nc, 0.0);
    for (a, &p) in ctr.iter().enumerate() {
        // entries 0..=a are kept; the row is formed up to a multiple of four entries (or the
        // end), whole lanes, each entry on its own
        let len = ((a + 4) & !3).min(nc);
        let row = &mut crow[..len];
        row.iter_mut().zip(&ctr[..len]).for_each(|(c, &q)| *c = w[p * k + q]);
        for x in 0..m {
            let zx = &z[x * nc..x * nc + len];
            let f = zx[a];
            if f != 0.0 {
                let (quads, rest) = row.as_chunks_mut::<4>();
                let (zq, zr) = zx.as_chunks::<4>();
                for (c, z) in quads.iter_mut().zip(zq) {
                    for j in 0..4 {
                        c[j] -= f * z[j];
                    }
                }
                rest.iter_mut().zip(zr).for_each(|(c, z)| *c -= f * z);
            }
        }
        for (&q, &c) in ctr[..=a].iter().zip(row.iter()) {
            wr[p * k + q] = c;
            wr[q * k + p] = c;
        }
    }
}

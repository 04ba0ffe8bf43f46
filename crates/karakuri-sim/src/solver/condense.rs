//! The condensation of a robot's servo rows out of the active-set solve's sets
//! (`active.rs`): a Schur complement formed once per try, so that each set solves over the
//! contact rows only (0079).

use super::lu::{lu_apply, lu_apply_rows, lu_factor, sub_dots, sub_rows};
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
    /// Reads `state`, `w`; writes `servo` (empty: none condensed), `in_servo`, `ctr`, `ss`, `z`, `wr`.
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
        if !lu_factor(&mut self.ss, &mut self.ss_perm, m, 1e-3 * eps) {
            self.servo.clear();
            self.in_servo.iter_mut().for_each(|s| *s = false);
            return;
        }
        // z = (W_SS + eps I)⁻¹ W_SC over the other rows C (`ctr`), its rows solved together
        self.ctr.clear();
        self.ctr.extend((0..k).filter(|&p| !self.in_servo[p]));
        let nc = self.ctr.len();
        self.z.clear();
        for &s in &self.servo {
            self.z.extend(self.ctr.iter().map(|&q| self.w[s * k + q]));
        }
        lu_apply_rows(&self.ss, &self.ss_perm, &mut self.z, m, nc);
        // zᵀ, for the servo impulses' sums side by side (`servo_impulses`)
        self.zt.clear();
        self.zt.extend((0..nc * m).map(|i| self.z[(i % m) * nc + i / m]));
        // only `wr`'s C x C entries are read (a set's equations and unknowns are C's; the
        // others are not copied), and it is symmetric: its lower triangle formed, mirrored
        self.wr.resize(k * k, 0.0);
        schur_lower((&self.w, k), (&self.ctr, &self.servo), &self.z, &mut self.crow, &mut self.wr);
    }

    /// Whether this set's servo rows are condensed out (all of them still free).
    #[inline]
    pub(super) fn schur_on(&self) -> bool {
        !self.servo.is_empty() && self.servo.iter().all(|&p| self.state[p] == State::Free)
    }

    /// The servo rows' right-hand side `rs` (`g` and the proximal term at the current
    /// impulses), `ys = (W_SS + eps I)⁻¹ rs` and the other rows' `gr = g − W_CS ys`.
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
        lu_apply(&self.ss, &self.ss_perm, &mut self.ys, m);
        // W_CS (W_SS + eps I)⁻¹ rs = zᵀ rs (the matrix is symmetric), on C's rows (the
        // servo rows' entries of `gr` are never read)
        let nc = self.ctr.len();
        self.crow.clear();
        self.crow.extend(self.ctr.iter().map(|&q| self.g[q]));
        sub_rows(&mut self.crow[..nc], &self.z[..m * nc], &self.rs);
        self.gr.clear();
        self.gr.extend_from_slice(&self.g[..k]);
        for (&q, &g) in self.ctr.iter().zip(&self.crow) {
            self.gr[q] = g;
        }
    }

    /// The servo rows' impulses from the other rows' (in `lambda`): `(W_SS + eps I)⁻¹ (rs −
    /// W_SC λ_C) = ys − Σ z_q λ_q`, the held rows' part being in `rs` already.
    pub(super) fn servo_impulses(&mut self, kind: &[RowKind]) {
        let (m, nc) = (self.servo.len(), self.ctr.len());
        // z is over C's rows; the held rows' are masked here
        self.crow.clear();
        self.crow.extend(self.ctr.iter().map(|&q| if held(self.state[q], kind[self.rows[q]]) == 0.0 { self.lambda[q] } else { 0.0 }));
        sub_dots(&mut self.ys[..m], &self.zt[..nc * m], &self.crow);
        for x in 0..m {
            self.lambda[self.servo[x]] = self.ys[x];
        }
    }
}

/// `wr`'s lower triangle over C (mirrored): `W_CC − W_CS z` (`w`: `W`, `k x k`; `z`: `servo`
/// rows over `ctr`), each entry from `W`'s less the servos' terms in order.
fn schur_lower((w, k): (&[f64], usize), (ctr, servo): (&[usize], &[usize]), z: &[f64], crow: &mut Vec<f64>, wr: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked on the line above.
        #[allow(unsafe_code)]
        return unsafe { schur_lower_avx2((w, k), (ctr, servo), z, crow, wr) };
    }
    schur_lower_in((w, k), (ctr, servo), z, crow, wr);
}

/// [`schur_lower`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn schur_lower_avx2((w, k): (&[f64], usize), (ctr, servo): (&[usize], &[usize]), z: &[f64], crow: &mut Vec<f64>, wr: &mut [f64]) {
    schur_lower_in((w, k), (ctr, servo), z, crow, wr);
}

/// [`schur_lower`]'s body.
#[inline(always)]
fn schur_lower_in((w, k): (&[f64], usize), (ctr, servo): (&[usize], &[usize]), z: &[f64], crow: &mut Vec<f64>, wr: &mut [f64]) {
    let nc = ctr.len();
    for (a, &p) in ctr.iter().enumerate() {
        crow.clear();
        crow.extend(ctr[..=a].iter().map(|&q| w[p * k + q]));
        for (x, &s) in servo.iter().enumerate() {
            let f = w[p * k + s];
            if f != 0.0 {
                for (c, z) in crow.iter_mut().zip(&z[x * nc..x * nc + a + 1]) {
                    *c -= f * z;
                }
            }
        }
        for (&q, &c) in ctr.iter().zip(crow.iter()) {
            wr[p * k + q] = c;
            wr[q * k + p] = c;
        }
    }
}

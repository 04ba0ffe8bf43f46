//! The condensation of a robot's servo rows out of the active-set solve's sets
//! (`active.rs`): a Schur complement formed once per try, so that each set solves over the
//! contact rows only (0079).

use super::lu::{lu_apply, lu_apply_rows, lu_factor};
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
        // only `wr`'s C x C entries are read (a set's equations and unknowns are C's; the
        // others are not copied), and it is symmetric: its lower triangle formed, mirrored
        self.wr.resize(k * k, 0.0);
        for (a, &p) in self.ctr.iter().enumerate() {
            self.crow.clear();
            self.crow.extend(self.ctr[..=a].iter().map(|&q| self.w[p * k + q]));
            for (x, &s) in self.servo.iter().enumerate() {
                let f = self.w[p * k + s];
                if f != 0.0 {
                    for (c, z) in self.crow.iter_mut().zip(&self.z[x * nc..x * nc + a + 1]) {
                        *c -= f * z;
                    }
                }
            }
            for (&q, &c) in self.ctr.iter().zip(&self.crow) {
                self.wr[p * k + q] = c;
                self.wr[q * k + p] = c;
            }
        }
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
        for (x, &r) in self.rs.iter().enumerate() {
            for (g, z) in self.crow.iter_mut().zip(&self.z[x * nc..(x + 1) * nc]) {
                *g -= z * r;
            }
        }
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
        for x in 0..m {
            self.ys[x] -= self.z[x * nc..(x + 1) * nc].iter().zip(&self.crow).map(|(z, l)| z * l).sum::<f64>();
        }
        for x in 0..m {
            self.lambda[self.servo[x]] = self.ys[x];
        }
    }
}

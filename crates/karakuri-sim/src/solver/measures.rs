//! How far a solve's contact impulses are from the contact law (ContactBench's per-step
//! measures, after Le Lidec et al.'s comparison of contact models): for each contact block,
//! with `u` its row velocities less their targets `b` (normal, then the two friction rows)
//! and `λ` its impulses,
//!
//! * Signorini: `|λ_n u_n|` (an impulse where the contact separates, or a contact pressed
//!   that still approaches);
//! * Coulomb: `max(0, |λ_t| − μ λ_n)` (friction outside its cone);
//! * maximal dissipation: `|λ_t · u_t + μ λ_n |u_t||` (friction not opposite the slip at
//!   full strength while slipping);
//!
//! each the largest over the contacts (0 without contacts); impulses in N·s, velocities in
//! m/s.

use super::problem::Problem;
use super::rows::{RowKind, SolveStats};
use super::solution::Solution;

impl Problem {
    /// Writes the contact measures of `sol` (see the module documentation) into `stats`.
    /// Reads `J`, `b`, the kinds; allocates nothing.
    pub fn contact_measures(&self, sol: &Solution, stats: &mut SolveStats) {
        let (mut sig, mut cou, mut dis): (f64, f64, f64) = (0.0, 0.0, 0.0);
        for (bi, bl) in self.blocks.iter().enumerate() {
            let RowKind::Normal { friction, mu } = self.kind[bl.row] else { continue };
            // (each row's sum `row_dot`'s: `block_dots` keeps its order)
            let dots = self.block_dots(bi, &sol.vel);
            let u = |r: usize| dots[r] - self.b[bl.row + r];
            let ln = sol.lambda[bl.row];
            sig = sig.max((ln * u(0)).abs());
            if friction == 2 && bl.n == 3 {
                let (l1, l2) = (sol.lambda[bl.row + 1], sol.lambda[bl.row + 2]);
                let (u1, u2) = (u(1), u(2));
                cou = cou.max((l1 * l1 + l2 * l2).sqrt() - mu * ln);
                dis = dis.max((l1 * u1 + l2 * u2 + mu * ln * (u1 * u1 + u2 * u2).sqrt()).abs());
            }
        }
        stats.signorini = sig;
        stats.coulomb = cou;
        stats.dissipation = dis;
    }
}

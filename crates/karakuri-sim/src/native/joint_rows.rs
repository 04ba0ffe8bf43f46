//! Linear joint rows: a combination `C(q) = Σ coef · q + offset` of one-dof joint positions
//! (an MJCF `joint` or `tendon` equality, a fixed tendon's length). An equality is one
//! bilateral row `J = coef` with the loops' Baumgarte target `-β C / dt`; a range is two
//! speculative unilateral rows as a joint limit's (active when the free velocity could reach
//! the bound within the step, a violated bound pushed back at the contact's error correction
//! rate). `C` is linear in q and a one-dof joint integrates `q + dt v`, so the velocity rows
//! hold it without a position projection.
//!
//! What a force sensor sees: these rows act as generalized forces on the joints themselves
//! (`Jᵀ λ` on each joint's dof, between the joint's two bodies), never across a joint from
//! outside, so they add nothing to what Newton–Euler on a subtree subtracts.

use super::build::{LinearRow, SimModel};
use super::contact::tree_range;
use super::state::SimState;
use super::work::StepData;
use crate::solver::RowKind;

/// Reads `s.q`, `w.v_free`, `m.linear_rows` and the warm impulses `s.warm_other[*other..]`;
/// writes one row per equality and two per range (lower, upper; an inactive one has target
/// `-∞` and a zero row) into `w.rows` and advances `*other` past them.
pub fn linear_rows(m: &SimModel, s: &SimState, w: &mut StepData, other: &mut usize) {
    let dt = m.dt;
    let q = s.q.as_slice();
    for row in &m.linear_rows {
        let c = row.value(q);
        let mut warm = || {
            let x = s.warm_other.get(*other).copied().unwrap_or(0.0);
            *other += 1;
            x
        };
        let Some((lo, hi)) = row.range else {
            let r = w.rows.push_ranged(RowKind::Bilateral, -m.engine.loop_correction_rate * c / dt, warm(), ranges(m, row));
            for &(_, dof, coef) in &row.terms {
                w.rows.j_row_mut(r)[dof] += coef;
            }
            continue;
        };
        let rate: f64 = row.terms.iter().map(|&(_, dof, coef)| coef * w.v_free[dof]).sum();
        let reach = rate.abs() * dt + 1e-9;
        for (sign, dist) in [(1.0, c - lo), (-1.0, hi - c)] {
            let warm = warm();
            if dist > reach {
                w.rows.push(RowKind::Unilateral, f64::NEG_INFINITY, 0.0);
                continue;
            }
            let b = if dist < 0.0 { -m.contact.error_correction_rate * dist / dt } else { -dist / dt };
            let r = w.rows.push_ranged(RowKind::Unilateral, b, warm, ranges(m, row));
            for &(_, dof, coef) in &row.terms {
                w.rows.j_row_mut(r)[dof] += sign * coef;
            }
        }
    }
}

/// The dof ranges of the trees a row's joints are in (sorted, at most two: the compile step
/// refuses a row over more trees).
fn ranges(m: &SimModel, row: &LinearRow) -> [(usize, usize); 2] {
    let mut out = [(0, 0); 2];
    for &(_, dof, _) in &row.terms {
        let t = tree_range(&m.model, m.model.dof_joint[dof]);
        if out[0] == t || out[1] == t {
            continue;
        }
        if out[0] == (0, 0) {
            out[0] = t;
        } else {
            out[1] = t;
        }
    }
    if out[1] != (0, 0) && out[1].0 < out[0].0 {
        out.swap(0, 1);
    }
    out
}

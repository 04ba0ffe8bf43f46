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

use karakuri::constraints::rows::add_relative_point_row;

use super::build::{LinearRow, SimModel};
use super::contact::tree_range;
use super::state::SimState;
use super::work::StepData;
use crate::solver::RowKind;
use crate::SimError;

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
    joint_ranges(m, row.terms.iter().map(|&(_, dof, _)| m.model.dof_joint[dof]))
}

/// The dof ranges of the trees of `joints` (sorted; at most two, the world's none).
fn joint_ranges(m: &SimModel, joints: impl Iterator<Item = usize>) -> [(usize, usize); 2] {
    let mut out = [(0, 0); 2];
    for j in joints {
        let t = tree_range(&m.model, j);
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

/// A spatial tendon's two rows (lower, upper bound of its length `L = Σ |p_{i+1} − p_i|`),
/// speculative as a range's: `J = Σ u_iᵀ (J_{p_{i+1}} − J_{p_i})`, `u_i` the unit vector of
/// segment i. Reads the placements of `w.data`, `w.s_world`, `w.v_free`, `m.spatial_tendons`
/// and the warm impulses `s.warm_other[*other..]`; writes two rows per tendon into `w.rows`
/// and advances `*other` past them. A force sensor does not see the tendon's pull on the
/// bodies it joins (not subtracted from its subtree's balance).
pub fn tendon_rows(m: &SimModel, s: &SimState, w: &mut StepData, other: &mut usize) -> Result<(), SimError> {
    if m.spatial_tendons.is_empty() {
        return Ok(());
    }
    let (dt, nv) = (m.dt, m.model.nv);
    let o_m_i = w.data.joint_placements()?;
    for t in &m.spatial_tendons {
        let ranges = joint_ranges(m, t.points.iter().map(|&(j, _)| j));
        let lower = w.rows.push_ranged(RowKind::Unilateral, 0.0, 0.0, ranges);
        let upper = w.rows.push_ranged(RowKind::Unilateral, 0.0, 0.0, ranges);
        let mut length = 0.0;
        for pair in t.points.windows(2) {
            let (pa, pb) = (o_m_i[pair[0].0].transform_point(&pair[0].1), o_m_i[pair[1].0].transform_point(&pair[1].1));
            let d = pb - pa;
            let n = d.norm();
            length += n;
            if n > 1e-12 {
                add_relative_point_row(&m.model, &w.s_world, (pair[0].0, &pa), (pair[1].0, &pb), &(d / n), w.rows.j_row_mut(lower));
            }
        }
        let (head, tail) = w.rows.j.split_at_mut(upper * nv);
        for (u, l) in tail[..nv].iter_mut().zip(&head[lower * nv..]) {
            *u = -l;
        }
        let rate: f64 = w.rows.j_row(lower).iter().zip(w.v_free.iter()).map(|(a, b)| a * b).sum();
        let reach = rate.abs() * dt + 1e-9;
        for (r, dist) in [(lower, length - t.range.0), (upper, t.range.1 - length)] {
            let warm = s.warm_other.get(*other).copied().unwrap_or(0.0);
            *other += 1;
            if dist > reach {
                w.rows.b[r] = f64::NEG_INFINITY;
                w.rows.j_row_mut(r).fill(0.0);
                continue;
            }
            w.rows.b[r] = if dist < 0.0 { -m.contact.error_correction_rate * dist / dt } else { -dist / dt };
            w.rows.lambda[r] = warm;
        }
    }
    Ok(())
}

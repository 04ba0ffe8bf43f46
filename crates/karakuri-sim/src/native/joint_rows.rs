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

use karakuri::constraints::rows::add_relative_point_rows;

use super::build::SimModel;
use super::state::SimState;
use super::work::StepData;
use crate::solver::{BlockRows, Problem, RowKind, NONE};
use crate::SimError;

/// Reads `s.q`, `w.v_free`, `m.linear_rows` and the warm impulses `s.warm_other[*other..]`;
/// writes one one-row block per equality and two per range (lower, upper; an inactive one has
/// target `-∞` and touches no tree) into `w.problem` and advances `*other` past them.
pub fn linear_rows(m: &SimModel, s: &SimState, w: &mut StepData, other: &mut usize) {
    let dt = m.dt;
    let q = s.q.as_slice();
    let p = &mut w.problem;
    for row in &m.linear_rows {
        let c = row.value(q);
        let mut warm = || {
            let x = s.warm_other.get(*other).copied().unwrap_or(0.0);
            *other += 1;
            x
        };
        let terms = || row.terms.iter().map(|&(_, dof, coef)| (dof, coef));
        let Some((lo, hi)) = row.range else {
            push_linear(p, RowKind::Bilateral, -m.engine.loop_correction_rate * c / dt, warm(), 1.0, terms());
            continue;
        };
        let rate: f64 = terms().map(|(dof, coef)| coef * w.v_free[dof]).sum();
        let reach = rate.abs() * dt + 1e-9;
        for (sign, dist) in [(1.0, c - lo), (-1.0, hi - c)] {
            let warm = warm();
            if dist > reach {
                p.push_block(&[RowKind::Unilateral], NONE, NONE, &[f64::NEG_INFINITY], &[0.0]);
                continue;
            }
            let b = if dist < 0.0 { -m.contact.error_correction_rate * dist / dt } else { -dist / dt };
            push_linear(p, RowKind::Unilateral, b, warm, sign, terms());
        }
    }
}

/// Appends the one-row block `sign · Σ coef · v_dof` over the trees of its dofs (at most two:
/// the compile step refuses a row over more); returns its block.
fn push_linear(p: &mut Problem, kind: RowKind, b: f64, warm: f64, sign: f64, terms: impl Iterator<Item = (usize, f64)> + Clone) -> usize {
    let (ta, tb) = two_trees(terms.clone().map(|(dof, _)| p.trees.of_dof(dof)));
    let bi = p.push_block(&[kind], ta, tb, &[b], &[warm]);
    for (dof, coef) in terms {
        let t = p.trees.of_dof(dof);
        if let Some(col) = p.column(bi, t, dof) {
            p.j_block_mut(bi)[col] += sign * coef;
        }
    }
    bi
}

/// The first two distinct trees of `trees` ([`NONE`] for the world or when fewer).
fn two_trees(trees: impl Iterator<Item = u32>) -> (u32, u32) {
    let (mut ta, mut tb) = (NONE, NONE);
    for t in trees.filter(|&t| t != NONE) {
        if ta == NONE {
            ta = t;
        } else if t != ta && tb == NONE {
            tb = t;
        }
    }
    (ta, tb)
}

/// A spatial tendon's two rows (lower, upper bound of its length `L = Σ |p_{i+1} − p_i|`),
/// speculative as a range's: `J = Σ u_iᵀ (J_{p_{i+1}} − J_{p_i})`, `u_i` the unit vector of
/// segment i. Reads the placements of `w.data`, `w.s_world`, `w.v_free`, `m.spatial_tendons`
/// and the warm impulses `s.warm_other[*other..]`; writes two one-row blocks per tendon into
/// `w.problem` and advances `*other` past them. A force sensor does not see the tendon's pull
/// on the bodies it joins (not subtracted from its subtree's balance).
pub fn tendon_rows(m: &SimModel, s: &SimState, w: &mut StepData, other: &mut usize) -> Result<(), SimError> {
    if m.spatial_tendons.is_empty() {
        return Ok(());
    }
    let dt = m.dt;
    let o_m_i = w.data.joint_placements()?;
    let p = &mut w.problem;
    for t in &m.spatial_tendons {
        let (ta, tb) = two_trees(t.points.iter().map(|&(j, _)| p.trees.of_joint[j]));
        let lower = p.push_block(&[RowKind::Unilateral], ta, tb, &[0.0], &[0.0]);
        let mut length = 0.0;
        for pair in t.points.windows(2) {
            let (pa, pb) = (o_m_i[pair[0].0].transform_point(&pair[0].1), o_m_i[pair[1].0].transform_point(&pair[1].1));
            let d = pb - pa;
            let n = d.norm();
            length += n;
            if n > 1e-12 {
                let mut rows = BlockRows { problem: p, block: lower };
                add_relative_point_rows(&m.model, &w.s_world, (pair[0].0, &pa), (pair[1].0, &pb), &[d / n], &mut rows);
            }
        }
        let upper = p.push_block(&[RowKind::Unilateral], ta, tb, &[0.0], &[0.0]);
        let width = p.j_block_mut(lower).len();
        let (off_l, off_u) = (p.blocks[lower].off, p.blocks[upper].off);
        for k in 0..width {
            p.j[off_u + k] = -p.j[off_l + k];
        }
        let rate = p.row_dot(lower, 0, w.v_free.as_slice());
        let reach = rate.abs() * dt + 1e-9;
        for (bi, dist) in [(lower, length - t.range.0), (upper, t.range.1 - length)] {
            let warm = s.warm_other.get(*other).copied().unwrap_or(0.0);
            *other += 1;
            let r = p.blocks[bi].row;
            if dist > reach {
                p.b[r] = f64::NEG_INFINITY;
                p.j_block_mut(bi).fill(0.0);
                continue;
            }
            p.b[r] = if dist < 0.0 { -m.contact.error_correction_rate * dist / dt } else { -dist / dt };
            p.warm[r] = warm;
        }
    }
    Ok(())
}

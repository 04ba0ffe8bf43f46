//! Joint limits as speculative unilateral rows: a limit is active when the free velocity
//! could reach it within the step; a violated limit is pushed back at the contact's error
//! correction rate.

use super::build::SimModel;
use super::contact::tree_range;
use super::state::SimState;
use super::work::StepData;
use crate::solver::RowKind;

/// Reads `s.q`, `w.v_free`, `m.limits` and the warm impulses `s.warm_other[*other..]`; writes
/// two rows per limit into `w.rows` (lower, upper; an inactive one has target `-∞` and a zero
/// row) and advances `*other` past them.
pub fn limit_rows(m: &SimModel, s: &SimState, w: &mut StepData, other: &mut usize) {
    let (cp, dt) = (&m.contact, m.dt);
    for lim in &m.limits {
        let (qk, vk) = (s.q[lim.iq], w.v_free[lim.dof]);
        let reach = vk.abs() * dt + 1e-9;
        for (sign, dist) in [(1.0, qk - lim.lo), (-1.0, lim.hi - qk)] {
            let warm = s.warm_other.get(*other).copied().unwrap_or(0.0);
            *other += 1;
            if dist > reach {
                let r = w.rows.push(RowKind::Unilateral, f64::NEG_INFINITY, 0.0);
                w.rows.j_row_mut(r)[lim.dof] = 0.0;
                continue;
            }
            let b = if dist < 0.0 {
                -cp.error_correction_rate * dist / dt
            } else {
                -dist / dt
            };
            let ranges = [tree_range(&m.model, m.model.dof_joint[lim.dof]), (0, 0)];
            let r = w.rows.push_ranged(RowKind::Unilateral, b, warm, ranges);
            w.rows.j_row_mut(r)[lim.dof] = sign;
        }
    }
}

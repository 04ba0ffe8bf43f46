//! Joint limits as speculative unilateral rows: a limit is active when the free velocity
//! could reach it within the step; a violated limit is pushed back at the contact's error
//! correction rate.

use super::build::SimModel;
use super::state::SimState;
use super::work::StepData;
use crate::solver::{RowKind, NONE};

/// Reads `s.q`, `w.v_free`, `m.limits` and the warm impulses `s.warm_other[*other..]`; writes
/// two one-row blocks per limit into `w.problem` (lower, upper; an inactive one has target `-∞`
/// and touches no tree) and advances `*other` past them.
pub fn limit_rows(m: &SimModel, s: &SimState, w: &mut StepData, other: &mut usize) {
    let (cp, dt) = (&m.contact, m.dt);
    for lim in &m.limits {
        let (qk, vk) = (s.q[lim.iq], w.v_free[lim.dof]);
        let reach = vk.abs() * dt + 1e-9;
        for (sign, dist) in [(1.0, qk - lim.lo), (-1.0, lim.hi - qk)] {
            let warm = s.warm_other.get(*other).copied().unwrap_or(0.0);
            *other += 1;
            if dist > reach {
                // inactive: a row that touches no tree (no impulse)
                w.problem.push_block(&[RowKind::Unilateral], NONE, NONE, &[f64::NEG_INFINITY], &[0.0]);
                continue;
            }
            let b = if dist < 0.0 {
                -cp.error_correction_rate * dist / dt
            } else {
                -dist / dt
            };
            w.problem.push_dof_row(RowKind::Unilateral, b, warm, (lim.dof, sign));
        }
    }
}

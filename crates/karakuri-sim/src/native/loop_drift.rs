//! Loop drift feed-forward: the second-order part of a loop's position error over a step,
//! measured on the last step and subtracted from the next step's velocity target, so that the
//! configuration the step reaches satisfies the loop to third order in `dt` without a
//! projection.
//!
//! A loop row `k` has the position error `C_k(q)` and the Jacobian row `J_k(q)`. The step
//! imposes `J_k(q_n) v⁺ = b_k` and then moves `q_{n+1} = q_n ⊕ dt v⁺`, so
//!
//! ```text
//! C_k(q_{n+1}) = C_k(q_n) + dt J_k(q_n) v⁺ + d_k,   d_k = ½ dt² v⁺ᵀ ∇²C_k v⁺ + O(dt³)
//! ```
//!
//! With Baumgarte's target alone (`b_k = −β C_k / dt`) the curvature term `d_k` (the anchor
//! points follow arcs, not the chords the rows see) is left over every step: on the four-bar
//! the error settles at `d / β` ≈ 0.18 mm, above the 0.1 mm the validation allows, which is
//! why SHAKE ([`super::loops::shake`]) projected every step (two to three forward kinematics
//! and dense solves per step: more than half the four-bar's step). `d_k` changes by
//! `O(dt³)` from one step to the next (it is quadratic in the velocities, which change by
//! `O(dt)`), so the residual of the last step predicts this step's:
//!
//! ```text
//! d_k ≈ C_k(q_n) − (C_k(q_{n−1}) + dt J_k(q_{n−1}) v⁺_{n−1}),     b_k = −(β C_k(q_n) + d_k) / dt
//! ```
//!
//! and the error then settles at `O(dt³) / β` (≈ 1e-8 m on the four-bar) for the price of one
//! dot product per loop row. The prediction `C_k(q_n) + dt J_k(q_n) v⁺` is state
//! ([`SimState::loop_predicted`]), so a stored and restored world steps the same. SHAKE
//! remains as the safeguard: the integrate stage projects only in a step whose loop error at
//! its start exceeds `engine.loop_tolerance` (the first steps before a prediction exists, an
//! impact on the mechanism).

use super::build::SimModel;
use super::state::SimState;
use super::work::StepData;
use crate::solver::{Problem, NONE};

/// Subtracts each loop row's predicted drift `d_k / dt` from its target in `w.problem` (the
/// loop rows start at `w.other_row_start`, one per entry of `w.loop_err`). Reads `w.loop_err`,
/// `s.loop_predicted` (empty before the first step or when the loop rows changed: no
/// feed-forward); writes `w.problem.b` of the loop rows.
pub fn feed_forward(m: &SimModel, s: &SimState, w: &mut StepData) {
    if s.loop_predicted.len() != w.loop_err.len() {
        return;
    }
    let start = w.other_row_start;
    for (k, (&c, &predicted)) in w.loop_err.iter().zip(&s.loop_predicted).enumerate() {
        w.problem.b[start + k] -= (c - predicted) / m.dt;
    }
}

/// The largest loop error at the step's start (m or rad). Reads `w.loop_err`.
pub fn largest_error(w: &StepData) -> f64 {
    w.loop_err.iter().fold(0.0, |a, c| a.max(c.abs()))
}

/// Records where the step takes each loop row's error to first order, `C_k(q_n) + dt J_k(q_n)
/// v⁺`, for the next step's [`feed_forward`]. Reads `w.loop_err`, the loop blocks of
/// `w.problem` (from `w.loop_block`), `s.v` (the step's final velocity, after any projection);
/// writes `s.loop_predicted`.
pub fn predict(m: &SimModel, s: &mut SimState, w: &StepData) {
    s.loop_predicted.clear();
    let v = s.v.as_slice();
    for (k, &c) in w.loop_err.iter().enumerate() {
        let jv = dense_dot(&w.problem, w.loop_block + k, v);
        s.loop_predicted.push(c + m.dt * jv);
    }
}

/// `J · v` for one-row block `bi`, summed over all dofs in order as over a dense row (the
/// dofs outside its trees add `0 · v_k`): the sum the loop rows' prediction has always had.
fn dense_dot(p: &Problem, bi: usize, v: &[f64]) -> f64 {
    let bl = &p.blocks[bi];
    let vals = &p.j[bl.off..bl.off + bl.width];
    let tree = |slot: usize| {
        let t = bl.trees[slot];
        let (c0, n) = if slot == 0 { (0, bl.n0) } else { (bl.n0, bl.width - bl.n0) };
        (t != NONE).then(|| (p.trees.start[t as usize], n, c0))
    };
    let sides = [tree(0), tree(1)];
    let coef = |k: usize| {
        sides
            .iter()
            .flatten()
            .find(|&&(s, n, _)| (s..s + n).contains(&k))
            .map_or(0.0, |&(s, _, c0)| vals[c0 + k - s])
    };
    v.iter().enumerate().map(|(k, vk)| coef(k) * vk).sum()
}

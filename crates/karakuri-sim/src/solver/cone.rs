//! The friction cone: what a contact block's impulses may be (`λ_n ≥ 0`, `|λ_t| ≤ μ λ_n`,
//! a circular cone over the two tangent rows), the projection onto it and onto the other
//! rows' bounds, and a contact's block update ([`impulses`]) as the sweeps take it.

use super::rows::RowKind;

/// Makes the impulses of the block at `lambda[i..i + n]` (kinds `kind[i..]`) feasible: a
/// normal non-negative with its friction in the disk, a unilateral row non-negative, a
/// bounded row within its bounds.
pub(super) fn project(kind: &[RowKind], lambda: &mut [f64], i: usize, n: usize) {
    match kind[i] {
        RowKind::Normal { friction, mu } => {
            lambda[i] = lambda[i].max(0.0);
            if friction == 2 && n == 3 {
                let lim = mu * lambda[i];
                let (a, b) = (lambda[i + 1], lambda[i + 2]);
                let nrm = (a * a + b * b).sqrt();
                if nrm > lim {
                    let s = if nrm > 0.0 { lim / nrm } else { 0.0 };
                    lambda[i + 1] = a * s;
                    lambda[i + 2] = b * s;
                }
            }
        }
        RowKind::Unilateral => lambda[i] = lambda[i].max(0.0),
        RowKind::Bounded { lo, hi } => lambda[i] = lambda[i].clamp(lo, hi),
        _ => {}
    }
}

/// The new impulses of a contact block (`W_ii` `w`, its inverse `winv`, `resting` as in
/// [`Block::resting`](super::Block::resting)) from its impulses `old`, targets `b` and row
/// velocities `u`: the exact 3 x 3 solve when the contact was resting and the result sticks inside
/// the cone; else (sliding, or a singular block) the normal row first, then both friction rows with
/// one step length, projected on the disk `|λ_t| ≤ μ λ_n`. Returns the new impulses, their change
/// and the largest row velocity change.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn impulses(
    w: &[f64; 9],
    winv: &[f64; 9],
    resting: bool,
    old: [f64; 3],
    b: [f64; 3],
    u: [f64; 3],
    mu: f64,
    tiny: f64,
) -> ([f64; 3], [f64; 3], f64) {
    // the friction rows' targets: a track surface's no-slip velocity, else 0
    let r = [b[0] - u[0], b[1] - u[1], b[2] - u[2]];
    let mut new = [0.0; 3];
    let mut done = false;
    if resting && winv[0] != 0.0 {
        for a in 0..3 {
            new[a] = old[a] + winv[3 * a] * r[0] + winv[3 * a + 1] * r[1] + winv[3 * a + 2] * r[2];
        }
        if new[0] <= 0.0 {
            new = [0.0; 3];
            done = true;
        } else if new[1] * new[1] + new[2] * new[2] <= mu * mu * new[0] * new[0] {
            done = true;
        }
    }
    if !done {
        // sliding (or a singular block): normal first, then the tangents with its change
        let dn = w[0];
        new[0] = if dn > tiny { (old[0] + r[0] / dn).max(0.0) } else { 0.0 };
        let delta = new[0] - old[0];
        let r1 = r[1] - w[3] * delta;
        let r2 = r[2] - w[6] * delta;
        // one step length for both tangents: the fixed point of the projection then has the
        // friction opposite the slip (maximal dissipation); the 2 x 2 inverse would turn it
        // towards the block's stiffer direction
        let dt = w[4].max(w[8]);
        let (mut t1, mut t2) = if dt > tiny {
            (old[1] + r1 / dt, old[2] + r2 / dt)
        } else {
            (0.0, 0.0)
        };
        let lim = mu * new[0];
        let nrm = (t1 * t1 + t2 * t2).sqrt();
        if nrm > lim {
            let s = if nrm > 0.0 { lim / nrm } else { 0.0 };
            t1 *= s;
            t2 *= s;
        }
        new[1] = t1;
        new[2] = t2;
    }
    let mut change: f64 = 0.0;
    let mut delta = [0.0; 3];
    for a in 0..3 {
        delta[a] = new[a] - old[a];
        change = change.max((delta[a] * w[4 * a]).abs());
    }
    (new, delta, change)
}

/// Whether a block is idle at `margin`: its impulses were zero before its update (`old`)
/// and are after it (`new`), and its normal row's slack `u_n − b_n` (before the update)
/// exceeds `margin`. An idle block's update leaves it at zero while the slack stays positive
/// (a sliding update then clamps the normal at zero and the friction with it), so skipping
/// it changes nothing until its neighbours' impulses have moved `u_n` by the margin.
#[inline(always)]
pub(super) fn idle(old: [f64; 3], new: [f64; 3], slack: f64, margin: f64) -> bool {
    old == [0.0; 3] && new == [0.0; 3] && slack > margin
}

/// Projects `values` (one per row of the set `rows`, a contact's normal then its friction rows
/// together) onto each row's feasible set: friction inside the cone of its normal impulse.
pub(super) fn project_set(rows: &[usize], kind: &[RowKind], values: &mut [f64]) {
    let k = rows.len();
    let mut p = 0;
    while p < k {
        let i = rows[p];
        let n = match kind[i] {
            RowKind::Normal { friction, .. } => 1 + friction,
            _ => 1,
        };
        project(&kind[i..i + n], &mut values[p..p + n], 0, n);
        p += n;
    }
}

//! The solution of a solve: the impulses `λ` and the velocity they give.

use super::rows::ensure;

/// What [`super::Problem::solve`] writes: the impulses of the problem's rows and the velocity
/// `v_free + qH⁻¹ Jᵀ λ`. Each pass over a problem's rows has its own (the velocity solve's is
/// read by the sensors and the next step's warm start, the split-impulse pass's is the
/// pseudo-velocity).
#[derive(Clone, Debug, Default)]
pub struct Solution {
    /// Impulses `(rows)`.
    pub lambda: Vec<f64>,
    /// The velocity `v_free + qH⁻¹ Jᵀ λ` `(nv)`.
    pub vel: Vec<f64>,
    /// Whether the next solve of these rows should try an active set before its first sweep
    /// ([`super::Problem::try_first`]'s next value: a warm-started robot island kept a try).
    pub try_first: bool,
}

impl Solution {
    /// A solution over `nv` velocity variables (no rows yet).
    pub fn new(nv: usize) -> Solution {
        Solution {
            lambda: Vec::new(),
            vel: vec![0.0; nv],
            try_first: false,
        }
    }

    /// Makes room for `rows` impulses without allocating (no-op when there is room).
    pub fn reserve(&mut self, rows: usize) {
        ensure(&mut self.lambda, rows);
    }

    /// No impulse on any of `rows` rows, so the velocity is `v_free`: the solution of a
    /// problem without rows, or of one whose rows all hold at `v_free` (the engine's slack
    /// test).
    pub fn no_impulse(&mut self, rows: usize, v_free: &[f64]) {
        self.lambda.clear();
        self.lambda.resize(rows, 0.0);
        self.vel.copy_from_slice(v_free);
    }
}

//! The regularised contact law of the Newton solve (`newton.rs`): for one block, the impulse
//! that its row velocities ask and the derivative of that impulse, the gradient and Hessian
//! of the block's term in the primal cost.
//!
//! With `x = J v − b` a block's row velocities less their targets and `r` its regularisation
//! (the compliance `R = r I`), the dual of the block's rows is `λ* = P(−x / r)`, `P` the
//! projection onto the block's feasible set (a contact: the circular friction cone
//! `|λ_t| ≤ μ λ_n`; a unilateral row: `λ ≥ 0`; a bilateral row: anything; a bounded row: its
//! box). The primal term `s(x) = max over feasible λ of −λ·x − r |λ|² / 2` has gradient `−λ*`
//! and Hessian `D = ∂λ*/∂(−x)`, which the Newton step and its line search read. As `r → 0`
//! `λ*` meets the hard rows (`r λ*` is the row velocity it leaves): the solve takes `r` a
//! small fraction of the block's `W` diagonal.
//!
//! The cone's projection has three zones (MuJoCo's elliptic cones have the same, from the
//! same projection): inside the cone (sticking: `λ* = −x / r`, `D = I / r`), inside its polar
//! cone (separating: `λ* = 0`, `D = 0`) and between (sliding on the cone's surface: a rank-two
//! `D`). It also holds the Newton solve's scratch ([`Newton`]), so that the workspace
//! (which holds one) and the solve (which reads the workspace) import it from below.

use super::rows::{ensure, RowKind};

/// Largest island (its trees' dofs) the Newton solve takes: its Hessian is dense over them.
pub(super) const NEWTON_MAX_DOFS: usize = 64;

/// The impulse `λ*` and its derivative `D` (row-major `n x n`, symmetric) of a block of `n`
/// rows, kind `kind` (its first row's), at row velocities less targets `x`, regularisation
/// `r`. A tangent row alone (never written) and anything unknown gets nothing.
#[inline]
pub(super) fn law(kind: RowKind, n: usize, x: [f64; 3], c: [f64; 3], r: f64) -> ([f64; 3], [f64; 9]) {
    let inv = 1.0 / r;
    let z = [c[0] - x[0] * inv, c[1] - x[1] * inv, c[2] - x[2] * inv];
    match kind {
        RowKind::Normal { friction: 2, mu } if n == 3 => cone(z, mu, inv),
        RowKind::Normal { .. } | RowKind::Unilateral => {
            if z[0] > 0.0 {
                ([z[0], 0.0, 0.0], diag1(inv))
            } else {
                ([0.0; 3], [0.0; 9])
            }
        }
        RowKind::Bilateral => ([z[0], 0.0, 0.0], diag1(inv)),
        RowKind::Bounded { lo, hi } => {
            if z[0] > lo && z[0] < hi {
                ([z[0], 0.0, 0.0], diag1(inv))
            } else {
                ([z[0].clamp(lo, hi), 0.0, 0.0], [0.0; 9])
            }
        }
        RowKind::Tangent => ([0.0; 3], [0.0; 9]),
    }
}

/// A 1 x 1 derivative `d`.
#[inline]
fn diag1(d: f64) -> [f64; 9] {
    let mut m = [0.0; 9];
    m[0] = d;
    m
}

/// The projection of `z` (normal, two tangents) onto the cone `|t| ≤ μ n` and its Jacobian
/// times `inv` (`1 / r`, the chain rule of `z = −x / r`).
#[inline]
fn cone(z: [f64; 3], mu: f64, inv: f64) -> ([f64; 3], [f64; 9]) {
    let tau = (z[1] * z[1] + z[2] * z[2]).sqrt();
    if tau <= mu * z[0] {
        // sticking: the identity
        return (z, [inv, 0.0, 0.0, 0.0, inv, 0.0, 0.0, 0.0, inv]);
    }
    if z[0] <= -mu * tau {
        // separating: the polar cone goes to the apex
        return ([0.0; 3], [0.0; 9]);
    }
    // sliding: onto the ray (1, μ ẑ) / √(1 + μ²) of the surface, ẑ = t / |t| (τ > 0 here)
    let c = 1.0 / (1.0 + mu * mu);
    let a = c * (z[0] + mu * tau);
    let h = [z[1] / tau, z[2] / tau];
    let lam = [a, a * mu * h[0], a * mu * h[1]];
    // ∂P_t/∂z_t = c μ (μ ĥĥᵀ + (z_n + μ τ) / τ (I − ĥĥᵀ))
    let k = (z[0] + mu * tau) / tau;
    let tt = |i: usize, j: usize| {
        let id = if i == j { 1.0 } else { 0.0 };
        c * mu * (mu * h[i] * h[j] + k * (id - h[i] * h[j]))
    };
    let d = [
        c,
        c * mu * h[0],
        c * mu * h[1],
        c * mu * h[0],
        tt(0, 0),
        tt(0, 1),
        c * mu * h[1],
        tt(1, 0),
        tt(1, 1),
    ];
    (lam, d.map(|v| v * inv))
}

/// The Newton solve's scratch (see `newton.rs`).
#[derive(Clone, Debug, Default)]
pub(super) struct Newton {
    /// First island dof of each tree, `usize::MAX` outside the island `(trees)`.
    pub(super) tree_off: Vec<usize>,
    /// The island's trees.
    pub(super) trees: Vec<u32>,
    /// Velocity, free velocity, `qH (v − v_free)`, gradient, `qH⁻¹` gradient, step, `qH` step
    /// `(island dofs)`.
    pub(super) v: Vec<f64>,
    pub(super) vf: Vec<f64>,
    pub(super) y: Vec<f64>,
    pub(super) g: Vec<f64>,
    pub(super) mg: Vec<f64>,
    pub(super) dv: Vec<f64>,
    pub(super) mdv: Vec<f64>,
    /// `I + qH⁻¹ Jᵀ D J`, row-major, and its LU pivots `(dofs²)`.
    pub(super) a: Vec<f64>,
    pub(super) piv: Vec<usize>,
    /// Rows' velocity less target (shifted), impulse, `J dv`, proximal centre `(rows)`.
    pub(super) x: Vec<f64>,
    pub(super) lp: Vec<f64>,
    pub(super) lam: Vec<f64>,
    pub(super) jdv: Vec<f64>,
    /// Each block's `D`, compliance and normal-target shift `(blocks)`.
    pub(super) d: Vec<[f64; 9]>,
    pub(super) r: Vec<f64>,
    pub(super) shift: Vec<f64>,
    /// The centres' last move `(rows)` and its over-relaxation.
    pub(super) dl: Vec<f64>,
    pub(super) omega: f64,
}

impl Newton {
    /// Scratch for a model of `nv` dofs and `trees` trees.
    pub(super) fn new(nv: usize, trees: usize) -> Newton {
        let nd = nv.min(NEWTON_MAX_DOFS);
        let mut n = Newton { tree_off: vec![usize::MAX; trees], ..Newton::default() };
        ensure(&mut n.trees, trees);
        for v in [&mut n.v, &mut n.vf, &mut n.y, &mut n.g, &mut n.mg, &mut n.dv, &mut n.mdv] {
            v.resize(nd, 0.0);
        }
        n.a.resize(nd * nd, 0.0);
        n.piv.resize(nd, 0);
        n
    }

    /// Room for problems of `blocks` blocks of `rows` rows.
    pub(super) fn reserve(&mut self, blocks: usize, rows: usize) {
        for v in [&mut self.x, &mut self.lam, &mut self.jdv, &mut self.lp, &mut self.dl] {
            ensure(v, rows);
        }
        ensure(&mut self.d, blocks);
        ensure(&mut self.r, blocks);
        ensure(&mut self.shift, blocks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The derivative is the projection's Jacobian: central differences of `λ*` in each zone.
    #[test]
    fn the_derivative_is_the_difference_quotient_of_the_impulse() {
        let kind = RowKind::Normal { friction: 2, mu: 0.5 };
        let r = 0.1;
        // sticking, sliding, separating
        for x in [[-1.0, 0.1, -0.2], [-1.0, 2.0, -1.0], [1.0, 0.1, 0.1], [-0.3, 0.05, 0.9]] {
            let (_, d) = law(kind, 3, x, [0.0; 3], r);
            for j in 0..3 {
                let h = 1e-6;
                let (mut xp, mut xm) = (x, x);
                xp[j] -= h;
                xm[j] += h;
                let (lp, _) = law(kind, 3, xp, [0.0; 3], r);
                let (lm, _) = law(kind, 3, xm, [0.0; 3], r);
                for i in 0..3 {
                    let fd = (lp[i] - lm[i]) / (2.0 * h);
                    assert!((fd - d[3 * i + j]).abs() < 1e-5, "x {x:?}: D[{i}][{j}] {} vs {fd}", d[3 * i + j]);
                }
            }
            // the impulse is in the cone
            let (l, _) = law(kind, 3, x, [0.0; 3], r);
            assert!(l[0] >= 0.0 && (l[1] * l[1] + l[2] * l[2]).sqrt() <= 0.5 * l[0] + 1e-12);
        }
    }

    /// The impulse of a sliding contact is the Euclidean projection: no point of the cone's
    /// surface is nearer to `z`.
    #[test]
    fn the_sliding_impulse_is_the_nearest_point_of_the_cone() {
        let mu = 0.7;
        let x = [-0.4, 1.5, -0.8];
        let (l, _) = law(RowKind::Normal { friction: 2, mu }, 3, x, [0.0; 3], 1.0);
        let z = [-x[0], -x[1], -x[2]];
        let d2 = |p: [f64; 3]| (0..3).map(|i| (p[i] - z[i]).powi(2)).sum::<f64>();
        let best = d2(l);
        for a in 0..200 {
            for s in 0..100 {
                let (th, n) = (a as f64 * std::f64::consts::TAU / 200.0, s as f64 * 0.03);
                let p = [n, mu * n * th.cos(), mu * n * th.sin()];
                assert!(d2(p) >= best - 1e-12, "{p:?} is nearer than {l:?}");
            }
        }
    }
}

//! The slack test: whether no impulse at all solves the step's velocity problem, so that
//! `prepare` (`qH⁻¹ Jᵀ`, the blocks' `W_ii`) and the solve are skipped.
//!
//! A contact row whose gap the free velocity does not close within the step (a speculative
//! contact of [`crate::scene::ContactParams::prediction_distance`]: the cradle's balls 5 mm
//! apart, a box above the floor) asks for no impulse. When every row of the problem is such a
//! unilateral row (a contact normal and its friction, a joint limit) and the free velocity
//! meets every one of them (`J_r v_free ≥ b_r`), `λ = 0` satisfies the whole complementarity
//! problem: each unilateral row holds with `λ_r = 0`, and a friction row's bounds `± μ λ_n`
//! are then zero. It is the solution the solvers reach (Gauss–Seidel's projection from zero,
//! the exact solve's empty active set; the frictionless problem's only one), without forming
//! anything. A single row the free velocity violates, or a bilateral or bounded row (a loop,
//! a servo: they ask `J v = b` while their impulse is inside its bounds), and the problem is
//! solved as it stands: this is an all-or-nothing test, since an impulse on one row moves the
//! velocity the others see.

use crate::solver::{Problem, RowKind, NONE};

/// Whether `λ = 0` solves `p` (see the module docs) at the free velocity `v_free`: every row
/// a contact normal, a tangent or a unilateral row, and each normal and unilateral row met,
/// `J_r v_free ≥ b_r` (a NaN is not). A problem whose warm start holds an impulse (a contact
/// that acted last step: a resting box, a sliding one) is left to the solver untested: such a
/// contact seldom lets go within a step, and the test would cost a row product per block
/// (false here only means "solve it"). Reads `p`'s blocks, kinds, targets, warm impulses and
/// Jacobians.
pub fn slack(p: &Problem, v_free: &[f64]) -> bool {
    if p.warm.iter().any(|&l| l != 0.0) {
        return false;
    }
    p.blocks.iter().enumerate().all(|(bi, bl)| {
        let kinds = &p.kind[bl.row..bl.row + bl.n];
        if !kinds.iter().all(|k| matches!(k, RowKind::Normal { .. } | RowKind::Tangent | RowKind::Unilateral)) {
            return false;
        }
        if bl.trees[0] == NONE {
            // it touches nothing and gets no impulse
            return true;
        }
        if bl.n == 1 {
            // a one-row block (a frictionless contact, a limit): its row alone (`row_dot` is
            // `block_dots`' first row, the same sum)
            return matches!(kinds[0], RowKind::Tangent) || p.row_dot(bi, 0, v_free) >= p.b[bl.row];
        }
        let c = p.block_dots(bi, v_free);
        kinds.iter().enumerate().all(|(r, k)| matches!(k, RowKind::Tangent) || c[r] >= p.b[bl.row + r])
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::{Settings, Solution, Workspace};
    use karakuri::linalg::Factorization;
    use karakuri::Model;
    use karakuri::model::{Axis, JointId, JointType, ModelBuilder};
    use karakuri::spatial::{Inertia, Mat3, Se3, Vec3};
    use nalgebra::DMatrix;

    /// Two sliders on one axis (dofs 0 and 1, mass 1 and 2), a contact normal between them
    /// (`J = [-1, 1]`) and one against the ground (`J = [1, 0]`).
    fn problem(b: [f64; 2], second: RowKind, warm: f64) -> (Problem, Factorization, Model) {
        let mut mb = ModelBuilder::new("sliders");
        for (n, mass) in [1.0, 2.0].into_iter().enumerate() {
            let j = mb.add_joint(JointId::UNIVERSE, &format!("s{n}"), JointType::Prismatic { axis: Axis::X }, Se3::identity()).unwrap();
            mb.add_body(j, &format!("b{n}"), Inertia::new(mass, Vec3::zeros(), Mat3::identity())).unwrap();
        }
        let model = mb.build().unwrap();
        let mut fact = Factorization::new(&model);
        fact.factorize(&DMatrix::from_diagonal(&nalgebra::DVector::from_vec(vec![1.0, 2.0])));
        let mut p = Problem::new(&model);
        p.reserve(2, 2);
        let normal = RowKind::Normal { friction: 0, mu: 0.0 };
        let bi = p.push_block(&[normal], 0, 1, &b[..1], &[warm]);
        p.j_block_mut(bi).copy_from_slice(&[-1.0, 1.0]);
        let bi = p.push_block(&[second], 0, NONE, &b[1..], &[0.0]);
        p.j_block_mut(bi).copy_from_slice(&[1.0]);
        (p, fact, model)
    }

    #[test]
    fn slack_exactly_when_the_solver_gives_no_impulse() {
        let normal = RowKind::Normal { friction: 0, mu: 0.0 };
        // v_free: the sliders part (1 - 0.5 > -0.2) and the first leaves the ground (0.5 > -1)
        let v_free = [0.5, 1.0];
        for (b, kind, warm, want) in [
            ([-0.2, -1.0], normal, 0.0, true),
            ([-0.2, -1.0], RowKind::Unilateral, 0.0, true),
            // the pair closes faster than its gap allows
            ([0.6, -1.0], normal, 0.0, false),
            // the ground row is violated
            ([-0.2, 0.7], normal, 0.0, false),
            // a bilateral row asks J v = b whatever its impulse
            ([-0.2, 0.5], RowKind::Bilateral, 0.0, false),
        ] {
            let (mut p, fact, model) = problem(b, kind, warm);
            assert_eq!(slack(&p, &v_free), want, "{b:?} {kind:?}");
            let (mut work, mut sol) = (Workspace::new(&model), Solution::new(model.nv));
            p.prepare(&fact, &mut work);
            let settings = Settings { max_iterations: 100, tolerance: 1e-14, exact: true, direct_max_rows: 8, newton: false };
            p.solve(&v_free, &settings, &mut work, &mut sol);
            let none = sol.lambda.iter().all(|&l| l == 0.0);
            if want {
                assert!(none, "{b:?}: the solver gives {:?}", sol.lambda);
            } else if kind != RowKind::Bilateral {
                assert!(!none, "{b:?}: a violated row gets an impulse");
            }
        }
        // a warm impulse: left to the solver (which lets it go)
        let (p, _, _) = problem([-0.2, -1.0], normal, 0.3);
        assert!(!slack(&p, &v_free));
    }
}

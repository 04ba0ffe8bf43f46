//! The one constraint solver (`karakuri_sim::solver::Problem`) on small problems with known
//! answers: its exact island solve (active set on a semidefinite LDLᵀ, what the impact passes
//! and SHAKE get) and its Gauss–Seidel path must reach the same solution, and a redundant row
//! (the out-of-plane rows of a planar loop) must get no impulse.

use karakuri::linalg::Factorization;
use karakuri::model::{Axis, JointId, JointType, ModelBuilder};
use karakuri::spatial::{Inertia, Mat3, Se3, Vec3};
use karakuri::Model;
use karakuri_sim::solver::{Problem, RowKind, Settings, Solution, SolveStats, Workspace};
use nalgebra::DMatrix;

/// Two sliders along x from the world, each carrying 2 kg: two trees of one dof, `M = 2 I`.
fn two_sliders() -> (Model, Factorization) {
    let mut b = ModelBuilder::new("two_sliders");
    for name in ["a", "b"] {
        let j = b
            .add_joint(JointId::UNIVERSE, name, JointType::Prismatic { axis: Axis::X }, Se3::identity())
            .unwrap();
        b.add_body(j, &format!("{name}_body"), Inertia::new(2.0, Vec3::zeros(), Mat3::identity()))
            .unwrap();
    }
    let model = b.build().unwrap();
    let mut f = Factorization::new(&model);
    f.factorize(&DMatrix::from_diagonal_element(2, 2, 2.0));
    (model, f)
}

/// The problem of `rows` (each `(kind, J, b)`) over the two sliders, prepared and solved
/// from `v_free`.
fn solve(
    model: &Model,
    f: &Factorization,
    rows: &[(RowKind, [f64; 2], f64)],
    v_free: &[f64],
    settings: &Settings,
) -> (Solution, SolveStats) {
    let mut p = Problem::new(model);
    for &(kind, j, b) in rows {
        p.push_dense_row(kind, b, 0.0, &j);
    }
    let (mut work, mut sol) = (Workspace::new(model), Solution::new(model.nv));
    p.prepare(f, &mut work);
    let stats = p.solve(v_free, settings, &mut work, &mut sol);
    (sol, stats)
}

const EXACT: Settings = Settings { max_iterations: 500, tolerance: 1e-14, exact: true, direct_max_rows: 64, newton: false };
const SWEEPS: Settings = Settings { exact: false, ..EXACT };

#[test]
fn exact_and_gauss_seidel_agree_with_the_analytic_solution() {
    // v_free = (-1, 0). Asked: v_a ≥ 1 (pushes slider a), v_a + v_b ≥ -5 (already true
    // there: inactive), v_b = 0.5. Answer: v = (1, 0.5), impulses M Δv = (4, 0, 1).
    let normal = RowKind::Normal { friction: 0, mu: 0.0 };
    let rows = [
        (normal, [1.0, 0.0], 1.0),
        (normal, [1.0, 1.0], -5.0),
        (RowKind::Bilateral, [0.0, 1.0], 0.5),
    ];
    let (model, f) = two_sliders();
    let v_free = [-1.0, 0.0];
    for (settings, direct) in [(EXACT, true), (SWEEPS, false)] {
        let (p, stats) = solve(&model, &f, &rows, &v_free, &settings);
        assert_eq!(stats.direct, direct);
        for (got, want) in p.vel.iter().zip([1.0, 0.5]) {
            assert!((got - want).abs() < 1e-9, "{:?} {:?}", p.vel, stats);
        }
        for (got, want) in p.lambda.iter().zip([4.0, 0.0, 1.0]) {
            assert!((got - want).abs() < 1e-8, "{:?} {:?}", p.lambda, stats);
        }
    }
}

#[test]
fn a_redundant_row_gets_no_impulse_in_the_exact_solve() {
    // the same bilateral row twice (W singular): the semidefinite LDLᵀ drops the second
    let rows = [
        (RowKind::Bilateral, [1.0, -1.0], 0.2),
        (RowKind::Bilateral, [1.0, -1.0], 0.2),
    ];
    let (model, f) = two_sliders();
    let (p, stats) = solve(&model, &f, &rows, &[0.0, 0.0], &EXACT);
    assert!(stats.direct);
    // relative velocity 0.2 from rest with equal masses: v = (0.1, -0.1), one impulse 0.2
    assert!((p.vel[0] - 0.1).abs() < 1e-12 && (p.vel[1] + 0.1).abs() < 1e-12, "{:?}", p.vel);
    assert!((p.lambda[0] - 0.2).abs() < 1e-12 && p.lambda[1] == 0.0, "{:?}", p.lambda);
}

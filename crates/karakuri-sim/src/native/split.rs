//! Split impulse: penetration is removed by a pseudo-velocity that moves the configuration in
//! this step and is then forgotten, never by the velocity the bodies carry on with.
//!
//! Springhead's correction (`γ (d − d_tol) / dt`, capped at `max_depenetration_speed`) used to
//! be the normal row's velocity target, so the bodies kept the push-out speed as kinetic
//! energy: a box started 5 cm inside the floor left it at the cap, two coincident boxes flew
//! apart, and since the cap bounds the speed of the contact *point*, an overlap next to a
//! hinge's axis spun the whole link (the lever `L / r` times faster at its far end). As Bullet's
//! split impulse (Catto, GDC 2006 / `btSequentialImpulseConstraintSolver::
//! resolveSplitPenetrationImpulse`), the velocity solve now only stops penetrating contacts
//! from closing further (target 0), and a second problem with the same rows gives the
//! pseudo-velocity `v_p = qH⁻¹ Jᵀ λ_p`:
//!
//! ```text
//! penetrating normal   J_i (v⁺ + v_p) ≥ min(γ (d − d_tol) / dt, max_depenetration_speed)
//! friction rows        J_i v_p = 0 while |λ_p,t| ≤ μ λ_p,n (no pseudo-sliding beyond friction)
//! every other row      J_i (v⁺ + v_p) satisfies the row as v⁺ alone does (loops stay closed,
//!                      limits and speculative gaps keep their bound, servos their speed)
//! ```
//!
//! written as targets `b_p,i` on `v_p` with a zero free velocity: a problem of its own on the
//! velocity problem's rows ([`crate::solver::Problem::solve_targets`]: the same blocks, islands,
//! `qH⁻¹ Jᵀ` and `W_ii`, prepared once), its targets and solution in `w.split`; the velocity
//! solve's impulses, which the sensors and the warm start read, stay as they are. The
//! integrate stage moves `q ← q ⊕ dt (v⁺ + v_p)` and keeps `v⁺`: the correction adds no
//! kinetic energy. It runs only in steps where some contact is deeper than its tolerance by
//! more than a thousandth of it.

use super::build::SimModel;
use super::settings::solver_settings;
use super::work::StepData;
use crate::solver::RowKind;
use crate::SimError;

/// Springhead's penetration correction of a contact `depth` deep: the normal speed that removes
/// `error_correction_rate` of the depth beyond `penetration_tolerance` in one step, at most
/// `max_depenetration_speed` (m/s; 0 when within the tolerance).
pub fn correction_speed(m: &SimModel, depth: f64) -> f64 {
    let cp = &m.contact;
    let c = cp.error_correction_rate * (depth - cp.penetration_tolerance).max(0.0) / m.dt;
    c.min(cp.max_depenetration_speed)
}

/// Whether a contact `depth` deep needs a correction worth a solve: more than a thousandth of
/// the tolerance removed this step.
fn needs_correction(m: &SimModel, depth: f64) -> bool {
    let cp = &m.contact;
    cp.error_correction_rate * (depth - cp.penetration_tolerance) > 1e-3 * cp.penetration_tolerance
}

/// Whether this step's pseudo-velocity pass solves anything: some contact with rows needs a
/// correction. Reads `w.contact_rows`, `w.raw`.
pub fn needs_pass(m: &SimModel, w: &StepData) -> bool {
    w.contact_rows.iter().any(|cr| cr.nrows > 0 && needs_correction(m, w.raw[cr.raw].depth))
}

/// The pseudo-velocity stage, after the velocity solve. Reads `w.raw`, `w.contact_rows`,
/// `w.problem` (prepared and solved), `s.v` as `v⁺` (passed as `v`); writes `w.split`
/// (`active`, the targets `b` and the solution, whose `vel` is `v_p`) and `w.solver`. Leaves
/// `w.split.active` false, at the cost of a scan of the contacts, when no contact needs a
/// correction.
pub fn pseudo_velocity(m: &SimModel, v: &[f64], w: &mut StepData) -> Result<(), SimError> {
    w.split.active = needs_pass(m, w);
    if !w.split.active {
        return Ok(());
    }
    let (pr, sp) = (&w.problem, &mut w.split);
    // targets on v_p: what each row asks beyond what v⁺ already gives
    sp.b.clear();
    sp.b.resize(pr.rows(), 0.0);
    for bi in 0..pr.blocks.len() {
        let bl = pr.blocks[bi];
        for r in 0..bl.n {
            let i = bl.row + r;
            let u = pr.row_dot(bi, r, v);
            sp.b[i] = match pr.kind[i] {
                RowKind::Tangent => 0.0,
                _ if pr.b[i] == f64::NEG_INFINITY => f64::NEG_INFINITY,
                _ => pr.b[i] - u,
            };
        }
    }
    // the contacts' blocks come first, in the order of their rows
    let mut bi = 0;
    for cr in &w.contact_rows {
        if cr.nrows == 0 {
            continue;
        }
        debug_assert_eq!(pr.blocks[bi].row, cr.row);
        let depth = w.raw[cr.raw].depth;
        if depth > 0.0 {
            let u = pr.row_dot(bi, 0, v);
            sp.b[cr.row] = correction_speed(m, depth) - u;
        }
        bi += 1;
    }
    sp.zero.fill(0.0);
    let settings = solver_settings(&m.engine);
    pr.solve_targets(&sp.b, &sp.zero, &settings, &mut w.solver, &mut sp.solution);
    Ok(())
}

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
//! written as targets `b_p,i` on `v_p` with a zero free velocity and solved by the step's solver
//! (the direct solver where it applies, PGS otherwise). The integrate stage moves `q ← q ⊕ dt
//! (v⁺ + v_p)` and keeps `v⁺`: the correction adds no kinetic energy. It runs only in steps
//! where some contact is deeper than its tolerance by more than a thousandth of it.

use super::build::SimModel;
use super::state::StepData;
use crate::scene::SolverKind;
use crate::solver::{direct_applies, solve_direct, solve_pgs, RowKind};
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

/// The pseudo-velocity stage, after the velocity solve. Reads `w.raw`, `w.contact_rows`,
/// `w.rows` (rows, `M⁻¹ Jᵀ`, kinds), `s.v` as `v⁺` (passed as `v`); writes `w.split`
/// (`active`, the rows' copy, `v_p`). Leaves `w.split.active` false, at the cost of a scan
/// of the contacts, when no contact needs a correction.
pub fn pseudo_velocity(m: &SimModel, v: &[f64], w: &mut StepData) -> Result<(), SimError> {
    let sp = &mut w.split;
    sp.active = w
        .contact_rows
        .iter()
        .any(|cr| cr.nrows > 0 && needs_correction(m, w.raw[cr.raw].depth));
    if !sp.active {
        return Ok(());
    }
    let rows = &mut sp.rows;
    rows.assign(&w.rows);
    let nv = rows.nv;
    // targets on v_p: what each row asks beyond what v⁺ already gives
    for i in 0..rows.len() {
        let u: f64 = rows.j_row(i).iter().zip(v).map(|(a, b)| a * b).sum();
        rows.b[i] = match rows.kind[i] {
            RowKind::Tangent => 0.0,
            _ if rows.b[i] == f64::NEG_INFINITY => f64::NEG_INFINITY,
            _ => rows.b[i] - u,
        };
        rows.lambda[i] = 0.0;
    }
    for cr in &w.contact_rows {
        let depth = w.raw[cr.raw].depth;
        if cr.nrows > 0 && depth > 0.0 {
            let u: f64 = rows.j_row(cr.row).iter().zip(v).map(|(a, b)| a * b).sum();
            rows.b[cr.row] = correction_speed(m, depth) - u;
        }
    }
    sp.zero.fill(0.0);
    let e = &m.engine;
    let direct = e.solver == SolverKind::Auto && direct_applies(rows, e.direct_max_rows);
    let solved = direct
        .then(|| solve_direct(rows, &sp.zero, &mut sp.v_p, &mut w.solver))
        .flatten();
    if solved.is_none() {
        solve_pgs(rows, &sp.zero, &mut sp.v_p, e.max_iterations, e.tolerance, &mut w.solver);
    }
    debug_assert_eq!(sp.v_p.len(), nv);
    Ok(())
}

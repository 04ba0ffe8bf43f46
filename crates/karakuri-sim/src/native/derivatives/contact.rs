//! The Euler step's derivatives through its contact solve (decision record 0078), by the
//! implicit-function theorem on the solution's active set. The step is taken on a copy of the
//! state (the probe: the world is untouched) to read its contacts, impulses `λ` and `v⁺`; each
//! contact is then separated (`λ = 0`: no unknowns), sticking (its three rows `J v⁺ = b`) or
//! sliding (normal `J_n v⁺ = b_n`, friction `λ_t = μ λ_n s`, `s = −u_t/|u_t|` the slip after
//! the step). With `τ_c = Jᵀλ/dt` as an applied force (its `∂/∂q` at fixed `λ` below, `∂M`
//! through the RNEA derivatives at the total acceleration), `∂v⁺ = F + qH⁻¹ Jᵀ ∂λ`, and the
//! active rows give `∂λ`: equality rows `J ∂v⁺ + K = ∂b`, sliding ones
//! `∂λ_t − μ s ∂λ_n + D ∂u_t = 0` (`D = μ λ_n (I − s sᵀ)/|u_t|`). `K = ∂(J v⁺)/∂q` at fixed
//! `v⁺`, `∂b/∂q = −J_n/dt` for a gap's target. A contact the last step landed (its gap closed
//! to rounding, `LANDED`) sits on the kink between the gap's target `−gap/dt` and the
//! touching one (0): its derivative is the touching side's (`∂b = 0`), the side on which the
//! step's own set (the feet stuck) persists (record 0090). The normal and tangents are held fixed (exact
//! for a static plane); the point is the collider's midpoint between the plane and the shape's
//! deepest point, which lies along `n` from an anchor `a` fixed in the moving shape (a box
//! corner, a ball's or capsule's centre), so `∂p = (I − n nᵀ/2) ∂a`. Built for contacts of a
//! box, ball or capsule with a static plane; others are refused by name.

use karakuri::spatial::{Force, Motion, Vec3};
use nalgebra::{DMatrix, DMatrixViewMut, DVector};

use super::super::build::SimModel;
use super::super::dynamics::compute_terms;
use super::super::output::StepOutput;
use super::super::state::SimState;
use super::super::{actuators, impact, joint_forces, rk4, sensors, stages};
use super::super::work::StepData;
use crate::engine::unsupported;
use crate::scene::ContactMode;
use crate::SimError;

/// A gap below `LANDED (1 + |p|)` m (`p` the contact point) is one a step has closed (the gap's
/// target lands the shape on the plane to rounding: at most 1.5e-14 m on gymnasium's ant
/// standing, over 900 steps): it is taken as touching, the derivative of the kink's touching
/// side (module documentation). On the gap side a redundant stuck set (four feet, twelve rows
/// of rank eleven) has no linearised solution: the four gaps' targets move independently, the
/// stuck feet cannot follow them all (record 0090).
const LANDED: f64 = 1e-12;

/// A contact's state in the step's solution.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Status {
    /// Every row an equality (`J v⁺ = b`).
    Stick,
    /// Normal an equality, friction on the cone along the slip.
    Slide,
}

/// A contact that carries an impulse.
#[derive(Clone, Copy, Debug)]
struct Active {
    /// Rows (1: frictionless, 3) and the first unknown.
    rows: usize,
    at: usize,
    status: Status,
    /// The moving side's joint, and +1 when it is B (the normal points towards it), −1 when A.
    joint: usize,
    sign: f64,
    /// Point, anchor, directions (normal first), impulses, row velocities at `v⁺`.
    p: Vec3,
    anchor: Vec3,
    dirs: [Vec3; 3],
    lambda: [f64; 3],
    u: [f64; 3],
    mu: f64,
    /// The normal target is `−gap/dt` (a gap), not 0.
    gap: bool,
}

/// The contact part's buffers (made at the first call with contacts; the active-set matrices
/// are sized by each call's rows).
pub struct ContactWork {
    probe: Option<Box<(SimState, StepData, StepOutput)>>,
    active: Vec<Active>,
    /// Rows' dense Jacobian `(m x n)`, `K` `(m x n)`, `qH⁻¹ Jᵀ` `(n x m)`.
    j: DMatrix<f64>,
    k: DMatrix<f64>,
    y: DMatrix<f64>,
    /// The dofs of a side's path.
    path: Vec<usize>,
}

impl ContactWork {
    /// Empty buffers.
    pub fn new() -> ContactWork {
        ContactWork { probe: None, active: Vec::new(), j: DMatrix::zeros(0, 0), k: DMatrix::zeros(0, 0), y: DMatrix::zeros(0, 0), path: Vec::new() }
    }

}

/// A stage of the step (`step.rs`).
type Stage = fn(&SimModel, &mut SimState, &mut StepData, &mut StepOutput) -> Result<(), SimError>;

/// The step's stages up to the contact solve and the split-impulse test, in the step's order
/// (`step.rs`, checked by a test below): what the probe reads (contacts, `λ`, `v⁺`, `qH`);
/// the integration, the kinematics at the new state, the sensors and the watch are not run.
const PROBE: [(&str, Stage); 13] = [
    ("start", stages::start),
    ("actuator_commands", actuators::actuator_commands),
    ("sensor_start", sensors::sensor_start),
    ("joint_forces", joint_forces::joint_forces),
    ("position", stages::position),
    ("rk4", rk4::rk4),
    ("actuation", stages::actuation),
    ("acceleration", stages::acceleration),
    ("impacts", impact::impacts),
    ("free_velocity", stages::free_velocity),
    ("constraint", stages::constraint),
    ("actuator_report", actuators::actuator_report),
    ("split_impulse", stages::split_impulse),
];

/// Takes the step on a copy of `(s, w)` as far as its contact solve ([`PROBE`]) and reads its active set; refuses what is not built.
/// Returns whether any contact carries an impulse.
pub fn probe(m: &SimModel, s: &SimState, w: &StepData, cw: &mut ContactWork) -> Result<bool, SimError> {
    let no = |what: &str| Err(unsupported("native", &format!("step derivatives through {what} (not built yet)")));
    if !w.registered.joint_forces.is_empty() {
        return no("contacts with joint forces registered on the world");
    }
    if m.plan.impacts || m.plan.tracks {
        return no("elastic contacts (restitution) or track surfaces");
    }
    let pr = cw.probe.get_or_insert_with(|| {
        let mut ps = s.clone();
        let (mut pw, mut po) = (StepData::new(m), StepOutput::new(m));
        pw.reserve(m, &mut ps, &mut po, 0);
        Box::new((ps, pw, po))
    });
    let (ps, pw, po) = &mut **pr;
    ps.clone_from(s);
    compute_terms(m, &s.q, &s.v, &mut pw.data);
    for (_, stage) in PROBE {
        stage(m, ps, pw, po)?;
    }
    if pw.split.active {
        return no("a contact deeper than contact.penetration_tolerance (the split-impulse pass)");
    }
    cw.active.clear();
    let shapes = &m.collider.shapes;
    let mut at = 0;
    for cr in &pw.contact_rows {
        let c = pw.raw[cr.raw];
        if matches!(c.mode, ContactMode::Penalty { .. }) {
            return no("penalty contacts");
        }
        let l = &pw.solution.lambda[cr.row..cr.row + cr.nrows];
        if l[0] <= 0.0 && l.iter().all(|x| *x == 0.0) {
            continue;
        }
        let (sa, sb) = (&shapes[c.shape_a], &shapes[c.shape_b]);
        let (moving, fixed, sign) = if sa.joint == 0 { (sb, sa, 1.0) } else { (sa, sb, -1.0) };
        let radius = moving.shape.as_ball().map(|b| b.radius).or_else(|| moving.shape.as_cuboid().map(|_| 0.0)).or_else(|| moving.shape.as_capsule().map(|c| c.radius));
        let (Some(r), true, Some(_)) = (radius, fixed.joint == 0, fixed.shape.as_halfspace()) else {
            return no("a contact other than a box, ball or capsule on a static plane");
        };
        let mut lambda = [0.0; 3];
        lambda[..cr.nrows].copy_from_slice(l);
        let mu = match pw.problem.kind[cr.row] {
            crate::solver::RowKind::Normal { mu, .. } => mu,
            _ => 0.0,
        };
        let mut a = Active { rows: cr.nrows, at, status: Status::Stick, joint: moving.joint, sign, p: c.point, anchor: c.point + c.normal * (sign * (r - 0.5 * c.depth)), dirs: cr.dirs, lambda, u: [0.0; 3], mu, gap: c.depth < -LANDED * (1.0 + c.point.norm()) };
        let bi = pw.problem.blocks.iter().position(|b| b.row == cr.row).expect("a contact's block");
        a.u = pw.problem.block_dots(bi, &pw.solution.vel);
        let (lt, ut) = ((lambda[1].powi(2) + lambda[2].powi(2)).sqrt(), (a.u[1].powi(2) + a.u[2].powi(2)).sqrt());
        if cr.nrows == 3 && lt >= mu * lambda[0] * (1.0 - 1e-7) && ut > 1e-9 {
            a.status = Status::Slide;
        }
        at += cr.nrows;
        cw.active.push(a);
    }
    Ok(!cw.active.is_empty())
}

/// The dofs of `joint`'s path to the root, into `path` (root first).
fn path_of(model: &karakuri::Model, joint: usize, path: &mut Vec<usize>) {
    path.clear();
    let mut j = joint;
    while j > 0 {
        for k in (model.idx_v[j]..model.idx_v[j] + model.nvs[j]).rev() {
            path.push(k);
        }
        j = model.parents[j];
    }
    path.reverse();
}

/// `τ_c = Σ Jᵀλ / dt` into `tau` and its `∂/∂q` at fixed `λ` into `dtau` (added).
pub fn contact_forces(m: &SimModel, cw: &mut ContactWork, tau: &mut DVector<f64>, dtau: &mut DMatrix<f64>) {
    let (model, dt) = (&m.model, m.dt);
    let Some(pr) = cw.probe.as_ref() else { return };
    let sw = &pr.1.s_world;
    for a in &cw.active {
        path_of(model, a.joint, &mut cw.path);
        let mut f = Vec3::zeros();
        for r in 0..a.rows {
            f += a.dirs[r] * (a.lambda[r] * a.sign / dt);
        }
        let wf = Force { linear: f, angular: a.p.cross(&f) };
        let n = a.dirs[0];
        for &k in &cw.path {
            tau[k] += sw[k].dot(&wf);
        }
        for &j in &cw.path {
            let da = sw[j].linear + sw[j].angular.cross(&a.anchor);
            let dp = da - n * (0.5 * n.dot(&da));
            let dpf = dp.cross(&f);
            for &k in &cw.path {
                let mut d = sw[k].angular.dot(&dpf);
                if model.idx_v[model.dof_joint[j]] <= model.idx_v[model.dof_joint[k]] {
                    d += sw[j].cross(&sw[k]).dot(&wf);
                }
                dtau[(k, j)] += d;
            }
        }
    }
}

/// Adds `qH⁻¹ Jᵀ ∂λ` to `[F | Fu]`, given transposed as `ft` `((2n + nu) x n)`, `∂v⁺` at fixed
/// `λ` on entry: `∂λ` from the active rows' linearised conditions (module documentation).
pub fn add_impulse_derivatives(m: &SimModel, cw: &mut ContactWork, mut ft: DMatrixViewMut<f64>) -> Result<(), SimError> {
    let (n, dt) = (m.model.nv, m.dt);
    if cw.probe.is_none() {
        return Ok(());
    }
    let rows = rows_and_k(m, cw);
    let pr = cw.probe.as_ref().expect("probed");
    // Y = qH⁻¹ Jᵀ, W = J Y
    let qh = &pr.1.qh;
    cw.y = cw.j.transpose();
    for c in 0..rows {
        qh.solve(&mut cw.y.as_mut_slice()[c * n..(c + 1) * n]);
    }
    let w = &cw.j * &cw.y;
    // R = J [F Fu] + [K 0 0], with the targets' ∂b/∂q: the system's right-hand sides are ∂b − R
    let inputs = ft.nrows();
    let jft = &ft * cw.j.transpose();
    let mut rhs = DMatrix::zeros(rows, inputs);
    for r in 0..rows {
        for c in 0..inputs {
            rhs[(r, c)] = -jft[(c, r)] - if c < n { cw.k[(r, c)] } else { 0.0 };
        }
    }
    let mut sys = w.clone();
    for a in &cw.active {
        if a.gap {
            for c in 0..n {
                rhs[(a.at, c)] -= cw.j[(a.at, c)] / dt;
            }
        }
        if a.status != Status::Slide {
            continue;
        }
        // λ_t − μ λ_n s = 0, s = −u_t/|u_t|: ∂λ_t − μ s ∂λ_n + D ∂u_t = 0, ∂u_t = W ∂λ − rhs
        let (u1, u2) = (a.u[1], a.u[2]);
        let nu_t = (u1 * u1 + u2 * u2).sqrt();
        let s = [-u1 / nu_t, -u2 / nu_t];
        let g = a.mu * a.lambda[0] / nu_t;
        let d = [[g * (1.0 - s[0] * s[0]), -g * s[0] * s[1]], [-g * s[1] * s[0], g * (1.0 - s[1] * s[1])]];
        let (t1, t2) = (a.at + 1, a.at + 2);
        for (i, row) in [t1, t2].into_iter().enumerate() {
            for c in 0..rows {
                sys[(row, c)] = d[i][0] * w[(t1, c)] + d[i][1] * w[(t2, c)];
            }
            sys[(row, row)] += 1.0;
            sys[(row, a.at)] -= a.mu * s[i];
        }
        let (r1, r2) = (rhs.row(t1).clone_owned(), rhs.row(t2).clone_owned());
        for (i, row) in [t1, t2].into_iter().enumerate() {
            // −D R_t = D (rhs_t)
            let new = &r1 * d[i][0] + &r2 * d[i][1];
            rhs.set_row(row, &new);
        }
    }
    let mut null = Vec::new();
    let lam = solve_rank_revealing(sys, rhs, &mut null).ok_or_else(|| {
        unsupported("native", "step derivatives through a contact set whose linearised conditions have no solution (redundant or nearly redundant rows, as four stuck feet, whose squeeze a change of the configuration would move without bound: the step's own solve does not converge there)")
    })?;
    // redundant rows (a box's four corners) leave λ a family; sticking, every member gives the
    // same v⁺ (qH⁻¹ Jᵀ null = 0); sliding ones spread the friction by λ_n, and the solver's
    // sweep order picks the member: no derivative of the active set alone
    let ynorm = cw.y.amax();
    if null.iter().any(|z| (&cw.y * z).amax() > 1e-8 * ynorm * z.amax()) {
        return Err(unsupported("native", "step derivatives through redundant sliding contacts (a box sliding and turning on four corners: the solver picks how the normal impulses spread, and v⁺ with it)"));
    }
    let g = &cw.y * lam;
    for k in 0..n {
        for c in 0..inputs {
            ft[(c, k)] += g[(k, c)];
        }
    }
    Ok(())
}

/// The active rows' dense Jacobian into `cw.j` and `K = ∂(J v⁺)/∂q` at fixed `v⁺` into `cw.k`
/// (`rows x n`); returns the rows.
fn rows_and_k(m: &SimModel, cw: &mut ContactWork) -> usize {
    let (model, n) = (&m.model, m.model.nv);
    let pr = cw.probe.as_ref().expect("probed");
    // v⁺ as the solve gives it (the state's is re-expressed by the free flyers' update)
    let (sw, v) = (&pr.1.s_world, pr.1.solution.vel.as_slice());
    let rows: usize = cw.active.iter().map(|a| a.rows).sum();
    cw.j = DMatrix::zeros(rows, n);
    cw.k = DMatrix::zeros(rows, n);
    for a in &cw.active {
        path_of(model, a.joint, &mut cw.path);
        let mut vel = Motion::zero();
        for &k in &cw.path {
            vel += sw[k] * v[k];
        }
        let nrm = a.dirs[0];
        for &j in &cw.path {
            // the velocity of j's joint and its descendants on the path, and the point's move
            let mut sub = Motion::zero();
            for &k in &cw.path {
                if model.idx_v[model.dof_joint[k]] >= model.idx_v[model.dof_joint[j]] {
                    sub += sw[k] * v[k];
                }
            }
            let dv = sw[j].cross(&sub);
            let da = sw[j].linear + sw[j].angular.cross(&a.anchor);
            let dp = da - nrm * (0.5 * nrm.dot(&da));
            let point = dv.linear + dv.angular.cross(&a.p) + vel.angular.cross(&dp);
            let at_p = sw[j].linear + sw[j].angular.cross(&a.p);
            for r in 0..a.rows {
                cw.j[(a.at + r, j)] = a.sign * a.dirs[r].dot(&at_p);
                cw.k[(a.at + r, j)] = a.sign * a.dirs[r].dot(&point);
            }
        }
    }
    rows
}

/// `X` with `A X = B` by Gaussian elimination with complete pivoting; pivots below `1e-11` of
/// the first are dropped (their unknowns 0: a particular solution of a consistent singular
/// system, as redundant contact rows give), and the null space's basis, one vector per dropped
/// pivot, into `null`. None when a dropped equation is not met.
fn solve_rank_revealing(mut a: DMatrix<f64>, mut b: DMatrix<f64>, null: &mut Vec<DVector<f64>>) -> Option<DMatrix<f64>> {
    let m = a.nrows();
    let mut cols: Vec<usize> = (0..m).collect();
    let mut rank = 0;
    let mut first = 0.0;
    for k in 0..m {
        let (mut pi, mut pj, mut best) = (k, k, 0.0);
        for i in k..m {
            for j in k..m {
                if a[(i, j)].abs() > best {
                    (pi, pj, best) = (i, j, a[(i, j)].abs());
                }
            }
        }
        if k == 0 {
            first = best;
        }
        if best <= 1e-11 * first || best == 0.0 {
            break;
        }
        a.swap_rows(k, pi);
        b.swap_rows(k, pi);
        a.swap_columns(k, pj);
        cols.swap(k, pj);
        for i in k + 1..m {
            let fct = a[(i, k)] / a[(k, k)];
            if fct == 0.0 {
                continue;
            }
            for j in k..m {
                let v = a[(k, j)];
                a[(i, j)] -= fct * v;
            }
            for c in 0..b.ncols() {
                let v = b[(k, c)];
                b[(i, c)] -= fct * v;
            }
        }
        rank = k + 1;
    }
    let scale = b.amax().max(1e-300);
    if (rank..m).any(|i| b.row(i).amax() > 1e-6 * scale) {
        return None;
    }
    // back substitution of the first `rank` unknowns for the right-hand side `rhs(k, c)`
    let back = |rhs: &dyn Fn(usize, usize) -> f64, ncols: usize| {
        let mut x = DMatrix::zeros(m, ncols);
        for k in (0..rank).rev() {
            for c in 0..ncols {
                let mut v = rhs(k, c);
                for j in k + 1..rank {
                    v -= a[(k, j)] * x[(j, c)];
                }
                x[(k, c)] = v / a[(k, k)];
            }
        }
        x
    };
    let x = back(&|k, c| b[(k, c)], b.ncols());
    let mut out = DMatrix::zeros(m, b.ncols());
    for k in 0..m {
        out.set_row(cols[k], &x.row(k));
    }
    null.clear();
    for d in rank..m {
        let mut z = back(&|k, _| -a[(k, d)], 1);
        z[(d, 0)] = 1.0;
        let mut v = DVector::zeros(m);
        for k in 0..m {
            v[cols[k]] = z[(k, 0)];
        }
        null.push(v);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    /// The probe runs the step's own first stages, in its order.
    #[test]
    fn the_probe_runs_the_steps_first_stages() {
        let names: Vec<&str> = super::PROBE.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, super::super::super::step::STAGES[..names.len()]);
    }
}

//! Loop closures (Choreonoid's extra joints: ball, revolute, piston, weld): bilateral rows with
//! Baumgarte correction during the step, and SHAKE, a projection of the step's end
//! configuration back onto the loops.

use karakuri::algorithms;
use karakuri::constraints::rows::{
    add_relative_angular_row, add_relative_point_row, world_motion_columns,
};
use karakuri::spatial::{log3, Force, Motion, Se3, Vec3};
use karakuri::Model;

use super::build::{LoopSpec, SimModel};
use super::contact::tangents;
use super::integrate::integrate_world;
use super::state::SimState;
use super::work::StepData;
use crate::scene::LoopKind;
use super::settings::solver_settings;
use crate::solver::{RowKind, Rows, Settings};
use crate::SimError;

/// Rows of the loop constraints at placements `o_m_i` with world columns `s_world` into `rows`
/// (bilateral, targets zero), their position errors `C` into `err`, and into `wrench` the
/// world wrenches (about the world origin) one unit of each row's impulse applies to B and to
/// A (what a force sensor subtracts), one entry per row. Every row measures B's motion
/// relative to A's, and `dC/dt` is that row's velocity:
///
/// | kind | rows |
/// | --- | --- |
/// | ball | `p_b − p_a` along x, y, z |
/// | revolute | ball, and the misalignment `a_a × a_b` of the two axes along two directions normal to A's axis |
/// | piston | `p_b − p_a` along two directions normal to A's axis (B's anchor stays on A's axis line; the rows measure the velocity of B's anchor relative to the point of A under it), and the revolute's two axis rows |
/// | weld | ball, and the rotation vector of `R_b (R_a R_0)ᵀ` along x, y, z (`R_0` the initial relative orientation) |
pub fn loop_rows(
    model: &Model,
    o_m_i: &[Se3],
    s_world: &[Motion],
    loops: &[LoopSpec],
    rows: &mut Rows,
    err: &mut Vec<f64>,
    wrench: &mut Vec<[Force; 2]>,
) {
    rows.clear(model.nv);
    err.clear();
    wrench.clear();
    let xyz = [Vec3::x(), Vec3::y(), Vec3::z()];
    for l in loops {
        let (xa, xb) = (o_m_i[l.ja], o_m_i[l.jb]);
        let (pa, pb) = (xa.transform_point(&l.pa), xb.transform_point(&l.pb));
        let e = pb - pa;
        // a point row of B's point `pb` relative to A's point `qa` along `dir`
        let mut point = |qa: &Vec3, dir: &Vec3, c: f64| {
            let r = rows.push(RowKind::Bilateral, 0.0, 0.0);
            add_relative_point_row(model, s_world, (l.ja, qa), (l.jb, &pb), dir, rows.j_row_mut(r));
            err.push(c);
            let f = Force::new(*dir, pb.cross(dir));
            wrench.push([f, -Force::new(*dir, qa.cross(dir))]);
        };
        let aa = xa.rotation * l.axis_a;
        let (u1, u2) = tangents(&aa);
        match l.kind {
            LoopKind::Ball | LoopKind::Revolute | LoopKind::Weld => {
                for dir in &xyz {
                    point(&pa, dir, e.dot(dir));
                }
            }
            LoopKind::Piston => {
                for dir in [u1, u2] {
                    point(&pb, &dir, e.dot(&dir));
                }
            }
        }
        let mut angular = |dir: &Vec3, c: f64| {
            let r = rows.push(RowKind::Bilateral, 0.0, 0.0);
            add_relative_angular_row(model, s_world, l.ja, l.jb, dir, rows.j_row_mut(r));
            err.push(c);
            let t = Force::new(Vec3::zeros(), *dir);
            wrench.push([t, -t]);
        };
        match l.kind {
            LoopKind::Ball => {}
            LoopKind::Revolute | LoopKind::Piston => {
                // rotating B about `aa × ab` carries its axis away from A's
                let mis = aa.cross(&(xb.rotation * l.axis_b));
                for dir in [u1, u2] {
                    angular(&dir, mis.dot(&dir));
                }
            }
            LoopKind::Weld => {
                let rot = log3(&(xb.rotation * (xa.rotation * l.rel_rotation).transpose()));
                for dir in &xyz {
                    angular(dir, rot.dot(dir));
                }
            }
        }
    }
}

/// The loop stage of the constraint build. Reads the placements of `w.data`, `w.s_world`,
/// the warm impulses `s.warm_other[*other..]`; writes `w.loop_rows`, `w.loop_err` and one
/// bilateral row per loop row into `w.rows` with the Baumgarte target `-β C / dt`.
pub fn loop_constraint_rows(
    m: &SimModel,
    s: &SimState,
    w: &mut StepData,
    other: &mut usize,
) -> Result<(), SimError> {
    let beta = m.engine.loop_correction_rate;
    loop_rows(
        &m.model,
        w.data.joint_placements()?,
        &w.s_world,
        &m.loops,
        &mut w.loop_rows,
        &mut w.loop_err,
        &mut w.loop_wrench,
    );
    for (k, &c) in w.loop_err.iter().enumerate() {
        let warm = s.warm_other.get(*other).copied().unwrap_or(0.0);
        *other += 1;
        let r = w.rows.push(RowKind::Bilateral, -beta * c / m.dt, warm);
        w.rows.j_row_mut(r).copy_from_slice(w.loop_rows.j_row(k));
    }
    Ok(())
}

/// SHAKE: adds loop impulses along the step's loop rows `J(q_n)` until the configuration
/// reached by the step satisfies the loop constraints, `C(q_n ⊕ dt v⁺) = 0` (Newton with the
/// step's Delassus matrix). A first-order scheme whose velocity constraint is imposed at the
/// end of the step keeps the energy of closed loops instead of dissipating it.
///
/// Each Newton iteration is a bilateral, frictionless problem on `w.shake.problem` (the loop
/// rows as compact one-row blocks, prepared once), solved exactly island by island by
/// [`crate::solver::Problem::solve`] (an active-set LDLᵀ that gives redundant rows, such as
/// the out-of-plane rows of a planar loop, no impulse; an island beyond its exact size falls
/// back to Gauss–Seidel).
///
/// Reads `s.q`, `w.loop_rows`, `w.qh`; writes `s.v`, `w.shake`, adds its impulses to
/// `w.loop_impulse` (what the force sensors see of the loops), and uses `w.data` as
/// scratch for the trial kinematics (the kinematics stage refreshes it after the step).
pub fn shake(m: &SimModel, s: &mut SimState, w: &mut StepData) -> Result<(), SimError> {
    let (model, dt) = (&m.model, m.dt);
    let sh = &mut w.shake;
    // the step's loop rows with their qH⁻¹ Jᵀ (J at q_n, as the impulses of the step)
    sh.problem.clear();
    let first = sh.problem.push_rows(&w.loop_rows);
    sh.problem.prepare(&w.qh, &mut w.solver);
    let settings = Settings {
        exact: true,
        direct_max_rows: usize::MAX,
        ..solver_settings(&m.engine)
    };
    for _ in 0..4 {
        sh.q.copy_from(&s.q);
        sh.v.copy_from(&s.v);
        integrate_world(model, &mut sh.q, &mut sh.v, dt);
        algorithms::forward_kinematics(model, &mut w.data, &sh.q);
        let o_m_i = w.data.joint_placements()?;
        world_motion_columns(model, o_m_i, &mut sh.s_world);
        loop_rows(
            model,
            o_m_i,
            &sh.s_world,
            &m.loops,
            &mut sh.trial_rows,
            &mut sh.err,
            &mut sh.wrench,
        );
        if sh.err.iter().all(|e| e.abs() < 1e-12) {
            break;
        }
        let n = sh.err.len();
        for (b, e) in sh.problem.b[first..first + n].iter_mut().zip(&sh.err) {
            *b = -e / dt;
        }
        sh.problem.warm[first..first + n].fill(0.0);
        sh.problem.solve(&sh.zero, &settings, &mut w.solver, &mut sh.solution);
        let lambda = &sh.solution.lambda[first..first + n];
        for (total, l) in w.loop_impulse.iter_mut().zip(lambda) {
            *total += l;
        }
        for (vk, dk) in s.v.iter_mut().zip(&sh.solution.vel) {
            *vk += dk;
        }
    }
    Ok(())
}

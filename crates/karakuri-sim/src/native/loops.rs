//! Loop closures (Choreonoid's extra joints: ball, revolute, piston, weld): bilateral rows with
//! Baumgarte correction during the step, and SHAKE, a projection of the step's end
//! configuration back onto the loops.

use karakuri::algorithms;
use karakuri::constraints::rows::{
    add_relative_angular_rows, add_relative_point_rows, world_motion_columns,
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
use crate::solver::{BlockRows, Problem, RowKind, Settings};
use crate::SimError;

/// Rows of the loop constraints at placements `o_m_i` with world columns `s_world`: into
/// `rows` when given, one one-row block each (bilateral, target and warm impulse zero,
/// written by the core's row writer over the trees of the loop's two bodies, a tree the row
/// does not move dropped), their position errors `C` into `err`, and into `wrench` the world
/// wrenches (about the world origin) one unit of each row's impulse applies to B and to A
/// (what a force sensor subtracts), one entry per row. Every row measures B's motion relative
/// to A's, and `dC/dt` is that row's velocity:
///
/// | kind | rows |
/// | --- | --- |
/// | ball | `p_b − p_a` along x, y, z |
/// | revolute | ball, and the misalignment `a_a × a_b` of the two axes along two directions normal to A's axis |
/// | piston | `p_b − p_a` along two directions normal to A's axis (B's anchor stays on A's axis line; the rows measure the velocity of B's anchor relative to the point of A under it), and the revolute's two axis rows |
/// | weld | ball, and the rotation vector of `R_b (R_a R_0)ᵀ` along x, y, z (`R_0` the initial relative orientation) |
pub fn loop_rows(
    (model, o_m_i, s_world): (&Model, &[Se3], &[Motion]),
    loops: &[LoopSpec],
    mut rows: Option<&mut Problem>,
    err: &mut Vec<f64>,
    wrench: &mut Vec<[Force; 2]>,
) {
    err.clear();
    wrench.clear();
    let xyz = [Vec3::x(), Vec3::y(), Vec3::z()];
    // a one-row block over the loop's trees, written by `write`, its unmoved trees dropped
    let mut push_row = |l: &LoopSpec, write: &dyn Fn(&mut BlockRows)| {
        if let Some(p) = rows.as_deref_mut() {
            let (ta, tb) = (p.trees.of_joint[l.ja], p.trees.of_joint[l.jb]);
            let block = p.push_block(&[RowKind::Bilateral], ta, tb, &[0.0], &[0.0]);
            write(&mut BlockRows { problem: p, block });
            p.trim_last();
        }
    };
    for l in loops {
        let (xa, xb) = (o_m_i[l.ja], o_m_i[l.jb]);
        let (pa, pb) = (xa.transform_point(&l.pa), xb.transform_point(&l.pb));
        let e = pb - pa;
        // a point row of B's point `pb` relative to A's point `qa` along `dir`
        let mut point = |qa: &Vec3, dir: &Vec3, c: f64| {
            push_row(l, &|b| add_relative_point_rows(model, s_world, (l.ja, qa), (l.jb, &pb), &[*dir], b));
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
            push_row(l, &|b| add_relative_angular_rows(model, s_world, l.ja, l.jb, &[*dir], b));
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
/// the warm impulses `s.warm_other[*other..]`; writes `w.loop_err`, `w.loop_wrench`, and one
/// bilateral one-row block per loop row into `w.problem` (from block `w.loop_block`, row
/// `w.other_row_start`) with the Baumgarte target `-β C / dt`.
pub fn loop_constraint_rows(
    m: &SimModel,
    s: &SimState,
    w: &mut StepData,
    other: &mut usize,
) -> Result<(), SimError> {
    let beta = m.engine.loop_correction_rate;
    let first = w.problem.rows();
    loop_rows(
        (&m.model, w.data.joint_placements()?, &w.s_world),
        &m.loops,
        Some(&mut w.problem),
        &mut w.loop_err,
        &mut w.loop_wrench,
    );
    for (k, &c) in w.loop_err.iter().enumerate() {
        let warm = s.warm_other.get(*other).copied().unwrap_or(0.0);
        *other += 1;
        w.problem.b[first + k] = -beta * c / m.dt;
        w.problem.warm[first + k] = warm;
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
/// Reads `s.q`, the step's loop blocks in `w.problem`, `w.qh`; writes `s.v`, `w.shake`, adds its impulses to
/// `w.loop_impulse` (what the force sensors see of the loops), and uses `w.data` as
/// scratch for the trial kinematics (the kinematics stage refreshes it after the step).
pub fn shake(m: &SimModel, s: &mut SimState, w: &mut StepData) -> Result<(), SimError> {
    let (model, dt) = (&m.model, m.dt);
    let sh = &mut w.shake;
    // the step's loop rows with their qH⁻¹ Jᵀ (J at q_n, as the impulses of the step)
    sh.problem.clear();
    let loop_blocks = w.loop_block..w.loop_block + w.loop_err.len();
    let first = sh.problem.push_copies(&w.problem, loop_blocks);
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
        loop_rows((model, o_m_i, &sh.s_world), &m.loops, None, &mut sh.err, &mut sh.wrench);
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

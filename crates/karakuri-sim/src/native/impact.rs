//! Impact passes: restitution carried through chains of touching bodies.
//!
//! Springhead's rule asks each contact approaching faster than `restitution_threshold_velocity`
//! to leave at `−e` times its approach speed. Imposed on all contacts of a step at once (one
//! problem with the pre-step speeds as targets), a ball striking a row of touching balls pushes
//! the whole row: the resting contacts ask only not to close, and the impulse that satisfies
//! everything together sends the first ball back at −3/5 v and the four others on at 2/5 v
//! (the validation README's note on the cradle), where the real row passes the velocity along
//! and the last ball alone leaves at v.
//!
//! As the sequential-impulse impact models (Moreau's and Mirtich's sequences of collisions, the
//! pairwise impacts of Han & Gilmore), the impacts of a step are resolved in passes, before the
//! step's velocity problem: each pass takes only the contacts approaching *at that moment*
//! (from the velocity left by the passes before it), solves them together (normal `u_n ≥ −e
//! v_n` with `v_n` the pass's approach speed, circular Coulomb friction bounded by `μ λ_n`),
//! and applies the impulses. A touching contact takes part from the pass where the impulse
//! reaches it, so the velocity travels down the row one contact per pass; contacts struck at
//! the same moment share one pass. The passes stop when no contact approaches (or after
//! `4 n + 8` passes for `n` eligible contacts, a bound a chain never reaches: each pass hands
//! the velocity one contact on, and with `e < 1` it decays). The velocity problem of the step
//! then sees these contacts separating and applies no restitution again.
//!
//! Only contacts with `e > 0` take part: perfectly plastic contacts (stacks, piles, feet) keep
//! the one simultaneous problem, where resting weight and impacts are solved together. The
//! passes hold no other rows: a world with loop closures keeps the simultaneous problem (a loop
//! would have to join every pass), and a joint limit met during an impact stops its joint
//! plastically in the velocity problem that follows. The
//! passes work on the state's velocity at the step's start, as the velocity problem's
//! restitution targets do; a step without an approaching elastic contact costs one point
//! velocity per contact.

use karakuri::constraints::rows::add_relative_point_rows;
use karakuri::spatial::{Motion, Se3, Vec3};

use super::build::SimModel;
use super::contact::tangents;
use super::output::StepOutput;
use super::state::SimState;
use super::work::StepData;
use crate::scene::ContactMode;
use super::settings::solver_settings;
use crate::solver::{BlockRows, RowKind};
use crate::SimError;

/// World velocity of the world point `p` carried by joint `j` (placed at `x`, moving with `v`
/// in its frame); zero for the universe.
fn point_velocity(j: usize, x: &Se3, v: &Motion, p: &Vec3) -> Vec3 {
    if j == 0 {
        return Vec3::zeros();
    }
    let vw = x.act_motion(v);
    vw.linear + vw.angular.cross(p)
}

/// Whether a contact with approach speed `vn` (negative when closing) and `depth` (negative:
/// a gap) is struck in this pass: approaching faster than the threshold, and touching or
/// closing its gap within the step.
fn struck(m: &SimModel, vn: f64, depth: f64) -> bool {
    vn < -m.contact.restitution_threshold_velocity && (depth >= 0.0 || vn * m.dt < depth)
}

/// The impact stage, before the free velocity. Reads `w.raw`, `w.data` (placements and body
/// velocities of the step's start), `w.s_world`, `w.qh`, the materials; writes `s.v` (the
/// velocity after the impacts) and uses `w.impact` as scratch: `all` holds one compact block
/// (normal, two tangents; the contact stage's row writer) per elastic contact, `pass` the
/// blocks of one pass, solved island by island as the velocity problem is
/// ([`crate::solver::Problem::solve`]: exact for small frictionless islands). In an Euler step
/// of a world with elastic contacts (`m.plan.impacts`).
#[inline]
pub fn impacts(m: &SimModel, s: &mut SimState, w: &mut StepData, out: &mut StepOutput) -> Result<(), SimError> {
    if !m.plan.impacts || w.rk4.taken {
        // no elastic pair in this world (`m.plan.impacts`), or an RK4 step
        return Ok(());
    }
    if !m.loops.is_empty() {
        // a loop's impulse would have to join every pass: such worlds keep the one
        // simultaneous problem, which holds the loops
        return Ok(());
    }
    if w.raw.len() > w.reserved_contacts {
        w.reserve(m, s, out, w.raw.len());
    }
    let (model, shapes) = (&m.model, &m.collider.shapes);
    let (o_m_i, vel) = (w.data.joint_placements()?, w.data.joint_velocities()?);
    // the cheap test first: does any elastic contact approach now?
    let any = w.raw.iter().any(|c| {
        let (sa, sb) = (&shapes[c.shape_a], &shapes[c.shape_b]);
        if matches!(c.mode, ContactMode::Penalty { .. })
            || m.collider.material(c.shape_a, c.shape_b).restitution <= 0.0
        {
            return false;
        }
        let va = point_velocity(sa.joint, &o_m_i[sa.joint], &vel[sa.joint], &c.point);
        let vb = point_velocity(sb.joint, &o_m_i[sb.joint], &vel[sb.joint], &c.point);
        struck(m, (vb - va).dot(&c.normal), c.depth)
    });
    if !any {
        return Ok(());
    }
    // the rows (normal, two tangents) of every elastic contact, once, over their trees only
    let iw = &mut w.impact;
    iw.all.clear();
    iw.contacts.clear();
    for (ci, c) in w.raw.iter().enumerate() {
        let (sa, sb) = (&shapes[c.shape_a], &shapes[c.shape_b]);
        let mat = m.collider.material(c.shape_a, c.shape_b);
        if matches!(c.mode, ContactMode::Penalty { .. }) || mat.restitution <= 0.0 {
            continue;
        }
        let (t1, t2) = tangents(&c.normal);
        let dirs = [c.normal, t1, t2];
        let all = &mut iw.all;
        let (ta, tb) = (all.trees.of_joint[sa.joint], all.trees.of_joint[sb.joint]);
        let bi = all.push_block(&[RowKind::Tangent; 3], ta, tb, &[0.0; 3], &[0.0; 3]);
        let sides = ((sa.joint, &c.point), (sb.joint, &c.point));
        add_relative_point_rows(model, &w.s_world, sides.0, sides.1, &dirs, &mut BlockRows { problem: all, block: bi });
        iw.contacts.push((ci, mat));
    }
    let cp = &m.contact;
    let settings = solver_settings(&m.engine);
    let max_passes = 4 * iw.contacts.len() + 8;
    for _ in 0..max_passes {
        let u = s.v.as_slice();
        iw.pass.clear();
        for (k, &(ci, mat)) in iw.contacts.iter().enumerate() {
            let vn = iw.all.row_dot(k, 0, u);
            if !struck(m, vn, w.raw[ci].depth) {
                continue;
            }
            let slip = iw.all.row_dot(k, 1, u).hypot(iw.all.row_dot(k, 2, u));
            let mu = if slip <= cp.friction_threshold_velocity {
                mat.static_friction
            } else {
                mat.dynamic_friction
            };
            let friction = if mu > 0.0 { 2 } else { 0 };
            let n = 1 + friction;
            let kinds = [RowKind::Normal { friction, mu }, RowKind::Tangent, RowKind::Tangent];
            let b = [-mat.restitution * vn, 0.0, 0.0];
            let [ta, tb] = iw.all.blocks[k].trees;
            let bi = iw.pass.push_block(&kinds[..n], ta, tb, &b[..n], &[0.0; 3][..n]);
            // same trees, same column layout: the first n rows of the contact's block
            let src = iw.all.blocks[k];
            iw.pass
                .j_block_mut(bi)
                .copy_from_slice(&iw.all.j[src.off..src.off + n * src.width]);
        }
        if iw.pass.rows() == 0 {
            break;
        }
        iw.pass.prepare(&w.qh, &mut w.solver);
        iw.pass.solve(u, &settings, &mut w.solver, &mut iw.solution);
        s.v.as_mut_slice().copy_from_slice(&iw.solution.vel);
    }
    Ok(())
}

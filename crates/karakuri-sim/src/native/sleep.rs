//! Island sleeping: trees that stay at rest stop costing anything until something acts on them
//! (Box2D's and rapier's islands, with the decision made from the state alone).
//!
//! A tree (a free body, an unactuated floating robot: [`crate::solver::Trees`]) is *still* in
//! a step when every one of its bodies moves slower than `engine.sleep.linear` (m/s, at its
//! joint origin) and `engine.sleep.angular` (rad/s); [`SleepState::still`] counts the steps it
//! has been so. At the end of a step the awake trees are grouped into islands by the step's
//! contacts (a gap within the prediction distance links too) and loop closures; an island
//! whose trees have all been still for `engine.sleep.time`, and which the world holds (a
//! contact with a static shape, a joint or loop to the world: a body drifting or spinning
//! slowly in zero gravity is moving, not resting), falls asleep: its velocities are set to
//! exactly 0 and it keeps its configuration bit for bit until it is woken. It keeps reporting
//! the contacts (and forces) of the step it fell asleep in.
//!
//! A sleeping island costs nothing where it stays at rest: its shapes are *frozen* for the
//! collision detection (a pair of two frozen shapes, static ones included, is not collided),
//! so it has no contacts and no contact rows; it is not integrated. A contact of a frozen shape
//! with an awake tree's shape wakes the sleeping island at once, before the solve, and the
//! detection runs again with it awake; a push (perturbation or API wrench) on one of its
//! bodies or a user joint torque on one of its dofs wakes it at the start of the step; a track
//! speed command wakes every island. With `engine.sleep.actuated`, a robot held by position
//! servos (or constant torque commands) sleeps as a passive tree does once its commands have
//! not changed for `engine.sleep.time`; a changed command (a new target, a moving signal,
//! another torque) wakes it in the step it applies ([`note_command`]), and while it sleeps
//! each servo reports its torque at the held configuration, the one that holds the robot
//! against gravity. Trees
//! with a velocity servo, a prescribed joint, a track, a force sensor or a user-registered
//! joint force never sleep (something outside the state drives them), nor trees with an MJCF
//! actuator carried as a joint force, nor, without
//! `actuated` (the default), trees with any actuator: a servo-held tree slower than the
//! thresholds may still be converging, and sleeping stops it `|M q̈ + D q̇| / kp` short (0067).
//!
//! Determinism: every decision is a function of the state ([`SimState::sleep`] holds the
//! counters and the islands, so a checkpoint carries them and a resumed run is bit-identical)
//! taken in a fixed order (trees in model order, contacts in detection order). The kinematics
//! of the whole world (one `compute_all_terms` call) are skipped in a step every tree slept
//! through ([`kinematics_unchanged`]); with some tree awake they are computed for all, and
//! the iteration matrix every step.

use karakuri::model::JointType;
use karakuri::spatial::Motion;

use super::build::SimModel;
use super::dynamics::compute_terms;
use super::output::StepOutput;
pub use super::parts::SleepModel;
pub use super::state::{SleepState, SleptContact};
use super::state::SimState;
use super::work::{SleepWork, StepData};
use crate::scene::ActuatorMode;
use crate::solver::{Trees, NONE};
use crate::SimError;

impl SleepModel {
    /// The sleep description of a world model (everything else of `m` built).
    pub fn new(m: &SimModel) -> SleepModel {
        let model = &m.model;
        let p = &m.engine.sleep;
        let trees = Trees::new(model);
        let n = trees.start.len();
        let tree = |j: usize| trees.of_joint[j];
        let mut sleepable = vec![true; n];
        let mut q_range = vec![(usize::MAX, 0); n];
        for j in 1..model.njoints {
            let r = &mut q_range[tree(j) as usize];
            if r.0 == usize::MAX {
                r.0 = model.idx_q[j];
            }
            r.1 = model.idx_q[j] + model.nqs[j] - r.0;
        }
        let mut forbid = |j: usize| {
            if j != 0 {
                sleepable[tree(j) as usize] = false;
            }
        };
        // with `actuated`, a position servo or a torque command holds its tree while the
        // command stays the same (`note_command` wakes it on a change); a velocity servo's or
        // a prescribed joint's torque is a row's impulse, which a sleeping tree has none of
        let may_sleep =
            |mode: ActuatorMode| p.actuated && matches!(mode, ActuatorMode::Position | ActuatorMode::Torque);
        for a in m.actuators.iter().filter(|a| !may_sleep(a.mode)) {
            forbid(model.dof_joint[a.dof]);
        }
        for &dof in &m.forced_dofs {
            forbid(model.dof_joint[dof]);
        }
        for t in &m.tracks {
            forbid(t.joint);
        }
        // linear rows and tendons may join trees no contact or loop links
        for r in &m.linear_rows {
            r.terms.iter().for_each(|&(_, dof, _)| forbid(model.dof_joint[dof]));
        }
        for t in &m.spatial_tendons {
            t.points.iter().for_each(|&(j, _)| forbid(j));
        }
        for sn in m.sensors.iter().filter(|sn| sn.kind.is_wrench()) {
            forbid(sn.joint);
        }
        let to_tree = |j: usize| if j == 0 { NONE } else { tree(j) };
        let mut held = vec![false; n];
        for j in 1..model.njoints {
            if model.parents[j] == 0 && model.joint_types[j] != JointType::FreeFlyer {
                held[tree(j) as usize] = true;
            }
        }
        for l in &m.loops {
            if l.ja == 0 || l.jb == 0 {
                held[tree(l.ja.max(l.jb)) as usize] = true;
            }
        }
        SleepModel {
            held,
            enabled: p.enabled,
            linear: p.linear,
            angular: p.angular,
            steps: ((p.time / m.dt).ceil() as u32).max(1),
            shape_tree: m.collider.shapes.iter().map(|s| to_tree(s.joint)).collect(),
            loop_trees: m.loops.iter().map(|l| [to_tree(l.ja), to_tree(l.jb)]).collect(),
            trees,
            sleepable,
            q_range,
        }
    }

}

/// Wake on actions, at the step's start: a sleeping tree with an active push (the scene's
/// perturbations, API wrenches) on one of its bodies or a nonzero user joint torque on one of
/// its dofs wakes with its island. Reads `m.perturbations`, `s.pushes`, `s.tau_user`,
/// `s.steps`; writes `s.sleep`.
pub fn wake_on_actions(m: &SimModel, s: &mut SimState) {
    if !m.sleep.enabled || !s.sleep.any_asleep() {
        return;
    }
    let trees = &m.sleep.trees;
    for p in m.perturbations.iter().chain(&s.pushes) {
        if p.active(s.steps) && p.joint != 0 {
            s.sleep.wake(trees.of_joint[p.joint]);
        }
    }
    for (k, &tau) in s.tau_user.iter().enumerate() {
        if tau != 0.0 {
            s.sleep.wake(trees.of_dof(k));
        }
    }
}

/// Command watch, in the actuator commands: actuator `i` (on dof `dof`) is commanded `x`
/// (target or torque) and `rate` (the target's rate) for the step's end time. When the bits
/// differ from the last step's, the command is kept and its tree's island wakes (a sleeping
/// robot takes a new target in the step it is given), or, awake, its tree's still count
/// restarts: a tree sleeps only after `engine.sleep.time` of both rest and unchanged commands
/// (a slow ramp or sine never puts it to sleep for a step). Reads and writes `s.sleep`.
#[inline]
pub fn note_command(m: &SimModel, sl: &mut SleepState, i: usize, dof: usize, [x, rate]: [f64; 2]) {
    let bits = [x.to_bits(), rate.to_bits()];
    if !m.sleep.enabled || sl.commands[i] == bits {
        return;
    }
    sl.commands[i] = bits;
    let t = m.sleep.trees.of_dof(dof);
    if !sl.wake(t) {
        sl.still[t as usize] = 0;
    }
}

/// Freeze shapes, before the collision detection: a shape is frozen when it is static or its
/// tree sleeps (the detection skips pairs of two frozen shapes). Reads `s.sleep`; writes
/// `w.collision.frozen`.
pub fn freeze_shapes(m: &SimModel, s: &SimState, w: &mut StepData) {
    if !m.sleep.enabled {
        return;
    }
    for (f, &t) in w.collision.frozen.iter_mut().zip(&m.sleep.shape_tree) {
        *f = t == NONE || s.sleep.asleep(t);
    }
}

/// Wake on contact, after the collision detection: a contact between a sleeping tree and an
/// awake one wakes the sleeping island; the detection then runs again with the woken shapes
/// thawed (their contacts with the static world and each other were skipped), until no island
/// wakes. Reads `w.raw`, `w.data`'s placements; writes `s.sleep`, `w.collision`, `w.raw`.
pub fn wake_on_contact(m: &SimModel, s: &mut SimState, w: &mut StepData) -> Result<(), SimError> {
    if !m.sleep.enabled || !s.sleep.any_asleep() {
        return Ok(());
    }
    let st = &m.sleep.shape_tree;
    loop {
        let mut woke = false;
        for c in &w.raw {
            let (ta, tb) = (st[c.shape_a], st[c.shape_b]);
            let (sa, sb) = (s.sleep.asleep(ta), s.sleep.asleep(tb));
            if sa && !sb && tb != NONE {
                woke |= s.sleep.wake(ta);
            } else if sb && !sa && ta != NONE {
                woke |= s.sleep.wake(tb);
            }
        }
        if !woke {
            return Ok(());
        }
        freeze_shapes(m, s, w);
        m.collider.detect(
            &mut w.collision,
            w.data.joint_placements()?,
            m.contact.prediction_distance,
            &mut w.raw,
        );
    }
}

/// Hold, after the free velocity: a sleeping tree's free velocity is 0 (gravity does not
/// pull it: its contacts, which would hold it, are not solved). Reads `s.sleep`; writes
/// `w.v_free`.
pub fn hold_velocity(m: &SimModel, s: &SimState, w: &mut StepData) {
    if !m.sleep.enabled {
        return;
    }
    let trees = &m.sleep.trees;
    for (t, _) in s.sleep.island.iter().enumerate().filter(|(_, &i)| i != NONE) {
        let (a, n) = (trees.start[t], trees.len[t]);
        w.v_free.as_mut_slice()[a..a + n].fill(0.0);
    }
}

/// Hold, after the integration: a sleeping tree keeps its configuration bit for bit (the
/// step's start one) and a velocity of exactly 0. Reads `s.sleep`, `w.q_start`; writes `s.q`,
/// `s.v`.
pub fn hold_state(m: &SimModel, s: &mut SimState, w: &StepData) {
    if !m.sleep.enabled {
        return;
    }
    let trees = &m.sleep.trees;
    for (t, _) in s.sleep.island.iter().enumerate().filter(|(_, &i)| i != NONE) {
        let (a, n) = (trees.start[t], trees.len[t]);
        s.v.as_mut_slice()[a..a + n].fill(0.0);
        let (a, n) = m.sleep.q_range[t];
        s.q.as_mut_slice()[a..a + n].copy_from_slice(&w.q_start.as_slice()[a..a + n]);
    }
}

/// Whether the kinematics stage may keep `w.data` as it is: every tree slept through the whole
/// step (none woke: a woken tree is awake now; none fell asleep: that happens after this
/// check), so `s.q` and `s.v = 0` are bit for bit the previous step's end state, at which
/// `w.data` was computed (by the last kinematics stage or by [`update`]); nothing stepped it
/// in between (not an RK4 step, whose evaluations overwrite `w.data`, nor a world with loops,
/// whose projection runs the kinematics at trial configurations). A world of sleeping robots
/// then skips its largest remaining cost. Reads `s.sleep`, `w.rk4`.
pub fn kinematics_unchanged(m: &SimModel, s: &SimState, w: &StepData) -> bool {
    m.sleep.enabled && !w.rk4.taken && m.loops.is_empty() && s.sleep.all_asleep()
}

/// The union–find root of tree `t`.
fn root(parent: &mut [u32], mut t: u32) -> u32 {
    while parent[t as usize] != t {
        let p = parent[t as usize];
        parent[t as usize] = parent[p as usize];
        t = p;
    }
    t
}

/// Joins the sets of trees `a` and `b` (either [`NONE`]: nothing), the smaller root on top.
fn join(parent: &mut [u32], a: u32, b: u32) {
    if a == NONE || b == NONE {
        return;
    }
    let (ra, rb) = (root(parent, a), root(parent, b));
    let (lo, hi) = (ra.min(rb), ra.max(rb));
    parent[hi as usize] = lo;
}

/// Update, after the kinematics stage: counts each awake tree's still steps (every body of it
/// slower than the thresholds at the new state, no dof of it moved by the split impulse's
/// pseudo-velocity by as much, no user torque on it, no push acting on it in the next step),
/// groups the awake trees into islands by the step's contacts and loop closures, and puts to
/// sleep each island whose trees may all sleep and have all been still for `steps` and which
/// the world holds (one of its trees touches a static shape, hangs from the world by a joint
/// that is not free or is closed onto it by a loop: a floating island never sleeps):
/// velocities exactly 0, the kinematics recomputed at the zero velocity. The islands are
/// formed only in a step where some awake tree is ready (still long enough, sleepable): in
/// the others none can fall asleep. Reads `w.data`'s body
/// velocities, `w.split`, `w.raw`, `s.tau_user`, the pushes; writes `s.sleep`, `s.v` and (when
/// an island falls asleep) `w.data`.
pub fn update(m: &SimModel, s: &mut SimState, w: &mut StepData) -> Result<(), SimError> {
    let sm = &m.sleep;
    if !sm.enabled {
        return Ok(());
    }
    let (model, trees) = (&m.model, &sm.trees);
    let SleepWork { parent, still, held, fell: any_fell } = &mut w.sleep;
    let sleepable = &w.registered.sleepable;
    *any_fell = false;
    still.fill(true);
    let vel: &[Motion] = w.data.joint_velocities()?;
    for j in 1..model.njoints {
        let v = &vel[j];
        if v.linear.norm() >= sm.linear || v.angular.norm() >= sm.angular {
            still[trees.of_joint[j] as usize] = false;
        }
    }
    for (k, &tau) in s.tau_user.iter().enumerate() {
        if tau != 0.0 {
            still[trees.of_dof(k) as usize] = false;
        }
    }
    // a tree the split impulse is pushing out of a penetration moves without a velocity
    if w.split.active {
        for (k, &vp) in w.split.solution.vel.iter().enumerate() {
            if vp.abs() >= sm.linear.min(sm.angular) {
                still[trees.of_dof(k) as usize] = false;
            }
        }
    }
    for p in m.perturbations.iter().chain(&s.pushes) {
        if p.active(s.steps) && p.joint != 0 {
            still[trees.of_joint[p.joint] as usize] = false;
        }
    }
    let sl = &mut s.sleep;
    let mut some_ready = false;
    for t in 0..parent.len() {
        if sl.island[t] == NONE {
            sl.still[t] = if still[t] { (sl.still[t] + 1).min(sm.steps) } else { 0 };
            some_ready |= sleepable[t] && sl.still[t] >= sm.steps;
        }
    }
    // no awake tree is ready to sleep: no island can fall asleep in this step, and the
    // islands below (workspace only) are not needed
    if !some_ready {
        return Ok(());
    }
    for (t, p) in parent.iter_mut().enumerate() {
        *p = t as u32;
    }
    held.copy_from_slice(&sm.held);
    for c in &w.raw {
        let (a, b) = (sm.shape_tree[c.shape_a], sm.shape_tree[c.shape_b]);
        join(parent, a, b);
        if (a == NONE) != (b == NONE) {
            held[a.min(b) as usize] = true;
        }
    }
    for &[a, b] in &sm.loop_trees {
        join(parent, a, b);
    }
    // an island no tree of which the world holds is floating: it never sleeps (a slow spin
    // in zero gravity is motion, not rest)
    for t in 0..parent.len() {
        if held[t] {
            let r = root(parent, t as u32) as usize;
            held[r] = true;
        }
    }
    // an island sleeps when every tree of it is ready: clear the root of each that is not
    // (roots are the smallest tree of their island, so the island's name)
    for t in 0..parent.len() {
        let ready = sl.island[t] == NONE && sleepable[t] && sl.still[t] >= sm.steps;
        if !ready {
            let r = root(parent, t as u32) as usize;
            still[r] = false;
        }
    }
    let mut fell = false;
    for t in 0..parent.len() {
        let r = root(parent, t as u32);
        if still[r as usize] && held[r as usize] {
            sl.island[t] = r;
            let (a, n) = (trees.start[t], trees.len[t]);
            s.v.as_mut_slice()[a..a + n].fill(0.0);
            fell = true;
        }
    }
    *any_fell = fell;
    if fell {
        compute_terms(m, &s.q, &s.v, &mut w.data);
    }
    Ok(())
}

/// Contact report, after the contact-force sensors: the contacts of the islands that fell
/// asleep in this step (a contact with a body of one, the other static or in it) are kept in
/// the state, and the islands that slept before this step have their kept contacts reported
/// after the step's own (a resting box keeps reporting the floor carrying its weight). Reads `w.sleep`, `out.contacts`;
/// writes `s.sleep.contacts`, `out.contacts`.
pub fn report_contacts(m: &SimModel, s: &mut SimState, w: &StepData, out: &mut StepOutput) {
    if !m.sleep.enabled {
        return;
    }
    let SleepState { island, contacts, .. } = &mut s.sleep;
    let before = contacts.len();
    if w.sleep.fell {
        // the step's contacts of the islands that just fell asleep (both bodies in one
        // island, or one in it and the other static)
        let of_joint = &m.sleep.trees.of_joint;
        let island_of = |b: usize| match m.bodies[b].joint {
            0 => NONE,
            j => island[of_joint[j] as usize],
        };
        for c in &out.contacts {
            let id = island_of(c.body_a).min(island_of(c.body_b));
            if id != NONE {
                contacts.push(SleptContact {
                    island: id,
                    bodies: [c.body_a, c.body_b],
                    point: c.point.into(),
                    normal: c.normal.into(),
                    depth: c.depth,
                    force: c.force.into(),
                });
            }
        }
    }
    out.contacts.extend(contacts[..before].iter().map(|c| crate::engine::ContactInfo {
        body_a: c.bodies[0],
        body_b: c.bodies[1],
        point: c.point.into(),
        normal: c.normal.into(),
        depth: c.depth,
        force: c.force.into(),
    }));
}

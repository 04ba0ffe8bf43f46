//! The step's workspace ([`StepData`]): every buffer the stages hand to each other, sized once
//! at load and reused, so a running step allocates nothing, and each stage's own scratch
//! types. Below the stages: a stage file imports its types from here, never the other way.
//! Shapes are given as `(rows x cols)`, `nq`/`nv` the world model's sizes.

use karakuri::linalg::Factorization;
use karakuri::spatial::{Force, Motion, Vec3};
use karakuri::Data;
use nalgebra::DVector;

use super::build::SimModel;
use super::dynamics::QhInputs;
use super::output::StepOutput;
use super::parts::JointForceSet;
use super::state::{SimState, WarmEntry};
use crate::collision::{CollisionWork, RawContact};
use crate::joint_forces::JointForce;
use crate::scene::{ActuatorMode, Material, SensorKind};
use crate::solver::{ensure, Problem, Solution, Trees, Workspace};

/// Which rows a contact owns (or, for a penalty contact, the force it got).
#[derive(Clone, Copy, Debug)]
pub struct ContactRows {
    /// Index of the contact in `StepData::raw`.
    pub raw: usize,
    /// First row (normal, then the tangents) in `StepData::problem`.
    pub row: usize,
    /// Rows: 1 (normal), 3 (with friction), 0 (penalty).
    pub nrows: usize,
    /// World directions of the rows: normal, tangent 1, tangent 2 (a frictionless contact's
    /// one row: the normal, then zeros).
    pub dirs: [Vec3; 3],
    /// Penalty force on B (world, N).
    pub penalty_force: Vec3,
}

/// Scratch of the joint-force stage, sized for the largest set.
#[derive(Clone, Debug, Default)]
pub struct JointForceWork {
    /// The set's positions.
    pub q: Vec<f64>,
    /// The set's velocities.
    pub dq: Vec<f64>,
    /// The set's forces.
    pub out: Vec<JointForce>,
}

impl JointForceWork {
    /// Room for a set of `n` joints.
    pub fn fit(&mut self, n: usize) {
        if self.q.len() < n {
            self.q.resize(n, 0.0);
            self.dq.resize(n, 0.0);
            self.out.resize(n, JointForce::default());
        }
    }
}

/// What is registered on a world after it was built, beside its model (which stays as built,
/// so worlds can share it): joint forces ([`crate::Engine::add_joint_forces`]) and the trees
/// they keep awake.
pub struct Registrations {
    /// The joint forces registered, evaluated after the model's own (`SimModel::joint_forces`).
    pub joint_forces: Vec<JointForceSet>,
    /// Whether each tree may sleep `(trees)`: the model's `sleep.sleepable`, less the trees of a
    /// registered joint force (it may depend on time or on anything outside the state).
    pub sleepable: Vec<bool>,
}

impl Registrations {
    /// Registers `set`: its trees (of `trees`) never sleep.
    pub fn add(&mut self, set: JointForceSet, trees: &Trees) {
        for &d in &set.dof {
            self.sleepable[trees.of_dof(d) as usize] = false;
        }
        self.joint_forces.push(set);
    }
}

/// The sleep stages' scratch.
#[derive(Clone, Debug, Default)]
pub struct SleepWork {
    /// Union–find parents of the trees `(trees)`.
    pub parent: Vec<u32>,
    /// Whether each tree was still in this step `(trees)`.
    pub still: Vec<bool>,
    /// Whether each tree is held by the world in this step (see `sleep::update`) `(trees)`.
    pub held: Vec<bool>,
    /// Whether an island fell asleep in this step (the contact report then keeps its
    /// contacts).
    pub fell: bool,
}

impl SleepWork {
    /// Buffers for `m`'s trees.
    pub fn new(m: &SimModel) -> SleepWork {
        let n = m.sleep.trees.start.len();
        SleepWork {
            parent: vec![0; n],
            still: vec![false; n],
            held: vec![false; n],
            fell: false,
        }
    }
}

/// The next step's sensor-start quantities, read by the sensor readings at the step's end
/// state (whose kinematics the next step starts from), with that state's bits: the
/// sensor-start stage takes them instead of reading the same kinematics again when it starts
/// from that state (`sensors.rs`).
#[derive(Clone, Debug, Default)]
pub struct SensorCarry {
    /// Each sensor's start quantity, as [`StepData::sensor_start`] `(sensors)`.
    pub start: Vec<Force>,
    /// The bits of the state's `q` they were read at `(nq)`.
    pub q: Vec<u64>,
    /// The bits of its `v` `(nv)`.
    pub v: Vec<u64>,
    /// Whether `start` holds them (until the next sensor-start stage).
    pub valid: bool,
}

/// The buffers of RK4's four evaluations.
pub struct Rk4Work {
    /// The step's starting configuration `(nq)`.
    pub q0: DVector<f64>,
    /// The step's starting velocity `(nv)`.
    pub v0: DVector<f64>,
    /// Configuration of the current evaluation `(nq)`.
    pub q: DVector<f64>,
    /// Velocity of the current evaluation `(nv)`.
    pub v: DVector<f64>,
    /// Velocity slopes `k1..k4` (each `nv`).
    pub kv: [DVector<f64>; 4],
    /// Configuration slopes `k1..k4` (the velocities of the evaluations, each `nv`).
    pub kq: [DVector<f64>; 4],
    /// The step's configuration increment `(nv)`.
    pub dq: DVector<f64>,
    /// Whether this step is an RK4 step (set by the rk4 stage; the Euler stages then have
    /// nothing to do).
    pub taken: bool,
}

/// The buffers of the loop projection (SHAKE) after the step.
pub struct ShakeWork {
    /// Trial configuration `(nq)`.
    pub q: DVector<f64>,
    /// Trial velocity `(nv)`.
    pub v: DVector<f64>,
    /// Zeros `(nv)` (the free velocity of the correction problem).
    pub zero: Vec<f64>,
    /// Position errors at the trial configuration `(loop rows)`.
    pub err: Vec<f64>,
    /// World motion columns at the trial configuration `(nv)`.
    pub s_world: Vec<Motion>,
    /// Unit-impulse wrenches of the trial rows (unused; `loop_rows` writes them) `(loop rows)`.
    pub wrench: Vec<[Force; 2]>,
    /// The correction problem: the step's loop rows `J(q_n)` as compact blocks with their
    /// `qH⁻¹ Jᵀ`, targets updated per iteration.
    pub problem: Problem,
    /// The correction problem's solution: the loop impulses of an iteration, its `vel` the
    /// velocity correction.
    pub solution: Solution,
}

/// The buffers of the split-impulse pass (see `split`).
pub struct SplitWork {
    /// Whether this step has a pseudo-velocity (some contact needed a correction).
    pub active: bool,
    /// The pseudo-velocity problem's targets on the velocity problem's rows `(rows)`.
    pub b: Vec<f64>,
    /// Zeros `(nv)`: the free velocity of the pseudo-velocity problem.
    pub zero: Vec<f64>,
    /// The pseudo-velocity problem's solution: impulses `λ_p` `(rows)` and the
    /// pseudo-velocity `v_p = qH⁻¹ Jᵀ λ_p` `(nv)` as its `vel`.
    pub solution: Solution,
}

/// The buffers of the impact passes (see `impact`).
pub struct ImpactWork {
    /// One block (normal, two tangents) per elastic contact of the step, in `contacts`
    /// order; only its Jacobians are used (never prepared).
    pub all: Problem,
    /// The problem of one pass: the blocks of the contacts struck in it.
    pub pass: Problem,
    /// The solution of one pass: its `vel` the velocity after it.
    pub solution: Solution,
    /// Each elastic contact: its index in `raw` and mixed material `(contacts)`.
    pub contacts: Vec<(usize, Material)>,
}

/// The step's workspace: every buffer the stages hand to each other within a step, in the
/// order they write it (see `docs/ARCHITECTURE.md`), and what was registered on the world
/// after it was built. The step's results are in [`StepOutput`].
pub struct StepData {
    /// Everything the dynamics core derives at `(q, v)` of the state, read through its checked
    /// accessors: world placements `(njoints)`, body velocities `(njoints)`, the world
    /// Jacobian columns `(6 x nv)`, the mass matrix `M(q)` `(nv x nv)` and the bias forces
    /// `h = C(q, v) v + g(q)` `(nv)` (`compute_all_terms`). Written by the kinematics stage at
    /// load and at the end of every step, so it is fresh between steps.
    pub data: Data,
    /// The LᵀDL factorisation of `qH = M + diag(armature + c_d·damping + c_k·stiffness)`
    /// (MuJoCo's `qH`, the matrix of the implicit step; `M` in `data` is left as is). Every
    /// `M⁻¹` of the step goes through it.
    pub qh: Factorization,
    /// World motion column of each dof `(nv)` at the state's q.
    pub s_world: Vec<Motion>,
    /// What each position servo adds to qH's diagonal, `dt (kd + dt kp)` (0 when saturated)
    /// `(nv)`.
    pub servo_diag: Vec<f64>,
    /// Each actuator's explicit part `(actuators)`: the torque (torque mode, saturated
    /// servos) or `kp (target − q) + kd target_v` (position servos).
    pub act_base: Vec<f64>,
    /// Each actuator's implicit velocity gain `kd + dt kp` (0: none) `(actuators)`.
    pub act_gain: Vec<f64>,
    /// Each velocity servo's row in `rows` (`usize::MAX` for other modes) `(actuators)`.
    pub act_row: Vec<usize>,
    /// Each sensor's start-of-step quantity `(sensors)`: an accelerometer's point velocity
    /// (world) in `.linear`; a force sensor's child-side momentum (world, about the origin).
    pub sensor_start: Vec<Force>,
    /// Each joint's body momentum (world, about the origin) and its weight's moment, for the
    /// wrench sensors' subtrees (`sensors.rs`: `body_momenta`) `(joints up to the last read)`.
    pub sensor_bodies: Vec<(Force, Vec3)>,
    /// The next step's `sensor_start`, read by this step's sensor readings.
    pub sensor_next: SensorCarry,
    /// Each joint's touch: `Σ |f · n|` over the step's contacts on a body it moves (`sensors.rs`:
    /// `touch_sums`) `(njoints; empty without touch sensors)`.
    pub touch: Vec<f64>,
    /// Applied joint forces: passive (damping, springs) plus actuation `(nv)`.
    pub tau: DVector<f64>,
    /// Smooth acceleration `qH⁻¹ (τ - h)` `(nv)`.
    pub qacc: DVector<f64>,
    /// Velocity after the smooth forces and penalty contacts, before the constraints `(nv)`.
    pub v_free: DVector<f64>,
    /// Constraint velocity change `M⁻¹ Jᵀ λ` `(nv)`.
    pub dv: Vec<f64>,
    /// Contact points of this step from the narrow phase `(contacts)`.
    pub raw: Vec<RawContact>,
    /// Which rows (or penalty force) each contact owns `(contacts)`.
    pub contact_rows: Vec<ContactRows>,
    /// Loop position errors `(loop rows)`.
    pub loop_err: Vec<f64>,
    /// The world wrenches (about the origin) one unit of each loop row's impulse applies to
    /// `[B, A]` at the step's q `(loop rows)`.
    pub loop_wrench: Vec<[Force; 2]>,
    /// Each loop row's impulse over the step: the solve's plus SHAKE's corrections
    /// `(loop rows)`; the force sensors subtract `wrench · impulse / dt`.
    pub loop_impulse: Vec<f64>,
    /// The first row after the contacts' in `problem`: the loop rows', then the limits',
    /// servos' and joint frictions'.
    pub other_row_start: usize,
    /// The first loop block in `problem` (one block per loop row).
    pub loop_block: usize,
    /// One row's scratch `(nv)`.
    pub row: Vec<f64>,
    /// The warm-start entries being written `(contacts)`, swapped into the state.
    pub warm_next: Vec<WarmEntry>,
    /// Collision scratch.
    pub collision: CollisionWork,
    /// Loop projection scratch.
    pub shake: ShakeWork,
    /// RK4 scratch.
    pub rk4: Rk4Work,
    /// The contact count every contact buffer has room for (the largest seen).
    pub reserved_contacts: usize,
    /// The state's configuration at the step's start `(nq)`: restored when the step's result
    /// fails the divergence guard.
    pub q_start: DVector<f64>,
    /// The state's velocity at the step's start `(nv)` (as `q_start`).
    pub v_start: DVector<f64>,
    /// The constraint problem the solver sees: contact blocks and the other rows of `rows`,
    /// compact over the trees each touches (see [`crate::solver`]).
    pub problem: Problem,
    /// The velocity problem's solution: its impulses (read by the sensors and the next
    /// step's warm start) and `v⁺` `(nv)`.
    pub solution: Solution,
    /// The solver's workspace, shared by every problem of the step (the velocity problem,
    /// its split-impulse pass, the impact passes, SHAKE).
    pub solver: Workspace,
    /// What the joint forces add to qH's diagonal to be implicit `(nv)`.
    pub force_diag: Vec<f64>,
    /// The joint-force stage's scratch (sized for the largest set).
    pub force_work: JointForceWork,
    /// What was registered on this world after it was built (the model stays as built).
    pub registered: Registrations,
    /// Each track's axis `R a` at the step's start, world axes `(tracks)`.
    pub track_axis: Vec<Vec3>,
    /// Split-impulse scratch: the pseudo-velocity that removes penetration.
    pub split: SplitWork,
    /// Impact-pass scratch.
    pub impact: ImpactWork,
    /// The sleep stages' scratch.
    pub sleep: SleepWork,
    /// What `qh` was factorised from (the position stage skips a factorisation of the same
    /// inputs).
    pub qh_inputs: QhInputs,
}

impl StepData {
    /// Every buffer, sized for the model (contact buffers grow with the largest contact count).
    pub fn new(m: &SimModel) -> StepData {
        let (nq, nv) = (m.model.nq, m.model.nv);
        let zq = || DVector::zeros(nq);
        let zv = || DVector::zeros(nv);
        StepData {
            data: Data::new(&m.model),
            qh: Factorization::new(&m.model),
            s_world: vec![Motion::zero(); nv],
            servo_diag: vec![0.0; nv],
            act_base: vec![0.0; m.actuators.len()],
            act_gain: vec![0.0; m.actuators.len()],
            act_row: vec![usize::MAX; m.actuators.len()],
            sensor_start: vec![Force::zero(); m.sensors.len()],
            sensor_bodies: vec![(Force::zero(), Vec3::zeros()); m.sensor_sets.joints()],
            sensor_next: SensorCarry {
                start: vec![Force::zero(); m.sensors.len()],
                q: vec![0; nq],
                v: vec![0; nv],
                valid: false,
            },
            touch: if m.sensors.iter().any(|sn| sn.kind == SensorKind::Touch) {
                vec![0.0; m.model.njoints]
            } else {
                Vec::new()
            },
            tau: zv(),
            qacc: zv(),
            v_free: zv(),
            dv: vec![0.0; nv],
            raw: Vec::new(),
            contact_rows: Vec::new(),
            loop_err: Vec::new(),
            loop_wrench: Vec::new(),
            loop_impulse: Vec::new(),
            other_row_start: 0,
            loop_block: 0,
            row: vec![0.0; nv],
            warm_next: Vec::new(),
            collision: m.collider.work(),
            shake: ShakeWork {
                q: zq(),
                v: zv(),
                zero: vec![0.0; nv],
                err: Vec::new(),
                s_world: vec![Motion::zero(); nv],
                wrench: Vec::new(),
                problem: Problem::new(&m.model),
                solution: Solution::new(nv),
            },
            rk4: Rk4Work {
                q0: zq(),
                v0: zv(),
                q: zq(),
                v: zv(),
                kv: [zv(), zv(), zv(), zv()],
                kq: [zv(), zv(), zv(), zv()],
                dq: zv(),
                taken: false,
            },
            reserved_contacts: 0,
            q_start: zq(),
            v_start: zv(),
            problem: Problem::new(&m.model),
            solution: Solution::new(nv),
            solver: Workspace::new(&m.model),
            force_diag: vec![0.0; nv],
            force_work: {
                let mut fw = JointForceWork::default();
                fw.fit(m.joint_forces.iter().map(|f| f.dof.len()).max().unwrap_or(0));
                fw
            },
            track_axis: vec![Vec3::zeros(); m.tracks.len()],
            split: SplitWork {
                active: false,
                b: Vec::new(),
                zero: vec![0.0; nv],
                solution: Solution::new(nv),
            },
            impact: ImpactWork {
                all: Problem::new(&m.model),
                pass: Problem::new(&m.model),
                solution: Solution::new(nv),
                contacts: Vec::new(),
            },
            registered: Registrations {
                joint_forces: Vec::new(),
                sleepable: m.sleep.sleepable.clone(),
            },
            sleep: SleepWork::new(m),
            qh_inputs: QhInputs::new(&m.model),
        }
    }

    /// Sizes every buffer for the rows that do not depend on contacts (loops, limits) and
    /// `contacts` contacts (up to three rows each): the rows, the solver's scratch, the
    /// warm-start memory, the contact lists. Called at load and when a step finds more
    /// contacts than every earlier step, so the steps in between allocate nothing.
    pub fn reserve(&mut self, m: &SimModel, s: &mut SimState, out: &mut StepOutput, contacts: usize) {
        let loop_rows: usize = m.loops.iter().map(|l| l.rows()).sum();
        let servos = m
            .actuators
            .iter()
            .filter(|a| matches!(a.mode, ActuatorMode::Velocity | ActuatorMode::Prescribed))
            .count();
        let linear: usize = m.linear_rows.iter().map(|r| r.rows()).sum::<usize>() + 2 * m.spatial_tendons.len();
        let fixed = loop_rows + 2 * m.limits.len() + linear + servos + m.frictions.len();
        // every row is a block of the compact problem
        self.problem.reserve(fixed + contacts, fixed + 3 * contacts);
        self.solution.reserve(fixed + 3 * contacts);
        // the velocity problem is the largest of the step's problems
        self.solver.reserve(fixed + contacts, fixed + 3 * contacts);
        // the split impulse: its own targets and solution on the velocity problem's rows
        ensure(&mut self.split.b, fixed + 3 * contacts);
        self.split.solution.reserve(fixed + 3 * contacts);
        // the impact passes: a block of up to 3 rows per contact
        self.impact.all.reserve(contacts, 3 * contacts);
        self.impact.pass.reserve(contacts, 3 * contacts);
        self.impact.solution.reserve(3 * contacts);
        ensure(&mut self.impact.contacts, contacts);
        // SHAKE: one block per loop row
        self.shake.problem.reserve(loop_rows, loop_rows);
        self.shake.solution.reserve(loop_rows);
        ensure(&mut self.loop_err, loop_rows);
        ensure(&mut self.shake.err, loop_rows);
        ensure(&mut self.loop_wrench, loop_rows);
        ensure(&mut self.loop_impulse, loop_rows);
        ensure(&mut self.shake.wrench, loop_rows);
        ensure(&mut s.warm_other, fixed);
        ensure(&mut s.loop_predicted, loop_rows);
        ensure(&mut s.warm_contacts, contacts);
        ensure(&mut self.warm_next, contacts);
        ensure(&mut self.raw, contacts);
        ensure(&mut self.contact_rows, contacts);
        ensure(&mut out.contacts, contacts);
        ensure(&mut s.sleep.contacts, contacts);
        self.reserved_contacts = self.reserved_contacts.max(contacts);
    }
}

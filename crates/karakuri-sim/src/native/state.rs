//! The state of a simulation ([`SimState`], MuJoCo's `mjData` state part: what a step starts
//! from and what it carries to the next) and the step's workspace ([`StepData`]: every buffer
//! the stages hand to each other, sized once at load and reused, so a running step allocates
//! nothing). Shapes are given as `(rows x cols)`, `nq`/`nv` the world model's sizes.

use karakuri::linalg::Factorization;
use karakuri::spatial::{Force, Motion, Vec3};
use karakuri::Data;
use nalgebra::DVector;
use serde::{Deserialize, Serialize};

use super::build::SimModel;
use super::joint_forces::JointForceWork;
use super::contact::{ContactRows, WarmEntry};
use crate::collision::{CollisionWork, RawContact};
use crate::rng::SplitMix64;
use crate::engine::{ContactInfo, Diagnostics, StageTimes};
use crate::scene::{ActuatorMode, Material, Target};
use crate::solver::{ensure, Problem, Rows, Solution, SolveStats, Workspace};

/// What a step starts from and carries to the next. It is serialised whole into a checkpoint
/// (`super::checkpoint`), so a field added here is saved and restored with no more code (and
/// must be serialisable: everything a step depends on lives here, never in [`StepData`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimState {
    /// Configuration `(nq)`; a free flyer's is `[p; quaternion x y z w]`.
    #[serde(with = "super::checkpoint::dvector")]
    pub q: DVector<f64>,
    /// Velocity `(nv)`; a free flyer's is `[linear; angular]` in its body frame.
    #[serde(with = "super::checkpoint::dvector")]
    pub v: DVector<f64>,
    /// Joint forces set by the user (actuation) `(nv)`, applied from the next step on.
    #[serde(with = "super::checkpoint::dvector")]
    pub tau_user: DVector<f64>,
    /// Simulated time (s).
    pub time: f64,
    /// Steps taken.
    pub steps: u64,
    /// Impulses of the last step's contacts by key, sorted by key `(contacts of the last
    /// step)`: the warm start of the next solve.
    pub warm_contacts: Vec<WarmEntry>,
    /// Each actuator's command `(actuators)`: the scene's target until the world sets one.
    pub targets: Vec<Target>,
    /// Impulses of the last step's loop and limit rows, in row order `(their rows)`.
    pub warm_other: Vec<f64>,
    /// Each loop row's error predicted to first order for the step's end, `C + dt J v⁺`, by
    /// the last step `(loop rows; empty before the first step)`: the next step's drift
    /// feed-forward (see `loop_drift`).
    pub loop_predicted: Vec<f64>,
    /// External wrenches applied through the API (`World::apply_wrench`), with their windows.
    pub pushes: Vec<super::external::Push>,
    /// Each sensor's noise stream `(sensors)`: stream `i` (the sensor's index) of its seed, set
    /// at load; drawn only by noisy sensors.
    pub sensor_rng: Vec<SplitMix64>,
    /// Each track's surface speed command (m/s) `(tracks)`: the scene's until the world sets
    /// one.
    pub track_speeds: Vec<f64>,
    /// Each tree's still-step count and sleeping island (see `super::sleep`); a checkpoint
    /// without it restores every tree awake.
    #[serde(default)]
    pub sleep: super::sleep::SleepState,
}

impl SimState {
    /// The initial state of a model.
    pub fn new(m: &SimModel) -> SimState {
        SimState {
            q: m.q0.clone(),
            v: m.v0.clone(),
            tau_user: DVector::zeros(m.model.nv),
            time: 0.0,
            steps: 0,
            targets: m.actuators.iter().map(|a| a.target.clone()).collect(),
            warm_contacts: Vec::new(),
            warm_other: Vec::new(),
            loop_predicted: Vec::new(),
            pushes: Vec::new(),
            sensor_rng: m
                .sensors
                .iter()
                .enumerate()
                .map(|(i, sn)| SplitMix64::new(sn.noise.map_or(0, |n| n.seed), i as u64))
                .collect(),
            track_speeds: m.tracks.iter().map(|t| t.speed).collect(),
            sleep: super::sleep::SleepState::new(m),
        }
    }
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
}

/// The buffers of the loop projection (SHAKE) after the step.
pub struct ShakeWork {
    /// Trial configuration `(nq)`.
    pub q: DVector<f64>,
    /// Trial velocity `(nv)`.
    pub v: DVector<f64>,
    /// Zeros `(nv)` (the free velocity of the correction problem).
    pub zero: Vec<f64>,
    /// Loop rows at the trial configuration (only their errors are used).
    pub trial_rows: Rows,
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

/// Everything a step computes, in the order the stages write it (see `docs/ARCHITECTURE.md`).
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
    /// Each actuator's torque (force) applied over the last step `(actuators)`.
    pub act_tau: Vec<f64>,
    /// Each sensor's start-of-step quantity `(sensors)`: an accelerometer's point velocity
    /// (world) in `.linear`; a force sensor's child-side momentum (world, about the origin).
    pub sensor_start: Vec<Force>,
    /// Each sensor's reading after the last step `(sensors)`: `[x, y, z, 0, 0, 0]` for
    /// accelerometers and gyros, `[fx, fy, fz, tx, ty, tz]` for force sensors, sensor axes.
    pub readings: Vec<[f64; 6]>,
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
    /// The contacts with their forces, as reported `(contacts)`.
    pub contacts: Vec<ContactInfo>,
    /// The step's constraint rows: contacts, then loops, then limits `(rows x nv)`.
    pub rows: Rows,
    /// Loop rows at the step's q (targets zero) `(loop rows x nv)`.
    pub loop_rows: Rows,
    /// Loop position errors `(loop rows)`.
    pub loop_err: Vec<f64>,
    /// The world wrenches (about the origin) one unit of each loop row's impulse applies to
    /// `[B, A]` at the step's q `(loop rows)`.
    pub loop_wrench: Vec<[Force; 2]>,
    /// Each loop row's impulse over the step: the solve's plus SHAKE's corrections
    /// `(loop rows)`; the force sensors subtract `wrench · impulse / dt`.
    pub loop_impulse: Vec<f64>,
    /// Index of the first loop row in `rows`.
    pub other_row_start: usize,
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
    /// Wall time of each stage of the last step.
    pub times: StageTimes,
    /// Statistics of the last constraint solve.
    pub last_solve: SolveStats,
    /// The contact count every contact buffer has room for (the largest seen).
    pub reserved_contacts: usize,
    /// Numerical trouble counted over the run so far (the watch stage).
    pub diagnostics: Diagnostics,
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
    /// Each track's surface velocity `speed · R d` at the step's start, world axes `(tracks)`.
    pub track_velocity: Vec<Vec3>,
    /// Split-impulse scratch: the pseudo-velocity that removes penetration.
    pub split: SplitWork,
    /// Impact-pass scratch.
    pub impact: ImpactWork,
    /// The sleep stages' scratch.
    pub sleep: super::sleep::SleepWork,
    /// What `qh` was factorised from (the position stage skips a factorisation of the same
    /// inputs).
    pub qh_inputs: super::stages::QhInputs,
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
            act_tau: vec![0.0; m.actuators.len()],
            sensor_start: vec![Force::zero(); m.sensors.len()],
            readings: vec![[0.0; 6]; m.sensors.len()],
            tau: zv(),
            qacc: zv(),
            v_free: zv(),
            dv: vec![0.0; nv],
            raw: Vec::new(),
            contact_rows: Vec::new(),
            contacts: Vec::new(),
            rows: Rows::default(),
            loop_rows: Rows::default(),
            loop_err: Vec::new(),
            loop_wrench: Vec::new(),
            loop_impulse: Vec::new(),
            other_row_start: 0,
            row: vec![0.0; nv],
            warm_next: Vec::new(),
            collision: m.collider.work(),
            shake: ShakeWork {
                q: zq(),
                v: zv(),
                zero: vec![0.0; nv],
                trial_rows: Rows::default(),
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
            },
            times: StageTimes::default(),
            last_solve: SolveStats::default(),
            reserved_contacts: 0,
            diagnostics: Diagnostics::default(),
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
            track_velocity: vec![Vec3::zeros(); m.tracks.len()],
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
            sleep: super::sleep::SleepWork::new(m),
            qh_inputs: super::stages::QhInputs::new(&m.model),
        }
    }

    /// Sizes every buffer for the rows that do not depend on contacts (loops, limits) and
    /// `contacts` contacts (up to three rows each): the rows, the solver's scratch, the
    /// warm-start memory, the contact lists. Called at load and when a step finds more
    /// contacts than every earlier step, so the steps in between allocate nothing.
    pub fn reserve(&mut self, m: &SimModel, s: &mut SimState, contacts: usize) {
        let nv = m.model.nv;
        let loop_rows: usize = m.loops.iter().map(|l| l.rows()).sum();
        let servos = m
            .actuators
            .iter()
            .filter(|a| matches!(a.mode, ActuatorMode::Velocity | ActuatorMode::Prescribed))
            .count();
        let fixed = loop_rows + 2 * m.limits.len() + servos + m.frictions.len();
        // contacts go to the compact problem only; `rows` holds the loop, limit, servo and
        // friction rows
        self.rows.nv = nv;
        self.rows.reserve(fixed);
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
        for r in [&mut self.loop_rows, &mut self.shake.trial_rows] {
            r.nv = nv;
            r.reserve(loop_rows);
        }
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
        ensure(&mut self.contacts, contacts);
        ensure(&mut s.sleep.contacts, contacts);
        self.reserved_contacts = self.reserved_contacts.max(contacts);
    }
}

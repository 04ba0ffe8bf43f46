//! The state of a simulation ([`SimState`], MuJoCo's `mjData` state part: what a step starts
//! from and what it carries to the next) and the step's workspace ([`StepData`]: every buffer
//! the stages hand to each other, sized once at load and reused, so a running step allocates
//! nothing). Shapes are given as `(rows x cols)`, `nq`/`nv` the world model's sizes.

use karakuri::linalg::Factorization;
use karakuri::spatial::{Force, Motion};
use karakuri::Data;
use nalgebra::DVector;

use super::build::SimModel;
use super::contact::{ContactRows, WarmEntry};
use crate::collision::{CollisionWork, RawContact};
use crate::engine::{ContactInfo, Diagnostics, StageTimes};
use crate::scene::{ActuatorMode, Target};
use crate::solver::{ensure, Rows, SolveStats, SolverWork};
use crate::sparse::Problem;

/// What a step starts from and carries to the next.
pub struct SimState {
    /// Configuration `(nq)`; a free flyer's is `[p; quaternion x y z w]`.
    pub q: DVector<f64>,
    /// Velocity `(nv)`; a free flyer's is `[linear; angular]` in its body frame.
    pub v: DVector<f64>,
    /// Joint forces set by the user (actuation) `(nv)`, applied from the next step on.
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
            targets: m.actuators.iter().map(|a| a.target).collect(),
            warm_contacts: Vec::new(),
            warm_other: Vec::new(),
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
    /// Velocity correction of one Newton iteration `(nv)`.
    pub dv: Vec<f64>,
    /// Zeros `(nv)` (the free velocity of the correction problem).
    pub zero: Vec<f64>,
    /// The step's loop rows with `M⁻¹ Jᵀ` (rows of `J(q_n)`, targets updated per iteration).
    pub rows: Rows,
    /// Loop rows at the trial configuration (only their errors are used).
    pub trial_rows: Rows,
    /// Position errors at the trial configuration `(loop rows)`.
    pub err: Vec<f64>,
    /// World motion columns at the trial configuration `(nv)`.
    pub s_world: Vec<Motion>,
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
    /// Index of the first loop row in `rows`.
    pub other_row_start: usize,
    /// One row's scratch `(nv)`.
    pub row: Vec<f64>,
    /// The warm-start entries being written `(contacts)`, swapped into the state.
    pub warm_next: Vec<WarmEntry>,
    /// Solver scratch.
    pub solver: SolverWork,
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
    /// compact over the trees each touches, with its islands (see [`crate::sparse`]).
    pub problem: Problem,
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
            other_row_start: 0,
            row: vec![0.0; nv],
            warm_next: Vec::new(),
            solver: SolverWork::default(),
            collision: m.collider.work(),
            shake: ShakeWork {
                q: zq(),
                v: zv(),
                dv: vec![0.0; nv],
                zero: vec![0.0; nv],
                rows: Rows::default(),
                trial_rows: Rows::default(),
                err: Vec::new(),
                s_world: vec![Motion::zero(); nv],
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
        }
    }

    /// Sizes every buffer for the rows that do not depend on contacts (loops, limits) and
    /// `contacts` contacts (up to three rows each): the rows, the solver's scratch, the
    /// warm-start memory, the contact lists. Called at load and when a step finds more
    /// contacts than every earlier step, so the steps in between allocate nothing.
    pub fn reserve(&mut self, m: &SimModel, s: &mut SimState, contacts: usize) {
        let nv = m.model.nv;
        let loop_rows: usize = m.loops.iter().map(|l| if l.revolute { 5 } else { 3 }).sum();
        let servos = m.actuators.iter().filter(|a| a.mode == ActuatorMode::Velocity).count();
        let fixed = loop_rows + 2 * m.limits.len() + servos;
        // contacts go to the compact problem only; `rows` holds the loop, limit, servo rows
        self.rows.nv = nv;
        self.rows.reserve(fixed);
        self.solver.reserve(fixed, m.engine.direct_max_rows);
        self.problem.reserve(fixed + contacts, fixed + 3 * contacts);
        for r in [
            &mut self.loop_rows,
            &mut self.shake.rows,
            &mut self.shake.trial_rows,
        ] {
            r.nv = nv;
            r.reserve(loop_rows);
        }
        ensure(&mut self.loop_err, loop_rows);
        ensure(&mut self.shake.err, loop_rows);
        ensure(&mut s.warm_other, fixed);
        ensure(&mut s.warm_contacts, contacts);
        ensure(&mut self.warm_next, contacts);
        ensure(&mut self.raw, contacts);
        ensure(&mut self.contact_rows, contacts);
        ensure(&mut self.contacts, contacts);
        self.reserved_contacts = self.reserved_contacts.max(contacts);
    }
}

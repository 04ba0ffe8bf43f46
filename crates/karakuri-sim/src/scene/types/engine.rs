//! The world and engine sections: gravity and time step, integrator, solver, engine kind, sleeping.

use serde::{Deserialize, Serialize};

/// `world`: gravity, time step, duration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorldParams {
    /// Gravity (m/s²), world axes.
    pub gravity: [f64; 3],
    /// Time step (s).
    pub dt: f64,
    /// Default duration of a run (s).
    pub duration: f64,
    /// Free text kept for the reader (the integrator used is `engine.integrator`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub integrator_hint: Option<String>,
}

impl Default for WorldParams {
    fn default() -> Self {
        WorldParams {
            gravity: [0.0, 0.0, -9.81],
            dt: 0.001,
            duration: 1.0,
            integrator_hint: None,
        }
    }
}

/// Integration scheme (`engine.integrator`), decided once when the world is built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Integrator {
    /// The default: RK4 (below) for a smooth world of hinges and sliders — no free or ball
    /// joint, no pair of shapes that can touch, no loop, limit, equality, tendon range,
    /// actuator, joint friction, spring or damper, no joint force registered — and
    /// semi-implicit Euler for every other (decision record 0061).
    #[default]
    Auto,
    /// Semi-implicit Euler on the configuration manifold, implicit in velocity for the joint
    /// springs and dampers, the position servos and every constraint row (MuJoCo's
    /// `implicitfast` for the forces karakuri has; read also as `implicitfast`).
    #[serde(alias = "semi-implicit", alias = "euler", alias = "implicitfast")]
    SemiImplicitEuler,
    /// Classical Runge–Kutta 4, sub-stepped so that no body turns more than 0.1 rad per
    /// sub-step; smooth worlds only: a world with something the constraint solve holds
    /// (contacts, loops, limits, equalities, tendon ranges, actuators, joint friction) is
    /// refused at load. Springs, dampers and joint forces are explicit.
    Rk4,
}

/// The constraint solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SolverKind {
    /// Projected Gauss–Seidel.
    Pgs,
    /// The direct solver (dense LDLᵀ with an active set) where the problem has no friction
    /// and at most `direct_max_rows` rows, PGS otherwise: the default.
    Auto,
    /// `auto`, and a large articulated island that the sweeps leave above `tolerance` solved
    /// again by a primal Newton method (record 0081): more steps converge on large robot
    /// islands (a Go2 dropped limp on its collision meshes: 98.9 % under `auto`, 99.85 % under
    /// `newton`, record 0127).
    Newton,
}

/// The engine that steps a world.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// [`crate::NativeEngine`]: one karakuri model, Springhead's contacts, velocity-level LCP.
    #[default]
    Native,
    /// [`crate::rapier::RapierEngine`]: rapier3d-f64 (impulse-based, multibodies for hinge chains
    /// and robots); compiled only with karakuri-sim's `rapier` feature.
    Rapier,
}

/// `engine`: which engine steps the world and its numerical settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineParams {
    /// The engine (`type: native | rapier`; `name` is read as a synonym).
    #[serde(rename = "type", alias = "name")]
    pub kind: EngineKind,
    /// Integration scheme.
    pub integrator: Integrator,
    /// Constraint solver.
    pub solver: SolverKind,
    /// PGS iteration cap.
    pub max_iterations: usize,
    /// PGS stops when no row's velocity changes more than this in a sweep (m/s or rad/s).
    pub tolerance: f64,
    /// Start PGS from the previous step's impulses of the same contacts.
    pub warm_start: bool,
    /// Largest problem the direct solver takes.
    pub direct_max_rows: usize,
    /// Fraction of a loop constraint's position error removed per step (Baumgarte).
    pub loop_correction_rate: f64,
    /// Project the configuration back onto the loop constraints after each step.
    pub loop_projection: bool,
    /// Speed above which the state is declared diverged (m/s or rad/s).
    pub max_speed: f64,
    /// The loop error (m, rad) above which a step projects its end configuration back onto
    /// the loops (with `loop_projection`); below it the drift feed-forward keeps the loops.
    pub loop_tolerance: f64,
    /// Island sleeping: trees at rest stop costing anything until something acts on them.
    pub sleep: SleepParams,
}

/// `engine.sleep`: when resting trees fall asleep (see the native engine's `sleep` stage).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SleepParams {
    /// Whether trees may sleep at all.
    pub enabled: bool,
    /// Linear speed (m/s) every body of a tree stays below to count as still.
    pub linear: f64,
    /// Angular speed (rad/s) every body of a tree stays below to count as still.
    pub angular: f64,
    /// Time (s) all trees of an island must have been still for it to fall asleep.
    pub time: f64,
    /// Whether trees driven by position servos or torque commands may sleep too, once their
    /// commands have stayed the same for `time` (off by default: 0067).
    pub actuated: bool,
}

impl Default for SleepParams {
    fn default() -> Self {
        SleepParams {
            enabled: true,
            linear: 0.01,
            angular: 0.05,
            time: 0.5,
            actuated: false,
        }
    }
}

impl Default for EngineParams {
    fn default() -> Self {
        EngineParams {
            kind: EngineKind::Native,
            integrator: Integrator::Auto,
            solver: SolverKind::Auto,
            max_iterations: 50,
            tolerance: 1e-6,
            warm_start: true,
            direct_max_rows: 24,
            loop_correction_rate: 0.2,
            loop_projection: true,
            max_speed: 1e4,
            loop_tolerance: 1e-6,
            sleep: SleepParams::default(),
        }
    }
}

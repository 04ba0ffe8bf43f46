//! # karakuri-sim — the simulator
//!
//! A simulation steps a world of articulated robots, free objects and static environment
//! through time: detect contacts, compute contact forces, update velocities, update positions,
//! advance time.
//!
//! ```no_run
//! let mut world = karakuri_sim::World::from_file("tests/scenes/02_bounce.json")?;
//! world.run(1.0)?;
//! let ball = world.state("ball").unwrap();
//! println!("ball at {:?}, {} contacts", ball.pose.translation, world.contacts().len());
//! # Ok::<(), karakuri_sim::SimError>(())
//! ```
//!
//! ## Design
//!
//! * **One model for the whole world.** The native engine builds ONE karakuri [`Model`]: each
//!   free body is a free-flyer child of the universe, hinge bodies are revolute (or prismatic)
//!   joints, several hinges in one body are a chain of joints with massless intermediate
//!   bodies, static bodies are frames of the universe, and URDF robots are grafted as subtrees.
//!   A joint frame sits at its anchor: the joint is placed at `pose_in_parent · T(anchor)` and
//!   the body frame is `T(-anchor)` in it. The mass matrix is block-diagonal per tree and the
//!   branch-induced LTDL factorisation (`karakuri::linalg::ltdl`) handles it.
//! * **Model, state, workspace, outputs** (MuJoCo's `mjModel` / `mjData`): [`NativeEngine`] is
//!   a [`SimModel`] (built once from the scene, never written afterwards, shareable between
//!   worlds), a [`SimState`] (q, v, user torques, time, warm-start impulses, the run's
//!   counters), a [`StepData`] (every buffer the stages hand to each other, sized at load: a
//!   running step allocates nothing) and a [`StepOutput`] (what the last step reports).
//! * **The step is a fixed list of stage functions** ([`native::step`], each `(model, state,
//!   work, out)` and documenting what it reads and writes, timed in [`StageTimes`] under its own
//!   name when [`World::time_stages`] is on; a stage the world has nothing for returns at once,
//!   as [`native::plan::StagePlan`] decides at load): start → actuator commands → sensor start →
//!   joint forces → position (the LTDL of `qH = M + armature + implicit damping/stiffness`,
//!   world motion columns, collision) → rk4 (RK4 worlds' steps) → actuation → acceleration
//!   (`qH⁻¹(τ - h)`) → impacts → free velocity → constraint (rows, solve, `v⁺`) → actuator
//!   report → split impulse → integrate → check state (NaN / divergence guard) → kinematics
//!   (`compute_all_terms` at the new state: placements, velocities, Jacobians, M and the next
//!   step's bias forces `h = C v + g`, read through the core's checked accessors) → contact
//!   forces → sensor readings → sensor noise → watch. `docs/ARCHITECTURE.md` draws the data
//!   flow.
//! * **Shapes** (parry3d-f64): sphere, box, capsule, cylinder, plane, convex hulls (of inline
//!   points or of an STL/OBJ file's vertices, [`mesh`]) and triangle meshes for static bodies.
//!   URDF robots bring their `<collision>` elements: primitives as such, meshes as convex hulls
//!   (`robots[].collision: urdf | primitives | none`).
//! * **Contacts (Springhead's model, physical units).** Parry's contact manifolds give the
//!   vertices of each contact region (box on plane: up to four points). A contact's normal
//!   approach speed `v` (before the step) chooses its target: if `v < -V_th` the post-step
//!   normal speed is `-e v` (e the mean restitution); otherwise the penetration `d` shrinks by
//!   `γ max(d - d_tol, 0)` per step. Contacts closer than `prediction_distance` but not yet
//!   touching only forbid closing the gap within the step (speculative contacts), so impacts
//!   happen at the surface instead of after a step of penetration. Friction is a circular cone
//!   over two tangent rows, with `μ0` while the slip speed is within `V_f` and `μ` beyond.
//!   Per pair the mode is `lcp` (default), `penalty` (spring-damper in N/m and N·s/m) or `none`.
//! * **One velocity-level problem.** Contact rows (unilateral with friction), loop-closure rows
//!   (bilateral, with Baumgarte correction and a position projection after the step) and joint
//!   limits form `J`, written by the core's one row layer (`karakuri::constraints::rows`);
//!   [`solver`] solves on the Delassus operator `W = J qH⁻¹ Jᵀ`, island by island, with `J`
//!   compact over the kinematic trees each contact touches: block Gauss–Seidel (a contact's
//!   normal and friction together) with warm start and a tolerance, exact solves of small
//!   frictionless islands and subspace steps where an island stalls (mass ratios).
//! * **Integration.** Semi-implicit Euler on the configuration manifold; free flyers step their
//!   origin along the world velocity (so free flight is exact up to rounding) and rotate by
//!   `exp(dt ω)`. RK4 with sub-steps for smooth worlds (no contacts, rows, actuators;
//!   `engine.integrator: rk4`), the default (`auto`) for such worlds of hinges and sliders.
//! * **Engines behind one narrow, index-based trait** ([`Engine`]): an engine is built from
//!   the scene once, describes what it simulates ([`Description`]) and what it can do
//!   ([`Capabilities`]), steps, and writes body states back; [`World`] drives any engine, is
//!   the one place that changes it and the one place names are resolved (its [`Layout`]: the
//!   engine takes indices), so its body states never lag the engine. With the
//!   `rapier` feature, `rapier::RapierEngine` (rapier3d-f64) is the second engine
//!   (`engine.type: rapier`).
//! * **Many worlds per process.** A [`World`] is `Send`; [`Batch`] steps N independent worlds
//!   on all cores (rayon), each bit-identical to the same world stepped alone, and
//!   [`batch::perturb`] makes N seeded variants of a scene's initial state.
#![warn(missing_docs)]
// index loops over dofs and rows read like the formulas they implement
#![allow(clippy::needless_range_loop)]

pub mod batch;
pub mod collision;
pub mod compile;
pub mod control;
pub mod controllers;
pub mod derivatives;
pub mod engine;
mod error;
pub mod joint_forces;
pub mod layout;
pub mod mesh;
pub mod native;
pub mod rng;
#[cfg(feature = "rapier")]
pub mod rapier;
pub mod scene;
pub mod snapshot;
mod sort;
pub mod solver;
pub mod world;

pub use batch::{Batch, BatchError};
pub use control::{ControlIo, Controller};
pub use derivatives::StepDerivatives;
pub use engine::{BodyInfo, BodyState, ContactInfo, Diagnostics, Engine, JointState, SensorInfo, StageTimes};
pub use engine::{ActuatorInfo, Capabilities, Description, JointInfo, Report, RobotInfo, Setting};
pub use error::SimError;
pub use layout::{FreeBodySlot, Layout, SensorSlot};
pub use joint_forces::{JointForce, JointForces, SpringDamper};
pub use karakuri::Model;
pub use native::{NativeEngine, SimModel, SimState, StepData, StepOutput};
pub use scene::Scene;
pub use snapshot::Snapshot;
pub use world::World;

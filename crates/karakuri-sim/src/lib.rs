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
//! * **The step is a fixed list of named stages** (each a public method of [`NativeEngine`],
//!   timed in [`StageTimes`]): check state (NaN / divergence guard) → position (kinematics,
//!   Jacobian columns, mass matrix + armature + implicit damping/stiffness terms, LTDL,
//!   collision) → velocity (bias forces `C v + g`, passive forces) → actuation → smooth
//!   acceleration (`v_free`) → constraint solve → integrate → sensors (body states, contact
//!   forces).
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
//!   limits form `J`; [`solver`] solves on the Delassus operator `W = J M⁻¹ Jᵀ` (M⁻¹ through
//!   LTDL solves) by projected Gauss–Seidel with warm start and a tolerance, or exactly for
//!   small frictionless problems.
//! * **Integration.** Semi-implicit Euler on the configuration manifold; free flyers step their
//!   origin along the world velocity (so free flight is exact up to rounding) and rotate by
//!   `exp(dt ω)`. RK4 is available for contact-free smooth systems (`engine.integrator: rk4`).
//! * **Engines behind one trait** ([`Engine`]): an engine loads the scene's bodies once, steps,
//!   and writes body states back; [`World`] drives any engine.
#![warn(missing_docs)]
// index loops over dofs and rows read like the formulas they implement
#![allow(clippy::needless_range_loop)]

pub mod cli;
pub mod collision;
pub mod engine;
pub mod mesh;
pub mod native;
pub mod scene;
pub mod solver;
pub mod world;

pub use engine::{BodyInfo, BodyState, ContactInfo, Engine, StageTimes};
pub use karakuri::Model;
pub use native::NativeEngine;
pub use scene::Scene;
pub use world::World;

/// Errors of the simulator.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum SimError {
    /// A scene file problem: the file, the path inside it and the reason.
    #[error("{file}: {path}{}{reason}", if path.is_empty() { "" } else { ": " })]
    Scene {
        /// The scene file.
        file: String,
        /// Where in it, e.g. `bodies[3].shapes[0].radius` (empty: the whole file).
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The simulation diverged (a non-finite or runaway state).
    #[error("diverged at step {step} (t = {time} s), body '{body}': {reason}")]
    Diverged {
        /// The step about to be taken.
        step: u64,
        /// Its time (s).
        time: f64,
        /// The body concerned.
        body: String,
        /// What was found.
        reason: String,
    },
    /// Bad arguments.
    #[error("{0}")]
    Input(String),
    /// Writing output failed.
    #[error("{0}")]
    Output(String),
}

//! The derivatives of one simulation step, [`StepDerivatives`]: what
//! [`crate::World::step_derivatives`] fills (decision record 0069). A leaf: nalgebra only.
//!
//! The state is `x = (q, v)` in the tangent space, `2 nv` numbers, in this order:
//!
//! * positions: the one-dof joints in [`crate::World::one_dof_joints`] order (the joint arrays
//!   of `World.q` / `World.dq` in Python), then each joint of more than one dof in the world
//!   model's order — a free body or a robot's floating base as its position (3) and rotation
//!   vector (3), a ball joint as its rotation vector (3). Both are taken in the body's own
//!   axes: a perturbation `δ` moves the pose `(R, p)` to `(R exp(δθ), p + R δp)` (Pinocchio's
//!   `integrate`, the core's [`karakuri::algorithms::integrate`]);
//! * velocities, likewise: the one-dof joints' rates, then each free body's linear velocity of
//!   its origin and its angular velocity, both in its body axes (the state's own
//!   coordinates), a ball joint's angular velocity.
//!
//! `u` is the actuators' targets in the order of the actuated one-dof joints (Python's
//! `actuator_names`, what `set_targets` takes): a torque, a position or a speed by the
//! actuator's mode.
//!
//! # At a change of the active set
//!
//! Through contacts the derivatives are those of the contact solve's active set (records
//! 0078, 0090): each contact separated, sticking or sliding as the step's solution leaves it,
//! exact wherever that set, and each normal target's branch, stay put under a small enough
//! perturbation. Where the step is on a kink, the one-sided derivative of one stated side is
//! given, never an average and nothing smoothed across:
//!
//! * a contact with no impulse is separated (its row velocity free), even when it touches;
//! * friction inside its cone, or on it with no slip (to 1e-9 m/s), sticks; on the cone and
//!   slipping, it slides along the slip;
//! * a normal target is the gap's `−gap/dt` above the plane and 0 touching; a gap the last
//!   step closed to rounding (at most `1e-12 (1 + |p|)` m, `p` the contact point) is taken as
//!   touching. A foot or corner at rest after landing sits exactly there (the gap's target
//!   lands it to rounding), and only on the touching side does a redundant stuck set (a
//!   quadruped's four feet, a box's four corners) keep a linearised solution: on the gap side
//!   a perturbation gives each gap its own target, which the stuck feet cannot all meet.
//!   There `∂q⁺/∂q` keeps a foot pressed in where it is (the touching side: no correction
//!   within `contact.penetration_tolerance`); a foot lifted would be landed again (the gap
//!   side), which the derivative does not say;
//! * the static or dynamic friction coefficient and the split-impulse pass are those of the
//!   state.
//!
//! Redundant rows (a box's four corners: four normal rows on three velocities) leave the
//! impulses a family; the derivative is given where no member of it moves `v⁺` (sticking; a
//! box sliding without turning, every corner slipping the same way), from the member the
//! solver holds (a sliding box's friction response to a turn scales with each corner's normal
//! impulse). A set with no linearised solution, or whose family reaches `v⁺` (a box sliding
//! and turning on four corners: the solver's warm start picks `v⁺`), is refused by name. So
//! is a nearly redundant stuck set (a quadruped's four stuck feet off a symmetric stance: the
//! rows' smallest singular value 1e-8 of the largest), whose squeeze a change of the
//! configuration would move without bound, where the step's own solve does not converge
//! (record 0098).

use nalgebra::DMatrix;

/// `A = ∂x⁺/∂x` `(2 nv x 2 nv)` and `B = ∂x⁺/∂u` `(2 nv x nu)` of one step `x⁺ = step(x, u)`
/// (state order: the module documentation). Made once for a world
/// ([`StepDerivatives::new`] with [`crate::World::step_derivative_sizes`]) and filled by every
/// [`crate::World::step_derivatives`] call without allocating.
#[derive(Clone, Debug, PartialEq)]
pub struct StepDerivatives {
    /// `∂x⁺/∂x`: rows and columns `[δq; δv]` `(2 nv x 2 nv)`.
    pub a: DMatrix<f64>,
    /// `∂x⁺/∂u` `(2 nv x nu)`.
    pub b: DMatrix<f64>,
}

impl StepDerivatives {
    /// Zero matrices for a world of `nv` velocity coordinates and `nu` actuators.
    pub fn new(nv: usize, nu: usize) -> StepDerivatives {
        StepDerivatives { a: DMatrix::zeros(2 * nv, 2 * nv), b: DMatrix::zeros(2 * nv, nu) }
    }

    /// `nv` (half the side of `a`).
    pub fn nv(&self) -> usize {
        self.a.nrows() / 2
    }

    /// `nu` (the columns of `b`).
    pub fn nu(&self) -> usize {
        self.b.ncols()
    }
}

//! The stage plan: which of the step's optional stages a world runs, decided once when the
//! model is built (MuJoCo's `mjModel` answers the same questions with its counts: `nu`,
//! `nsensor`, `neq`), so that a scene pays only for what it holds. A free-falling box has no
//! joint forces, actuators, perturbations, tracks, loops, sensors or elastic contacts, and its
//! step is the kinematics, the factorisation of qH and the integration.
//!
//! What the plan cannot know at load stays a test in the step: pushes applied through the API
//! ([`super::SimState::pushes`]) and the contacts of the step (a stage over `w.raw` costs
//! nothing when it is empty). Joint forces registered on a built world
//! ([`crate::Engine::add_joint_forces`]) turn their stage on.

use karakuri::algorithms::LoneRoots;

use crate::collision::Collider;
use crate::compile::CompiledWorld;
use crate::scene::{ActuatorMode, ContactMode, Integrator};

/// Which optional stages the step runs (each `false`: the world has nothing for it, and the
/// stage is skipped). Set by the builder ([`StagePlan::of`]); a field of
/// [`super::SimModel`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StagePlan {
    /// Joint forces (springs, dampers, registered [`crate::JointForces`]): the joint-force
    /// stage. Off, `w.tau` is zeroed instead and qH's diagonal gets nothing from them.
    pub joint_forces: bool,
    /// Actuators: the actuator commands, torques, rows and report.
    pub actuators: bool,
    /// The scene's perturbations (the external-force stage also runs while an API push is
    /// pending).
    pub perturbations: bool,
    /// Some pair of shapes can touch (a mode other than `none`): collision detection, contact
    /// rows, the contact report and the split-impulse pass.
    pub contacts: bool,
    /// Some pair of shapes can touch through the constraint model (`lcp`) with a mean
    /// restitution above zero, and the world has no loop closure: the impact passes
    /// ([`super::impact::impacts`]). Perfectly plastic worlds (stacks, piles, feet) skip them.
    pub impacts: bool,
    /// Track surfaces: their surface velocities.
    pub tracks: bool,
    /// Sensors: the sensor start and readings stages.
    pub sensors: bool,
    /// Some sensor has noise or bias: the sensor-noise stage.
    pub noise: bool,
    /// Some constraint row can arise (contacts, loops, limits, velocity servos and prescribed
    /// joints, joint friction): the constraint stage. Off, `v⁺ = v_free`.
    pub rows: bool,
    /// Every joint is a lone root that is not a free flyer (a tree of one joint on the
    /// universe: pendulums, sliders, a Newton's cradle): the kinematics stage computes the
    /// terms in one pass over the joints
    /// ([`karakuri::algorithms::compute_all_terms_of_lone_roots`], the same numbers as
    /// `compute_all_terms`; the proof it takes is made here, from the model).
    pub lone_roots: Option<LoneRoots>,
    /// RK4 steps the world (`engine.integrator: rk4`, or `auto` in a smooth world: see
    /// [`StagePlan::not_smooth`]); semi-implicit Euler otherwise. An `auto` world still steps
    /// Euler while a joint force is registered on it (the rk4 stage's test).
    pub rk4: bool,
    /// Some constraint row other than a contact's can arise (what `rows` is without
    /// contacts: [`StagePlan::refresh_contacts`] keeps it).
    pub fixed_rows: bool,
}

impl StagePlan {
    /// The plan of a compiled world: what each of its lists holds, and its collision pairs'
    /// modes and materials.
    pub fn of(m: &CompiledWorld) -> StagePlan {
        let servo_rows = m.actuators.iter().any(|a| matches!(a.mode, ActuatorMode::Velocity | ActuatorMode::Prescribed));
        let fixed_rows = !m.loops.is_empty() || !m.limits.is_empty() || !m.linear_rows.is_empty() || !m.spatial_tendons.is_empty() || servo_rows || !m.frictions.is_empty();
        let mut plan = StagePlan {
            joint_forces: !m.springs.dof.is_empty() || !m.actuator_forces.is_empty(),
            actuators: !m.actuators.is_empty(),
            perturbations: !m.perturbations.is_empty(),
            contacts: false,
            impacts: false,
            tracks: !m.tracks.is_empty(),
            sensors: !m.sensors.is_empty(),
            noise: m.sensors.iter().any(|s| s.noise.is_some()),
            rows: fixed_rows,
            lone_roots: LoneRoots::of(&m.model),
            rk4: false,
            fixed_rows,
        };
        plan.refresh_contacts(&m.collider, !m.loops.is_empty());
        plan.rk4 = match m.engine.integrator {
            Integrator::Rk4 => true,
            Integrator::Auto => plan.not_smooth(true).is_none() && one_dof_joints(&m.model),
            Integrator::SemiImplicitEuler => false,
        };
        plan
    }

    /// What keeps a world of this plan from stepping RK4, if anything: something the
    /// constraint solve holds (RK4 has no constraint stage), or, for `auto` (`implicit`),
    /// springs and dampers too (explicit in RK4, implicit in semi-implicit Euler: a stiff
    /// damper stays stable only there).
    pub fn not_smooth(&self, implicit: bool) -> Option<&'static str> {
        if self.contacts {
            Some("a pair of shapes that can touch (set `collide: false` or a contact mode `none`)")
        } else if self.actuators {
            Some("actuators")
        } else if self.rows {
            Some("a loop, joint limit, equality, tendon range or joint friction")
        } else if implicit && self.joint_forces {
            Some("joint springs or dampers")
        } else {
            None
        }
    }

    /// The flags that follow from the pair table and the materials (`contacts`, `impacts`,
    /// `rows`), set again from `collider` (`loops`: the world has loop closures): at build,
    /// and after every runtime change of modes or materials. A world that now has contacts
    /// steps semi-implicit Euler (`auto`; an `rk4` world refuses such a change before it).
    pub fn refresh_contacts(&mut self, collider: &Collider, loops: bool) {
        let n = collider.shapes.len();
        let pairs = || (0..n).flat_map(move |a| (a + 1..n).map(move |b| (a, b)));
        let touch = |a: usize, b: usize| collider.pair_mode(a, b).filter(|&mode| mode != ContactMode::None);
        self.contacts = pairs().any(|(a, b)| touch(a, b).is_some());
        self.impacts = !loops
            && pairs().any(|(a, b)| touch(a, b) == Some(ContactMode::Lcp) && collider.material(a, b).restitution > 0.0);
        self.rows = self.contacts || self.fixed_rows;
        self.rk4 &= !self.contacts;
    }
}

/// Whether every joint of `model` is a one-dof joint in plain coordinates (hinges, sliders:
/// `nq = nv = 1`), where RK4 is the classical scheme of a vector space. Over free and ball
/// joints its slopes are combined in the tangent space of the step's start (not a Lie-group
/// RK4): a free body spinning at 10 rad/s drifts 8 µm in 1 s from its straight line, where
/// semi-implicit Euler's world-frame step keeps it exactly, so `auto` leaves them to Euler.
fn one_dof_joints(model: &karakuri::Model) -> bool {
    (1..model.njoints).all(|j| model.nqs[j] == 1 && model.nvs[j] == 1)
}

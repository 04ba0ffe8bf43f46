//! Custom joint forces (Choreonoid's BodyCustomizer): a [`JointForces`] computes extra forces
//! on a set of one-dof joints from their positions, velocities and the time, and is registered
//! on a world (`World::add_joint_forces`) for some joints (one joint, a robot's, any
//! list). The scene's joint springs and dampers (`stiffness`, `damping`, a robot's
//! `joint_stiffness` / `joint_damping`, the URDF's `<dynamics damping>`) are one built-in
//! instance of it, [`SpringDamper`], registered when the world is built.
//!
//! A force may give its derivatives `∂τ/∂q` and `∂τ/∂dq`: the step then makes it implicit (the
//! force at the step's end state, linearised), as a stiff spring or damper needs to stay
//! stable; derivatives left at 0 make it explicit. Coulomb friction is not a force of this kind
//! (it sticks, which no function of `dq` does): it is a bounded velocity row of the constraint
//! solve (`friction` of a joint, the URDF's `<dynamics friction>`).
//!
//! ```
//! use karakuri_sim::{JointForce, JointForces, Scene, World};
//!
//! /// A torsion spring whose rest angle turns with time.
//! struct Winding;
//!
//! impl JointForces for Winding {
//!     fn forces(&self, t: f64, q: &[f64], _dq: &[f64], out: &mut [JointForce]) {
//!         for i in 0..q.len() {
//!             out[i] = JointForce { tau: -2.0 * (q[i] - 0.5 * t), dtau_dq: -2.0, dtau_ddq: 0.0 };
//!         }
//!     }
//! }
//!
//! let scene = Scene::from_str(
//!     "bodies: [{name: bob, mass: 1, inertia: [[0.01,0,0],[0,0.01,0],[0,0,0.01]],
//!                joints: [{name: hinge, type: revolute, axis: [0, 0, 1], damping: 0.3}]}]",
//!     "wind.yaml",
//! )?;
//! let mut world = World::new(scene)?;
//! world.add_joint_forces(&["hinge"], Box::new(Winding))?;
//! world.run(1.0)?;
//! assert!(world.joint_velocity("hinge")? > 0.0);
//! # Ok::<(), karakuri_sim::SimError>(())
//! ```

/// One joint's force and its derivatives.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointForce {
    /// The torque (N·m) or force (N) on the joint.
    pub tau: f64,
    /// `∂τ/∂q` (a spring: `−stiffness`); 0: none, or treat the force explicitly.
    pub dtau_dq: f64,
    /// `∂τ/∂dq` (a damper: `−damping`); 0: none, or treat the force explicitly.
    pub dtau_ddq: f64,
}

/// Extra joint forces as a function of the joints' state and the time. A pure function: the
/// step may call it more than once per step (RK4 at its four points), and a state restored
/// must give the same forces, so it keeps no state of its own (and is `Sync`: a world's model,
/// which holds the scene's own, may be shared between worlds on several threads).
pub trait JointForces: Send + Sync {
    /// Writes `out[i]` for joint `i` of the set it was registered for, from `q[i]`, `dq[i]`
    /// and the time `t` (s). `out` enters zeroed.
    fn forces(&self, t: f64, q: &[f64], dq: &[f64], out: &mut [JointForce]);

    /// Whether the force is linear in `q` and `dq` with the derivatives [`JointForces::forces`]
    /// gives (constant, exact), as [`SpringDamper`]'s. The step's derivatives
    /// (`World::step_derivatives`) go through such forces only, and refuse a world with one
    /// that says `false` (the default): the step makes a force implicit by its derivatives,
    /// and a nonlinear one's would need its second derivatives.
    fn linear(&self) -> bool {
        false
    }
}

/// Linear springs and viscous dampers: `τ_i = −stiffness_i (q_i − reference_i) − damping_i dq_i`
/// (the scene's joint springs and dampers, the URDF's damping).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpringDamper {
    /// Stiffness per joint (N·m/rad or N/m).
    pub stiffness: Vec<f64>,
    /// Damping per joint (N·m·s/rad or N·s/m).
    pub damping: Vec<f64>,
    /// Rest position per joint.
    pub reference: Vec<f64>,
}

impl JointForces for SpringDamper {
    fn forces(&self, _t: f64, q: &[f64], dq: &[f64], out: &mut [JointForce]) {
        for (i, o) in out.iter_mut().enumerate() {
            let (k, d) = (self.stiffness[i], self.damping[i]);
            *o = JointForce {
                tau: -k * (q[i] - self.reference[i]) - d * dq[i],
                dtau_dq: -k,
                dtau_ddq: -d,
            };
        }
    }

    fn linear(&self) -> bool {
        true
    }
}

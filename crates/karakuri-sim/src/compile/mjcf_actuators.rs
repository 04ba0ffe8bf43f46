//! MJCF actuators that are not one servo on one joint, as joint forces (decision 0070): a fixed
//! tendon transmission, activation dynamics (`filter`, `filterexact`, `integrator`), a second
//! actuator on a joint, or a gain or bias that pushes away. Each is MuJoCo's force law at its
//! held `ctrl`, evaluated from the joints' state and the time as MuJoCo's Euler step evaluates
//! it: explicit (MuJoCo's `Euler` integrates actuator forces explicitly), except that a lone
//! joint's stiffness and damping are made implicit as the passive springs are.

use karakuri::io::mjcf::{Actuator as MjcfActuator, ActuatorDynamics, MjcfWorld, Transmission};
use karakuri::Model;

use crate::joint_forces::{JointForce, JointForces};

/// One MJCF actuator as a force on its joints: with `L = Σ cᵢ qᵢ` (`cᵢ = gear · coefᵢ`: the
/// tendon's coefficients, `[gear]` on a joint) and `L̇ = Σ cᵢ q̇ᵢ`, the force `f = gain · act +
/// bias`, `gain = g₀ + g₁ L + g₂ L̇`, `bias = b₀ + b₁ L + b₂ L̇`, clamped to `forcerange`, acts
/// as `τᵢ = cᵢ f`. `act` is `ctrl` without activation dynamics; with them, the activation of
/// MuJoCo's Euler step at time `t` started from 0 and driven by the held `ctrl` ([`Self::act`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ActuatorForce {
    /// `cᵢ` per joint of the set.
    pub coef: Vec<f64>,
    /// `g₀, g₁, g₂` (g₁ = g₂ = 0 for a fixed gain).
    pub gain: [f64; 3],
    /// `b₀, b₁, b₂` (0 without bias).
    pub bias: [f64; 3],
    /// The held control, clamped to `ctrlrange`.
    pub ctrl: f64,
    /// Activation dynamics, if any.
    pub dynamics: Option<ActuatorDynamics>,
    /// `actrange` when limited.
    pub actrange: Option<(f64, f64)>,
    /// `actearly`: the force takes the activation at the step's end.
    pub actearly: bool,
    /// `forcerange` when limited.
    pub forcerange: Option<(f64, f64)>,
    /// The world's step (s): MuJoCo's `filter` is an explicit Euler step of it.
    pub dt: f64,
}

impl ActuatorForce {
    /// The activation at time `t` (`ctrl` without dynamics). From `act = 0` at `t = 0` with
    /// `ctrl` held, after `k = t / dt` steps: `filter` (Euler, `act += dt (ctrl − act) / τ`)
    /// `ctrl (1 − (1 − dt/τ)^k)`, `filterexact` `ctrl (1 − e^(−t/τ))`, `integrator` `ctrl t`;
    /// clamped to `actrange` when limited. With `actearly`, the activation one step later.
    pub fn act(&self, t: f64) -> f64 {
        let Some(dynamics) = self.dynamics else { return self.ctrl };
        let t = if self.actearly { t + self.dt } else { t };
        let (k, ctrl) = (t / self.dt, self.ctrl);
        let clamp = |a: f64| self.actrange.map_or(a, |(lo, hi)| a.clamp(lo, hi));
        match dynamics {
            ActuatorDynamics::Filter { tau, exact: false } => {
                // each Euler step is clamped too; with 0 in the range and act moving monotonically
                // towards ctrl, clamping the closed form is the same
                clamp(ctrl * (1.0 - (1.0 - self.dt / tau.max(1e-15)).powf(k)))
            }
            ActuatorDynamics::Filter { tau, exact: true } => clamp(ctrl * (1.0 - (-t / tau.max(1e-15)).exp())),
            ActuatorDynamics::Integrator => clamp(ctrl * t),
        }
    }
}

impl JointForces for ActuatorForce {
    fn forces(&self, t: f64, q: &[f64], dq: &[f64], out: &mut [JointForce]) {
        let (l, ld) = self.coef.iter().enumerate().fold((0.0, 0.0), |(l, ld), (i, c)| (l + c * q[i], ld + c * dq[i]));
        let act = self.act(t);
        let [g0, g1, g2] = self.gain;
        let [b0, b1, b2] = self.bias;
        let f = (g0 + g1 * l + g2 * ld) * act + b0 + b1 * l + b2 * ld;
        let (f, saturated) = match self.forcerange {
            Some((lo, hi)) if f < lo || f > hi => (f.clamp(lo, hi), true),
            _ => (f, false),
        };
        // a lone joint's own stiffness and damping are implicit (exact derivatives); a
        // tendon's coupled ones are explicit, as MuJoCo's Euler step takes them
        let lone = self.coef.len() == 1 && !saturated;
        for (i, o) in out.iter_mut().enumerate() {
            let c = self.coef[i];
            let (kq, kv) = if lone { (c * c * (g1 * act + b1), c * c * (g2 * act + b2)) } else { (0.0, 0.0) };
            *o = JointForce { tau: c * f, dtau_dq: kq, dtau_ddq: kv };
        }
    }
}

/// An MJCF actuator force on the world's joints, by index.
#[derive(Clone, Debug)]
pub struct ActuatorForceSet {
    /// `robot/actuator`.
    pub name: String,
    /// The joints' configuration indices.
    pub iq: Vec<usize>,
    /// Their velocity indices.
    pub dof: Vec<usize>,
    /// The force law.
    pub forces: ActuatorForce,
}

/// An actuator waiting for the world model: its world joints and law.
pub(super) struct PendingForce {
    pub(super) name: String,
    /// `(world joint, cᵢ)`.
    pub(super) joints: Vec<(usize, f64)>,
    pub(super) forces: ActuatorForce,
}

/// MJCF actuator `a` of a robot (world joint of each MuJoCo joint id by `world_joint`, `None`
/// for a joint that is not a hinge or slide) held at `ctrl`, as a pending force; `None` for a
/// site transmission, a ball or free joint, or a tendon over one.
pub(super) fn pending_force(
    name: String,
    a: &MjcfActuator,
    world: &MjcfWorld,
    ctrl: f64,
    dt: f64,
    world_joint: impl Fn(usize) -> Option<usize>,
) -> Option<PendingForce> {
    let gear = a.gear[0];
    let joints: Vec<(usize, f64)> = match a.transmission {
        Transmission::Joint(mj) => vec![(world_joint(mj)?, gear)],
        Transmission::Tendon(t) => {
            let tendon = world.tendons.get(t)?;
            tendon.joints.iter().map(|&(mj, coef)| Some((world_joint(mj)?, gear * coef))).collect::<Option<_>>()?
        }
        Transmission::Site { .. } => return None,
    };
    if joints.is_empty() {
        return None;
    }
    let gain = if a.gain_affine { a.gainprm } else { [a.gainprm[0], 0.0, 0.0] };
    let bias = if a.bias_affine { a.biasprm } else { [0.0; 3] };
    let forces = ActuatorForce {
        coef: joints.iter().map(|j| j.1).collect(),
        gain,
        bias,
        ctrl,
        dynamics: a.dynamics,
        actrange: a.actrange,
        actearly: a.actearly,
        forcerange: a.forcerange,
        dt,
    };
    Some(PendingForce { name, joints, forces })
}

/// The pending actuator forces on the built world model's indices.
pub(super) fn actuator_forces(pending: Vec<PendingForce>, model: &Model) -> Vec<ActuatorForceSet> {
    pending
        .into_iter()
        .map(|p| ActuatorForceSet {
            name: p.name,
            iq: p.joints.iter().map(|&(j, _)| model.idx_q[j]).collect(),
            dof: p.joints.iter().map(|&(j, _)| model.idx_v[j]).collect(),
            forces: p.forces,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn law(dynamics: Option<ActuatorDynamics>) -> ActuatorForce {
        ActuatorForce {
            coef: vec![0.5, -0.5],
            gain: [10.0, 0.0, 0.0],
            bias: [0.0, -100.0, -2.0],
            ctrl: 0.4,
            dynamics,
            actrange: None,
            actearly: false,
            forcerange: None,
            dt: 0.01,
        }
    }

    #[test]
    fn filter_activation_is_the_euler_recursion() {
        let a = law(Some(ActuatorDynamics::Filter { tau: 0.05, exact: false }));
        let mut act = 0.0;
        for k in 0..50 {
            assert!((a.act(k as f64 * a.dt) - act).abs() < 1e-12, "step {k}");
            act += a.dt * (a.ctrl - act) / 0.05;
        }
        let i = law(Some(ActuatorDynamics::Integrator));
        assert!((i.act(0.3) - 0.12).abs() < 1e-15);
    }

    #[test]
    fn a_tendon_force_is_its_coefficients_times_the_law() {
        let a = law(None);
        let mut out = [JointForce::default(); 2];
        a.forces(0.0, &[0.2, -0.2], &[1.0, 0.0], &mut out);
        // L = 0.2, L̇ = 0.5: f = 10·0.4 − 100·0.2 − 2·0.5 = −17
        assert!((out[0].tau + 8.5).abs() < 1e-12 && (out[1].tau - 8.5).abs() < 1e-12);
        assert_eq!((out[0].dtau_dq, out[0].dtau_ddq), (0.0, 0.0));
    }
}

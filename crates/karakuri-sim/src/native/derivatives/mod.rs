//! The derivatives of the native engine's next step (decision record 0069):
//! `A = ∂(q⁺, v⁺)/∂(q, v)` and `B = ∂(q⁺, v⁺)/∂u` at the world's state, for the step
//! [`super::step::step`] would take now, without taking it (nothing of the world changes).
//!
//! Computed in the world model's order ([`smooth`]: the acceleration and its derivatives
//! through the core's RNEA derivatives; [`euler`]: the semi-implicit Euler step and the
//! configuration update's tangent Jacobians ([`tangent`]); [`rk4`]: the RK4 chain), then
//! permuted into [`crate::derivatives`]' order. An Euler step with contacts goes through its
//! solve ([`contact`]: the step taken on a copy of the state, its active set differentiated,
//! record 0078; at a change of the set, the side [`crate::derivatives`] states, record 0090). What the step would do that is not built yet is refused, naming it (never a
//! wrong answer): contacts the active set does not determine (redundant sliding ones that turn), of
//! shapes other than a box, ball or capsule on a static plane, penalty or elastic contacts,
//! the split-impulse pass, loops, equalities, tendon ranges,
//! velocity servos and prescribed joints, joint friction, a joint limit the step holds,
//! pushes acting in the step, sleeping bodies or one that may fall asleep, nonlinear joint
//! forces, planar joints. Every buffer is made at the first call ([`DerivWork`], kept by the
//! engine): later calls allocate nothing, but for a step with contacts (the active set's
//! matrices, sized by its rows, and the probe's state copy).

mod contact;
mod euler;
mod rk4;
mod smooth;
mod tangent;

use nalgebra::DMatrix;

use super::build::SimModel;
use super::state::SimState;
use super::work::StepData;
use crate::derivatives::StepDerivatives;
use crate::engine::unsupported;
use crate::scene::Integrator;
use crate::SimError;

/// The step derivatives' workspace, made once for a world.
pub struct DerivWork {
    eval: smooth::Eval,
    euler: euler::EulerWork,
    rk4: rk4::Rk4Work,
    contact: contact::ContactWork,
    /// Output row / column → model row / column `(2 nv)`: the tangent order (one-dof joints in
    /// `one_dof` order, then the other joints' dofs) for positions, then for velocities.
    at: Vec<usize>,
    /// Per output row r, where model row `at[r]` starts in the Euler step's `[A | B]ᵀ` (`at[r] (2n + nu)`) `(2n)`.
    col_at: Vec<usize>,
    /// RK4's `A` in model order.
    a: DMatrix<f64>,
    /// `nu`.
    nu: usize,
}

impl DerivWork {
    /// Buffers for `m`.
    pub fn new(m: &SimModel) -> DerivWork {
        let (model, n) = (&m.model, m.model.nv);
        let nu = m.one_dof_actuator.iter().flatten().count();
        let mut order: Vec<usize> = m.one_dof.iter().map(|&j| model.idx_v[j]).collect();
        for j in 1..model.njoints {
            if model.nvs[j] != 1 {
                order.extend(model.idx_v[j]..model.idx_v[j] + model.nvs[j]);
            }
        }
        let at: Vec<usize> = (0..2 * n).map(|i| if i < n { order[i] } else { n + order[i - n] }).collect();
        DerivWork {
            col_at: at.iter().map(|&r| r * (2 * n + nu)).collect(),
            eval: smooth::Eval::new(m),
            euler: euler::EulerWork::new(model, nu),
            at,
            rk4: rk4::Rk4Work::new(n),
            contact: contact::ContactWork::new(),
            a: DMatrix::zeros(2 * n, 2 * n),
            nu,
        }
    }

    /// `nu`, the actuated one-dof joints.
    pub fn nu(&self) -> usize {
        self.nu
    }
}

/// `A`, `B` of the step from the state `s` (with `w.data` fresh at it, as after every step)
/// into `out`, sized `(2 nv x 2 nv)`, `(2 nv x nu)`.
pub fn step_derivatives(m: &SimModel, s: &SimState, w: &StepData, dw: &mut DerivWork, out: &mut StepDerivatives) -> Result<(), SimError> {
    let n = m.model.nv;
    if out.a.shape() != (2 * n, 2 * n) || out.b.shape() != (2 * n, dw.nu()) {
        let (side, nu) = (2 * n, dw.nu());
        let (ar, ac, br, bc) = (out.a.nrows(), out.a.ncols(), out.b.nrows(), out.b.ncols());
        return Err(SimError::Input(format!(
            "step derivatives: the world has nv = {n}, nu = {nu} (A {side} x {side}, B {side} x {nu}); \
             the StepDerivatives given has A {ar} x {ac}, B {br} x {bc}"
        )));
    }
    if n == 0 {
        return Ok(());
    }
    refuse(m, s, w)?;
    let rk4 = m.plan.rk4 && (m.engine.integrator == Integrator::Rk4 || w.registered.joint_forces.is_empty());
    let side = 2 * n;
    if rk4 {
        rk4::derivatives(m, s, w, (&mut dw.eval, &mut dw.rk4), &mut dw.a)?;
        // model order -> the tangent order: position rows / columns, then velocity ones
        for (c, &mc) in dw.at.iter().enumerate() {
            let src = &dw.a.as_slice()[mc * side..(mc + 1) * side];
            for (o, &mr) in out.a.as_mut_slice()[c * side..(c + 1) * side].iter_mut().zip(&dw.at) {
                *o = src[mr];
            }
        }
        out.b.fill(0.0);
        return Ok(());
    }
    let contacts = m.plan.contacts && contact::probe(m, s, w, &mut dw.contact)?;
    let cw = contacts.then_some(&mut dw.contact);
    euler::derivatives(m, s, w, (&mut dw.eval, &mut dw.euler), cw)?;
    // [A | B]ᵀ in model order -> A, B in the tangent order: output row r is abt's column at[r]
    let abt = dw.euler.abt.as_slice();
    let cols = dw.at.iter().copied().chain(side..side + dw.nu());
    for (dst, mc) in out.a.as_mut_slice().chunks_exact_mut(side).chain(out.b.as_mut_slice().chunks_exact_mut(side)).zip(cols) {
        let src = &abt[mc..];
        for (o, &off) in dst.iter_mut().zip(&dw.col_at) {
            *o = src[off];
        }
    }
    Ok(())
}

/// What the step would do that the derivatives do not go through yet, named.
fn refuse(m: &SimModel, s: &SimState, w: &StepData) -> Result<(), SimError> {
    let no = |what: &str| Err(unsupported("native", &format!("step derivatives through {what} (not built yet)")));
    if !m.loops.is_empty() {
        return no("loop closures");
    }
    if !m.linear_rows.is_empty() || !m.spatial_tendons.is_empty() {
        return no("joint or tendon equalities and tendon ranges");
    }
    if let Some(a) = m.actuators.iter().find(|a| !matches!(a.mode, crate::scene::ActuatorMode::Torque | crate::scene::ActuatorMode::Position)) {
        return no(&format!("actuator '{}' (a velocity servo or prescribed joint: a constraint row)", a.name));
    }
    if !m.frictions.is_empty() {
        return no("joint friction (a constraint row)");
    }
    if m.perturbations.iter().chain(&s.pushes).any(|p| p.active(s.steps)) {
        return no("a push acting in this step (apply_wrench, scene perturbations)");
    }
    if s.sleep.any_asleep() {
        return no("sleeping bodies (engine.sleep)");
    }
    let sm = &m.sleep;
    let ready = |t: usize| w.registered.sleepable[t] && s.sleep.still[t] + 1 >= sm.steps;
    if sm.enabled && (0..s.sleep.still.len()).any(ready) {
        return no("a body that may fall asleep in this step (engine.sleep: it has been still for its time)");
    }
    Ok(())
}

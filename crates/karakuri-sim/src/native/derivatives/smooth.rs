//! The smooth acceleration of a step and its derivatives, in the world model's order:
//! `qH q̈ = τ(q, v, u) − h(q, v)` with `qH = M + diag(shift)` as the step forms it (armature,
//! the implicit joint forces' and position servos' terms), so that
//! `∂q̈/∂(q, v) = qH⁻¹ (∂τ/∂(q, v) − ∂RNEA/∂(q, v)|_{a = q̈})` (the diagonal shift is constant:
//! `RNEA(q, v, q̈) + shift q̈ = τ`) and `∂q̈/∂u = qH⁻¹ ∂τ/∂u`. RNEA's derivatives are the core's
//! ([`karakuri::algorithms::rnea_derivatives`], Carpentier & Mansard 2018).

use karakuri::algorithms::{rnea_derivatives, DerivativesWorkspace};
use karakuri::linalg::Factorization;
use karakuri::Data;
use nalgebra::{DMatrix, DVector};

use super::super::build::SimModel;
use super::super::dynamics::compute_terms;
use super::super::joint_forces::{evaluate, JointForceSet, JointForceWork};
use super::super::state::SimState;
use crate::engine::unsupported;
use crate::scene::ActuatorMode;
use crate::SimError;

/// One evaluation's buffers and results (model order, `n = nv`, `nu` actuated joints).
pub struct Eval {
    /// Kinematics and RNEA derivatives at the evaluated state (the world's own `Data` is
    /// never touched).
    data: Data,
    ws: DerivativesWorkspace,
    /// `qH`'s factors.
    qh: Factorization,
    /// The applied joint forces `τ` `(n)`.
    pub tau: DVector<f64>,
    /// qH's diagonal shift `(n)`.
    shift: Vec<f64>,
    /// `h` at the state `(n)`.
    h: DVector<f64>,
    /// `q̈` `(n)`.
    pub qdd: DVector<f64>,
    /// `∂τ/∂q`, `∂τ/∂v` of the applied forces `(n x n)`, `∂τ/∂u` `(n x nu)`.
    dtau_dq: DMatrix<f64>,
    dtau_dv: DMatrix<f64>,
    dtau_du: DMatrix<f64>,
    /// `∂q̈/∂q`, `∂q̈/∂v` `(n x n)`, `∂q̈/∂u` `(n x nu)`.
    pub aq: DMatrix<f64>,
    /// See `aq`.
    pub av: DMatrix<f64>,
    /// See `aq`.
    pub au: DMatrix<f64>,
    /// A joint-force set's positions, velocities and forces (the largest set's size).
    jf: JointForceWork,
    /// Each actuator's column of `u` (`usize::MAX`: none) `(actuators)`.
    u_col: Vec<usize>,
    /// The solve's right-hand sides by dof, `(2n + nu) x n` (column k: dof k of each).
    rhs_t: DMatrix<f64>,
}

impl Eval {
    /// Buffers for `m`, its actuators' columns of `u` in the actuated one-dof joints' order.
    pub fn new(m: &SimModel) -> Eval {
        let (model, n) = (&m.model, m.model.nv);
        let mut u_col = vec![usize::MAX; m.actuators.len()];
        let mut nu = 0;
        for a in m.one_dof_actuator.iter().flatten() {
            u_col[*a] = nu;
            nu += 1;
        }
        Eval {
            data: Data::new(model),
            ws: DerivativesWorkspace::new(model),
            qh: Factorization::new(model),
            tau: DVector::zeros(n),
            shift: vec![0.0; n],
            h: DVector::zeros(n),
            qdd: DVector::zeros(n),
            dtau_dq: DMatrix::zeros(n, n),
            dtau_dv: DMatrix::zeros(n, n),
            dtau_du: DMatrix::zeros(n, nu),
            aq: DMatrix::zeros(n, n),
            av: DMatrix::zeros(n, n),
            au: DMatrix::zeros(n, nu),
            jf: JointForceWork::default(),
            u_col,
            rhs_t: DMatrix::zeros(2 * n + nu, n),
        }
    }

    /// The applied forces at `(t, q, v)` and their derivatives, as the step forms them: the
    /// joint forces (`c = dt`: made implicit as the joint-force stage does; `c = 0`: explicit,
    /// RK4's), `τ_user`, and (`actuators`, an Euler step) the actuators' commands at
    /// `t_cmd = time + dt`; qH's shift (armature, implicit terms). A joint force that is not
    /// [`crate::JointForces::linear`] is refused, naming its joints.
    pub fn applied(
        &mut self,
        m: &SimModel,
        s: &SimState,
        registered: &[JointForceSet],
        (q, v): (&DVector<f64>, &DVector<f64>),
        (t, c, actuators): (f64, f64, bool),
    ) -> Result<(), SimError> {
        self.tau.copy_from(&s.tau_user);
        self.shift.copy_from_slice(&m.dofs.armature);
        self.dtau_dq.fill(0.0);
        self.dtau_dv.fill(0.0);
        self.dtau_du.fill(0.0);
        for set in m.joint_forces.iter().chain(registered) {
            self.joint_force_set(m, set, (q, v), t, c)?;
        }
        if actuators {
            self.actuators(m, s, (q, v));
        }
        Ok(())
    }

    /// One joint-force set's forces, shift and derivatives (see [`Eval::applied`]).
    fn joint_force_set(
        &mut self,
        m: &SimModel,
        set: &JointForceSet,
        (q, v): (&DVector<f64>, &DVector<f64>),
        t: f64,
        c: f64,
    ) -> Result<(), SimError> {
        if !set.forces.linear() {
            let names: Vec<&str> = set.dof.iter().map(|&k| m.model.joint_names[m.model.dof_joint[k]].as_str()).collect();
            return Err(unsupported("native", &format!(
                "step derivatives through the joint forces on {names:?}: they are not linear (JointForces::linear)"
            )));
        }
        self.jf.fit(set.dof.len());
        for (&k, &f) in set.dof.iter().zip(evaluate(set, t, q, v, &mut self.jf)) {
            // the joint-force stage's rule (`forces_at`), with its derivatives
            let d = -c * f.dtau_ddq - c * c * f.dtau_dq;
            self.dtau_dq[(k, k)] += f.dtau_dq;
            if c > 0.0 && d >= 0.0 {
                self.tau[k] += f.tau + c * f.dtau_dq * v[k];
                self.shift[k] += d;
                self.dtau_dv[(k, k)] += f.dtau_ddq + c * f.dtau_dq;
            } else {
                self.tau[k] += f.tau;
                self.dtau_dv[(k, k)] += f.dtau_ddq;
            }
        }
        Ok(())
    }

    /// The torque actuators and position servos as the actuator-commands stage forms them
    /// (`actuators::command`): `τ += base − gain v`, `dt gain` on qH's diagonal; a saturated
    /// servo's or clamped torque's command is constant (zero derivatives).
    fn actuators(&mut self, m: &SimModel, s: &SimState, (q, v): (&DVector<f64>, &DVector<f64>)) {
        let t = s.time + m.dt;
        for (i, a) in m.actuators.iter().enumerate() {
            let (x, rate) = s.targets[i].at(t);
            let c = super::super::actuators::command(a, (x, rate), (q[a.iq], v[a.dof]), m.dt);
            self.tau[a.dof] += c.base - c.gain * v[a.dof];
            self.shift[a.dof] += m.dt * c.gain;
            let col = self.u_col[i];
            if a.mode == ActuatorMode::Position && c.gain != 0.0 {
                self.dtau_dq[(a.dof, a.dof)] -= a.kp;
                self.dtau_dv[(a.dof, a.dof)] -= c.gain;
                if col != usize::MAX {
                    self.dtau_du[(a.dof, col)] += a.kp;
                }
            } else if a.mode == ActuatorMode::Torque && x.abs() < a.effort_limit && col != usize::MAX {
                self.dtau_du[(a.dof, col)] += 1.0;
            }
        }
    }

    /// The applied forces `τ` and their `∂τ/∂q`, to add a force of the step's own (the
    /// contacts' `Jᵀλ/dt` at fixed `λ`) before [`Eval::acceleration`].
    pub fn applied_mut(&mut self) -> (&mut DVector<f64>, &mut DMatrix<f64>) {
        (&mut self.tau, &mut self.dtau_dq)
    }

    /// `q̈` at `(q, v)` with the applied forces of the last [`Eval::applied`], and its
    /// derivatives into `aq`, `av`, `au`.
    pub fn acceleration(&mut self, m: &SimModel, q: &DVector<f64>, v: &DVector<f64>) -> Result<(), SimError> {
        let n = m.model.nv;
        compute_terms(m, q, v, &mut self.data);
        let shift = &self.shift;
        self.qh.factorize_shifted(self.data.mass_matrix()?, |k| shift[k]);
        self.h.copy_from(self.data.nonlinear_effects()?);
        self.qdd.copy_from(&self.tau);
        self.qdd -= &self.h;
        self.qh.solve(self.qdd.as_mut_slice());
        rnea_derivatives(&m.model, &mut self.data, &mut self.ws, q, v, &self.qdd);
        // the right-hand sides transposed (row k: dof k of every column), solved together
        let nu = self.au.ncols();
        let m_rhs = 2 * n + nu;
        // column c of each matrix (contiguous) into entry c of every dof's row (stride m_rhs)
        let rhs = self.rhs_t.as_mut_slice();
        let pairs = [(&self.dtau_dq, &self.ws.dtau_dq, 0), (&self.dtau_dv, &self.ws.dtau_dv, n)];
        for (applied, rnea, off) in pairs {
            for c in 0..n {
                let (x, y) = (&applied.as_slice()[c * n..(c + 1) * n], &rnea.as_slice()[c * n..(c + 1) * n]);
                for ((dst, a), r) in rhs[off + c..].iter_mut().step_by(m_rhs).zip(x).zip(y) {
                    *dst = a - r;
                }
            }
        }
        for c in 0..nu {
            let x = &self.dtau_du.as_slice()[c * n..(c + 1) * n];
            for (dst, a) in rhs[2 * n + c..].iter_mut().step_by(m_rhs).zip(x) {
                *dst = *a;
            }
        }
        solve_rows(&self.qh, self.rhs_t.as_mut_slice(), m_rhs);
        let rhs = self.rhs_t.as_slice();
        for (mat, off, cols) in [(&mut self.aq, 0, n), (&mut self.av, n, n), (&mut self.au, 2 * n, nu)] {
            for c in 0..cols {
                let col = &mut mat.as_mut_slice()[c * n..(c + 1) * n];
                for (dst, x) in col.iter_mut().zip(rhs[off + c..].iter().step_by(m_rhs)) {
                    *dst = *x;
                }
            }
        }
        Ok(())
    }
}

/// `qH X = B` for `m` right-hand sides stored by dof: `x[k m..(k + 1) m]` holds dof k of every
/// one (`n m` entries), overwritten by the solutions; `L⁻ᵀ`, `D⁻¹`, `L⁻¹` as
/// [`Factorization::solve`], each row update over the `m` columns at once (contiguous).
fn solve_rows(qh: &Factorization, x: &mut [f64], m: usize) {
    let n = qh.n();
    for k in (0..n).rev() {
        let (anc, l) = qh.row(k);
        let (before, rest) = x.split_at_mut(k * m);
        let xk = &rest[..m];
        for (&a, &lv) in anc.iter().zip(l) {
            for (y, &v) in before[a * m..(a + 1) * m].iter_mut().zip(xk) {
                *y -= lv * v;
            }
        }
    }
    for k in 0..n {
        let inv = 1.0 / qh.d(k);
        x[k * m..(k + 1) * m].iter_mut().for_each(|v| *v *= inv);
    }
    for k in 0..n {
        let (anc, l) = qh.row(k);
        let (before, rest) = x.split_at_mut(k * m);
        let xk = &mut rest[..m];
        for (&a, &lv) in anc.iter().zip(l) {
            for (y, &v) in xk.iter_mut().zip(&before[a * m..(a + 1) * m]) {
                *y -= lv * v;
            }
        }
    }
}

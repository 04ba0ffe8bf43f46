//! Assembly: configurations and velocities that satisfy the constraints (RBDL's
//! `CalcAssemblyQ` / `CalcAssemblyQDot`). Not a hot path: these allocate their results.

use super::solve::range_part;
use super::types::ConstraintError;
use super::ConstraintSet;
use crate::algorithms::{check_len, difference, forward_kinematics, integrate};
use crate::data::Data;
use crate::model::Model;
use nalgebra::DVector;

impl ConstraintSet {
    fn sqrt_weights(&self, model: &Model, weights: Option<&DVector<f64>>) -> DVector<f64> {
        match weights {
            Some(w) => {
                check_len("weights", w, model.nv);
                assert!(w.iter().all(|x| *x > 0.0 && x.is_finite()), "assembly weights must be positive and finite");
                w.map(f64::sqrt)
            }
            None => DVector::from_element(model.nv, 1.0),
        }
    }

    /// A configuration satisfying the position constraints with the least weighted change
    /// from `q_init`: Newton (SQP) iterations on `min ½ Δqᵀ W Δq` subject to `ϕ(q) = 0` until
    /// every position error is at most `tolerance`; `W = diag(weights)` (all ones if `None`).
    /// Redundant rows are handled (minimal-norm steps). Fails with
    /// [`ConstraintError::AssemblyFailed`] when the tolerance is not reached in
    /// `max_iterations` (e.g. the constraints cannot close).
    #[doc(alias = "CalcAssemblyQ")]
    pub fn assemble_q(
        &mut self,
        model: &Model,
        data: &mut Data,
        q_init: &DVector<f64>,
        weights: Option<&DVector<f64>>,
        tolerance: f64,
        max_iterations: usize,
    ) -> Result<DVector<f64>, ConstraintError> {
        self.check_bound(model);
        check_len("q", q_init, model.nq);
        let s = self.sqrt_weights(model, weights);
        let mut q = q_init.clone();
        let mut err = self.position_error_norm(model, data, &q);
        for it in 0..max_iterations {
            if err <= tolerance {
                return Ok(q);
            }
            // G and ϕ at q are fresh from position_error_norm
            let d = difference(model, q_init, &q);
            let sqp = self.assembly_step(&s, Some(&d));
            let (mut trial, mut e_trial) = self.line_search(model, data, &q, &sqp, err, tolerance);
            if e_trial > err {
                // far from the solution the pull towards q_init can fight the constraints:
                // take a plain minimal-norm Newton step on ϕ instead
                self.position_error_norm(model, data, &q);
                let newton = self.assembly_step(&s, None);
                (trial, e_trial) = self.line_search(model, data, &q, &newton, err, tolerance);
            }
            q = trial;
            err = e_trial;
            if !err.is_finite() {
                return Err(ConstraintError::AssemblyFailed { iterations: it + 1, residual: err });
            }
        }
        if err <= tolerance {
            return Ok(q);
        }
        Err(ConstraintError::AssemblyFailed { iterations: max_iterations, residual: err })
    }

    /// The SQP step (with `d = q ⊖ q_init`) or, without `d`, the minimal-norm Newton step,
    /// from G and ϕ held in the set. With y = W^½ Δ, Ã = G W^-½: min |W^½ d + y| subject to
    /// Ã y = -ϕ, i.e. y = -W^½ d + z with z the minimal-norm solution of Ã z = -ϕ + G d.
    fn assembly_step(&mut self, s: &DVector<f64>, d: Option<&DVector<f64>>) -> DVector<f64> {
        let nv = s.len();
        for r in 0..self.nrows {
            let mut c = -self.position_error[r];
            if let Some(d) = d {
                for k in 0..nv {
                    c += self.g[(r, k)] * d[k];
                }
            }
            self.ws.rhs_c[r] = c;
        }
        range_part(&mut self.ws, &self.g, Some(s));
        DVector::from_fn(nv, |k, _| d.map_or(0.0, |d| -d[k]) + self.ws.x[k] / s[k])
    }

    /// Halves `step` (up to 8 times) while the position error grows.
    fn line_search(
        &mut self,
        model: &Model,
        data: &mut Data,
        q: &DVector<f64>,
        step: &DVector<f64>,
        err: f64,
        tolerance: f64,
    ) -> (DVector<f64>, f64) {
        let mut alpha = 1.0;
        let mut trial = integrate(model, q, step);
        let mut e_trial = self.position_error_norm(model, data, &trial);
        for _ in 0..8 {
            if e_trial <= err || e_trial <= tolerance {
                break;
            }
            alpha *= 0.5;
            trial = integrate(model, q, &(step * alpha));
            e_trial = self.position_error_norm(model, data, &trial);
        }
        (trial, e_trial)
    }

    /// Largest |ϕ| at q (leaves G and ϕ at q in the set).
    fn position_error_norm(&mut self, model: &Model, data: &mut Data, q: &DVector<f64>) -> f64 {
        forward_kinematics(model, data, q);
        self.fill_rows(model, data, false, true);
        self.position_error.amax()
    }

    /// Velocities satisfying the velocity constraints `G q̇ = 0` at `q` with the least
    /// weighted change from `v_init` (`W = diag(weights)`, all ones if `None`): exact, by the
    /// pivoted QR of `G W^-½` (redundant rows are fine).
    #[doc(alias = "CalcAssemblyQDot")]
    pub fn assemble_v(
        &mut self,
        model: &Model,
        data: &mut Data,
        q: &DVector<f64>,
        v_init: &DVector<f64>,
        weights: Option<&DVector<f64>>,
    ) -> Result<DVector<f64>, ConstraintError> {
        self.check_bound(model);
        check_len("q", q, model.nq);
        check_len("v", v_init, model.nv);
        let s = self.sqrt_weights(model, weights);
        forward_kinematics(model, data, q);
        self.fill_rows(model, data, false, false);
        let nv = model.nv;
        // y = W^½ v = W^½ v0 + z, Ã z = -G v0 with minimal |z|
        for r in 0..self.nrows {
            let mut c = 0.0;
            for k in 0..nv {
                c -= self.g[(r, k)] * v_init[k];
            }
            self.ws.rhs_c[r] = c;
        }
        range_part(&mut self.ws, &self.g, Some(&s));
        Ok(DVector::from_fn(nv, |k, _| v_init[k] + self.ws.x[k] / s[k]))
    }
}

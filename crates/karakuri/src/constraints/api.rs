//! Public solves: constrained forward dynamics and collision impulses by every method.

use super::solve::{self, mat_vec};
use super::types::Method;
use super::types::ConstraintError;
use super::ConstraintSet;
use crate::algorithms::{
    articulated_factors_apply, check_len, factor_by_articulated_inertias, forward_dynamics, forward_kinematics,
    forward_kinematics_acceleration, mass_matrix, nonlinear_effects_after_crba,
};
use crate::data::{Data, Fresh};
use crate::model::Model;
use nalgebra::DVector;

impl ConstraintSet {
    /// H, C, G, γ for (q, q̇) and the right-hand sides `b = τ - C`, `c = γ`. For the
    /// range-space method on a free-flyer root carrying joints of one dof, H's factors
    /// instead of H: from the articulated inertias, as `mass_matrix_inverse` (record 0086),
    /// in `ws.fact`; H is then computed only if the method falls back. H (or its factors)
    /// first: RNEA then reuses its joint angles and, on a fixed base, its world placements
    /// (`nonlinear_effects_after_crba`, the same numbers bit for bit; record 0093).
    fn prepare_dynamics(&mut self, model: &Model, data: &mut Data, q: &DVector<f64>, v: &DVector<f64>, tau: &DVector<f64>, method: Method) {
        self.ws.prefactored = method == Method::RangeSpaceSparse && articulated_factors_apply(model);
        if self.ws.prefactored {
            factor_by_articulated_inertias(model, data, q.as_slice(), &mut self.ws.fact);
        } else {
            mass_matrix(model, data, q);
        }
        // RNEA with q̈ = 0 leaves o_m_i, v and a (q̈ = 0, no gravity) in data: G and γ read them
        nonlinear_effects_after_crba(model, data, q, v);
        if !self.ws.prefactored {
            data.fresh = data.fresh | Fresh::MASS_MATRIX;
        }
        self.ws.nle.copy_from(&data.tau);
        self.fill_rows_from_rnea(model, data);
        for k in 0..model.nv {
            self.ws.rhs_v[k] = tau[k] - self.ws.nle[k];
        }
        self.ws.rhs_c.copy_from(&self.gamma);
    }

    /// Constrained forward dynamics: the accelerations `q̈` (in [`ConstraintSet::qdd`]) and
    /// constraint forces `λ` ([`ConstraintSet::lambda`], per constraint in
    /// [`ConstraintSet::forces`]) solving `H q̈ + C = τ + Gᵀ λ`, `G q̈ = γ`, by `method`. All
    /// methods give the same answer; they differ in cost. Rank-deficient rows: see the
    /// module documentation.
    pub fn forward_dynamics(
        &mut self,
        model: &Model,
        data: &mut Data,
        q: &DVector<f64>,
        v: &DVector<f64>,
        tau: &DVector<f64>,
        method: Method,
    ) -> Result<&DVector<f64>, ConstraintError> {
        self.check_bound(model);
        check_len("q", q, model.nq);
        check_len("v", v, model.nv);
        check_len("tau", tau, model.nv);
        let attempt = if method == Method::Kokkevis {
            forward_kinematics_acceleration(model, data, q, v, &self.ws.zero_v);
            self.fill_rows(model, data, true, false);
            self.ws.rhs_c.copy_from(&self.gamma);
            forward_dynamics(model, data, q, v, tau);
            self.ws.x.copy_from(&data.ddq);
            solve::try_method(&mut self.ws, &self.g, model, data, method)
        } else {
            self.prepare_dynamics(model, data, q, v, tau, method);
            solve::try_method(&mut self.ws, &self.g, model, data, method)
        };
        let result = match attempt {
            Some(report) => Ok(report),
            None => {
                if method == Method::Kokkevis {
                    self.prepare_dynamics(model, data, q, v, tau, method);
                } else if !data.fresh.contains(Fresh::MASS_MATRIX) {
                    // the range-space method had H's factors only
                    self.ws.prefactored = false;
                    mass_matrix(model, data, q);
                }
                solve::fallback(&mut self.ws, &self.g, &data.mass_matrix, method)
            }
        };
        self.qdd.copy_from(&self.ws.x);
        self.lambda.copy_from(&self.ws.lam);
        self.update_forces(false);
        self.finish(result, method)?;
        Ok(&self.qdd)
    }

    fn finish(&mut self, result: Result<super::SolveReport, ConstraintError>, method: Method) -> Result<(), ConstraintError> {
        match result {
            Ok(r) => {
                self.report = r;
                Ok(())
            }
            Err(e) => {
                if let ConstraintError::Conflicting { rows, rank, residual } = e {
                    self.report = super::SolveReport { method, rows, rank, fallback: method != Method::NullSpace, residual };
                }
                Err(e)
            }
        }
    }

    /// Collision impulses: the velocities `q̇⁺` ([`ConstraintSet::v_plus`]) and impulses `Λ`
    /// ([`ConstraintSet::impulses`], per constraint in [`ConstraintSet::forces`]) solving
    /// `H q̇⁺ = H q̇⁻ + Gᵀ Λ`, `G q̇⁺ = v⁺` with `v⁺` = [`ConstraintSet::impulse_target`]
    /// (zero by default: the contacts stop).
    #[doc(alias = "ComputeConstraintImpulses")]
    pub fn compute_impulses(
        &mut self,
        model: &Model,
        data: &mut Data,
        q: &DVector<f64>,
        v_minus: &DVector<f64>,
        method: Method,
    ) -> Result<&DVector<f64>, ConstraintError> {
        self.check_bound(model);
        check_len("q", q, model.nq);
        check_len("v", v_minus, model.nv);
        let attempt = if method == Method::Kokkevis {
            forward_kinematics(model, data, q);
            self.fill_rows(model, data, false, false);
            self.ws.rhs_c.copy_from(&self.impulse_target);
            // ABA only for its articulated inertias; x0 = H⁻¹ H q̇⁻ = q̇⁻
            forward_dynamics(model, data, q, v_minus, &self.ws.zero_v);
            self.ws.x.copy_from(v_minus);
            solve::try_method(&mut self.ws, &self.g, model, data, method)
        } else {
            self.prepare_impulses(model, data, q, v_minus);
            solve::try_method(&mut self.ws, &self.g, model, data, method)
        };
        let result = match attempt {
            Some(report) => Ok(report),
            None => {
                if method == Method::Kokkevis {
                    self.prepare_impulses(model, data, q, v_minus);
                }
                solve::fallback(&mut self.ws, &self.g, &data.mass_matrix, method)
            }
        };
        self.v_plus.copy_from(&self.ws.x);
        self.impulses.copy_from(&self.ws.lam);
        self.update_forces(true);
        self.finish(result, method)?;
        Ok(&self.v_plus)
    }

    fn prepare_impulses(&mut self, model: &Model, data: &mut Data, q: &DVector<f64>, v_minus: &DVector<f64>) {
        mass_matrix(model, data, q);
        // G reads world placements, which mass_matrix does not leave
        forward_kinematics(model, data, q);
        self.fill_rows(model, data, false, false);
        mat_vec(&data.mass_matrix, v_minus, &mut self.ws.rhs_v);
        self.ws.rhs_c.copy_from(&self.impulse_target);
    }

}

//! Dynamics of many states at once (issue 33): each function takes `n` states stacked row by
//! row (`q` of `n * nq` numbers, `v`, `a`, `tau` of `n * nv`) and writes `n` results, row-major
//! (a vector result `n * nv`, a matrix `n * rows * cols`, row by row), each equal bit for bit
//! to the single-state function of [`crate::algorithms`] at that state, but [`aba`]'s, [`crba`]'s,
//! [`mass_matrix_inverse`]'s and [`aba_derivatives`]'s: equal to rounding (every entry within
//! `1e-12 · (1 + max |q̈|)` of the single call's, record 0068; `1e-12 · (1 + max |M|)` for M and
//! that times `max |M⁻¹|²` for M⁻¹, record 0075; that times `1 + max |∂τ/∂q| + max |∂τ/∂v|`
//! for ∂q̈/∂q and ∂q̈/∂v, record 0084).
//!
//! | function | per state | single-state function |
//! | --- | --- | --- |
//! | [`forward_kinematics`] | `njoints` world placements, 4x4 homogeneous | [`algorithms::forward_kinematics`](crate::algorithms::forward_kinematics) |
//! | [`rnea`] | τ `(nv)` | [`algorithms::inverse_dynamics`](crate::algorithms::inverse_dynamics) |
//! | [`nonlinear_effects`] | C q̇ + g `(nv)` | [`algorithms::nonlinear_effects`](crate::algorithms::nonlinear_effects) |
//! | [`gravity_torques`] | g `(nv)` | [`algorithms::gravity_torques`](crate::algorithms::gravity_torques) |
//! | [`crba`] | M `(nv x nv)` | [`algorithms::mass_matrix`](crate::algorithms::mass_matrix) |
//! | [`aba`] | q̈ `(nv)` | [`algorithms::forward_dynamics`](crate::algorithms::forward_dynamics) |
//! | [`mass_matrix_inverse`] | M⁻¹ `(nv x nv)` | [`algorithms::mass_matrix_inverse`](crate::algorithms::mass_matrix_inverse) |
//! | [`joint_jacobians`] | world Jacobian `(6 x nv)` | [`algorithms::joint_jacobians`](crate::algorithms::joint_jacobians) |
//! | [`rnea_derivatives`] | ∂τ/∂q, ∂τ/∂v, M | [`algorithms::rnea_derivatives`](crate::algorithms::rnea_derivatives) |
//! | [`aba_derivatives`] | ∂q̈/∂q, ∂q̈/∂v, M⁻¹ | [`algorithms::aba_derivatives`](crate::algorithms::aba_derivatives) |
//!
//! A [`BatchWorkspace`] holds one slot of buffers per thread (a
//! [`DerivativesWorkspace`]'s index lists and the lane buffers), allocated once:
//! a batched call allocates nothing after the first, on any number of threads. On `t > 1`
//! threads the calling thread and the workspace's `t − 1` kept worker threads (`pool.rs`,
//! record 0100) claim chunks of 16–64 states from a shared queue (`run.rs`);
//! each state's result is the same whatever the number of threads, since every state is
//! computed by the same kernel from its own inputs only.
//!
//! Every function runs four states at once in SIMD lanes (`batch/lanes.rs`): RNEA and the
//! nonlinear effects in `rnea_lanes.rs`, ABA on the symmetric half of the articulated inertia in
//! `aba_lanes.rs`, placements, forward kinematics, Jacobian columns and gravity in
//! `kin_lanes.rs`, CRBA and M⁻¹ in `crba_lanes.rs` (0075, 0084), the RNEA derivatives'
//! recursion in `rnea_derivatives_lanes.rs` and the ABA derivatives in
//! `aba_derivatives_lanes.rs` (0076; their factorisation and M⁻¹ products too, 0084).

mod aba_derivatives_lanes;
mod aba_lanes;
mod crba_lanes;
mod kin_lanes;
mod lanes;
mod pool;
mod rnea_derivatives_lanes;
mod rnea_lanes;
mod run;
mod workspace;

use crate::model::Model;
use kin_lanes::Kin;
use run::run;
pub use lanes::LANES;
pub use workspace::{BatchError, BatchWorkspace};

/// The number of states in `q` (`n * nq` numbers), after checking `ws` was made for `model`;
/// a model with `nq = 0` has none to batch.
fn states(model: &Model, ws: &BatchWorkspace, q: &[f64]) -> Result<usize, BatchError> {
    ws.check(model)?;
    if model.nq == 0 {
        return Ok(0);
    }
    if !q.len().is_multiple_of(model.nq) {
        return Err(BatchError::Ragged { got: q.len(), nq: model.nq });
    }
    Ok(q.len() / model.nq)
}

/// World placements of every joint (`njoints` 4x4 homogeneous matrices, row-major, the
/// universe's the identity) of each state: `out` has `n * njoints * 16` numbers.
pub fn forward_kinematics(model: &Model, ws: &mut BatchWorkspace, q: &[f64], out: &mut [f64]) -> Result<(), BatchError> {
    let (n, nj) = (states(model, ws, q)?, model.njoints);
    run(model, ws.slots(model)?, n, [("q", q, model.nq, "nq")], [("out", out, nj * 16, "njoints x 4 x 4")], |m, slot, k, [q], [out]| {
        kin_lanes::kin_chunk(m, &mut slot.lanes, &mut slot.kin, Kin::Placements, k, q, out);
    })
}

/// τ = RNEA(q, v, a) of each state into `tau` (`n * nv`).
pub fn rnea(model: &Model, ws: &mut BatchWorkspace, q: &[f64], v: &[f64], a: &[f64], tau: &mut [f64]) -> Result<(), BatchError> {
    let (n, nq, nv) = (states(model, ws, q)?, model.nq, model.nv);
    let ins = [("q", q, nq, "nq"), ("v", v, nv, "nv"), ("a", a, nv, "nv")];
    run(model, ws.slots(model)?, n, ins, [("tau", tau, nv, "nv")], |m, slot, k, [q, v, a], [tau]| {
        rnea_lanes::rnea_chunk(m, &mut slot.lanes, k, q, v, Some(a), tau);
    })
}

/// C(q, q̇) q̇ + g(q) of each state into `out` (`n * nv`).
pub fn nonlinear_effects(model: &Model, ws: &mut BatchWorkspace, q: &[f64], v: &[f64], out: &mut [f64]) -> Result<(), BatchError> {
    let (n, nq, nv) = (states(model, ws, q)?, model.nq, model.nv);
    let ins = [("q", q, nq, "nq"), ("v", v, nv, "nv")];
    run(model, ws.slots(model)?, n, ins, [("out", out, nv, "nv")], |m, slot, k, [q, v], [out]| {
        rnea_lanes::rnea_chunk(m, &mut slot.lanes, k, q, v, None, out);
    })
}

/// g(q) of each state into `out` (`n * nv`).
pub fn gravity_torques(model: &Model, ws: &mut BatchWorkspace, q: &[f64], out: &mut [f64]) -> Result<(), BatchError> {
    let (n, nv) = (states(model, ws, q)?, model.nv);
    run(model, ws.slots(model)?, n, [("q", q, model.nq, "nq")], [("out", out, nv, "nv")], |m, slot, k, [q], [out]| {
        kin_lanes::kin_chunk(m, &mut slot.lanes, &mut slot.kin, Kin::Gravity, k, q, out);
    })
}

/// The mass matrix M(q) of each state, full symmetric, into `out` (`n * nv * nv`).
pub fn crba(model: &Model, ws: &mut BatchWorkspace, q: &[f64], out: &mut [f64]) -> Result<(), BatchError> {
    let (n, nv) = (states(model, ws, q)?, model.nv);
    run(model, ws.slots(model)?, n, [("q", q, model.nq, "nq")], [("out", out, nv * nv, "nv x nv")], |m, slot, k, [q], [out]| {
        crba_lanes::crba_chunk(m, &mut slot.kin, &mut slot.crba, false, k, q, out);
    })
}

/// q̈ = ABA(q, v, τ) of each state into `ddq` (`n * nv`); equal to the single call to rounding
/// (see the module's documentation), and the same bits whatever the threads and the CPU.
pub fn aba(model: &Model, ws: &mut BatchWorkspace, q: &[f64], v: &[f64], tau: &[f64], ddq: &mut [f64]) -> Result<(), BatchError> {
    let (n, nq, nv) = (states(model, ws, q)?, model.nq, model.nv);
    let ins = [("q", q, nq, "nq"), ("v", v, nv, "nv"), ("tau", tau, nv, "nv")];
    run(model, ws.slots(model)?, n, ins, [("ddq", ddq, nv, "nv")], |m, slot, k, [q, v, tau], [ddq]| {
        aba_lanes::aba_chunk(m, &mut slot.lanes, k, q, v, tau, ddq);
    })
}

/// M(q)⁻¹ of each state, full symmetric, into `out` (`n * nv * nv`).
pub fn mass_matrix_inverse(model: &Model, ws: &mut BatchWorkspace, q: &[f64], out: &mut [f64]) -> Result<(), BatchError> {
    let (n, nv) = (states(model, ws, q)?, model.nv);
    run(model, ws.slots(model)?, n, [("q", q, model.nq, "nq")], [("out", out, nv * nv, "nv x nv")], |m, slot, k, [q], [out]| {
        crba_lanes::crba_chunk(m, &mut slot.kin, &mut slot.crba, true, k, q, out);
    })
}

/// The world Jacobian columns of every dof (rows `[linear; angular]`) of each state into `out`
/// (`n * 6 * nv`).
pub fn joint_jacobians(model: &Model, ws: &mut BatchWorkspace, q: &[f64], out: &mut [f64]) -> Result<(), BatchError> {
    let (n, nv) = (states(model, ws, q)?, model.nv);
    run(model, ws.slots(model)?, n, [("q", q, model.nq, "nq")], [("out", out, 6 * nv, "6 x nv")], |m, slot, k, [q], [out]| {
        kin_lanes::kin_chunk(m, &mut slot.lanes, &mut slot.kin, Kin::Jacobians, k, q, out);
    })
}

/// ∂τ/∂q, ∂τ/∂v and M of τ = RNEA(q, v, a) of each state into `dtau_dq`, `dtau_dv`, `m_out`
/// (each `n * nv * nv`; ∂/∂q in the tangent space, as [`algorithms::rnea_derivatives`](crate::algorithms::rnea_derivatives)).
#[allow(clippy::too_many_arguments)]
pub fn rnea_derivatives(
    model: &Model,
    ws: &mut BatchWorkspace,
    q: &[f64],
    v: &[f64],
    a: &[f64],
    dtau_dq: &mut [f64],
    dtau_dv: &mut [f64],
    m_out: &mut [f64],
) -> Result<(), BatchError> {
    let (n, nq, nv) = (states(model, ws, q)?, model.nq, model.nv);
    let ins = [("q", q, nq, "nq"), ("v", v, nv, "nv"), ("a", a, nv, "nv")];
    let outs = [("dtau_dq", dtau_dq, nv * nv, "nv x nv"), ("dtau_dv", dtau_dv, nv * nv, "nv x nv"), ("m", m_out, nv * nv, "nv x nv")];
    run(model, ws.slots(model)?, n, ins, outs, |m, slot, k, [q, v, a], outs| {
        rnea_derivatives_lanes::rnea_derivatives_chunk(m, &mut slot.derivs, k, q, v, a, outs);
    })
}

/// ∂q̈/∂q, ∂q̈/∂v and M⁻¹ of q̈ = ABA(q, v, τ) of each state into `dqdd_dq`, `dqdd_dv`,
/// `minv` (each `n * nv * nv`), as [`algorithms::aba_derivatives`](crate::algorithms::aba_derivatives).
#[allow(clippy::too_many_arguments)]
pub fn aba_derivatives(
    model: &Model,
    ws: &mut BatchWorkspace,
    q: &[f64],
    v: &[f64],
    tau: &[f64],
    dqdd_dq: &mut [f64],
    dqdd_dv: &mut [f64],
    minv: &mut [f64],
) -> Result<(), BatchError> {
    let (n, nq, nv) = (states(model, ws, q)?, model.nq, model.nv);
    let ins = [("q", q, nq, "nq"), ("v", v, nv, "nv"), ("tau", tau, nv, "nv")];
    let outs = [("dqdd_dq", dqdd_dq, nv * nv, "nv x nv"), ("dqdd_dv", dqdd_dv, nv * nv, "nv x nv"), ("minv", minv, nv * nv, "nv x nv")];
    run(model, ws.slots(model)?, n, ins, outs, |m, slot, k, [q, v, tau], outs| {
        aba_derivatives_lanes::aba_derivatives_chunk(m, &mut slot.derivs, &mut slot.crba, &slot.derivatives, k, q, v, tau, outs);
    })
}

#[cfg(test)]
mod tests {
    //! The lane kernels compiled portable (without the AVX2 dispatch the public calls take on
    //! an AVX2 machine) against the single calls, bit for bit (ABA within record 0068's
    //! tolerance, and bit for bit against the dispatched build); `tests/batch.rs` covers the rest.
    use super::lanes::LaneWorkspace;
    use super::{aba_lanes, rnea_lanes};
    use crate::algorithms::{self as alg, SplitMix64};
    use crate::io::urdf;
    use nalgebra::DVector;

    #[test]
    fn portable_lanes_equal_the_single_calls_and_the_dispatched_build() {
        for (name, root) in [("ur5", urdf::Root::Fixed), ("talos_reduced", urdf::Root::FreeFlyer)] {
            let path = format!("{}/../../tests/data/{name}.urdf", env!("CARGO_MANIFEST_DIR"));
            let model = urdf::load(path, root).unwrap();
            let (k, nq, nv) = (6, model.nq, model.nv);
            let mut rng = SplitMix64::new(5);
            let mut q = vec![];
            for _ in 0..k {
                q.extend(alg::random_configuration(&model, &mut rng).iter());
            }
            let (v, a) = (rng.vector(k * nv), rng.vector(k * nv));
            let mut w = LaneWorkspace::new(&model);
            let (mut tau, mut ddq) = (vec![0.0; k * nv], vec![0.0; k * nv]);
            rnea_lanes::rnea_groups(&model, &mut w, k, &q, v.as_slice(), Some(a.as_slice()), &mut tau);
            aba_lanes::aba_groups(&model, &mut w, k, &q, v.as_slice(), a.as_slice(), &mut ddq);
            // the public call (AVX2 where the CPU has it) gives the portable build's bits
            let mut ws = super::BatchWorkspace::new(&model, 1);
            let mut ddq_public = vec![0.0; k * nv];
            super::aba(&model, &mut ws, &q, v.as_slice(), a.as_slice(), &mut ddq_public).unwrap();
            assert!(ddq.iter().zip(&ddq_public).all(|(x, y)| x.to_bits() == y.to_bits()), "{name} aba portable vs dispatched");
            let mut data = crate::Data::new(&model);
            for s in 0..k {
                let row = |x: &[f64], n: usize| DVector::from_column_slice(&x[s * n..(s + 1) * n]);
                let (qs, vs, as_) = (row(&q, nq), row(v.as_slice(), nv), row(a.as_slice(), nv));
                let t = alg::inverse_dynamics(&model, &mut data, &qs, &vs, &as_).clone();
                assert!(t.iter().zip(&tau[s * nv..]).all(|(x, y)| x.to_bits() == y.to_bits()), "{name} rnea state {s}");
                let d = alg::forward_dynamics(&model, &mut data, &qs, &vs, &as_);
                let scale = 1.0 + d.amax();
                assert!(d.iter().zip(&ddq[s * nv..]).all(|(x, y)| (x - y).abs() <= 1e-12 * scale), "{name} aba state {s}");
            }
        }
    }

    /// Kinematics, gravity, CRBA and M⁻¹ in lanes compiled portable give the dispatched
    /// (AVX2 where the CPU has it) build's bits.
    #[test]
    fn portable_kin_and_crba_lanes_equal_the_dispatched_build() {
        use super::{crba_lanes, kin_lanes};
        for (name, root) in [("panda", urdf::Root::Fixed), ("talos_reduced", urdf::Root::FreeFlyer)] {
            let path = format!("{}/../../tests/data/{name}.urdf", env!("CARGO_MANIFEST_DIR"));
            let model = urdf::load(path, root).unwrap();
            let (k, nv, nj) = (6, model.nv, model.njoints);
            let mut rng = SplitMix64::new(9);
            let mut q = vec![];
            for _ in 0..k {
                q.extend(alg::random_configuration(&model, &mut rng).iter());
            }
            let (mut w, mut kw, mut cw) = (LaneWorkspace::new(&model), kin_lanes::KinWorkspace::new(&model), crba_lanes::CrbaWorkspace::new(&model));
            let mut ws = super::BatchWorkspace::new(&model, 1);
            let bits = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
            let (mut a, mut b) = (vec![0.0; k * nj * 16], vec![0.0; k * nj * 16]);
            kin_lanes::fk_groups(&model, &mut w, &mut kw, k, &q, &mut a);
            super::forward_kinematics(&model, &mut ws, &q, &mut b).unwrap();
            assert!(bits(&a, &b), "{name} fk");
            let (mut a, mut b) = (vec![0.0; k * 6 * nv], vec![0.0; k * 6 * nv]);
            kin_lanes::jacobian_groups(&model, &mut w, &mut kw, k, &q, &mut a);
            super::joint_jacobians(&model, &mut ws, &q, &mut b).unwrap();
            assert!(bits(&a, &b), "{name} jacobians");
            let (mut a, mut b) = (vec![0.0; k * nv], vec![0.0; k * nv]);
            kin_lanes::gravity_groups(&model, &mut w, &mut kw, k, &q, &mut a);
            super::gravity_torques(&model, &mut ws, &q, &mut b).unwrap();
            assert!(bits(&a, &b), "{name} gravity");
            let (mut a, mut b) = (vec![0.0; k * nv * nv], vec![0.0; k * nv * nv]);
            crba_lanes::crba_groups(&model, &mut kw, &mut cw, false, k, &q, &mut a);
            super::crba(&model, &mut ws, &q, &mut b).unwrap();
            assert!(bits(&a, &b), "{name} crba");
            crba_lanes::crba_groups(&model, &mut kw, &mut cw, true, k, &q, &mut a);
            super::mass_matrix_inverse(&model, &mut ws, &q, &mut b).unwrap();
            assert!(bits(&a, &b), "{name} minv");
        }
    }
}

//! The configuration space: `integrate`, `difference`, `neutral`, `random_configuration`,
//! `normalize` (quaternions of free-flyer and spherical joints live on the unit sphere).

use crate::model::{JointType, Model};
use nalgebra::DVector;

/// The neutral configuration: zero angles and translations, identity quaternions.
pub fn neutral(model: &Model) -> DVector<f64> {
    let mut q = DVector::zeros(model.nq);
    for i in 1..model.njoints {
        let (iq, nq) = (model.idx_q[i], model.nqs[i]);
        model.joint_types[i].neutral(&mut q.as_mut_slice()[iq..iq + nq]);
    }
    q
}

/// `q ⊕ v`: the configuration reached from `q` moving with velocity `v` for unit time
/// (scale `v` by dt to integrate a step).
pub fn integrate(model: &Model, q: &DVector<f64>, v: &DVector<f64>) -> DVector<f64> {
    let mut out = q.clone();
    integrate_into(model, q, v, &mut out);
    out
}

/// [`integrate`] into a preallocated vector.
pub fn integrate_into(model: &Model, q: &DVector<f64>, v: &DVector<f64>, out: &mut DVector<f64>) {
    for i in 1..model.njoints {
        let (iq, nq, iv, nv) = (model.idx_q[i], model.nqs[i], model.idx_v[i], model.nvs[i]);
        model.joint_types[i].integrate(
            &q.as_slice()[iq..iq + nq],
            &v.as_slice()[iv..iv + nv],
            &mut out.as_mut_slice()[iq..iq + nq],
        );
    }
}

/// `q1 ⊖ q0`: the velocity that integrates `q0` to `q1` in unit time.
pub fn difference(model: &Model, q0: &DVector<f64>, q1: &DVector<f64>) -> DVector<f64> {
    let mut v = DVector::zeros(model.nv);
    for i in 1..model.njoints {
        let (iq, nq, iv, nv) = (model.idx_q[i], model.nqs[i], model.idx_v[i], model.nvs[i]);
        model.joint_types[i].difference(
            &q0.as_slice()[iq..iq + nq],
            &q1.as_slice()[iq..iq + nq],
            &mut v.as_mut_slice()[iv..iv + nv],
        );
    }
    v
}

/// Renormalises every quaternion of `q` in place.
pub fn normalize(model: &Model, q: &mut DVector<f64>) {
    for i in 1..model.njoints {
        let (iq, nq) = (model.idx_q[i], model.nqs[i]);
        model.joint_types[i].normalize(&mut q.as_mut_slice()[iq..iq + nq]);
    }
}

/// A small deterministic random generator (SplitMix64) for sampling states without a
/// dependency; not for cryptography.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from a seed (the seed is its whole state).
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }
    /// The whole state: `SplitMix64::new(g.state())` continues `g`'s stream exactly.
    pub fn state(&self) -> u64 {
        self.0
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }
    /// A vector uniform in [-1, 1]ⁿ.
    pub fn vector(&mut self, n: usize) -> DVector<f64> {
        DVector::from_fn(n, |_, _| self.range(-1.0, 1.0))
    }
}

/// A random configuration within the position limits; where a limit is infinite, angles are
/// drawn in [-π, π] and translations in [-1, 1]; quaternions are uniform on SO(3).
pub fn random_configuration(model: &Model, rng: &mut SplitMix64) -> DVector<f64> {
    let mut q = DVector::zeros(model.nq);
    for i in 1..model.njoints {
        let iq = model.idx_q[i];
        let bounded = |rng: &mut SplitMix64, k: usize, default: f64| {
            let (lo, hi) = (model.lower_position_limit[k], model.upper_position_limit[k]);
            if lo.is_finite() && hi.is_finite() {
                rng.range(lo, hi)
            } else {
                rng.range(-default, default)
            }
        };
        let pi = std::f64::consts::PI;
        match model.joint_types[i] {
            JointType::Universe => {}
            JointType::Revolute { .. } | JointType::RevoluteUnbounded { .. } => q[iq] = bounded(rng, iq, pi),
            JointType::Prismatic { .. } => q[iq] = bounded(rng, iq, 1.0),
            JointType::FreeFlyer => {
                for k in 0..3 {
                    q[iq + k] = bounded(rng, iq + k, 1.0);
                }
                write_random_quaternion(rng, &mut q.as_mut_slice()[iq + 3..iq + 7]);
            }
            JointType::Spherical => write_random_quaternion(rng, &mut q.as_mut_slice()[iq..iq + 4]),
            JointType::Planar => {
                q[iq] = bounded(rng, iq, 1.0);
                q[iq + 1] = bounded(rng, iq + 1, 1.0);
                q[iq + 2] = bounded(rng, iq + 2, pi);
            }
        }
    }
    q
}

/// Shoemake's uniform random unit quaternion, [x, y, z, w].
fn write_random_quaternion(rng: &mut SplitMix64, out: &mut [f64]) {
    let (u1, u2, u3) = (rng.uniform(), rng.uniform(), rng.uniform());
    let tau = 2.0 * std::f64::consts::PI;
    let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
    out[0] = a * (tau * u2).sin();
    out[1] = a * (tau * u2).cos();
    out[2] = b * (tau * u3).sin();
    out[3] = b * (tau * u3).cos();
}

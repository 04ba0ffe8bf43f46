//! ABA in lanes (placeholder while RNEA's lanes are measured).

use super::lanes::LaneWorkspace;
use crate::model::Model;

pub(crate) fn covers(_m: &Model) -> bool {
    false
}

#[inline(always)]
pub(crate) fn aba_groups(_m: &Model, _w: &mut LaneWorkspace, _k: usize, _q: &[f64], _v: &[f64], _tau: &[f64], _ddq: &mut [f64]) {}

/// ABA of `k` states in lanes; `false` when the model has a joint the lane kernel does not
/// cover (then the caller loops the single-state kernel).
pub(crate) fn aba_chunk(m: &Model, w: &mut LaneWorkspace, k: usize, q: &[f64], v: &[f64], tau: &[f64], ddq: &mut [f64]) -> bool {
    if !covers(m) {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked on the line above.
        #[allow(unsafe_code)]
        unsafe {
            aba_avx2(m, w, k, q, v, tau, ddq)
        };
        return true;
    }
    aba_groups(m, w, k, q, v, tau, ddq);
    true
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn aba_avx2(m: &Model, w: &mut LaneWorkspace, k: usize, q: &[f64], v: &[f64], tau: &[f64], ddq: &mut [f64]) {
    aba_groups(m, w, k, q, v, tau, ddq);
}

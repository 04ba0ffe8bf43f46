//! Joint-space inertia matrix by the composite-rigid-body algorithm (RBDA Table 6.2), in
//! local frames.

use super::check_len;
use crate::data::{Data, Stage};
use crate::model::Model;
use crate::spatial::Force;
use nalgebra::{DMatrix, DVector};

/// M(q), the joint-space inertia matrix (full symmetric) in `data.mass_matrix`; also leaves the
/// composite inertias in `data.ycrb` and placements in `data`.
#[doc(alias = "crba")]
pub fn mass_matrix<'a>(model: &Model, data: &'a mut Data, q: &DVector<f64>) -> &'a DMatrix<f64> {
    check_len("q", q, model.nq);
    for i in 1..model.njoints {
        let (iq, nq) = (model.idx_q[i], model.nqs[i]);
        data.li_m_i[i] = model.joint_types[i].placement_after(&model.joint_placements[i], &q.as_slice()[iq..iq + nq]);
        let p = model.parents[i];
        data.o_m_i[i] = data.o_m_i[p].compose(&data.li_m_i[i]);
        data.ycrb[i] = model.origin_inertias[i];
    }
    data.stage = Stage::Positions;
    let nv_total = model.nv;
    let m = data.mass_matrix.as_mut_slice();
    let mut f_cols = [Force::zero(); 6];
    for i in (1..model.njoints).rev() {
        let (iv, nv) = (model.idx_v[i], model.nvs[i]);
        // F = I^c_i S_i, then walk up: M[j, i] = S_jᵀ F with F carried into each ancestor frame
        for k in 0..nv {
            f_cols[k] = data.ycrb[i].mul_motion(&model.motion_subspace[iv + k]);
        }
        let mut j = i;
        loop {
            let (jv, jn) = (model.idx_v[j], model.nvs[j]);
            for (k, f) in f_cols.iter().enumerate().take(nv) {
                for r in jv..jv + jn {
                    let x = model.dof_dot(r, f);
                    m[(iv + k) * nv_total + r] = x;
                    m[r * nv_total + iv + k] = x;
                }
            }
            let p = model.parents[j];
            if p == 0 {
                break;
            }
            let x = &data.li_m_i[j];
            for f in f_cols.iter_mut().take(nv) {
                *f = x.act_force(f);
            }
            j = p;
        }
        let p = model.parents[i];
        if p > 0 {
            let child = data.ycrb[i].transformed(&data.li_m_i[i]);
            data.ycrb[p].add(&child);
        }
    }
    &data.mass_matrix
}

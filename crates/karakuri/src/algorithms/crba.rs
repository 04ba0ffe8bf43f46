//! Joint-space inertia matrix by the composite-rigid-body algorithm (RBDA Table 6.2), in
//! local frames.

use super::check_len;
use crate::data::{Data, Stage};
use crate::model::Model;
use crate::spatial::Force;
use nalgebra::{DMatrix, DVector};

/// M(q), the joint-space inertia matrix (full symmetric) in `data.mass_matrix`.
#[doc(alias = "crba")]
pub fn mass_matrix<'a>(model: &Model, data: &'a mut Data, q: &DVector<f64>) -> &'a DMatrix<f64> {
    check_len("q", q, model.nq);
    for i in 1..model.njoints {
        let (iq, nq) = (model.idx_q[i], model.nqs[i]);
        let x_j = model.joint_types[i].transform(&q.as_slice()[iq..iq + nq]);
        data.li_m_i[i] = model.joint_placements[i].compose(&x_j);
        let p = model.parents[i];
        data.o_m_i[i] = data.o_m_i[p].compose(&data.li_m_i[i]);
        data.ycrb[i] = model.inertias[i];
    }
    data.stage = Stage::Positions;
    let mut f_cols = [Force::zero(); 6];
    for i in (1..model.njoints).rev() {
        let (iv, nv) = (model.idx_v[i], model.nvs[i]);
        // F = I^c_i S_i, then walk up: M[λ.., i] = S_jᵀ F with F carried to each ancestor frame
        for k in 0..nv {
            f_cols[k] = data.ycrb[i].mul_motion(&model.motion_subspace[iv + k]);
        }
        let mut j = i;
        loop {
            let (jv, jn) = (model.idx_v[j], model.nvs[j]);
            for k in 0..nv {
                for r in 0..jn {
                    let m = model.motion_subspace[jv + r].dot(&f_cols[k]);
                    data.mass_matrix[(jv + r, iv + k)] = m;
                    data.mass_matrix[(iv + k, jv + r)] = m;
                }
            }
            let p = model.parents[j];
            if p == 0 {
                break;
            }
            for f in f_cols.iter_mut().take(nv) {
                *f = data.li_m_i[j].act_force(f);
            }
            j = p;
        }
        let p = model.parents[i];
        if p > 0 {
            let child = data.ycrb[i].transformed(&data.li_m_i[i]);
            data.ycrb[p] = data.ycrb[p].combined(&child);
        }
    }
    &data.mass_matrix
}

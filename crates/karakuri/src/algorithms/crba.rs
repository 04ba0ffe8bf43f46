//! Joint-space inertia matrix by the composite-rigid-body algorithm (RBDA Table 6.2), with
//! composite inertias and motion subspaces in world coordinates: each entry
//! `M[j, i] = S_jᵀ I^c_i S_i` is then one 6-vector dot product, with no force carried up the
//! tree frame by frame.

use super::check_len;
use crate::data::{Data, Stage};
use crate::model::Model;
use crate::spatial::{Motion, Vec3};
use nalgebra::{DMatrix, DVector};

const NONE: usize = usize::MAX;

/// M(q), the joint-space inertia matrix (full symmetric) in `data.mass_matrix`; also leaves
/// placements, the world composite inertias (`data.ycrb`) and world motion subspaces in `data`.
#[doc(alias = "crba")]
pub fn mass_matrix<'a>(model: &Model, data: &'a mut Data, q: &DVector<f64>) -> &'a DMatrix<f64> {
    check_len("q", q, model.nq);
    // forward: placements, I_i and S_i in world coordinates
    for i in 1..model.njoints {
        let (iq, nq) = (model.idx_q[i], model.nqs[i]);
        data.li_m_i[i] = model.joint_types[i].placement_after(&model.joint_placements[i], &q.as_slice()[iq..iq + nq]);
        let p = model.parents[i];
        data.o_m_i[i] = data.o_m_i[p].compose(&data.li_m_i[i]);
        let o_m_i = data.o_m_i[i];
        data.ycrb[i] = model.origin_inertias[i].transformed(&o_m_i);
        for k in model.idx_v[i]..model.idx_v[i] + model.nvs[i] {
            data.s_world[k] = match model.dof_axis[k] {
                // S = e_c: a column of R (and p × it for a rotation), no matrix product
                Some(c) if c < 3 => Motion::new(o_m_i.rotation.column(c).into(), Vec3::zeros()),
                Some(c) => {
                    let w: Vec3 = o_m_i.rotation.column(c - 3).into();
                    Motion::new(o_m_i.translation.cross(&w), w)
                }
                None => o_m_i.act_motion(&model.motion_subspace[k]),
            };
        }
    }
    data.stage = Stage::Positions;
    let n = model.nv;
    let m = data.mass_matrix.as_mut_slice();
    // backward: I^c_λ(i) += I^c_i; F = I^c_i S_k; M[r, k] = S_rᵀ F for r on k's ancestor chain
    for i in (1..model.njoints).rev() {
        for k in model.idx_v[i]..model.idx_v[i] + model.nvs[i] {
            let f = data.ycrb[i].mul_motion(&data.s_world[k]);
            let mut r = k;
            while r != NONE {
                let x = data.s_world[r].dot(&f);
                m[k * n + r] = x;
                m[r * n + k] = x;
                r = model.dof_parent[r];
            }
        }
        let p = model.parents[i];
        if p > 0 {
            let child = data.ycrb[i];
            data.ycrb[p].add(&child);
        }
    }
    &data.mass_matrix
}

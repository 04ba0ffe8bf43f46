//! The branch-induced `H = Lᵀ D L` of `algorithms::ltdl` (RBDA §6.5, Table 6.3) with L stored
//! compactly: row k of L holds only its entries at the ancestor dofs of k, root first, in one
//! contiguous run. The ancestors of the i-th ancestor of k are the first i of them, so every
//! elimination step of the factorisation is a contiguous `axpy` of a prefix of row k into row
//! i, with no chain walk and no index arithmetic into an `nv x nv` matrix.
#![allow(clippy::needless_range_loop)] // index loops read like the algebra

use crate::model::Model;
use nalgebra::DMatrix;

const NONE: usize = usize::MAX;

/// Compact LᵀDL factors of a mass matrix with the pattern of one model's tree.
#[derive(Clone, Debug, Default)]
pub(crate) struct TreeLtdl {
    /// Row k of L is `l[off[k]..off[k + 1]]`, at the dofs `anc[off[k]..off[k + 1]]`.
    off: Vec<usize>,
    anc: Vec<usize>,
    l: Vec<f64>,
    /// D (nv).
    pub d: Vec<f64>,
}

impl TreeLtdl {
    /// The pattern of `model` (allocates; the factorisation and solves then do not).
    pub fn new(model: &Model) -> Self {
        let n = model.nv;
        let (mut off, mut anc) = (vec![0], vec![]);
        let mut chain = vec![];
        for k in 0..n {
            chain.clear();
            let mut i = model.dof_parent[k];
            while i != NONE {
                chain.push(i);
                i = model.dof_parent[i];
            }
            anc.extend(chain.iter().rev());
            off.push(anc.len());
        }
        let l = vec![0.0; anc.len()];
        TreeLtdl { off, anc, l, d: vec![0.0; n] }
    }

    /// Factorises the full symmetric `h` (only the entries on ancestor pairs are read).
    pub fn factorize(&mut self, h: &DMatrix<f64>) {
        let n = self.d.len();
        let hs = h.as_slice();
        for k in 0..n {
            self.d[k] = hs[k * n + k];
            // H[a, k] for the ancestors a of k: column k of the symmetric H
            let col = &hs[k * n..(k + 1) * n];
            for (lv, &a) in self.l[self.off[k]..self.off[k + 1]].iter_mut().zip(&self.anc[self.off[k]..self.off[k + 1]]) {
                *lv = col[a];
            }
        }
        // RBDA Table 6.3: for k = n..1, eliminate row k into its ancestors, nearest first
        for k in (0..n).rev() {
            let (o, dk) = (self.off[k], self.off[k + 1] - self.off[k]);
            let hkk = self.d[k];
            let (lo, hi) = self.l.split_at_mut(o);
            let row_k = &mut hi[..dk];
            for m in (0..dk).rev() {
                let i = self.anc[o + m];
                let a = row_k[m] / hkk;
                self.d[i] -= a * row_k[m];
                // the ancestors of i are the first m ancestors of k: row i has length m
                let oi = self.off[i];
                let row_i = &mut lo[oi..oi + m];
                for (x, y) in row_i.iter_mut().zip(&row_k[..m]) {
                    *x -= a * y;
                }
                row_k[m] = a;
            }
        }
    }

    /// Row k of L: its ancestor dofs and entries.
    #[inline]
    fn row(&self, k: usize) -> (&[usize], &[f64]) {
        let r = self.off[k]..self.off[k + 1];
        (&self.anc[r.clone()], &self.l[r])
    }

    /// x ← L⁻ᵀ x.
    pub fn solve_lt(&self, x: &mut [f64]) {
        for k in (0..self.d.len()).rev() {
            let xk = x[k];
            if xk != 0.0 {
                let (anc, l) = self.row(k);
                for (&a, &lv) in anc.iter().zip(l) {
                    x[a] -= lv * xk;
                }
            }
        }
    }

    /// x ← L⁻ᵀ x for an x that is zero outside `support` (ascending, closed under
    /// ancestors): only the support is touched, and it stays the support of the result.
    pub fn solve_lt_on(&self, x: &mut [f64], support: &[usize]) {
        for &k in support.iter().rev() {
            let xk = x[k];
            if xk != 0.0 {
                let (anc, l) = self.row(k);
                for (&a, &lv) in anc.iter().zip(l) {
                    x[a] -= lv * xk;
                }
            }
        }
    }

    /// x ← L⁻¹ x.
    pub fn solve_l(&self, x: &mut [f64]) {
        for k in 0..self.d.len() {
            let (anc, l) = self.row(k);
            let mut s = x[k];
            for (&a, &lv) in anc.iter().zip(l) {
                s -= lv * x[a];
            }
            x[k] = s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::{ltdl, mass_matrix, random_configuration, SplitMix64};
    use crate::data::Data;
    use crate::model::{Axis, JointId, JointType, ModelBuilder};
    use crate::spatial::{Inertia, Mat3, Se3, Vec3};

    #[test]
    fn matches_the_dense_pattern_factorisation_and_solves() {
        // a free-flyer with two branches, one with a spherical joint
        let mut b = ModelBuilder::new("tree");
        let inertia = Inertia::new(1.2, Vec3::new(0.1, -0.05, 0.2), Mat3::identity() * 0.03);
        let root = b.add_joint(JointId::UNIVERSE, "root", JointType::FreeFlyer, Se3::identity()).unwrap();
        b.add_body(root, "base", inertia).unwrap();
        let mut parent = root;
        for (i, axis) in [Axis::X, Axis::Y, Axis::Z].into_iter().enumerate() {
            let j = b.add_joint(parent, &format!("a{i}"), JointType::Revolute { axis }, Se3::identity()).unwrap();
            b.add_body(j, &format!("la{i}"), inertia).unwrap();
            parent = j;
        }
        let s = b.add_joint(root, "s", JointType::Spherical, Se3::identity()).unwrap();
        b.add_body(s, "ls", inertia).unwrap();
        let j = b.add_joint(s, "b0", JointType::Revolute { axis: Axis::Y }, Se3::identity()).unwrap();
        b.add_body(j, "lb0", inertia).unwrap();
        let model = b.build().unwrap();
        let mut data = Data::new(&model);
        let mut rng = SplitMix64::new(7);
        let q = random_configuration(&model, &mut rng);
        mass_matrix(&model, &mut data, &q);
        ltdl::factorize(&model, &mut data);
        let mut f = TreeLtdl::new(&model);
        f.factorize(&data.mass_matrix);
        let n = model.nv;
        for k in 0..n {
            assert!((f.d[k] - data.ltdl_d[k]).abs() < 1e-12);
        }
        let x: Vec<f64> = (0..n).map(|_| rng.range(-1.0, 1.0)).collect();
        let (mut a, mut b2) = (x.clone(), x.clone());
        f.solve_lt(&mut a);
        ltdl::solve_lt_in_place(&model, &data, &mut b2);
        assert!(a.iter().zip(&b2).all(|(p, q)| (p - q).abs() < 1e-12));
        let (mut a, mut b2) = (x.clone(), x.clone());
        f.solve_l(&mut a);
        ltdl::solve_l_in_place(&model, &data, &mut b2);
        assert!(a.iter().zip(&b2).all(|(p, q)| (p - q).abs() < 1e-12));
    }
}

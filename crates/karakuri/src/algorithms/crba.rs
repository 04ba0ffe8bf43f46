//! Joint-space inertia matrix by the composite-rigid-body algorithm (RBDA Table 6.2).
//!
//! Composite inertias `I^c_i` (`Data::ycrb`) accumulate in joint frames as in Pinocchio
//! (`I^c_λ(i) += λX_i* I^c_i`, cheap when `λX_i` is an elementary rotation about x, y or z
//! followed by a translation, the usual URDF revolute joint), so no body inertia is rotated
//! into the world. `F_k = I^c_i S_k` is a column of the 6x6 inertia for an axis-aligned S and
//! is moved to world coordinates once (`Data::f_world`); with the motion subspace `S_r` also in
//! world coordinates (formed when joint r's rows are written), an entry `M[r, k] = S_rᵀ F_k` is one 6-vector dot
//! product and no force is carried up the tree frame by frame.
//!
//! The backward sweep fills M row by row: when joint i is reached, `F_k` is known for every dof
//! k of its subtree (one contiguous range when joints are numbered depth-first,
//! `Model::subtree_v_ranges`), so row r of joint i is `S_rᵀ F_k` over that range, written to
//! both triangles. The working frame is the world, except below a free-flyer root, where it is
//! the root's body: its six rows are then `F_k` as they stand (no transform per column), and
//! its children's placements skip one product. The placements are computed without a 3x3
//! product where the joint placement has no rotation.

use super::{add_inertia_to_parent, check_len, dof_dot, dof_in_frame, inertia_times_dof, is_floating_root, is_free_flyer, is_lone_root, place_joints};
use crate::data::{Data, Fresh};
use crate::model::{JointType, Model};
use crate::spatial::{Force, Motion, Se3};
use nalgebra::{DMatrix, DVector};

mod inverse;
pub use inverse::{factorize_mass_matrix, mass_matrix_inverse};
pub(crate) use inverse::{articulated_factors_apply, factor_by_articulated_inertias, invert_mass_matrix};

/// M(q), the joint-space inertia matrix (full symmetric) in `data.mass_matrix`; also leaves
/// the joint placements `li_m_i` and the composite inertias in joint frames (`data.ycrb`) in
/// `data`. As Pinocchio's CRBA it does not leave world placements: `o_m_i` and
/// `F_k = I^c S_k` (`f_world`) are in the working frame (the world,
/// or a free-flyer root's body for its subtree), so only the mass matrix is fresh after it;
/// call [`forward_kinematics`](super::forward_kinematics) for world placements, or
/// [`compute_all_terms`](super::compute_all_terms) for both in one call. Only entries on ancestor
/// pairs (the branch-induced pattern) are written; the others keep the zeros of `Data::new`.
#[doc(alias = "crba")]
pub fn mass_matrix<'a>(model: &Model, data: &'a mut Data, q: &DVector<f64>) -> &'a DMatrix<f64> {
    check_len("q", q, model.nq);
    let nv = model.nv;
    let qs = q.as_slice();
    // forward: placements and I_i in the working frame: the world, or the body of a
    // free-flyer root for its subtree (so the free flyer's rows need no transform); S_i in
    // that frame is formed where its rows are written (backward), from a placement stored
    // long before (read right after its store, it stalled on the store's forwarding)
    // the composite inertias start as the bodies' (one copy of the whole array, not one per
    // joint in the placement loop)
    let nj = model.njoints;
    data.ycrb[..nj].copy_from_slice(&model.origin_inertias[..nj]);
    place_joints(model, data, qs, |data, i| {
        if is_floating_root(model, i) {
            data.o_m_i[i] = Se3::identity();
        }
    });
    // o_m_i are world placements only where no free-flyer root is above: placements are not
    // fresh (the frames differ), the mass matrix is
    data.fresh = Fresh::MASS_MATRIX;
    // the per-joint arrays sliced to njoints once: the joint loop below indexes them without
    // a check (i < nj)
    let (parents, idx_v, nvs) = (&model.parents[..nj], &model.idx_v[..nj], &model.nvs[..nj]);
    let (types, end_v, starts) = (&model.joint_types[..nj], &model.subtree_end_v[..nj], &model.subtree_v_ranges_start[..=nj]);
    let (li_m_i, o_m_i_all, ycrb) = (&data.li_m_i[..nj], &data.o_m_i[..nj], &mut data.ycrb[..nj]);
    let m = data.mass_matrix.as_mut_slice();
    let fk = &mut data.f_world[..];
    // backward: F_k = I^c_i S_k; the rows of joint i over its subtree; I^c_λ(i) += I^c_i
    for i in (1..nj).rev() {
        let (ycrb_lo, ycrb_hi) = ycrb.split_at_mut(i);
        let y = &ycrb_hi[0];
        let p = parents[i];
        if p > 0 {
            // I^c_λ(i) += λX_i* I^c_i (λX_i an elementary rotation and a translation: cheap),
            // first: the parent's step waits on it, the rows of joint i do not
            add_inertia_to_parent(model, i, &li_m_i[i], y, &mut ycrb_lo[p]);
        }
        let v0 = idx_v[i];
        let v1 = v0 + nvs[i];
        // a free-flyer root: its frame is the working frame of its subtree
        let ff = types[i] == JointType::FreeFlyer;
        if p == 0 && end_v[i] - v0 == nvs[i] && !ff {
            // a lone root that is not a free flyer ([`reads_own_frame`])
            lone_root_block(model, i, y, m);
            continue;
        }
        let sub = &model.subtree_v_ranges[starts[i]..starts[i + 1]];
        let o_m_i = &o_m_i_all[i];
        let root_ff = ff && p == 0;
        if v1 == v0 + 1 && !ff {
            // one dof: its diagonal entry from F as computed, not reloaded from its store
            // (a load right after the store, in other halves, stalls on forwarding)
            let fw = o_m_i.act_force(&inertia_times_dof(model, v0, y));
            fk[v0] = fw;
            let s: Motion = dof_in_frame(model, v0, o_m_i);
            m[v0 * nv + v0] = s.dot(&fw);
            descendant_rows(m, nv, v0, sub, &s, fk);
            continue;
        }
        for k in v0..v1 {
            // F = I^c S in the joint frame (a column of the 6x6 inertia for S = e_c), then the
            // working frame
            let f = inertia_times_dof(model, k, y);
            fk[k] = if root_ff { f } else { o_m_i.act_force(&f) };
        }
        if ff {
            free_flyer_rows(m, nv, v0, sub, fk, o_m_i, root_ff);
        } else {
            dof_rows(model, m, v0..v1, sub, o_m_i, fk);
        }
    }
    add_armature(model, m, nv);
    &data.mass_matrix
}

/// Armature on M's diagonal (the lone roots' were added by [`lone_root_block`]); skipped where
/// zero, so a model without armature gives the same bits as before. Writes `m` (nv x nv).
#[inline]
fn add_armature(model: &Model, m: &mut [f64], nv: usize) {
    for (k, &a) in model.armature[..nv].iter().enumerate() {
        if a != 0.0 && !reads_own_frame(model, model.dof_joint[k]) {
            m[k * nv + k] += a;
        }
    }
}

/// The rows and columns of a free-flyer joint (dofs `v0..v0 + 6`, S = identity in its frame)
/// over its subtree's dof ranges `sub`: `M[v0 + c, k] = (o_X_i⁻¹ F_k)_c` from the world
/// `F_k` (`fk`), and below the diagonal the same values (a root's, in its own frame, as
/// contiguous columns). Writes `m` (nv x nv, column-major).
#[inline]
fn free_flyer_rows(m: &mut [f64], nv: usize, v0: usize, sub: &[(usize, usize)], fk: &[Force], o_m_i: &Se3, root_ff: bool) {
    // S = identity in the joint frame: M[v0 + c, k] = (o_X_i⁻¹ F_k)_c
    for &(a, b) in sub {
        for k in a..b {
            let fl = if root_ff { fk[k] } else { o_m_i.inv_act_force(&fk[k]) };
            // entry by entry: a six-array copied in would be stored and reloaded in halves
            let col = &mut m[k * nv + v0..k * nv + v0 + 6];
            (col[0], col[1], col[2]) = (fl.linear.x, fl.linear.y, fl.linear.z);
            (col[3], col[4], col[5]) = (fl.angular.x, fl.angular.y, fl.angular.z);
            let fl = [fl.linear.x, fl.linear.y, fl.linear.z, fl.angular.x, fl.angular.y, fl.angular.z];
            if !root_ff {
                // row k of the columns v0.. (below the diagonal); a root's are mirrored
                // below from F_k, with contiguous stores
                let n = (k - v0).min(6);
                for (c, x) in fl[..n].iter().enumerate() {
                    m[(v0 + c) * nv + k] = *x;
                }
            }
        }
    }
    if root_ff {
        // below the diagonal, column v0 + c: M[k, v0 + c] = (F_k)_c, contiguous in k (one
        // loop per component, read at a fixed place)
        #[inline(always)]
        fn mirror(m: &mut [f64], nv: usize, v0: usize, sub: &[(usize, usize)], fk: &[Force], c: usize, get: impl Fn(&Force) -> f64) {
            let col = &mut m[(v0 + c) * nv..(v0 + c + 1) * nv];
            for &(a, b) in sub {
                let a = a.max(v0 + c + 1);
                if a < b {
                    for (x, f) in col[a..b].iter_mut().zip(&fk[a..b]) {
                        *x = get(f);
                    }
                }
            }
        }
        mirror(m, nv, v0, sub, fk, 0, |f| f.linear.x);
        mirror(m, nv, v0, sub, fk, 1, |f| f.linear.y);
        mirror(m, nv, v0, sub, fk, 2, |f| f.linear.z);
        mirror(m, nv, v0, sub, fk, 3, |f| f.angular.x);
        mirror(m, nv, v0, sub, fk, 4, |f| f.angular.y);
        mirror(m, nv, v0, sub, fk, 5, |f| f.angular.z);
    }
}

/// The rows and columns of a joint's dofs `dofs` over its subtree's dof ranges `sub`:
/// `M[k, r] = M[r, k] = S_r · F_k` for k ≥ r, from the motion columns `S_r` in the working
/// frame (`o_m_i S_r`, formed here) and `F_k` (`fk`). Writes `m` (nv x nv, column-major).
#[inline]
fn dof_rows(model: &Model, m: &mut [f64], dofs: std::ops::Range<usize>, sub: &[(usize, usize)], o_m_i: &Se3, fk: &[Force]) {
    let nv = model.nv;
    for r in dofs {
        let s: Motion = dof_in_frame(model, r, o_m_i);
        m[r * nv + r] = s.dot(&fk[r]);
        descendant_rows(m, nv, r, sub, &s, fk);
    }
}

/// Row and column `r` (motion column `s` in the working frame) below the diagonal:
/// `M[k, r] = M[r, k] = s · F_k` for the dofs k > r of the subtree's ranges `sub`. Writes `m`
/// (nv x nv, column-major).
#[inline(always)]
fn descendant_rows(m: &mut [f64], nv: usize, r: usize, sub: &[(usize, usize)], s: &Motion, fk: &[Force]) {
    // column r, rows k > r of the subtree (the lower triangle), and row r
    let (lo, hi) = m.split_at_mut((r + 1) * nv);
    let col = &mut lo[r * nv..];
    for &(a, b) in sub {
        let a = a.max(r + 1);
        if a >= b {
            continue;
        }
        let mut t = (a - r - 1) * nv + r;
        for (x, f) in col[a..b].iter_mut().zip(&fk[a..b]) {
            let v = s.dot(f);
            *x = v;
            hi[t] = v;
            t += nv;
        }
    }
}

/// Whether joint `i`'s block of M is read in its own frame ([`lone_root_block`]): a lone root
/// that is not a free flyer (a free body's root is the working frame of the general path).
#[inline(always)]
fn reads_own_frame(model: &Model, i: usize) -> bool {
    is_lone_root(model, i) && !is_free_flyer(model, i)
}

/// The block of a lone root (a joint on the universe with no joint below it, not a free
/// flyer: a pendulum's hinge, a slider) in `m` (`nv x nv`, column-major): `M = Sᵀ I S` in the
/// joint's own frame, where its motion subspace `S` and its body's inertia `I` are constant (in
/// the world, `(X S)ᵀ X* I S = Sᵀ I S`: the block does not depend on q). No world columns, no
/// transform. `y` is the body's inertia in the joint frame.
#[inline(always)]
pub(crate) fn lone_root_block(model: &Model, i: usize, y: &crate::spatial::OriginInertia, m: &mut [f64]) {
    let nv = model.nv;
    let v0 = model.idx_v[i];
    for k in v0..v0 + model.nvs[i] {
        let f = inertia_times_dof(model, k, y);
        for r in v0..v0 + model.nvs[i] {
            m[k * nv + r] = dof_dot(model, r, &f);
        }
        let a = model.armature[k];
        if a != 0.0 {
            m[k * nv + k] += a;
        }
    }
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::{inverse_dynamics, mass_matrix_inverse, random_configuration, SplitMix64};
    use crate::model::{Axis, JointId, JointType, ModelBuilder};
    use crate::spatial::{exp3, rotation_about, Inertia, Mat3, Se3, Vec3};
    use std::f64::consts::FRAC_PI_2;

    /// A depth-first numbered tree (as URDF models are: one subtree range per joint), with a
    /// free-flyer root, aligned and unaligned revolutes, identity, quarter-turn and rotated
    /// placements.
    fn dfs_tree(seed: u64) -> Model {
        dfs_builder(seed).build().unwrap()
    }

    fn dfs_builder(seed: u64) -> ModelBuilder {
        let mut rng = SplitMix64::new(seed);
        let mut b = ModelBuilder::new("dfs");
        let root = b.add_joint(JointId::UNIVERSE, "root", JointType::FreeFlyer, Se3::identity()).unwrap();
        b.add_body(root, "base", Inertia::new(3.0, Vec3::new(0.01, 0.02, -0.03), Mat3::from_diagonal(&Vec3::new(0.1, 0.2, 0.25)))).unwrap();
        let mut count = 0;
        fn grow(b: &mut ModelBuilder, rng: &mut SplitMix64, parent: JointId, depth: usize, count: &mut usize) {
            let children = if depth == 0 { 3 } else if depth < 4 { 1 + (rng.next_u64() % 2) as usize } else { 0 };
            for _ in 0..children {
                let kind = match rng.next_u64() % 5 {
                    0 => JointType::Revolute { axis: Axis::X },
                    1 => JointType::Revolute { axis: Axis::Y },
                    2 => JointType::RevoluteUnbounded { axis: Axis::Z },
                    3 => JointType::Revolute { axis: Axis::Unaligned(Vec3::new(0.6, 0.0, -0.8)) },
                    _ => JointType::Prismatic { axis: Axis::Y },
                };
                let rotation = match rng.next_u64() % 3 {
                    0 => Mat3::identity(),
                    // a quarter turn with cos(π/2) residues, as URDF rpy = (π/2, 0, -π/2)
                    1 => rotation_about(&Vec3::z(), -FRAC_PI_2) * rotation_about(&Vec3::x(), FRAC_PI_2),
                    _ => exp3(&Vec3::new(0.3, -0.5, 0.9)),
                };
                let placement = Se3::new(rotation, Vec3::new(rng.range(-0.3, 0.3), rng.range(-0.3, 0.3), rng.range(-0.3, 0.3)));
                *count += 1;
                let j = b.add_joint(parent, &format!("j{count}"), kind, placement).unwrap();
                let inertia = Inertia::new(rng.range(0.5, 2.0), Vec3::new(0.05, -0.02, 0.1), Mat3::from_diagonal(&Vec3::new(0.02, 0.03, 0.04)));
                b.add_body(j, &format!("b{count}"), inertia).unwrap();
                grow(b, rng, j, depth + 1, count);
            }
        }
        grow(&mut b, &mut rng, root, 0, &mut count);
        b
    }

    /// M at `q` is symmetric and its columns are RNEA's (`τ(q, 0, e_j) − τ(q, 0, 0)`) within
    /// `tol`; returns M.
    fn assert_columns_are_rnea(model: &Model, data: &mut Data, q: &DVector<f64>, tol: f64, what: &str) -> DMatrix<f64> {
        let m = mass_matrix(model, data, q).clone();
        let zero = DVector::zeros(model.nv);
        let bias = inverse_dynamics(model, data, q, &zero, &zero).clone();
        for j in 0..model.nv {
            let mut e = DVector::zeros(model.nv);
            e[j] = 1.0;
            let col = inverse_dynamics(model, data, q, &zero, &e) - &bias;
            assert!((col - m.column(j)).amax() < tol, "{what}, column {j}");
        }
        assert_eq!(m, m.transpose(), "{what}");
        m
    }

    /// Lone roots of every kind (a tree of one joint on the universe: the block read in its
    /// own frame) beside a chain, at random configurations: M's columns are RNEA's.
    #[test]
    fn lone_roots_match_rnea_columns() {
        let mut b = ModelBuilder::new("lone");
        let kinds = [
            JointType::Revolute { axis: Axis::Y },
            JointType::Revolute { axis: Axis::Unaligned(Vec3::new(0.6, 0.0, -0.8)) },
            JointType::Prismatic { axis: Axis::Z },
            JointType::Spherical,
            JointType::Planar,
            JointType::FreeFlyer,
        ];
        let inertia = Inertia::new(1.3, Vec3::new(0.05, -0.1, -0.7), Mat3::from_diagonal(&Vec3::new(0.02, 0.03, 0.04)));
        for (n, kind) in kinds.into_iter().enumerate() {
            let placement = Se3::new(exp3(&Vec3::new(0.3, -0.5, 0.9 * n as f64)), Vec3::new(0.1 * n as f64, -0.2, 0.3));
            let j = b.add_joint(JointId::UNIVERSE, &format!("j{n}"), kind, placement).unwrap();
            b.add_body(j, &format!("b{n}"), inertia).unwrap();
        }
        // and a chain of two, whose root is not lone
        let j = b.add_joint(JointId::UNIVERSE, "c0", JointType::Revolute { axis: Axis::X }, Se3::identity()).unwrap();
        b.add_body(j, "c0", inertia).unwrap();
        let j = b.add_joint(j, "c1", JointType::Revolute { axis: Axis::Z }, Se3::identity()).unwrap();
        b.add_body(j, "c1", inertia).unwrap();
        let model = b.build().unwrap();
        let mut data = Data::new(&model);
        let mut rng = SplitMix64::new(3);
        for _ in 0..4 {
            let q = random_configuration(&model, &mut rng);
            assert_columns_are_rnea(&model, &mut data, &q, 1e-12, "lone roots");
        }
    }

    /// M⁻¹ by the articulated-body factors (one-dof joints under a free-flyer root, with
    /// armature) and by CRBA's factors (a spherical joint added: not handled by the first) is
    /// the inverse of CRBA's M, and its factors solve with M.
    #[test]
    fn inverse_by_articulated_factors_inverts_crba() {
        for seed in 0..3 {
            for spherical in [false, true] {
                let mut b = dfs_builder(seed);
                if spherical {
                    let j = b.add_joint(JointId(2), "ball", JointType::Spherical, Se3::new(exp3(&Vec3::new(0.1, 0.2, 0.3)), Vec3::new(0.1, 0.0, 0.2))).unwrap();
                    b.add_body(j, "ball", Inertia::new(0.7, Vec3::new(0.0, 0.1, 0.0), Mat3::from_diagonal(&Vec3::new(0.01, 0.02, 0.03)))).unwrap();
                }
                let mut model = b.build().unwrap();
                for (k, a) in model.armature.iter_mut().enumerate() {
                    *a = 0.01 * (k % 3) as f64;
                }
                let mut data = Data::new(&model);
                let mut rng = SplitMix64::new(seed + 20);
                let q = random_configuration(&model, &mut rng);
                let m = mass_matrix(&model, &mut data, &q).clone();
                let minv = mass_matrix_inverse(&model, &mut data, &q).clone();
                assert_eq!(minv, minv.transpose());
                let err = (&minv * &m - DMatrix::identity(model.nv, model.nv)).amax();
                assert!(err < 1e-10, "seed {seed}, spherical {spherical}: M⁻¹ M − I = {err:e}");
                let b = DVector::from_fn(model.nv, |k, _| (k as f64).sin());
                let mut x = b.as_slice().to_vec();
                data.mass_matrix_factorization().unwrap().solve(&mut x);
                let err = (&m * DVector::from_vec(x) - &b).amax();
                assert!(err < 1e-10, "seed {seed}, spherical {spherical}: M x − b = {err:e}");
            }
        }
    }

    #[test]
    fn depth_first_trees_match_rnea_columns_and_invert() {
        for seed in 0..4 {
            let model = dfs_tree(seed);
            assert!(model.subtree_v_ranges_start.windows(2).all(|w| w[1] - w[0] <= 1), "depth-first numbering");
            assert!(model.placement_quarter_turn.iter().any(|q| q.is_some_and(|q| q > 0)), "has quarter turns");
            let mut data = Data::new(&model);
            let mut rng = SplitMix64::new(seed + 10);
            let q = random_configuration(&model, &mut rng);
            let m = assert_columns_are_rnea(&model, &mut data, &q, 1e-10, &format!("seed {seed}"));
            let minv = mass_matrix_inverse(&model, &mut data, &q).clone();
            assert_eq!(minv, minv.transpose());
            let err = (&minv * &m - DMatrix::identity(model.nv, model.nv)).amax();
            assert!(err < 1e-9, "seed {seed}: M⁻¹ M − I = {err:e}");
        }
    }
}

//! M(q)⁻¹ through the branch-induced factorisation M = Lᵀ D L (see
//! `docs/decisions/0007-one-linear-algebra-layer.md`: not Pinocchio's ABA-based `computeMinverse`).
//! The factors come from the articulated-body inertias where a free-flyer root carries joints of
//! one dof (record 0086: the reverse elimination of M is ABA's backward pass), otherwise from
//! the CRBA matrix.

use crate::algorithms::{add_articulated_to_parent, dof_in_frame, is_floating_root, is_free_flyer, place_joints};
use crate::data::{Data, Fresh, Stale};
use crate::linalg::ltdl::{packed_prefix, PACKED};
use crate::linalg::Factorization;
use crate::model::Model;
use crate::spatial::{ArticulatedInertia, Force, Se3};
use nalgebra::{DMatrix, DVector};

use super::mass_matrix;

/// The branch-induced factorisation M = Lᵀ D L of the mass matrix in `data`
/// ([`Data::mass_matrix_factorization`]; solves with M go through it). Needs the mass matrix
/// ([`mass_matrix`] or [`compute_all_terms`](crate::algorithms::compute_all_terms) first);
/// adds the factorisation to what is fresh.
pub fn factorize_mass_matrix(data: &mut Data) -> Result<&Factorization, Stale> {
    data.require(Fresh::MASS_MATRIX, "factorize_mass_matrix")?;
    data.ltdl.factorize(&data.mass_matrix);
    data.fresh = data.fresh | Fresh::MASS_MATRIX_FACTORIZATION;
    Ok(&data.ltdl)
}

/// M(q)⁻¹ in `data.mass_matrix_inverse` (full symmetric); fresh after: M, its factorisation,
/// M⁻¹, through the branch-induced
/// factorisation M = Lᵀ D L (left in `data.ltdl`): M⁻¹ = L⁻¹ D⁻¹ L⁻ᵀ = V D⁻¹ Vᵀ with V = L⁻¹,
/// which keeps L's pattern; V in `data.ltdl_inv` (and on the chains in `data.ltdl_inv_chain`,
/// but for a serial chain of at most six dofs: `small_chain_inverse`).
///
/// The rows of V (W = L⁻ᵀ column by column: `W[:, j] = e_j − Σ_i L[j, i] W[:, i]` over the
/// ancestors i of j) are dense loops over contiguous prefixes of the chains of
/// [`Factorization`], with no parent chase. Column b of M⁻¹ is then
/// `Σ_k V[b, k] / D_k · V[:, k]` over the chain of b, restricted to rows ≤ b (the upper
/// triangle, mirrored at the end), the columns of V taken four at a time.
///
/// Where a free flyer on the universe carries joints of one dof, the factors come from
/// ABA's backward pass (record 0086) and M itself is not computed: fresh
/// after are then the factorisation and M⁻¹ only (as Pinocchio's `computeMinverse`).
pub fn mass_matrix_inverse<'a>(model: &Model, data: &'a mut Data, q: &DVector<f64>) -> &'a DMatrix<f64> {
    super::check_len("q", q, model.nq);
    if articulated_factors_apply(model) {
        let mut fact = std::mem::take(&mut data.ltdl);
        factor_by_articulated_inertias(model, data, q.as_slice(), &mut fact);
        data.ltdl = fact;
        data.fresh = Fresh::MASS_MATRIX_FACTORIZATION | Fresh::MASS_MATRIX_INVERSE;
        invert_factors(model, data);
    } else {
        mass_matrix(model, data, q);
        data.fresh = Fresh::MASS_MATRIX;
        invert_mass_matrix(model, data);
    }
    &data.mass_matrix_inverse
}

/// A free flyer on the universe (whose body is then the working frame of its subtree, as in
/// CRBA), and every other joint of one dof: the models [`factor_by_articulated_inertias`]
/// handles, and where it pays. The free flyer's six dofs are ancestors of every dof, so the
/// factorisation of M spends most of its work on them (six more entries in every row's
/// elimination), which the articulated pass folds into one 6x6 at the root; on a fixed-base
/// arm (ur5, panda) the factorisation is cheap and the pass cost 5–10 % more than CRBA and it.
#[inline]
pub(crate) fn articulated_factors_apply(model: &Model) -> bool {
    (1..model.njoints).any(|i| is_floating_root(model, i)) && (1..model.njoints).all(|i| model.nvs[i] == 1 || is_floating_root(model, i))
}

/// M = Lᵀ D L into `data.ltdl` without M: eliminating M's dofs from the last (a dof after its
/// descendants) is ABA's backward pass (RBDA §6.5, §7.3). When dof k is eliminated, what is
/// left of M on k and its ancestors r is `S_rᵀ IA_k S_k` (the articulated inertia `IA_k` of
/// its joint, the descendants' already folded in), so with `U_k = IA_k S_k` moved to the
/// working frame, `D_k = S_kᵀ U_k` (plus armature) and `L[k, r] = S_rᵀ U_k / D_k`: CRBA's
/// loop over ancestors with `IA` in place of the composite inertia, and no separate
/// factorisation. `IA_k − U_k U_kᵀ / D_k` goes to the parent by
/// [`add_articulated_to_parent`] (record 0077's plane turns). A free-flyer root (S = 1 in its
/// frame, the working frame of its subtree) factorises its 6x6 `IA` densely. Into `fact`
/// (the pattern of `model`); only for the models of [`articulated_factors_apply`]. Leaves
/// placements in CRBA's working frames (nothing in `data` fresh). Compiled for AVX2 and
/// portable, the same bits (record 0115).
pub(crate) fn factor_by_articulated_inertias(model: &Model, data: &mut Data, q: &[f64], fact: &mut Factorization) {
    factor_articulated(model, data, q, fact);
}

crate::twice! {
    /// [`factor_by_articulated_inertias`]' body.
    fn factor_articulated(model: &Model, data: &mut Data, q: &[f64], fact: &mut Factorization) {
        debug_assert!(articulated_factors_apply(model) && fact.n() == model.nv);
        place_joints(model, data, q, |data, i| {
            if is_floating_root(model, i) {
                data.o_m_i[i] = Se3::identity();
            }
            data.ia[i] = ArticulatedInertia::from_origin(&model.origin_inertias[i]);
        });
        // S in the working frame, in a loop of its own: read right after its store, the
        // placement stalled on the store's forwarding
        for i in 1..model.njoints {
            if !is_floating_root(model, i) {
                let k = model.idx_v[i];
                data.s_world[k] = dof_in_frame(model, k, &data.o_m_i[i]);
            }
        }
        let (chain, cs, f) = (&fact.chain[..], &fact.start[..], &mut fact.f[..]);
        for i in (1..model.njoints).rev() {
            let (ia_lo, ia_hi) = data.ia.split_at_mut(i);
            let ia = &mut ia_hi[0];
            let k = model.idx_v[i];
            if is_free_flyer(model, i) {
                factor_root_block(model, k, ia, cs, f);
                continue;
            }
            let u = match model.dof_axis[k] {
                Some(e) => ia.column(e),
                None => {
                    let s = &model.motion_subspace[k];
                    ia.mul6(&[s.linear.x, s.linear.y, s.linear.z, s.angular.x, s.angular.y, s.angular.z])
                }
            };
            let d = match model.dof_axis[k] {
                Some(e) => u[e],
                None => model.motion_subspace[k].dot(&Force::from_slice(&u)),
            } + model.armature[k];
            let (s0, e0) = (cs[k], cs[k + 1] - 1);
            f[e0] = d;
            let p = model.parents[i];
            if p == 0 {
                continue;
            }
            let dinv = 1.0 / d;
            // L[k, r] = S_rᵀ U_k / D_k over the ancestors r, U_k in the working frame
            let uw = data.o_m_i[i].act_force(&Force::from_slice(&u));
            let uw6 = [uw.linear.x, uw.linear.y, uw.linear.z, uw.angular.x, uw.angular.y, uw.angular.z];
            // a free flyer's dofs, if any, are the chain's first six (it is a root, record 0124)
            let (lrow, anc) = (&mut f[s0..e0], &chain[s0..e0]);
            let nff = if anc.first().is_some_and(|&r| is_free_flyer(model, model.dof_joint[r])) { 6 } else { 0 };
            let (l_ff, l_rest) = lrow.split_at_mut(nff);
            for (x, y) in l_ff.iter_mut().zip(uw6) {
                *x = dinv * y;
            }
            for (x, &r) in l_rest.iter_mut().zip(&anc[nff..]) {
                *x = dinv * data.s_world[r].dot(&uw);
            }
            let w = u.map(|x| x * dinv);
            ia.sub_outer(&w, &u);
            add_articulated_to_parent(model, i, &data.li_m_i[i], ia, &mut ia_lo[p]);
        }
    }
}

/// The 6x6 `IA` (plus armature) of a free-flyer root at dofs `v0..v0 + 6` (S = 1) factorised
/// as `Lᵀ D L` from its last dof, into the compact rows `f` (chains `cs`: dof `v0 + a` has
/// the ancestors `v0..v0 + a`).
#[inline(always)]
fn factor_root_block(model: &Model, v0: usize, ia: &ArticulatedInertia, cs: &[usize], f: &mut [f64]) {
    let mut h: [[f64; 6]; 6] = std::array::from_fn(|e| ia.column(e));
    for a in 0..6 {
        h[a][a] += model.armature[v0 + a];
    }
    for a in (0..6).rev() {
        let d = h[a][a];
        let dinv = 1.0 / d;
        let row: [f64; 6] = h[a];
        for b in 0..a {
            let l = row[b] * dinv;
            for c in 0..=b {
                h[b][c] -= l * row[c];
            }
        }
        let s = cs[v0 + a];
        for b in 0..a {
            f[s + b] = row[b] * dinv;
        }
        f[s + a] = d;
    }
}

/// [`mass_matrix_inverse`] of the M already in `data.mass_matrix` (the analytical derivatives
/// compute M themselves): factorisation and M⁻¹ are added to what is fresh.
pub(crate) fn invert_mass_matrix(model: &Model, data: &mut Data) {
    data.ltdl.factorize(&data.mass_matrix);
    data.fresh = data.fresh | Fresh::MASS_MATRIX_FACTORIZATION | Fresh::MASS_MATRIX_INVERSE;
    invert_factors(model, data);
}

crate::twice! {
    /// M⁻¹ from the factors in `data.ltdl` (see [`mass_matrix_inverse`]); compiled for AVX2 and
    /// portable, the same bits (record 0115).
    fn invert_factors(model: &Model, data: &mut Data) {
        let n = model.nv;
        if n == 0 {
            return;
        }
        let (chain, cs, u) = (&data.ltdl.chain[..], &data.ltdl.start[..], &data.ltdl.f[..]);
        if n <= PACKED && cs[n] == n * (n + 1) / 2 {
            small_chain_inverse(n, u, data.ltdl_inv.as_mut_slice(), data.tmp_v.as_mut_slice(), data.mass_matrix_inverse.as_mut_slice());
            return;
        }
        let w = &mut data.ltdl_inv_chain[..];
        l_inverse_chain_rows(n, chain, cs, u, w);
        // V dense, column-major (only pattern entries are ever written)
        let v = data.ltdl_inv.as_mut_slice();
        for a in 0..n {
            let (s, e) = (cs[a], cs[a + 1]);
            for (&k, &x) in chain[s..e].iter().zip(&w[s..e]) {
                v[k * n + a] = x;
            }
        }
        // column b of M⁻¹ above the diagonal: Σ_q w_b[q] / D_{chain_b[q]} · V[chain_b[q]..=b, chain_b[q]]
        // D⁻¹ (the last entry of each compact column of the factors)
        let dinv = data.tmp_v.as_mut_slice();
        for (k, x) in dinv.iter_mut().enumerate() {
            *x = 1.0 / u[cs[k + 1] - 1];
        }
        let z = data.mass_matrix_inverse.as_mut_slice();
        upper_triangle(n, chain, cs, w, v, dinv, z);
        mirror_lower_triangle(n, z);
    }
}

/// M⁻¹ (into `z`, n x n) of a serial chain of at most [`PACKED`] dofs (dof j the child of dof
/// j − 1, a six-axis arm: the compact chains then hold n(n + 1)/2 entries, each chain all the
/// dofs before it), from the factor's entries `u`: the operations of [`l_inverse_chain_rows`]
/// (entry by entry: no packed prefix below six dofs), the scatter into `v` (the dense V) and
/// [`upper_triangle`] on such a chain, in the same order (the same bits), with the chains'
/// index arithmetic known (`chain_j = 0..=j`): V's rows are written into `v` directly, no
/// compact rows. `dinv` (n) takes D⁻¹.
#[inline(always)]
fn small_chain_inverse(n: usize, u: &[f64], v: &mut [f64], dinv: &mut [f64], z: &mut [f64]) {
    for j in 0..n {
        let s = j * (j + 1) / 2;
        let a = &u[s..s + j];
        // V[j, q] = −Σ_{q ≤ p < j} L[j, p] V[p, q], V[p, q] contiguous in p (column q)
        for q in 0..j {
            let col = &v[q * n..q * n + j];
            let mut acc = 0.0;
            for p in q..j {
                acc -= a[p] * col[p];
            }
            v[q * n + j] = acc;
        }
        v[j * n + j] = 1.0;
        dinv[j] = 1.0 / u[s + j];
    }
    // column b above the diagonal: the chain 0..=b four columns of V at a time
    for b in 0..n {
        let zb = &mut z[b * n..b * n + b + 1];
        for k0 in (0..=b).step_by(4) {
            let len = (b + 1 - k0).min(4);
            let col = |t: usize| &v[(k0 + t) * n + k0..(k0 + t) * n + b + 1];
            let cf = |t: usize| v[(k0 + t) * n + b] * dinv[k0 + t];
            add_columns(&mut zb[k0..], len, k0 == 0, col, cf);
        }
    }
    mirror_lower_triangle(n, z);
}

/// Chain depth up to which [`l_inverse_chain_rows`] forms a row entry by entry.
const DOT_DEPTH: usize = 48;

/// The rows of `V = L⁻¹` on the chains (`chain`, `cs`: each dof's ancestors, compact;
/// `u`: the factor's entries, same layout) into `w` (same layout):
/// `w_j = e_last − Σ_p L[j, chain_j[p]] w_{chain_j[p]}`, the first six ancestors as one
/// packed triangle.
#[inline(always)]
fn l_inverse_chain_rows(n: usize, chain: &[usize], cs: &[usize], u: &[f64], w: &mut [f64]) {
    for j in 0..n {
        let (s, e) = (cs[j], cs[j + 1]);
        let d = e - s - 1;
        let (before, rest) = w.split_at_mut(s);
        let wj = &mut rest[..=d];
        wj.fill(0.0);
        wj[d] = 1.0;
        let pf = packed_prefix(chain, s, d);
        if pf == 0 && d <= DOT_DEPTH {
            // entry by entry, each accumulated in a register over the ancestors p ≥ q (in
            // increasing p, as the row updates below): no row stored and reloaded per
            // ancestor. Under a free flyer (a packed prefix) the row updates stay: there the
            // entry-by-entry form measured 3-6 % slower, on fixed-base arms 7-8 % faster.
            let mut base = [0usize; DOT_DEPTH];
            for (b, &i) in base[..d].iter_mut().zip(&chain[s..s + d]) {
                *b = cs[i];
            }
            let a = &u[s..s + d];
            for (q, x) in wj[..d].iter_mut().enumerate() {
                let mut acc = 0.0;
                for p in q..d {
                    acc -= a[p] * before[base[p] + q];
                }
                *x = acc;
            }
        } else {
            // the chain of the p-th ancestor i is the first p + 1 entries of j's
            for (&i, &a) in chain[s + pf..s + d].iter().zip(&u[s + pf..s + d]) {
                for (x, y) in wj.iter_mut().zip(&before[cs[i]..cs[i + 1]]) {
                    *x -= a * y;
                }
            }
        }
        if pf == PACKED {
            // the rows of the six first ancestors form one packed triangle (see above)
            let base = cs[chain[s]];
            let t: &[f64; PACKED * (PACKED + 1) / 2] =
                (&before[base..base + PACKED * (PACKED + 1) / 2]).try_into().unwrap_or_else(|_| unreachable!());
            let a: [f64; PACKED] = u[s..s + PACKED].try_into().unwrap_or([0.0; PACKED]);
            let mut acc = [0.0; PACKED];
            for p in 0..PACKED {
                for q in 0..=p {
                    acc[q] += a[p] * t[p * (p + 1) / 2 + q];
                }
            }
            for (x, y) in wj[..PACKED].iter_mut().zip(&acc) {
                *x -= y;
            }
        }
    }
}

/// Columns `b` of `M⁻¹` above (and on) the diagonal into `z` (n x n, column-major):
/// `Σ_q w_b[q] / D_{chain_b[q]} · V[chain_b[q]..=b, chain_b[q]]`, from the chain rows `w`,
/// the dense `V` and `D⁻¹` (`dinv`).
#[inline(always)]
fn upper_triangle(n: usize, chain: &[usize], cs: &[usize], w: &[f64], v: &[f64], dinv: &[f64], z: &mut [f64]) {
    for b in 0..n {
        let (s, e) = (cs[b], cs[b + 1]);
        let mut cb = &chain[s..e];
        let mut wb = &w[s..e];
        let zb = &mut z[b * n..b * n + b + 1];
        zb[..cb[0]].fill(0.0);
        let mut first = true;
        if packed_prefix(chain, s, e - s - 1) == PACKED {
            // the six first ancestors at once (a free flyer: consecutive dofs from the root)
            let lo = cb[0];
            let x: [&[f64]; PACKED] = std::array::from_fn(|t| &v[(lo + t) * n + lo..(lo + t) * n + b + 1]);
            let c: [f64; PACKED] = std::array::from_fn(|t| wb[t] * dinv[lo + t]);
            let out = &mut zb[lo..];
            let len = out.len();
            let (x0, x1, x2) = (&x[0][..len], &x[1][..len], &x[2][..len]);
            let (x3, x4, x5) = (&x[3][..len], &x[4][..len], &x[5][..len]);
            for r in 0..len {
                out[r] = c[0] * x0[r] + c[1] * x1[r] + c[2] * x2[r] + c[3] * x3[r] + c[4] * x4[r] + c[5] * x5[r];
            }
            cb = &cb[PACKED..];
            wb = &wb[PACKED..];
            first = false;
        }
        for (ks, ws) in cb.chunks(4).zip(wb.chunks(4)) {
            let lo = ks[0];
            let col = |t: usize| &v[ks[t] * n + lo..ks[t] * n + b + 1];
            let cf = |t: usize| ws[t] * dinv[ks[t]];
            add_columns(&mut zb[lo..], ks.len(), first, col, cf);
            first = false;
        }
    }
}

/// Copies the upper triangle of `z` (n x n, column-major) below the diagonal: columns `b` and
/// `b + 1` at once, so that each row takes one pair store.
#[inline(always)]
fn mirror_lower_triangle(n: usize, z: &mut [f64]) {
    let mut b = 1;
    while b < n {
        let (lo, hi) = z.split_at_mut(b * n);
        if b + 1 < n {
            for (col, (x0, x1)) in lo.chunks_exact_mut(n).zip(hi[..b].iter().zip(&hi[n..n + b])) {
                col[b..b + 2].copy_from_slice(&[*x0, *x1]);
            }
            hi[b + 1] = hi[n + b];
        } else {
            for (col, x) in lo.chunks_exact_mut(n).zip(&hi[..b]) {
                col[b] = *x;
            }
        }
        b += 2;
    }
}

/// `out (=|+=) Σ_t cf(t) col(t)` over `len` (at most four) columns of `out`'s length: four at
/// once ([`axpy4`]; `out =` when `first`), fewer one after the other (the first of them
/// assigned when `first`).
#[inline(always)]
fn add_columns<'v>(out: &mut [f64], len: usize, first: bool, col: impl Fn(usize) -> &'v [f64], cf: impl Fn(usize) -> f64) {
    match (len, first) {
        (4, true) => axpy4::<true>(out, [col(0), col(1), col(2), col(3)], [cf(0), cf(1), cf(2), cf(3)]),
        (4, false) => axpy4::<false>(out, [col(0), col(1), col(2), col(3)], [cf(0), cf(1), cf(2), cf(3)]),
        (len, first) => {
            for t in 0..len {
                let (c, x) = (cf(t), col(t));
                if first && t == 0 {
                    for (o, y) in out.iter_mut().zip(x) {
                        *o = c * y;
                    }
                } else {
                    for (o, y) in out.iter_mut().zip(x) {
                        *o += c * y;
                    }
                }
            }
        }
    }
}

/// `out (=|+=) Σ_t c[t] x[t]` over four columns of equal length.
#[inline(always)]
fn axpy4<const ASSIGN: bool>(out: &mut [f64], x: [&[f64]; 4], c: [f64; 4]) {
    let len = out.len();
    let (x0, x1, x2, x3) = (&x[0][..len], &x[1][..len], &x[2][..len], &x[3][..len]);
    for t in 0..len {
        let s = c[0] * x0[t] + c[1] * x1[t] + c[2] * x2[t] + c[3] * x3[t];
        out[t] = if ASSIGN { s } else { out[t] + s };
    }
}

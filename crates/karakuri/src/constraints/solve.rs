//! The solvers of `H x = b + Gᵀ λ, G x = c` (forward dynamics: b = τ - C, c = γ; impulses:
//! b = H q̇⁻, c = v⁺), all exact, all on preallocated buffers.
#![allow(clippy::needless_range_loop)] // index loops read like the algebra

use crate::linalg::dense::{cholesky_in_place, cholesky_solve, form_q, lu_in_place, lu_solve, qr_pivoted};
use super::types::{ConstraintError, Method, SolveReport, Workspace};
use crate::data::Data;
use crate::model::Model;
use crate::spatial::{Force, Motion};
use nalgebra::{DMatrix, DVector};

/// Relative rank tolerance on the R diagonal of the pivoted QR of Gᵀ.
pub(crate) const RANK_TOL: f64 = 1e-10;
/// Relative pivot tolerance of the LU and Cholesky factorisations (below it: treat as rank
/// deficient and answer with the rank-revealing null-space path).
const PIVOT_TOL: f64 = 1e-13;
/// Relative residual above which rank-deficient rows are reported as conflicting.
const CONSISTENCY_TOL: f64 = 1e-9;

/// `out = H x` for the full symmetric H.
pub(crate) fn mat_vec(h: &DMatrix<f64>, x: &DVector<f64>, out: &mut DVector<f64>) {
    let n = h.nrows();
    let out = out.as_mut_slice();
    out.fill(0.0);
    for (c, hc) in h.as_slice().chunks_exact(n).enumerate() {
        let xc = x[c];
        if xc != 0.0 {
            for (o, hv) in out.iter_mut().zip(hc) {
                *o += hv * xc;
            }
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Largest |G x - c| (G read on the supports only: it is zero elsewhere).
fn residual(ws: &Workspace, g: &DMatrix<f64>, x: &DVector<f64>, c: &DVector<f64>) -> f64 {
    let nc = g.nrows();
    let gs = g.as_slice();
    let mut m: f64 = 0.0;
    for con in 0..ws.row_off.len().saturating_sub(1) {
        let sup = &ws.sup[ws.sup_off[con]..ws.sup_off[con + 1]];
        for r in ws.row_off[con]..ws.row_off[con + 1] {
            let mut s = -c[r];
            for &k in sup {
                s += gs[k * nc + r] * x[k];
            }
            m = m.max(s.abs());
        }
    }
    m
}

/// `out = c - G x` (G read on the supports only).
fn rhs_minus_gx(
    row_off: &[usize],
    sup_off: &[usize],
    sup: &[usize],
    g: &DMatrix<f64>,
    x: &DVector<f64>,
    c: &DVector<f64>,
    out: &mut DVector<f64>,
) {
    let nc = g.nrows();
    let gs = g.as_slice();
    for con in 0..row_off.len().saturating_sub(1) {
        let sup = &sup[sup_off[con]..sup_off[con + 1]];
        for r in row_off[con]..row_off[con + 1] {
            let mut s = c[r];
            for &k in sup {
                s -= gs[k * nc + r] * x[k];
            }
            out[r] = s;
        }
    }
}

/// The particular ("range") part: pivoted QR of `diag(1/scale) Gᵀ` into `ws.qr`, `ws.q`, and
/// `ws.x = Y qy` with `R̃ᵀ qy = Pᵀ c` (least squares with `ws.nmat = R̃ R̃ᵀ` when rank
/// deficient). Returns the rank. `ws.rhs_c` holds c. `ws.t_nc` keeps qy.
pub(crate) fn range_part(ws: &mut Workspace, g: &DMatrix<f64>, scale: Option<&DVector<f64>>) -> usize {
    let (nc, nv) = (g.nrows(), g.ncols());
    for r in 0..nc {
        for k in 0..nv {
            ws.qr[(k, r)] = match scale {
                Some(s) => g[(r, k)] / s[k],
                None => g[(r, k)],
            };
        }
    }
    let rank = qr_pivoted(&mut ws.qr, nv, nc, &mut ws.beta, &mut ws.perm, RANK_TOL);
    form_q(&ws.qr, nv, rank, &ws.beta, &mut ws.q);
    let r_ = &ws.qr;
    // c̃ = Pᵀ c
    for j in 0..nc {
        ws.t_nc2[j] = ws.rhs_c[ws.perm[j]];
    }
    if rank == nc {
        // R11ᵀ qy = c̃ (forward substitution)
        for i in 0..nc {
            let mut s = ws.t_nc2[i];
            for k in 0..i {
                s -= r_[(k, i)] * ws.t_nc[k];
            }
            ws.t_nc[i] = s / r_[(i, i)];
        }
    } else {
        // least squares min |R̃ᵀ qy - c̃|: (R̃ R̃ᵀ) qy = R̃ c̃, R̃ = R[0..r, 0..nc] upper trapezoidal
        for i in 0..rank {
            for j in 0..=i {
                let mut s = 0.0;
                for l in i..nc {
                    s += r_[(i, l)] * r_[(j, l)];
                }
                ws.nmat[(i, j)] = s;
                ws.nmat[(j, i)] = s;
            }
            let mut s = 0.0;
            for l in i..nc {
                s += r_[(i, l)] * ws.t_nc2[l];
            }
            ws.t_nc[i] = s;
        }
        // R11 is nonsingular so this is positive definite
        cholesky_in_place(&mut ws.nmat, rank, 0.0);
        cholesky_solve(&ws.nmat, rank, &mut ws.t_nc.as_mut_slice()[..rank]);
    }
    // x = Y qy
    for k in 0..nv {
        let mut s = 0.0;
        for i in 0..rank {
            s += ws.q[(k, i)] * ws.t_nc[i];
        }
        ws.x[k] = s;
    }
    rank
}

/// Null-space method: `H x = b + Gᵀ λ, G x = c` with `ws.rhs_v` = b, `ws.rhs_c` = c; answer in
/// `ws.x`, `ws.lam`. Returns (rank, residual).
pub(crate) fn null_space(ws: &mut Workspace, g: &DMatrix<f64>, h: &DMatrix<f64>) -> (usize, f64) {
    let (nc, nv) = (g.nrows(), g.ncols());
    let rank = range_part(ws, g, None);
    let nz = nv - rank;
    // t = b - H x_y
    mat_vec(h, &ws.x, &mut ws.t_nv);
    for k in 0..nv {
        ws.t_nv[k] = ws.rhs_v[k] - ws.t_nv[k];
    }
    // H Z (nv x nz), Zᵀ H Z (nz x nz), Zᵀ t; Z = Q[:, rank..] (contiguous columns)
    let hs = h.as_slice();
    let qs = ws.q.as_slice();
    let (nq, nh) = (ws.q.nrows(), ws.hz.nrows());
    let col = |stride: usize, c: usize| c * stride..c * stride + nv;
    for c in 0..nz {
        let z = &qs[col(nq, rank + c)];
        let hz = &mut ws.hz.as_mut_slice()[c * nh..c * nh + nv];
        hz.fill(0.0);
        for (k, &zk) in z.iter().enumerate() {
            if zk != 0.0 {
                for (x, hk) in hz.iter_mut().zip(&hs[k * nv..(k + 1) * nv]) {
                    *x += hk * zk;
                }
            }
        }
    }
    let hzs = ws.hz.as_slice();
    for c in 0..nz {
        let hz = &hzs[c * nh..c * nh + nv];
        for r in c..nz {
            ws.zhz[(r, c)] = dot(&qs[col(nq, rank + r)], hz);
        }
        ws.t_nv2[c] = dot(&qs[col(nq, rank + c)], ws.t_nv.as_slice());
    }
    cholesky_in_place(&mut ws.zhz, nz, 0.0);
    cholesky_solve(&ws.zhz, nz, &mut ws.t_nv2.as_mut_slice()[..nz]);
    for k in 0..nv {
        let mut s = 0.0;
        for c in 0..nz {
            s += ws.q[(k, rank + c)] * ws.t_nv2[c];
        }
        ws.x[k] += s;
    }
    // λ: Gᵀ λ = H x - b  ->  R̃ μ = Yᵀ (H x - b), λ[perm[j]] = μ_j
    mat_vec(h, &ws.x, &mut ws.t_nv);
    for k in 0..nv {
        ws.t_nv[k] -= ws.rhs_v[k];
    }
    for i in 0..rank {
        let mut s = 0.0;
        for k in 0..nv {
            s += ws.q[(k, i)] * ws.t_nv[k];
        }
        ws.t_nc2[i] = s;
    }
    let r_ = &ws.qr;
    if rank == nc {
        for i in (0..nc).rev() {
            let mut s = ws.t_nc2[i];
            for l in i + 1..nc {
                s -= r_[(i, l)] * ws.t_nc[l];
            }
            ws.t_nc[i] = s / r_[(i, i)];
        }
    } else {
        // minimal-norm μ = R̃ᵀ (R̃ R̃ᵀ)⁻¹ Yᵀ d with the factor of R̃ R̃ᵀ left in nmat
        cholesky_solve(&ws.nmat, rank, &mut ws.t_nc2.as_mut_slice()[..rank]);
        for l in 0..nc {
            let mut s = 0.0;
            for i in 0..rank.min(l + 1) {
                s += r_[(i, l)] * ws.t_nc2[i];
            }
            ws.t_nc[l] = s;
        }
    }
    for j in 0..nc {
        ws.lam[ws.perm[j]] = ws.t_nc[j];
    }
    (rank, residual(ws, g, &ws.x, &ws.rhs_c))
}

fn scale_of(m: &DMatrix<f64>) -> f64 {
    m.amax().max(f64::MIN_POSITIVE)
}

/// Direct method: LU of the KKT matrix. `false` when singular.
pub(crate) fn direct(ws: &mut Workspace, g: &DMatrix<f64>, h: &DMatrix<f64>) -> bool {
    let (nc, nv) = (g.nrows(), g.ncols());
    let n = nv + nc;
    for c in 0..nv {
        for r in 0..nv {
            ws.kkt[(r, c)] = h[(r, c)];
        }
        for r in 0..nc {
            ws.kkt[(nv + r, c)] = g[(r, c)];
            ws.kkt[(c, nv + r)] = g[(r, c)];
        }
    }
    for c in 0..nc {
        for r in 0..nc {
            ws.kkt[(nv + r, nv + c)] = 0.0;
        }
    }
    let tol = PIVOT_TOL * scale_of(h).max(scale_of(g));
    if !lu_in_place(&mut ws.kkt, n, &mut ws.piv, tol) {
        return false;
    }
    ws.kkt_x.rows_mut(0, nv).copy_from(&ws.rhs_v);
    ws.kkt_x.rows_mut(nv, nc).copy_from(&ws.rhs_c);
    lu_solve(&ws.kkt, n, &ws.piv, ws.kkt_x.as_mut_slice());
    ws.x.copy_from(&ws.kkt_x.rows(0, nv));
    for r in 0..nc {
        ws.lam[r] = -ws.kkt_x[nv + r];
    }
    true
}

/// Solves `K λ = ws.lam` (K = G H⁻¹ Gᵀ, lower triangle in `ws.k`; `ws.lam` holds the
/// right-hand side) by Cholesky. `false` when K is not positive definite to tolerance.
fn schur_lambda(ws: &mut Workspace, nc: usize) -> bool {
    let mut dmax: f64 = 0.0;
    for i in 0..nc {
        dmax = dmax.max(ws.k[(i, i)]);
    }
    if !cholesky_in_place(&mut ws.k, nc, PIVOT_TOL * dmax.max(f64::MIN_POSITIVE)) {
        return false;
    }
    cholesky_solve(&ws.k, nc, ws.lam.as_mut_slice());
    true
}

/// Range-space method with the branch-induced sparse `H = Lᵀ D L` (compact, [`Factorization`](crate::linalg::Factorization); H
/// from `mass_matrix`): with
/// `Y = D^-½ L⁻ᵀ Gᵀ` (each column on its row's support), `K = G H⁻¹ Gᵀ = Yᵀ Y`,
/// `z = D^-½ L⁻ᵀ b`, `K λ = c - Yᵀ z`, `x = L⁻¹ D^-½ (z + Y λ)`. `false` when K is singular.
/// Y's columns are kept compact on their supports (`Workspace::w`).
pub(crate) fn range_space_sparse(ws: &mut Workspace, g: &DMatrix<f64>, h: &DMatrix<f64>) -> bool {
    let (nc, nv) = (g.nrows(), g.ncols());
    if !std::mem::take(&mut ws.prefactored) {
        ws.fact.factorize(h);
    }
    for k in 0..nv {
        ws.dis[k] = 1.0 / ws.fact.d(k).sqrt();
    }
    let ncon = ws.row_off.len() - 1;
    for con in 0..ncon {
        half_solve_rows(ws, g, con);
    }
    // K = Yᵀ Y (lower triangle), each block over the intersection of the two supports
    let w = ws.w.as_slice();
    for a in 0..ncon {
        for b in 0..=a {
            let p = a * (a + 1) / 2 + b;
            let (pa, pb) = (&ws.pair[ws.pair_off[p]..ws.pair_off[p + 1]], &ws.pair_b[ws.pair_off[p]..ws.pair_off[p + 1]]);
            let m = pa.len();
            for ra in ws.row_off[a]..ws.row_off[a + 1] {
                let ya = &w[ra * nv..(ra + 1) * nv];
                let rb_end = if a == b { ra + 1 } else { ws.row_off[b + 1] };
                for rb in ws.row_off[b]..rb_end {
                    let yb = &w[rb * nv..(rb + 1) * nv];
                    let mut s = 0.0;
                    if ws.pair_prefix[p] {
                        for (x, y) in ya[..m].iter().zip(&yb[..m]) {
                            s += x * y;
                        }
                    } else {
                        for (&i, &j) in pa.iter().zip(pb) {
                            s += ya[i] * yb[j];
                        }
                    }
                    ws.k[(ra, rb)] = s;
                }
            }
        }
    }
    // z = D^-½ L⁻ᵀ b; right-hand side c - Yᵀ z
    ws.t_nv.copy_from(&ws.rhs_v);
    ws.fact.solve_lt(ws.t_nv.as_mut_slice());
    for k in 0..nv {
        ws.t_nv[k] *= ws.dis[k];
    }
    for con in 0..ncon {
        let sup = &ws.sup[ws.sup_off[con]..ws.sup_off[con + 1]];
        for r in ws.row_off[con]..ws.row_off[con + 1] {
            let y = &w[r * nv..r * nv + sup.len()];
            let mut s = ws.rhs_c[r];
            for (yi, &k) in y.iter().zip(sup) {
                s -= yi * ws.t_nv[k];
            }
            ws.lam[r] = s;
        }
    }
    if !schur_lambda(ws, nc) {
        return false;
    }
    // x = L⁻¹ D^-½ (z + Y λ)
    let w = ws.w.as_slice();
    for con in 0..ncon {
        let sup = &ws.sup[ws.sup_off[con]..ws.sup_off[con + 1]];
        for r in ws.row_off[con]..ws.row_off[con + 1] {
            let y = &w[r * nv..r * nv + sup.len()];
            let l = ws.lam[r];
            for (yi, &k) in y.iter().zip(sup) {
                ws.t_nv[k] += yi * l;
            }
        }
    }
    for k in 0..nv {
        ws.x[k] = ws.t_nv[k] * ws.dis[k];
    }
    ws.fact.solve_l(ws.x.as_mut_slice());
    true
}

/// Y's columns of constraint `con`'s rows, `D^-½ L⁻ᵀ Gᵀ`, compact on its support `sup` (entry
/// i at dof `sup[i]`) in `ws.w`. On a single chain (`ws.path`) the factor row of `sup[i]` is
/// at positions `0..i`: the solve runs on the compact column, contiguous updates. Otherwise it
/// runs on the dof-indexed column, which is then compacted in place (`sup[i] >= i`). Either
/// way each entry sees the same operations in the same order as `solve_lt_on`.
fn half_solve_rows(ws: &mut Workspace, g: &DMatrix<f64>, con: usize) {
    let (nc, nv) = (g.nrows(), g.ncols());
    let gs = g.as_slice();
    let sup = &ws.sup[ws.sup_off[con]..ws.sup_off[con + 1]];
    let rows = ws.row_off[con]..ws.row_off[con + 1];
    let cols = &mut ws.w.as_mut_slice()[rows.start * nv..rows.end * nv];
    if ws.path[con] {
        for (r, col) in rows.zip(cols.chunks_exact_mut(nv)) {
            for (y, &k) in col.iter_mut().zip(sup) {
                *y = gs[k * nc + r];
            }
        }
        for (i, &k) in sup.iter().enumerate().rev() {
            let l = ws.fact.row(k).1;
            for col in cols.chunks_exact_mut(nv) {
                let (head, tail) = col.split_at_mut(i);
                let xk = tail[0];
                if xk != 0.0 {
                    for (y, &lv) in head.iter_mut().zip(l) {
                        *y -= lv * xk;
                    }
                }
            }
        }
    } else {
        for (r, col) in rows.zip(cols.chunks_exact_mut(nv)) {
            for &k in sup {
                col[k] = gs[k * nc + r];
            }
        }
        solve_lt_on_columns(&ws.fact, cols, nv, sup);
        for col in cols.chunks_exact_mut(nv) {
            for (i, &k) in sup.iter().enumerate() {
                col[i] = col[k];
            }
        }
    }
    for col in cols.chunks_exact_mut(nv) {
        for (y, &k) in col.iter_mut().zip(sup) {
            *y *= ws.dis[k];
        }
    }
}

/// `x ← L⁻ᵀ x` ([`Factorization::solve_lt_on`](crate::linalg::Factorization::solve_lt_on))
/// for each column `x` (length `nv`) of `cols`, all zero outside `sup`: the same operations
/// column by column, the factor's rows read once for all columns (a constraint's rows share
/// their support), and the columns' updates independent of each other.
fn solve_lt_on_columns(fact: &crate::linalg::Factorization, cols: &mut [f64], nv: usize, sup: &[usize]) {
    for &k in sup.iter().rev() {
        let (anc, l) = fact.row(k);
        for col in cols.chunks_exact_mut(nv) {
            let xk = col[k];
            if xk != 0.0 {
                for (&a, &lv) in anc.iter().zip(l) {
                    col[a] -= lv * xk;
                }
            }
        }
    }
}

/// ABA pass 2 for test forces (q̇ = 0, τ = 0, no gravity; RBDA Table 7.1) over `joints`
/// (descending, closed under parents up to the root): `u_i = -Sᵢᵀ pA_i`,
/// `pA_λ(i) += X*(pA_i + U_i D_i⁻¹ u_i)`. Leaves `pa` zero on `joints`.
fn test_pass2(model: &Model, data: &Data, pa: &mut [Force], uu: &mut DVector<f64>, joints: impl IntoIterator<Item = usize>) {
    for i in joints {
        let (iv, ni) = (model.idx_v[i], model.nvs[i]);
        let pai = pa[i];
        pa[i] = Force::zero();
        let touched = pai.linear.amax() != 0.0 || pai.angular.amax() != 0.0;
        for k in iv..iv + ni {
            uu[k] = if touched { -model.motion_subspace[k].dot(&pai) } else { 0.0 };
        }
        let par = model.parents[i];
        if par == 0 || !touched {
            continue;
        }
        let mut f = pai.to_vec6();
        for r in 0..ni {
            let mut dinv_u = 0.0;
            for k in 0..ni {
                dinv_u += data.d_inv[i][(r, k)] * uu[iv + k];
            }
            f += data.u_cols[iv + r] * dinv_u;
        }
        pa[par] += data.li_m_i[i].act_force(&Force::from_vec6(&f));
    }
}

/// ABA pass 3 for test forces over `joints` (ascending, closed under parents): `a'_i = X_i
/// a_λ(i)`, `q̈_i = D⁻¹(u_i - Uᵀ a'_i)`, `a_i = a'_i + S_i q̈_i`; `out(k, q̈_k)` per dof.
fn test_pass3(
    model: &Model,
    data: &Data,
    uu: &DVector<f64>,
    acc: &mut [Motion],
    joints: impl IntoIterator<Item = usize>,
    mut out: impl FnMut(usize, f64),
) {
    acc[0] = Motion::zero();
    for i in joints {
        let (iv, ni) = (model.idx_v[i], model.nvs[i]);
        let a_prime = data.li_m_i[i].inv_act_motion(&acc[model.parents[i]]);
        let a6 = a_prime.to_vec6();
        let mut rhs = [0.0; 6];
        for k in 0..ni {
            rhs[k] = uu[iv + k] - data.u_cols[iv + k].dot(&a6);
        }
        let mut a = a_prime;
        for r in 0..ni {
            let mut s = 0.0;
            for k in 0..ni {
                s += data.d_inv[i][(r, k)] * rhs[k];
            }
            out(iv + r, s);
            a += model.motion_subspace[iv + r] * s;
        }
        acc[i] = a;
    }
}

/// Kokkevis's method: after ABA (articulated inertias `data.ia`, `U` = `data.u_cols`, `D⁻¹` =
/// `data.d_inv`, `data.li_m_i`, `data.o_m_i` fresh) and with `ws.x` = x0 = H⁻¹ b, computes the
/// response of each row to a unit test force (ABA passes 2 and 3 with q̇ = 0, τ = 0, no
/// gravity; RBDA Table 7.1) — pass 2 along the row's own chain, pass 3 on the joints some
/// row touches, all a column of `K = G H⁻¹ Gᵀ` needs — then λ, and x by one more
/// propagation of the total constraint force. `false` when K is singular.
pub(crate) fn kokkevis(ws: &mut Workspace, g: &DMatrix<f64>, model: &Model, data: &Data) -> bool {
    let (nc, nj) = (g.nrows(), model.njoints);
    let ncon = ws.row_off.len() - 1;
    ws.pa.fill(Force::zero());
    ws.uu.fill(0.0);
    // each row's covector in its bodies' local frames: G_r x = φ_s·a_s - φ_p·a_p for the
    // local body accelerations a = J x (ABA pass 3 with q̇ = 0)
    for row in 0..nc {
        let (s, p) = (ws.succ[row], ws.pred[row]);
        ws.phi_s[row] = if s > 0 { data.o_m_i[s].inv_act_force(&ws.phi[row]) } else { Force::zero() };
        ws.phi_p[row] = if p > 0 { data.o_m_i[p].inv_act_force(&ws.phi[row]) } else { Force::zero() };
    }
    for con in 0..ncon {
        let (c0, c1) = (ws.chain_off[con], ws.chain_off[con + 1]);
        for j in ws.row_off[con]..ws.row_off[con + 1] {
            // pA = -f_ext: the test force φ on the successor, -φ on the predecessor
            let (s, p) = (ws.succ[j], ws.pred[j]);
            ws.pa[s] -= ws.phi_s[j];
            ws.pa[p] += ws.phi_p[j];
            test_pass2(model, data, &mut ws.pa, &mut ws.uu, ws.chain[c0..c1].iter().copied());
            test_pass3(model, data, &ws.uu, &mut ws.acc, ws.used_joints.iter().copied(), |_, _| {});
            for &i in &ws.chain[c0..c1] {
                for k in model.idx_v[i]..model.idx_v[i] + model.nvs[i] {
                    ws.uu[k] = 0.0;
                }
            }
            // column j of K = G H⁻¹ G_jᵀ
            for i in 0..nc {
                ws.k[(i, j)] = ws.acc[ws.succ[i]].dot(&ws.phi_s[i]) - ws.acc[ws.pred[i]].dot(&ws.phi_p[i]);
            }
        }
    }
    for i in 0..nc {
        for j in 0..i {
            let m = 0.5 * (ws.k[(i, j)] + ws.k[(j, i)]);
            ws.k[(i, j)] = m;
            ws.k[(j, i)] = m;
        }
    }
    rhs_minus_gx(&ws.row_off, &ws.sup_off, &ws.sup, g, &ws.x, &ws.rhs_c, &mut ws.lam);
    if !schur_lambda(ws, nc) {
        return false;
    }
    // x = x0 + H⁻¹ Gᵀ λ: the response to the total test force Σ φ_r λ_r
    ws.pa[0] = Force::zero();
    for row in 0..nc {
        let l = ws.lam[row];
        let (s, p) = (ws.succ[row], ws.pred[row]);
        ws.pa[s] -= ws.phi_s[row] * l;
        ws.pa[p] += ws.phi_p[row] * l;
    }
    test_pass2(model, data, &mut ws.pa, &mut ws.uu, ws.used_joints.iter().rev().copied());
    let x = &mut ws.x;
    test_pass3(model, data, &ws.uu, &mut ws.acc, 1..nj, |k, s| x[k] += s);
    true
}

/// Runs `method` (rows in `g`, H in `data.mass_matrix` unless Kokkevis). `None` when the
/// method's factorisation finds G rank deficient: the caller then prepares H and b and calls
/// [`fallback`].
pub(crate) fn try_method(
    ws: &mut Workspace,
    g: &DMatrix<f64>,
    model: &Model,
    data: &mut Data,
    method: Method,
) -> Option<SolveReport> {
    let nc = g.nrows();
    let ok = match method {
        Method::Direct => direct(ws, g, &data.mass_matrix),
        Method::RangeSpaceSparse => range_space_sparse(ws, g, &data.mass_matrix),
        Method::Kokkevis => kokkevis(ws, g, model, data),
        Method::NullSpace => return None,
    };
    ok.then(|| SolveReport { method, rows: nc, rank: nc, fallback: false, residual: residual(ws, g, &ws.x, &ws.rhs_c) })
}

/// The rank-revealing null-space answer (`ws.rhs_v`, `ws.rhs_c` and H ready).
pub(crate) fn fallback(
    ws: &mut Workspace,
    g: &DMatrix<f64>,
    h: &DMatrix<f64>,
    method: Method,
) -> Result<SolveReport, ConstraintError> {
    let nc = g.nrows();
    let (rank, res) = null_space(ws, g, h);
    let report = SolveReport { method, rows: nc, rank, fallback: method != Method::NullSpace, residual: res };
    let scale = 1.0 + ws.rhs_c.amax();
    if rank < nc && res > CONSISTENCY_TOL * scale {
        return Err(ConstraintError::Conflicting { rows: nc, rank, residual: res });
    }
    Ok(report)
}

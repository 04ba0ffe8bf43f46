//! The solvers of `H x = b + Gᵀ λ, G x = c` (forward dynamics: b = τ - C, c = γ; impulses:
//! b = H q̇⁻, c = v⁺), all exact, all on preallocated buffers.
#![allow(clippy::needless_range_loop)] // index loops read like the algebra

use super::dense::{cholesky_in_place, cholesky_solve, form_q, lu_in_place, lu_solve, qr_pivoted};
use super::{ConstraintError, SolveReport, Workspace};
use crate::algorithms::ltdl;
use crate::data::Data;
use crate::model::Model;
use crate::spatial::{Force, Motion};
use nalgebra::{DMatrix, DVector};

/// How to solve the constrained equations of motion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// LU of the full KKT matrix `[H Gᵀ; G 0]` (RBDL's `...ConstraintsDirect`).
    Direct,
    /// Schur complement `G H⁻¹ Gᵀ λ = c - G H⁻¹ b` with the branch-induced sparse LᵀDL of H
    /// (RBDL's `...RangeSpaceSparse`).
    RangeSpaceSparse,
    /// Pivoted QR of `Gᵀ = [Y Z] R`: the particular part from R, the rest from the reduced
    /// system `Zᵀ H Z` (RBDL's `...NullSpace`). Rank revealing: the fallback of the others.
    NullSpace,
    /// Kokkevis's method: the response to a unit test force per row through the
    /// articulated-body inertias of ABA (no mass matrix), then the same Schur complement
    /// (RBDL's `ForwardDynamicsContactsKokkevis`).
    Kokkevis,
}

/// Relative rank tolerance on the R diagonal of the pivoted QR of Gᵀ.
pub(crate) const RANK_TOL: f64 = 1e-10;
/// Relative pivot tolerance of the LU and Cholesky factorisations (below it: treat as rank
/// deficient and answer with the rank-revealing null-space path).
const PIVOT_TOL: f64 = 1e-13;
/// Relative residual above which rank-deficient rows are reported as conflicting.
const CONSISTENCY_TOL: f64 = 1e-9;

/// `out = H x` for the full symmetric H.
pub(crate) fn mat_vec(h: &DMatrix<f64>, x: &DVector<f64>, out: &mut DVector<f64>) {
    out.fill(0.0);
    for c in 0..h.ncols() {
        let xc = x[c];
        if xc != 0.0 {
            for r in 0..h.nrows() {
                out[r] += h[(r, c)] * xc;
            }
        }
    }
}

/// Largest |G x - c|.
fn residual(g: &DMatrix<f64>, x: &DVector<f64>, c: &DVector<f64>) -> f64 {
    let mut m: f64 = 0.0;
    for r in 0..g.nrows() {
        let mut s = -c[r];
        for k in 0..g.ncols() {
            s += g[(r, k)] * x[k];
        }
        m = m.max(s.abs());
    }
    m
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
    // H Z (nv x nz), Zᵀ H Z (nz x nz), Zᵀ t; Z = Q[:, rank..]
    for c in 0..nz {
        for r in 0..nv {
            ws.hz[(r, c)] = 0.0;
        }
        for k in 0..nv {
            let zk = ws.q[(k, rank + c)];
            if zk != 0.0 {
                for r in 0..nv {
                    ws.hz[(r, c)] += h[(r, k)] * zk;
                }
            }
        }
    }
    for c in 0..nz {
        for r in c..nz {
            let mut s = 0.0;
            for k in 0..nv {
                s += ws.q[(k, rank + r)] * ws.hz[(k, c)];
            }
            ws.zhz[(r, c)] = s;
        }
        let mut s = 0.0;
        for k in 0..nv {
            s += ws.q[(k, rank + c)] * ws.t_nv[k];
        }
        ws.t_nv2[c] = s;
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
    (rank, residual(g, &ws.x, &ws.rhs_c))
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

/// Solves `K λ = c - G x0` (K = G H⁻¹ Gᵀ in `ws.k`, x0 in `ws.x`) by Cholesky into `ws.lam`.
/// `false` when K is not positive definite to tolerance.
fn schur_lambda(ws: &mut Workspace, g: &DMatrix<f64>) -> bool {
    let (nc, nv) = (g.nrows(), g.ncols());
    let mut dmax: f64 = 0.0;
    for i in 0..nc {
        dmax = dmax.max(ws.k[(i, i)]);
    }
    if !cholesky_in_place(&mut ws.k, nc, PIVOT_TOL * dmax.max(f64::MIN_POSITIVE)) {
        return false;
    }
    for r in 0..nc {
        let mut s = ws.rhs_c[r];
        for k in 0..nv {
            s -= g[(r, k)] * ws.x[k];
        }
        ws.lam[r] = s;
    }
    cholesky_solve(&ws.k, nc, ws.lam.as_mut_slice());
    true
}

/// Range-space method with the sparse LᵀDL of H (call `mass_matrix` first). `false` when
/// `G H⁻¹ Gᵀ` is singular.
pub(crate) fn range_space_sparse(ws: &mut Workspace, g: &DMatrix<f64>, model: &Model, data: &mut Data) -> bool {
    let (nc, nv) = (g.nrows(), g.ncols());
    ltdl::factorize(model, data);
    // W = L⁻ᵀ Gᵀ, column by column (each keeps the ancestor pattern of its row)
    for r in 0..nc {
        for k in 0..nv {
            ws.w[(k, r)] = g[(r, k)];
        }
        let col = &mut ws.w.as_mut_slice()[r * nv..(r + 1) * nv];
        ltdl::solve_lt_in_place(model, data, col);
    }
    // K = Wᵀ D⁻¹ W
    for i in 0..nc {
        for j in 0..=i {
            let mut s = 0.0;
            for k in 0..nv {
                s += ws.w[(k, i)] * ws.w[(k, j)] / data.ltdl_d[k];
            }
            ws.k[(i, j)] = s;
            ws.k[(j, i)] = s;
        }
    }
    // x0 = H⁻¹ b
    ws.x.copy_from(&ws.rhs_v);
    ltdl::solve_in_place(model, data, ws.x.as_mut_slice());
    if !schur_lambda(ws, g) {
        return false;
    }
    // x = x0 + H⁻¹ Gᵀ λ = x0 + L⁻¹ D⁻¹ W λ
    for k in 0..nv {
        let mut s = 0.0;
        for r in 0..nc {
            s += ws.w[(k, r)] * ws.lam[r];
        }
        ws.t_nv[k] = s / data.ltdl_d[k];
    }
    ltdl::solve_l_in_place(model, data, ws.t_nv.as_mut_slice());
    for k in 0..nv {
        ws.x[k] += ws.t_nv[k];
    }
    true
}

/// Kokkevis's method: after ABA (articulated inertias `data.ia`, `U` = `data.u_cols`, `D⁻¹` =
/// `data.d_inv`, `data.li_m_i`, `data.o_m_i` fresh) and with `ws.x` = x0 = H⁻¹ b, computes the
/// response H⁻¹ G_rᵀ of each row by propagating a unit test force (ABA passes 2 and 3 with
/// q̇ = 0, τ = 0, no gravity; RBDA Table 7.1), then `K = G R`, λ, and x. `false` when K is
/// singular.
pub(crate) fn kokkevis(ws: &mut Workspace, g: &DMatrix<f64>, model: &Model, data: &Data) -> bool {
    let (nc, nv, nj) = (g.nrows(), g.ncols(), model.njoints);
    for row in 0..nc {
        for f in ws.pa.iter_mut() {
            *f = Force::zero();
        }
        // pA = -f_ext: the test force φ on the successor, -φ on the predecessor (local frames)
        let (s, p) = (ws.succ[row], ws.pred[row]);
        if s > 0 {
            ws.pa[s] -= data.o_m_i[s].inv_act_force(&ws.phi[row]);
        }
        if p > 0 {
            ws.pa[p] += data.o_m_i[p].inv_act_force(&ws.phi[row]);
        }
        // pass 2: u_i = -Sᵢᵀ pA_i; pA_λ(i) += X*(pA_i + U_i D_i⁻¹ u_i)
        for i in (1..nj).rev() {
            let (iv, ni) = (model.idx_v[i], model.nvs[i]);
            let pai = ws.pa[i];
            let touched = pai.linear.amax() != 0.0 || pai.angular.amax() != 0.0;
            for k in iv..iv + ni {
                ws.uu[k] = if touched { -model.motion_subspace[k].dot(&pai) } else { 0.0 };
            }
            let par = model.parents[i];
            if par == 0 || !touched {
                continue;
            }
            let mut f = pai.to_vec6();
            for r in 0..ni {
                let mut dinv_u = 0.0;
                for k in 0..ni {
                    dinv_u += data.d_inv[i][(r, k)] * ws.uu[iv + k];
                }
                f += data.u_cols[iv + r] * dinv_u;
            }
            let fp = data.li_m_i[i].act_force(&Force::from_vec6(&f));
            ws.pa[par] += fp;
        }
        // pass 3: a'_i = X_i a_λ(i), q̈_i = D⁻¹(u_i - Uᵀ a'_i), a_i = a'_i + S_i q̈_i
        ws.acc[0] = Motion::zero();
        for i in 1..nj {
            let (iv, ni) = (model.idx_v[i], model.nvs[i]);
            let a_prime = data.li_m_i[i].inv_act_motion(&ws.acc[model.parents[i]]);
            let a6 = a_prime.to_vec6();
            let mut rhs = [0.0; 6];
            for k in 0..ni {
                rhs[k] = ws.uu[iv + k] - data.u_cols[iv + k].dot(&a6);
            }
            let mut a = a_prime;
            for r in 0..ni {
                let mut s = 0.0;
                for k in 0..ni {
                    s += data.d_inv[i][(r, k)] * rhs[k];
                }
                ws.response[(iv + r, row)] = s;
                a += model.motion_subspace[iv + r] * s;
            }
            ws.acc[i] = a;
        }
    }
    // K = G R (symmetrised)
    for i in 0..nc {
        for j in 0..nc {
            let mut s = 0.0;
            for k in 0..nv {
                s += g[(i, k)] * ws.response[(k, j)];
            }
            ws.k[(i, j)] = s;
        }
    }
    for i in 0..nc {
        for j in 0..i {
            let m = 0.5 * (ws.k[(i, j)] + ws.k[(j, i)]);
            ws.k[(i, j)] = m;
            ws.k[(j, i)] = m;
        }
    }
    if !schur_lambda(ws, g) {
        return false;
    }
    for k in 0..nv {
        let mut s = 0.0;
        for r in 0..nc {
            s += ws.response[(k, r)] * ws.lam[r];
        }
        ws.x[k] += s;
    }
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
        Method::RangeSpaceSparse => range_space_sparse(ws, g, model, data),
        Method::Kokkevis => kokkevis(ws, g, model, data),
        Method::NullSpace => return None,
    };
    ok.then(|| SolveReport { method, rows: nc, rank: nc, fallback: false, residual: residual(g, &ws.x, &ws.rhs_c) })
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

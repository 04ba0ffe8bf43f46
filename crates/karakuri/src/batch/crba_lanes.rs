//! CRBA and M⁻¹ in lanes, four states at once, equal to the single calls to rounding (record
//! 0075): the composite inertias are summed in world coordinates (each body's inertia turned
//! to the world once, then plain sums up the tree, no transform per joint), `F_k = I^c S_k`
//! with the world motion subspaces, `M[r, k] = S_r · F_k` over the ancestors `r` of `k`; M⁻¹
//! through the branch-induced factorisation `M = Lᵀ D L` (RBDA Table 6.3), `V = L⁻¹` on the
//! ancestor pattern, `M⁻¹ = V D⁻¹ Vᵀ`. The single kernels work in joint frames and a floating
//! root's body frame and factorise through packed chains: other roundings of the same sums.

// index loops over the dofs and the entries, as the formulas are written
#![allow(clippy::needless_range_loop)]

use super::kin_lanes::{place, world_dofs, Frame, KinWorkspace};
use super::lanes::{add3, cross, mul_mv, splat3, L, LANES, M3, V6};
use crate::model::Model;

mod local;
mod store;

#[cfg(target_arch = "x86_64")]
use store::store_mapped_avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) use store::{put1, put4, store_rows_avx2, tile_avx2};
pub(crate) use store::{store_rows, stream_bytes};

/// The CRBA buffers of one thread: a composite inertia per joint (`m, h, I_o` about the world
/// origin: `[m, hx, hy, hz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]`), M (laid out from `fl` for the portable store),
/// `Vᵀ`, M⁻¹ (its upper triangle column-major, then mirrored), `D⁻¹`, and each dof's reach (one past the
/// largest dof below it).
pub(crate) struct CrbaWorkspace {
    ic: Vec<[L; 10]>,
    mat: Vec<L>,
    vt: Vec<L>,
    /// Each dof's path (its ancestors and itself, ascending), compact: dof `k`'s at
    /// `chain[cs[k]..cs[k + 1]]`; the factors' and V's rows on it (`fl`, `wv`).
    chain: Vec<usize>,
    cs: Vec<usize>,
    /// Where the row of each entry's ancestor begins: `up[t] = cs[chain[t]]`.
    up: Vec<usize>,
    fl: Vec<L>,
    wv: Vec<L>,
    /// M⁻¹, full symmetric, row-major, after [`invert`].
    pub(crate) zt: Vec<L>,
    /// Two `nv x nv` scratch matrices of the ABA derivatives (`−M⁻¹ ∂τ/∂q`, `−M⁻¹ ∂τ/∂v`).
    pub(crate) ya: Vec<L>,
    pub(crate) yb: Vec<L>,
    dinv: Vec<L>,
    reach: Vec<usize>,
    /// Each dof's path (its ancestors and itself) as runs of consecutive dofs `(lo, hi)`,
    /// ascending: dof `k`'s at `path[path_start[k]..path_start[k + 1]]`.
    path: Vec<(usize, usize)>,
    path_start: Vec<usize>,
    /// How many dofs of a free-flyer root (`S = e_c` in the working frame) begin each dof's
    /// path.
    root_len: Vec<usize>,
    /// M (row-major) as runs of entries `(lo, hi, zero)`: `zero` where every group of four
    /// entries of the run is zero whatever the state.
    runs: Vec<(usize, usize, bool)>,
    /// The joint-frame CRBA (record 0099), for trees of one-dof joints below a free-flyer root.
    local: Option<local::LocalCrba>,
    /// Where each entry of M (row-major) is in `fl`, as an offset in `f64` (four times the lane's
    /// index): `chain.len()`, the always-zero entry past the rows, off the pattern (record 0107:
    /// M is stored from its compact rows). Every offset is of a lane of `fl` (its length fixed
    /// here), which [`store_mapped_avx2`] reads unchecked (record 0125).
    map: Vec<u32>,
    /// Where each entry of M⁻¹ (row-major) is in `zt` before the mirror, as an offset in `f64`:
    /// row `max(r, c)`, column `min(r, c)` (M⁻¹ stored without mirroring its lower triangle).
    tmap: Vec<u32>,
    /// Where each entry of V's compact rows goes in `vt`: `vpos[t] = chain[t] * nv + k` for
    /// `t` on dof `k`'s path.
    vpos: Vec<u32>,
    /// M⁻¹'s one run: every entry, none zero.
    dense: [(usize, usize, bool); 1],
}

impl CrbaWorkspace {
    pub(crate) fn new(model: &Model) -> Self {
        let n = model.nv;
        let mut reach: Vec<usize> = (1..=n).collect();
        for k in (0..n).rev() {
            let p = model.dof_parent[k];
            if p != usize::MAX {
                reach[p] = reach[p].max(reach[k]);
            }
        }
        let z = L::default();
        let root_ff = |d: usize| {
            let i = model.dof_joint[d];
            model.parents[i] == 0 && model.joint_types[i] == crate::model::JointType::FreeFlyer
        };
        let (mut path, mut path_start, mut chain, mut cs) = (vec![], vec![0], vec![], vec![0]);
        for k in 0..n {
            let (mut up, mut d) = (vec![], k);
            while d != usize::MAX {
                up.push(d);
                d = model.dof_parent[d];
            }
            up.reverse();
            let mut runs: Vec<(usize, usize)> = vec![];
            for d in up {
                match runs.last_mut() {
                    Some(r) if r.1 == d => r.1 += 1,
                    _ => runs.push((d, d + 1)),
                }
            }
            path.extend(runs.iter().copied());
            path_start.push(path.len());
            for (lo, hi) in runs {
                chain.extend(lo..hi);
            }
            cs.push(chain.len());
        }
        let nn = n * n;
        let root_len = (0..n).map(|k| chain[cs[k]..cs[k + 1]].iter().take_while(|&&d| root_ff(d)).count()).collect();
        let related = |r: usize, c: usize| chain[cs[r]..cs[r + 1]].contains(&c) || chain[cs[c]..cs[c + 1]].contains(&r);
        let mut runs: Vec<(usize, usize, bool)> = vec![];
        for b in 0..nn.div_ceil(4) {
            let (lo, hi) = (4 * b, (4 * b + 4).min(nn));
            let zero = (lo..hi).all(|e| !related(e / n, e % n));
            match runs.last_mut() {
                Some(r) if r.2 == zero => r.1 = hi,
                _ => runs.push((lo, hi, zero)),
            }
        }
        let map = (0..nn)
            .map(|e| {
                let (r, c) = (e / n, e % n);
                let (r, c) = (r.max(c), r.min(c));
                4 * chain[cs[r]..cs[r + 1]].iter().position(|&x| x == c).map_or(chain.len(), |t| cs[r] + t) as u32
            })
            .collect();
        let tmap = (0..nn).map(|e| 4 * ((e / n).max(e % n) * n + (e / n).min(e % n)) as u32).collect();
        let vpos = (0..n).flat_map(|k| chain[cs[k]..cs[k + 1]].iter().map(move |&j| (j * n + k) as u32)).collect();
        CrbaWorkspace {
            local: local::LocalCrba::new(model),
            map,
            tmap,
            vpos,
            dense: [(0, nn, false)],
            root_len,
            runs,
            ic: vec![[z; 10]; model.njoints],
            mat: vec![z; nn],
            vt: vec![z; nn],
            fl: vec![z; chain.len() + 1],
            wv: vec![z; chain.len()],
            up: chain.iter().map(|&i| cs[i]).collect(),
            chain,
            cs,
            zt: vec![z; nn],
            ya: vec![z; nn],
            yb: vec![z; nn],
            dinv: vec![z; n],
            reach,
            path,
            path_start,
        }
    }
}

/// The inertia of joint `i`'s body about the world origin in world axes, from its world
/// placement `x`: `c = R c_b + p`, `I = R I_c Rᵀ + m (|c|² 1 − c cᵀ)`, `h = m c`.
#[inline(always)]
fn world_inertia(model: &Model, i: usize, x: &super::lanes::LSe3) -> [L; 10] {
    let y = &model.inertias[i];
    let c = add3(mul_mv(&x.r, splat3(&y.com)), x.p);
    let z = L::splat(0.0);
    let mut t: M3 = [[z; 3]; 3];
    let ic = &y.inertia_com;
    let diagonal = ic[(0, 1)] == 0.0 && ic[(0, 2)] == 0.0 && ic[(1, 2)] == 0.0 && ic[(1, 0)] == 0.0 && ic[(2, 0)] == 0.0 && ic[(2, 1)] == 0.0;
    for a in 0..3 {
        for j in 0..3 {
            // R I_c: one product per entry for a diagonal I_c (the sum's other terms are zeros)
            t[a][j] = if diagonal {
                x.r[a][j] * L::splat(ic[(j, j)])
            } else {
                x.r[a][0] * L::splat(ic[(0, j)]) + x.r[a][1] * L::splat(ic[(1, j)]) + x.r[a][2] * L::splat(ic[(2, j)])
            };
        }
    }
    let mut rr: M3 = [[z; 3]; 3];
    for a in 0..3 {
        for b in a..3 {
            rr[a][b] = t[a][0] * x.r[b][0] + t[a][1] * x.r[b][1] + t[a][2] * x.r[b][2];
        }
    }
    let m = L::splat(y.mass);
    let (mx, my, mz) = (m * c[0], m * c[1], m * c[2]);
    [
        m,
        mx,
        my,
        mz,
        rr[0][0] + (my * c[1] + mz * c[2]),
        rr[0][1] - mx * c[1],
        rr[0][2] - mx * c[2],
        rr[1][1] + (mx * c[0] + mz * c[2]),
        rr[1][2] - my * c[2],
        rr[2][2] + (mx * c[0] + my * c[1]),
    ]
}

/// `I s` of a composite inertia `y` and a world motion `s = [v; ω]`: `[m v + ω × h; h × v + I ω]`.
#[inline(always)]
fn inertia_times(y: &[L; 10], s: &V6) -> V6 {
    let (v, w, h) = ([s[0], s[1], s[2]], [s[3], s[4], s[5]], [y[1], y[2], y[3]]);
    let wh = cross(w, h);
    let hv = cross(h, v);
    [
        y[0] * v[0] + wh[0],
        y[0] * v[1] + wh[1],
        y[0] * v[2] + wh[2],
        hv[0] + ((y[4] * w[0] + y[5] * w[1]) + y[6] * w[2]),
        hv[1] + ((y[5] * w[0] + y[7] * w[1]) + y[8] * w[2]),
        hv[2] + ((y[6] * w[0] + y[8] * w[1]) + y[9] * w[2]),
    ]
}

#[inline(always)]
fn dot6(a: &V6, b: &V6) -> L {
    ((a[0] * b[0] + a[1] * b[1]) + (a[2] * b[2] + a[3] * b[3])) + (a[4] * b[4] + a[5] * b[5])
}

/// M of the group of states `g` (in the working frame: the world, or a free-flyer root's body for
/// its subtree, whose rows are then entries of `F_k`) as each dof's row on its path, compact,
/// into `cw.fl` (M⁻¹'s factorisation starts from them; `cw.map` lays them out as M).
#[inline(always)]
fn mass_matrix(m: &Model, kw: &mut KinWorkspace, cw: &mut CrbaWorkspace, g: usize, k: usize, q: &[f64]) {
    place(m, None, &mut kw.o, g, k, q, Frame::Root);
    world_dofs(m, kw);
    for i in 1..m.njoints {
        cw.ic[i] = world_inertia(m, i, &kw.o[i]);
    }
    for i in (1..m.njoints).rev() {
        let y = cw.ic[i];
        let iv = m.idx_v[i];
        for d in iv..iv + m.nvs[i] {
            let f = inertia_times(&y, &kw.s_world[d]);
            // the rows of d's path: a free-flyer root's are entries of F, the others S_r · F
            let (s, e, rl) = (cw.cs[d], cw.cs[d + 1], cw.root_len[d]);
            let (fl, chain) = (&mut cw.fl[s..e], &cw.chain[s..e]);
            // a whole F in six moves: a copy of variable length is a `memcpy` call per dof, with
            // the registers spilled around it (the root's own dofs, shorter, copied apart so
            // that the two are not merged into one call)
            if rl == 6 {
                fl[..6].copy_from_slice(&f);
            } else if rl > 0 {
                copy_apart(&mut fl[..rl], &f[..rl]);
            }
            for (x, &r) in fl[rl..].iter_mut().zip(&chain[rl..]) {
                *x = dot6(&kw.s_world[r], &f);
            }
            let arm = m.armature[d];
            if arm != 0.0 {
                fl[e - s - 1] += L::splat(arm);
            }
        }
        let p = m.parents[i];
        if p > 0 {
            for e in 0..10 {
                cw.ic[p][e] += y[e];
            }
        }
    }
}

/// `x` into `y`, in a function of its own (not inlined: the caller's copy of a fixed length stays
/// six moves).
#[inline(never)]
fn copy_apart(y: &mut [L], x: &[L]) {
    y.copy_from_slice(x);
}

/// `out[a] += Σ_t c[t] cols[t][a]` over `W` columns of V at once (one load and store of `out`
/// per `W` products).
#[inline(always)]
fn axpy_cols<const W: usize>(out: &mut [L], cols: [&[L]; W], c: [L; W]) {
    let len = out.len();
    let cols: [&[L]; W] = cols.map(|x| &x[..len]);
    for a in 0..len {
        let mut s = c[0] * cols[0][a];
        for t in 1..W {
            s += c[t] * cols[t][a];
        }
        out[a] += s;
    }
}

/// M⁻¹ from the M in `h` (`nv x nv`, symmetric; `None`: M's rows on the paths already in
/// `cw.fl`, as [`mass_matrix`] leaves them) into `cw.zt`, full symmetric, row-major; the
/// factors `M = Lᵀ D L` left in `cw.fl` (each dof's row of L on its path, compact, then `D_k`)
/// and `cw.dinv`. Every row is kept compact on the dof's path (its ancestors and itself, as
/// `ltdl` stores them): an ancestor's path is a prefix of it, so each update is one
/// contiguous loop, with no parent chase.
#[inline(always)]
pub(crate) fn invert(m: &Model, h: Option<&[L]>, cw: &mut CrbaWorkspace) {
    invert_lower(m, h, cw);
    mirror(m.nv, &mut cw.zt);
}

/// [`invert`] without the mirror: M⁻¹'s lower triangle (`zt[b * n + a]`, `a ≤ b`) only.
#[inline(always)]
fn invert_lower(m: &Model, h: Option<&[L]>, cw: &mut CrbaWorkspace) {
    let n = m.nv;
    let (one, zero) = (L::splat(1.0), L::splat(0.0));
    let (chain, cs, up) = (&cw.chain[..], &cw.cs[..], &cw.up[..]);
    let fl = &mut cw.fl;
    if let Some(h) = h {
        for k in 0..n {
            for t in cs[k]..cs[k + 1] {
                fl[t] = h[k * n + chain[t]];
            }
        }
    }
    // M = Lᵀ D L (RBDA Table 6.3): row k's entries x_p (p along its path) take
    // `row_i[..=p] -= (x_p / D_k) x[..=p]` for the ancestor i = path_k[p]
    for k in (0..n).rev() {
        let (s, e) = (cs[k], cs[k + 1]);
        let d = e - s - 1;
        let (before, rest) = fl.split_at_mut(s);
        let row = &mut rest[..=d];
        let rk = one / row[d];
        cw.dinv[k] = rk;
        let (x, up) = (&row[..d], &up[s..s + d]);
        let mut p = 0;
        while p < d {
            let w = (d - p).min(4);
            match w {
                4 => ltdl_rows::<4>(p, x, rk, up, before),
                3 => ltdl_rows::<3>(p, x, rk, up, before),
                2 => ltdl_rows::<2>(p, x, rk, up, before),
                _ => ltdl_rows::<1>(p, x, rk, up, before),
            }
            p += w;
        }
        for x in &mut row[..d] {
            *x *= rk;
        }
    }
    // V = L⁻¹ by rows, compact (`wv`): v_k = e_k − Σ_p L[k, path_k[p]] v_{path_k[p]}, up to
    // four entries at a time in registers (`v_entries`); its columns into `vt` (`vt[j * n + k]
    // = V[k, j]`, zero off the pattern)
    let (wv, vt) = (&mut cw.wv, &mut cw.vt);
    for k in 0..n {
        let (s, e) = (cs[k], cs[k + 1]);
        let d = e - s - 1;
        let (before, rest) = wv.split_at_mut(s);
        let (wk, a, up) = (&mut rest[..=d], &fl[s..s + d], &up[s..s + d]);
        let mut j = 0;
        while j < d {
            let w = (d - j).min(4);
            match w {
                4 => wk[j..j + 4].copy_from_slice(&v_entries::<4>(j, a, up, before)),
                3 => wk[j..j + 3].copy_from_slice(&v_entries::<3>(j, a, up, before)),
                2 => wk[j..j + 2].copy_from_slice(&v_entries::<2>(j, a, up, before)),
                _ => wk[j..j + 1].copy_from_slice(&v_entries::<1>(j, a, up, before)),
            }
            j += w;
        }
        wk[d] = one;
        for (&x, &i) in wk.iter().zip(&cw.vpos[s..e]) {
            vt[i as usize] = x;
        }
    }
    // M⁻¹[b, a] = Σ_k V[b, k] D⁻¹_k V[a, k] over the common ancestors k (a ≤ b): for each k on
    // b's path, the a of k's subtree up to b (V[a, k] is zero off the pattern), up to four
    // consecutive k at once
    for b in 0..n {
        let vb = &wv[cs[b]..cs[b + 1]];
        let zb = &mut cw.zt[b * n..b * n + b + 1];
        zb.fill(zero);
        let mut p0 = 0;
        for &(lo, hi) in &cw.path[cw.path_start[b]..cw.path_start[b + 1]] {
            let mut k = lo;
            while k < hi {
                let w = (hi - k).min(4);
                let end = (b + 1).min(cw.reach[k]);
                let out = &mut zb[k..end];
                let col = |t: usize| &vt[(k + t) * n + k..(k + t) * n + end];
                let c = |t: usize| vb[p0 + k - lo + t] * cw.dinv[k + t];
                match w {
                    4 => axpy_cols::<4>(out, [col(0), col(1), col(2), col(3)], [c(0), c(1), c(2), c(3)]),
                    3 => axpy_cols::<3>(out, [col(0), col(1), col(2)], [c(0), c(1), c(2)]),
                    2 => axpy_cols::<2>(out, [col(0), col(1)], [c(0), c(1)]),
                    _ => axpy_cols::<1>(out, [col(0)], [c(0)]),
                }
                k += w;
            }
            p0 += hi - lo;
        }
    }
}

/// The updates of the ancestor rows `p..p + W` by row `x` of dof k (its entries on its path
/// before the diagonal, unscaled; `rk = 1 / D_k`): `row_{path[p]}[..=p] -= (x[p] rk) x[..=p]`,
/// the ancestors' rows at `before[up[p]..]`. Each entry takes the one update it took when the
/// rows were updated one at a time (`y -= a x`, the same product), so the same bits; the `W`
/// rows share each load of `x[j]` and the loop (record 0125).
#[inline(always)]
fn ltdl_rows<const W: usize>(p: usize, x: &[L], rk: L, up: &[usize], before: &mut [L]) {
    let (x, up) = (&x[..p + W], &up[p..p + W]);
    let mut a = [rk; W];
    for t in 0..W {
        a[t] = x[p + t] * rk;
    }
    // row t at `up[t]..up[t] + p + t + 1`: ascending and disjoint (an ancestor's row ends
    // before its descendant's begins), within `before`; checked here
    for t in 0..W {
        assert!(up[t] + p + t < if t + 1 < W { up[t + 1] } else { before.len() });
    }
    let base = before.as_mut_ptr();
    // SAFETY: every entry `j ≤ p + t` of row `t` is in `before` and in no other row (checked
    // above); `base` is the only pointer into `before` while this runs.
    #[allow(unsafe_code)]
    unsafe {
        let mut rows = [base; W];
        for t in 0..W {
            rows[t] = base.add(up[t]);
        }
        for (j, &xj) in x[..p + 1].iter().enumerate() {
            for t in 0..W {
                *rows[t].add(j) -= a[t] * xj;
            }
        }
        // the triangle: row p + t reaches entry p + t
        for t in 1..W {
            for j in p + 1..p + t + 1 {
                *rows[t].add(j) -= a[t] * x[j];
            }
        }
    }
}

/// Entries `j..j + W` of a row of V = L⁻¹ (`j + W` at most the row's dof's place on its path,
/// `a.len()`): `−Σ_p a[p] V[path[p], j + t]` over `p ≥ j + t`, the ancestors' rows (prefixes of
/// the path) at `before[up[p]..]`. Each entry's products are subtracted from zero in the order of
/// `p`, as the row-by-row update `v_k[..=p] -= a[p] v_{path[p]}` does, so the same bits; the `W`
/// sums stay in registers (one load of `a[p]` and of the ancestor's row start per `W` entries).
#[inline(always)]
fn v_entries<const W: usize>(j: usize, a: &[L], up: &[usize], before: &[L]) -> [L; W] {
    let mut acc = [L::splat(0.0); W];
    // the ancestors at p < j + W - 1 reach entry p only
    for p in j..j + W - 1 {
        for (y, x) in acc.iter_mut().zip(&before[up[p] + j..up[p] + p + 1]) {
            *y -= a[p] * *x;
        }
    }
    for p in j + W - 1..a.len() {
        let x: &[L; W] = before[up[p] + j..up[p] + j + W].try_into().unwrap();
        for t in 0..W {
            acc[t] -= a[p] * x[t];
        }
    }
    acc
}

/// The lower triangle of the `n x n` row-major `z` mirrored into its upper one.
#[inline(always)]
fn mirror(n: usize, z: &mut [L]) {
    for b in 0..n {
        for a in 0..b {
            z[a * n + b] = z[b * n + a];
        }
    }
}

/// `x ← M⁻¹ x` through the factors `M = Lᵀ D L` that [`invert`] left in `cw`: `Lᵀ y = x`
/// from the leaves up, `y ← D⁻¹ y`, `L x = y` from the roots down.
#[inline(always)]
pub(crate) fn solve(m: &Model, cw: &CrbaWorkspace, x: &mut [L]) {
    let (chain, cs, fl) = (&cw.chain[..], &cw.cs[..], &cw.fl[..]);
    for k in (0..m.nv).rev() {
        let xk = x[k];
        for t in cs[k]..cs[k + 1] - 1 {
            x[chain[t]] -= fl[t] * xk;
        }
    }
    for k in 0..m.nv {
        let mut s = x[k] * cw.dinv[k];
        for t in cs[k]..cs[k + 1] - 1 {
            s -= fl[t] * x[chain[t]];
        }
        x[k] = s;
    }
}


/// M (`inverse = false`) or M⁻¹ of `k` states, `nv x nv` row-major each, into `out`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn crba_groups(m: &Model, kw: &mut KinWorkspace, cw: &mut CrbaWorkspace, inverse: bool, k: usize, q: &[f64], out: &mut [f64]) {
    let store = |cw: &mut CrbaWorkspace, inverse: bool, g: usize, k: usize, out: &mut [f64]| {
        if inverse {
            mirror(m.nv, &mut cw.zt);
            store_rows(&cw.zt, &cw.dense, g, k, out);
        } else {
            for (x, &i) in cw.mat.iter_mut().zip(&cw.map) {
                *x = cw.fl[i as usize / 4];
            }
            store_rows(&cw.mat, &cw.runs, g, k, out);
        }
    };
    groups_with(m, kw, cw, inverse, k, q, out, store);
}

/// [`crba_groups`] with the group's result stored by `store(cw, inverse, g, k, out)`: M from
/// its compact rows `cw.fl`, M⁻¹ from the lower triangle of `cw.zt` (the portable
/// [`store_rows`] after a mirror or a gather, or the AVX [`store_mapped_avx2`] through the maps).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn groups_with(
    m: &Model,
    kw: &mut KinWorkspace,
    cw: &mut CrbaWorkspace,
    inverse: bool,
    k: usize,
    q: &[f64],
    out: &mut [f64],
    store: impl Fn(&mut CrbaWorkspace, bool, usize, usize, &mut [f64]),
) {
    for g in 0..k.div_ceil(LANES) {
        if let Some(lc) = &mut cw.local {
            local::mass_matrix_local(m, lc, &mut cw.fl, &cw.chain, &cw.cs, &cw.root_len, g, k, q);
        } else {
            mass_matrix(m, kw, cw, g, k, q);
        }
        if inverse {
            invert_lower(m, None, cw);
        }
        store(cw, inverse, g, k, out);
    }
}

crate::twice! {
    /// M or M⁻¹ of `k` states in lanes; the AVX2 copy stores through AVX tiles from the compact
    /// rows (record 0107), streamed past the caches when the result does not fit (record 0092).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn crba_chunk(m: &Model, kw: &mut KinWorkspace, cw: &mut CrbaWorkspace, inverse: bool, k: usize, q: &[f64], out: &mut [f64]) {
        crba_groups(m, kw, cw, inverse, k, q, out);
    } avx2 {
        let stream = k * m.nv * m.nv * 8 >= stream_bytes();
        // the lengths `map` and `tmap` were made for in `CrbaWorkspace::new` (never changed)
        assert!(cw.fl.len() == cw.chain.len() + 1 && cw.zt.len() == m.nv * m.nv);
        groups_with(m, kw, cw, inverse, k, q, out, |cw, inverse, g, k, o| {
            // SAFETY: every offset of `tmap` is of a lane of the `nv²` lanes of `zt`, every one of
            // `map` of a lane of `fl` (`chain.len() + 1` lanes), as `CrbaWorkspace::new` made them
            // and the assertion above checks the lengths
            #[allow(unsafe_code)]
            unsafe {
                if inverse {
                    store_mapped_avx2(&cw.zt, &cw.tmap, &cw.dense, &mut cw.mat, g, k, o, stream);
                } else {
                    store_mapped_avx2(&cw.fl, &cw.map, &cw.runs, &mut cw.mat, g, k, o, stream);
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    //! The streamed stores (outputs of 16 MiB and more, record 0092) against the ordinary ones:
    //! TALOS's M, M⁻¹ and both derivatives of 1461 states in one call and in calls of at most
    //! 200 states (below the threshold), into outputs offset by 0–3 numbers (every alignment
    //! of the rows), the same bits.
    use crate::algorithms::{self as alg, SplitMix64};
    use crate::batch::{self, BatchWorkspace};
    use crate::io::urdf;

    /// The joint-frame kernel (record 0099) is taken for solo12 (axis revolutes under a
    /// free-flyer root) and not for panda and TALOS (rotated placements); compiled portable it
    /// gives the dispatched build's bits.
    #[test]
    fn joint_frame_kernel_portable_equals_dispatched() {
        use crate::batch::kin_lanes::KinWorkspace;
        let load = |name: &str, root| urdf::load(format!("{}/../../tests/data/{name}.urdf", env!("CARGO_MANIFEST_DIR")), root).unwrap();
        assert!(super::local::LocalCrba::new(&load("panda", urdf::Root::Fixed)).is_none());
        assert!(super::local::LocalCrba::new(&load("talos_reduced", urdf::Root::FreeFlyer)).is_none());
        // TALOS (the world-frame kernel) too: the AVX store's unchecked offsets (record 0125)
        for name in ["solo12", "talos_reduced"] {
            let model = load(name, urdf::Root::FreeFlyer);
            let (k, nn) = (7, model.nv * model.nv);
            let mut rng = SplitMix64::new(5);
            let mut q = vec![];
            for _ in 0..k {
                q.extend(alg::random_configuration(&model, &mut rng).iter());
            }
            let (mut kw, mut cw) = (KinWorkspace::new(&model), super::CrbaWorkspace::new(&model));
            assert_eq!(cw.local.is_some(), name == "solo12");
            let mut ws = BatchWorkspace::new(&model, 1);
            for inverse in [false, true] {
                let (mut a, mut b) = (vec![0.0; k * nn], vec![0.0; k * nn]);
                super::crba_groups(&model, &mut kw, &mut cw, inverse, k, &q, &mut a);
                if inverse {
                    batch::mass_matrix_inverse(&model, &mut ws, &q, &mut b).unwrap();
                } else {
                    batch::crba(&model, &mut ws, &q, &mut b).unwrap();
                }
                assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()), "{name} inverse {inverse}");
            }
        }
    }

    /// The factorisation `M = Lᵀ D L` by up to four ancestor rows at a time (record 0125) gives
    /// the bits of the row-at-a-time update it replaced (kept here as the reference), on TALOS's
    /// M of four random states.
    #[test]
    fn ltdl_by_four_rows_equals_row_at_a_time() {
        use crate::batch::kin_lanes::KinWorkspace;
        use crate::batch::lanes::L;
        let path = format!("{}/../../tests/data/talos_reduced.urdf", env!("CARGO_MANIFEST_DIR"));
        let model = urdf::load(path, urdf::Root::FreeFlyer).unwrap();
        let mut rng = SplitMix64::new(8);
        let mut q = vec![];
        for _ in 0..4 {
            q.extend(alg::random_configuration(&model, &mut rng).iter());
        }
        let (mut kw, mut cw) = (KinWorkspace::new(&model), super::CrbaWorkspace::new(&model));
        super::mass_matrix(&model, &mut kw, &mut cw, 0, 4, &q);
        let mut want = cw.fl.clone();
        let (chain, cs) = (cw.chain.clone(), cw.cs.clone());
        for k in (0..model.nv).rev() {
            let (s, e) = (cs[k], cs[k + 1]);
            let d = e - s - 1;
            let rk = L::splat(1.0) / want[e - 1];
            for p in 0..d {
                let (i0, a) = (cs[chain[s + p]], want[s + p] * rk);
                for j in 0..=p {
                    let x = want[s + j];
                    want[i0 + j] -= a * x;
                }
            }
            for x in &mut want[s..e - 1] {
                *x *= rk;
            }
        }
        super::invert_lower(&model, None, &mut cw);
        let bits = |v: &[L]| v.iter().flat_map(|x| x.0.map(f64::to_bits)).collect::<Vec<_>>();
        assert_eq!(bits(&cw.fl[..chain.len()]), bits(&want[..chain.len()]));
    }

    #[test]
    fn streamed_stores_equal_the_ordinary_ones() {
        let path = format!("{}/../../tests/data/talos_reduced.urdf", env!("CARGO_MANIFEST_DIR"));
        let model = urdf::load(path, urdf::Root::FreeFlyer).unwrap();
        let (k, nq, nv) = (1461, model.nq, model.nv);
        let nn = nv * nv;
        assert!(3 * k * nn * 8 >= super::stream_bytes() && k * nn * 8 >= super::stream_bytes() && 3 * 200 * nn * 8 < super::stream_bytes());
        let mut rng = SplitMix64::new(21);
        let mut q = vec![];
        for _ in 0..k {
            q.extend(alg::random_configuration(&model, &mut rng).iter());
        }
        let (v, a) = (rng.vector(k * nv), rng.vector(k * nv));
        let (v, a) = (v.as_slice(), a.as_slice());
        let mut ws = BatchWorkspace::new(&model, 1);
        // the four calls, on states `s` into the (nv x nv per state) outputs `o`
        type Call = fn(&crate::Model, &mut BatchWorkspace, &[f64], &[f64], &[f64], &mut [&mut [f64]]);
        let calls: [(&str, Call); 4] = [
            ("crba", |m, ws, q, _, _, o| batch::crba(m, ws, q, o[0]).unwrap()),
            ("minv", |m, ws, q, _, _, o| batch::mass_matrix_inverse(m, ws, q, o[0]).unwrap()),
            ("rnea_derivatives", |m, ws, q, v, a, o| {
                let [x, y, z] = o else { unreachable!() };
                batch::rnea_derivatives(m, ws, q, v, a, x, y, z).unwrap()
            }),
            ("aba_derivatives", |m, ws, q, v, a, o| {
                let [x, y, z] = o else { unreachable!() };
                batch::aba_derivatives(m, ws, q, v, a, x, y, z).unwrap()
            }),
        ];
        for (c, (name, call)) in calls.iter().enumerate() {
            let outs = if c < 2 { 1 } else { 3 };
            let shift = c; // 0..3 numbers: every alignment mod 32 bytes
            let mut whole: Vec<Vec<f64>> = (0..outs).map(|_| vec![f64::NAN; shift + k * nn]).collect();
            let mut o: Vec<&mut [f64]> = whole.iter_mut().map(|x| &mut x[shift..]).collect();
            call(&model, &mut ws, &q, v, a, &mut o);
            let mut parts: Vec<Vec<f64>> = (0..outs).map(|_| vec![f64::NAN; k * nn]).collect();
            for s in (0..k).step_by(200) {
                let e = (s + 200).min(k);
                let mut o: Vec<&mut [f64]> = parts.iter_mut().map(|x| &mut x[s * nn..e * nn]).collect();
                call(&model, &mut ws, &q[s * nq..e * nq], &v[s * nv..e * nv], &a[s * nv..e * nv], &mut o);
            }
            for (w, p) in whole.iter().zip(&parts) {
                assert!(w[shift..].iter().zip(p).all(|(x, y)| x.to_bits() == y.to_bits()), "{name}");
            }
        }
    }
}

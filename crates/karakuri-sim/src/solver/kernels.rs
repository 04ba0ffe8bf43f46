//! Free kernels of the solver: dot products, the entries of a contact's `W_ii`, the LᵀDL
//! solves of one tree and the 3 x 3 inverse. Each sum keeps the order the module
//! documentation of [`super`] relies on (`dot`'s order from -0.0, columns in order), so the
//! results are the same bits whichever kernel computes them.

use karakuri::linalg::Factorization;

/// `Σ a_k b_k` in order (from -0.0, as `Sum` of f64).
#[inline]
pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `mj = J scale` for a `3 x W` block (row-major): each entry one product, what the dense
/// product with a diagonal inverse sums to (its other terms are zeros).
#[inline]
pub(super) fn scale_columns<const W: usize>(j: &[f64], mj: &mut [f64], scale: &[f64; 12]) {
    let x: &[[f64; W]; 3] = j[..3 * W].as_chunks::<W>().0.try_into().expect("3 rows");
    let y: &mut [[f64; W]; 3] = mj[..3 * W].as_chunks_mut::<W>().0.try_into().expect("3 rows");
    for (xr, yr) in x.iter().zip(y.iter_mut()) {
        for k in 0..W {
            yr[k] = scale[k] * xr[k];
        }
    }
}

/// The lower triangle `[W00, W10, W11, W20, W21, W22]` of a 3-row block's `W_ii = J (qH⁻¹
/// Jᵀ)ᵀ` from its `J` and `qH⁻¹ Jᵀ` (`3 x W`, row-major), in one pass over the columns, each
/// sum in `dot`'s order (from -0.0). Fixed `W`: unrolled, no bounds checks.
#[inline]
pub(super) fn contact_w<const W: usize>(j: &[f64], mj: &[f64]) -> [f64; 6] {
    let [j0, j1, j2]: &[[f64; W]; 3] = j[..3 * W].as_chunks::<W>().0.try_into().expect("3 rows");
    let [m0, m1, m2]: &[[f64; W]; 3] = mj[..3 * W].as_chunks::<W>().0.try_into().expect("3 rows");
    let mut acc = [-0.0; 6];
    for k in 0..W {
        acc[0] += j0[k] * m0[k];
        acc[1] += j1[k] * m0[k];
        acc[2] += j1[k] * m1[k];
        acc[3] += j2[k] * m0[k];
        acc[4] += j2[k] * m1[k];
        acc[5] += j2[k] * m2[k];
    }
    acc
}

/// [`contact_w`] for any width `wd`: [`contact_w_runs`] over one run of every column.
#[inline(never)]
pub(super) fn contact_w_any(j: &[f64], mj: &[f64], wd: usize) -> [f64; 6] {
    contact_w_runs(j, mj, wd, &[[0, 0, wd as u32]])
}

/// The lower triangle of a contact's `W_ii` (see [`contact_w_any`]) over `runs` of its
/// `J` (`j`, `mj`: `3 x wd`), each sum from `−0` in column order: `contact_w_any`'s entries
/// unless one is zero.
pub(super) fn contact_w_runs(j: &[f64], mj: &[f64], wd: usize, runs: &[[u32; 3]]) -> [f64; 6] {
    let mut acc = [-0.0; 6];
    for &[c, _, n] in runs {
        let (c, n) = (c as usize, n as usize);
        let (j0, j1, j2) = (&j[c..c + n], &j[wd + c..wd + c + n], &j[2 * wd + c..2 * wd + c + n]);
        let (m0, m1, m2) = (&mj[c..c + n], &mj[wd + c..wd + c + n], &mj[2 * wd + c..2 * wd + c + n]);
        for (((&j0, &j1), &j2), ((&m0, &m1), &m2)) in j0.iter().zip(j1).zip(j2).zip(m0.iter().zip(m1).zip(m2)) {
            acc[0] += j0 * m0;
            acc[1] += j1 * m0;
            acc[2] += j1 * m1;
            acc[3] += j2 * m0;
            acc[4] += j2 * m1;
            acc[5] += j2 * m2;
        }
    }
    acc
}

twice! {
    /// `v += l x` entry by entry (`v`, `x` as long): a row's impulse change into the
    /// velocity, in quads where the CPU has them.
    pub(super) fn add_scaled(v: &mut [f64], l: f64, x: &[f64]) {
        let (vq, vr) = v.as_chunks_mut::<4>();
        let (xq, xr) = x.as_chunks::<4>();
        for (a, b) in vq.iter_mut().zip(xq) {
            for j in 0..4 {
                a[j] += l * b[j];
            }
        }
        for (a, &b) in vr.iter_mut().zip(xr) {
            *a += l * b;
        }
    }
}

twice! {
    /// `v[c] += l_p m[o_p + c]` for the rows `p` at offsets `o_p = off[p]` of `m` with
    /// impulses `l_p = lam[p]` (each row as long as `v`), each entry's terms added in the
    /// rows' order: [`add_scaled`] of each row in turn, the same operations in the same order
    /// entry by entry, with the entries kept in registers across the rows (32 dofs a pass;
    /// the last pass of 8 or 4 ends at the last dof and writes only the dofs not done).
    pub(super) fn add_rows(v: &mut [f64], m: &[f64], off: &[usize], lam: &[f64]) {
        let n = v.len();
        let mut c = 0;
        while c + 32 <= n {
            add_rows_at::<32>(v, m, (off, lam), (c, c));
            c += 32;
        }
        while c + 8 <= n {
            add_rows_at::<8>(v, m, (off, lam), (c, c));
            c += 8;
        }
        if c < n && n >= 8 {
            add_rows_at::<8>(v, m, (off, lam), (n - 8, c));
            return;
        }
        while c + 4 <= n {
            add_rows_at::<4>(v, m, (off, lam), (c, c));
            c += 4;
        }
        if c < n && n >= 4 {
            add_rows_at::<4>(v, m, (off, lam), (n - 4, c));
            return;
        }
        while c < n {
            add_rows_at::<1>(v, m, (off, lam), (c, c));
            c += 1;
        }
    }
}

/// [`add_rows`] over the `W` entries of `v` from `c`, written from `done` on (those before
/// are summed and dropped).
#[inline(always)]
fn add_rows_at<const W: usize>(v: &mut [f64], m: &[f64], (off, lam): (&[usize], &[f64]), (c, done): (usize, usize)) {
    let v: &mut [f64; W] = (&mut v[c..c + W]).try_into().expect("W entries");
    let mut acc = *v;
    for (&o, &l) in off.iter().zip(lam) {
        let x: &[f64; W] = m[o + c..o + c + W].try_into().expect("W entries");
        for i in 0..W {
            acc[i] += l * x[i];
        }
    }
    for i in 0..W {
        if c + i >= done {
            v[i] = acc[i];
        }
    }
}

twice! {
    /// `v += (d0 x0 + d1 x1) + d2 x2` entry by entry (`v` and the three rows `x` as long): a
    /// contact's three impulse changes into the velocity, in quads where the CPU has them.
    pub(super) fn add_scaled3(v: &mut [f64], d: [f64; 3], (x0, x1, x2): (&[f64], &[f64], &[f64])) {
        let (vq, vr) = v.as_chunks_mut::<4>();
        let (q0, r0) = x0.as_chunks::<4>();
        let (q1, r1) = x1.as_chunks::<4>();
        let (q2, r2) = x2.as_chunks::<4>();
        for (((a, b0), b1), b2) in vq.iter_mut().zip(q0).zip(q1).zip(q2) {
            for j in 0..4 {
                a[j] += d[0] * b0[j] + d[1] * b1[j] + d[2] * b2[j];
            }
        }
        for (((a, &b0), &b1), &b2) in vr.iter_mut().zip(r0).zip(r1).zip(r2) {
            *a += d[0] * b0 + d[1] * b1 + d[2] * b2;
        }
    }
}

/// Solves `qH x = b` for an `x` that is zero outside one tree (its dofs `s..s + x.len()`):
/// the tree's ancestors all lie in it, so the LᵀDL solve runs over its dofs only.
pub(super) fn solve_tree(f: &Factorization, x: &mut [f64], s: usize) {
    let n = x.len();
    for k in (0..n).rev() {
        let xk = x[k];
        if xk != 0.0 {
            let (anc, l) = f.row(s + k);
            for (&a, &lv) in anc.iter().zip(l) {
                x[a - s] -= lv * xk;
            }
        }
    }
    for (k, xk) in x.iter_mut().enumerate() {
        *xk /= f.d(s + k);
    }
    for k in 0..n {
        let (anc, l) = f.row(s + k);
        let mut acc = x[k];
        for (&a, &lv) in anc.iter().zip(l) {
            acc -= lv * x[a - s];
        }
        x[k] = acc;
    }
}

/// Right-hand sides [`solve_tree_batch`] solves together at most (the stride of its rows).
pub(super) const BATCH: usize = 16;

twice! {
    /// [`solve_tree`] of the first `nb` of [`BATCH`] right-hand sides over tree dofs `s..s + n`
    /// (`x`: `n x BATCH`, dof-major, so that each step of the forward pass runs across them):
    /// the factor's rows are looked up once for all, and each right-hand side's arithmetic is
    /// that of [`solve_tree`] alone (the same operations in the same order, the backward pass
    /// skipping its zeros as it does). Lanes from `nb` up to 8 (`nb ≤ 8`) or 16 are computed
    /// too (their results unused: zeros stay zeros).
    pub(super) fn solve_tree_batch(f: &Factorization, x: &mut [f64], s: usize, nb: usize) {
        solve_tree_batch_in(f, x, s, nb);
    }
}

/// [`solve_tree_batch`]'s body: 8 lanes when `nb ≤ 8` (a few rows: a hand's contacts), else
/// all 16.
#[inline(always)]
fn solve_tree_batch_in(f: &Factorization, x: &mut [f64], s: usize, nb: usize) {
    if nb <= 8 {
        solve_lanes::<8>(f, x, s, nb);
    } else {
        solve_lanes::<BATCH>(f, x, s, nb);
    }
}

/// [`solve_tree_batch`] over the first `L` lanes of each row of `x`.
#[inline(always)]
fn solve_lanes<const L: usize>(f: &Factorization, x: &mut [f64], s: usize, nb: usize) {
    let (x, _) = x.as_chunks_mut::<BATCH>();
    let n = x.len();
    let used: [u64; L] = std::array::from_fn(|c| if c < nb { u64::MAX } else { 0 });
    for k in (0..n).rev() {
        let (before, rest) = x.split_at_mut(k);
        let xk: [f64; L] = rest[0][..L].try_into().expect("L lanes");
        // the lanes [`solve_tree`] would update (a zero it skips: `x − lv · 0` is not `x`
        // for `x = −0`): their products as they are, the others' +0 (`x − (+0)` is `x`,
        // −0 included); lane by lane, then or-ed (no early exit: one compare a quad)
        let mut mask = [0u64; L];
        for c in 0..L {
            mask[c] = used[c] & 0u64.wrapping_sub(u64::from(xk[c] != 0.0));
        }
        if mask.iter().fold(0, |o, &m| o | m) == 0 {
            continue;
        }
        let (anc, l) = f.row(s + k);
        for (&a, &lv) in anc.iter().zip(l) {
            let xa = &mut before[a - s][..L];
            for c in 0..L {
                xa[c] -= f64::from_bits((lv * xk[c]).to_bits() & mask[c]);
            }
        }
    }
    for (k, xk) in x.iter_mut().enumerate() {
        let d = f.d(s + k);
        for v in xk[..L].iter_mut() {
            *v /= d;
        }
    }
    for k in 0..n {
        let (anc, l) = f.row(s + k);
        let (before, rest) = x.split_at_mut(k);
        let mut acc: [f64; L] = rest[0][..L].try_into().expect("L lanes");
        for (&a, &lv) in anc.iter().zip(l) {
            let xa = &before[a - s][..L];
            for c in 0..L {
                acc[c] -= lv * xa[c];
            }
        }
        rest[0][..L].copy_from_slice(&acc);
    }
}

/// [`solve_tree`] of each of the `x.len() / N` columns of `x` (each `N` long, column-major)
/// over tree dofs `s..s + N`: the factor's rows are looked up once for all of them, and each
/// column's arithmetic is that of [`solve_tree`] alone.
pub(super) fn solve_tree_columns<const N: usize>(f: &Factorization, x: &mut [f64], s: usize) {
    for k in (0..N).rev() {
        let (anc, lk) = f.row(s + k);
        for col in x.chunks_exact_mut(N) {
            let xk = col[k];
            if xk != 0.0 {
                for (&a, &lv) in anc.iter().zip(lk) {
                    col[a - s] -= lv * xk;
                }
            }
        }
    }
    for k in 0..N {
        let d = f.d(s + k);
        for col in x.chunks_exact_mut(N) {
            col[k] /= d;
        }
    }
    for k in 0..N {
        let (anc, lk) = f.row(s + k);
        for col in x.chunks_exact_mut(N) {
            let mut acc = col[k];
            for (&a, &lv) in anc.iter().zip(lk) {
                acc -= lv * col[a - s];
            }
            col[k] = acc;
        }
    }
}

twice! {
    /// `W` (`k x k`, row-major, every entry written) of an island on one tree from its rows'
    /// `qH⁻¹ Jᵀ` dof-major (`mt[c k + b]`: row `b`'s entry at dof `c`) and their `J` (row `a`
    /// at `j[row_off[a]..]`, its nonzero columns `nz[nz_start[a]..nz_start[a + 1]]`): entry
    /// `(a, b ≤ a)` is `0 + Σ J_a[c] mt[c k + b]` over those columns in order from -0.0 (a
    /// skipped term adds a zero), mirrored above the diagonal; row `a`'s entries are summed
    /// side by side, a column `c` at a time.
    pub(super) fn w_lower(w: &mut [f64], (mt, j): (&[f64], &[f64]), (row_off, nz, nz_start): (&[usize], &[u32], &[usize]), k: usize) {
        w_lower_in(w, (mt, j), (row_off, nz, nz_start), k);
    }
}

/// [`w_lower`]'s body: row `a`'s entries in tiles of 16, 8 or 4 side by side (their sums in
/// registers), each tile summing the row's columns in order (`((x0 m0 + x1 m1) + x2 m2) + …`,
/// the first product as it is: `−0 + p` is `p`), then `+ 0`. A row's tiles run to its
/// diagonal's quad (the entries past the diagonal are written by the mirror after), or, where
/// that quad would leave the row, to the last whole quad and the rest one entry at a time.
#[inline(always)]
fn w_lower_in(w: &mut [f64], (mt, j): (&[f64], &[f64]), (row_off, nz, nz_start): (&[usize], &[u32], &[usize]), k: usize) {
    for a in 0..k {
        let len = a + 1;
        let row = &mut w[a * k..(a + 1) * k];
        let cols = &nz[nz_start[a]..nz_start[a + 1]];
        if cols.is_empty() {
            row[..len].fill(0.0);
            continue;
        }
        let col = (&j[row_off[a]..], cols);
        let whole = if len.div_ceil(4) * 4 <= k { len.div_ceil(4) * 4 } else { len & !3 };
        let mut i0 = 0;
        while whole - i0 >= 16 {
            w_tile::<4>(&mut row[i0..i0 + 16], i0, col, mt, k);
            i0 += 16;
        }
        if whole - i0 >= 8 {
            w_tile::<2>(&mut row[i0..i0 + 8], i0, col, mt, k);
            i0 += 8;
        }
        if whole - i0 >= 4 {
            w_tile::<1>(&mut row[i0..i0 + 4], i0, col, mt, k);
        }
        for (i, y) in row[..len].iter_mut().enumerate().skip(whole) {
            let (c0, rest) = cols.split_first().expect("a column");
            let mut acc = col.0[*c0 as usize] * mt[*c0 as usize * k + i];
            for &c in rest {
                acc += col.0[c as usize] * mt[c as usize * k + i];
            }
            *y = acc + 0.0;
        }
    }
    // the upper triangle: row a's entries down column a
    for a in 1..k {
        let (top, rest) = w.split_at_mut(a * k);
        for (t, &x) in top.chunks_exact_mut(k).zip(&rest[..a]) {
            t[a] = x;
        }
    }
}

/// Entries `i0..i0 + 4 Q` of a row of `W` (`out`) from its `J` entries and nonzero columns
/// (`(ja, cols)`, `cols` not empty) and `mt`: the sums in `Q` quads of registers, the columns
/// in order, then `+ 0` (`cross_dot`'s sum over the trees: `0` plus the one tree's, a −0 made
/// +0).
#[inline(always)]
fn w_tile<const Q: usize>(out: &mut [f64], i0: usize, (ja, cols): (&[f64], &[u32]), mt: &[f64], k: usize) {
    let part = |c: u32| -> (f64, &[[f64; 4]]) { (ja[c as usize], mt[c as usize * k + i0..][..4 * Q].as_chunks::<4>().0) };
    let mut acc = [[0.0f64; 4]; Q];
    let (&c0, rest) = cols.split_first().expect("a column");
    let (x, m) = part(c0);
    for (aq, mq) in acc.iter_mut().zip(m) {
        for l in 0..4 {
            aq[l] = x * mq[l];
        }
    }
    for &c in rest {
        let (x, m) = part(c);
        for (aq, mq) in acc.iter_mut().zip(m) {
            for l in 0..4 {
                aq[l] += x * mq[l];
            }
        }
    }
    for (oq, aq) in out.as_chunks_mut::<4>().0.iter_mut().zip(&acc) {
        for l in 0..4 {
            oq[l] = aq[l] + 0.0;
        }
    }
}

/// The inverse of a symmetric positive definite 3 x 3 matrix, or zeros when it is singular
/// (relative to its diagonal).
pub(super) fn inverse3(w: &[f64; 9]) -> [f64; 9] {
    let c00 = w[4] * w[8] - w[5] * w[7];
    let c01 = w[5] * w[6] - w[3] * w[8];
    let c02 = w[3] * w[7] - w[4] * w[6];
    let det = w[0] * c00 + w[1] * c01 + w[2] * c02;
    let scale = w[0] * w[4] * w[8];
    // a NaN determinant counts as singular too
    if det.is_nan() || det <= 1e-9 * scale || scale <= 0.0 {
        return [0.0; 9];
    }
    let inv = 1.0 / det;
    [
        c00 * inv,
        (w[2] * w[7] - w[1] * w[8]) * inv,
        (w[1] * w[5] - w[2] * w[4]) * inv,
        c01 * inv,
        (w[0] * w[8] - w[2] * w[6]) * inv,
        (w[2] * w[3] - w[0] * w[5]) * inv,
        c02 * inv,
        (w[1] * w[6] - w[0] * w[7]) * inv,
        (w[0] * w[4] - w[1] * w[3]) * inv,
    ]
}

twice! {
    /// Rows of `src` (row `r`: `len` entries at `offs[r]`) into `dst` lane by lane
    /// (`dst[c stride + r]`: row `r`'s entry `c`; `offs.len() ≤ stride`): a copy, the
    /// batches' and `Dense::form`'s transpose, four rows by four columns at a time where the
    /// CPU has AVX2.
    pub(super) fn rows_to_lanes(src: &[f64], offs: &[usize], len: usize, dst: &mut [f64], stride: usize) {
        rows_to_lanes_in(src, offs, len, dst, stride, |_, _, _, _, _| 0);
    } avx2 {
        rows_to_lanes_in(src, offs, len, dst, stride, |src, o, c4, dst, r0| {
            use std::arch::x86_64::{_mm256_loadu_pd, _mm256_storeu_pd};
            assert!(o.iter().all(|&o| o + c4 <= src.len()) && c4 * stride <= dst.len() && r0 + 4 <= stride);
            let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
            for c in (0..c4).step_by(4) {
                // SAFETY: row `o` reads `o + c..o + c + 4`, within `src` (`c + 4 ≤ c4`); the
                // stores end at `(c + 3) stride + r0 + 4 ≤ c4 stride`, within `dst` (asserted)
                #[allow(unsafe_code)]
                unsafe {
                    let t = transpose4(o.map(|o| _mm256_loadu_pd(s.add(o + c))));
                    for (i, x) in t.into_iter().enumerate() {
                        _mm256_storeu_pd(d.add((c + i) * stride + r0), x);
                    }
                }
            }
            c4
        });
    }
}

twice! {
    /// [`rows_to_lanes`] back: `dst[offs[r] + c] = src[c stride + r]`.
    pub(super) fn lanes_to_rows(src: &[f64], stride: usize, dst: &mut [f64], offs: &[usize], len: usize) {
        lanes_to_rows_in(src, stride, dst, offs, len, |_, _, _, _, _| 0);
    } avx2 {
        lanes_to_rows_in(src, stride, dst, offs, len, |src, r0, c4, dst, o| {
            use std::arch::x86_64::{_mm256_loadu_pd, _mm256_storeu_pd};
            assert!(o.iter().all(|&o| o + c4 <= dst.len()) && c4 * stride <= src.len() && r0 + 4 <= stride);
            let (s, d) = (src.as_ptr(), dst.as_mut_ptr());
            for c in (0..c4).step_by(4) {
                // SAFETY: the loads end at `(c + 3) stride + r0 + 4 ≤ c4 stride`, within
                // `src`; row `o` is written at `o + c..o + c + 4`, within `dst` (asserted)
                #[allow(unsafe_code)]
                unsafe {
                    let t = transpose4(std::array::from_fn(|i| _mm256_loadu_pd(s.add((c + i) * stride + r0))));
                    for (&o, x) in o.iter().zip(t) {
                        _mm256_storeu_pd(d.add(o + c), x);
                    }
                }
            }
            c4
        });
    }
}

/// The 4 x 4 transpose of the rows `r`: lane `i` of output `d` is lane `d` of `r[i]`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn transpose4(r: [std::arch::x86_64::__m256d; 4]) -> [std::arch::x86_64::__m256d; 4] {
    use std::arch::x86_64::{_mm256_permute2f128_pd, _mm256_unpackhi_pd, _mm256_unpacklo_pd};
    let (t0, t1) = (_mm256_unpacklo_pd(r[0], r[1]), _mm256_unpackhi_pd(r[0], r[1]));
    let (t2, t3) = (_mm256_unpacklo_pd(r[2], r[3]), _mm256_unpackhi_pd(r[2], r[3]));
    [
        _mm256_permute2f128_pd::<0x20>(t0, t2),
        _mm256_permute2f128_pd::<0x20>(t1, t3),
        _mm256_permute2f128_pd::<0x31>(t0, t2),
        _mm256_permute2f128_pd::<0x31>(t1, t3),
    ]
}

/// [`rows_to_lanes`]' body: `quads(src, rows, c4, dst, r0)` copies the four rows `rows`'
/// columns `..c4` (a multiple of 4) to lanes `r0..r0 + 4` of `dst` and returns `c4`, or
/// returns 0 (then entry by entry).
#[inline(always)]
fn rows_to_lanes_in(src: &[f64], offs: &[usize], len: usize, dst: &mut [f64], stride: usize, quads: impl Fn(&[f64], [usize; 4], usize, &mut [f64], usize) -> usize) {
    assert!(offs.len() <= stride && dst.len() >= len * stride);
    let (rows4, rest) = offs.as_chunks::<4>();
    for (q, &o) in rows4.iter().enumerate() {
        let r0 = 4 * q;
        for c in quads(src, o, len & !3, dst, r0)..len {
            for (p, &o) in o.iter().enumerate() {
                dst[c * stride + r0 + p] = src[o + c];
            }
        }
    }
    for (p, &o) in rest.iter().enumerate() {
        let r = 4 * rows4.len() + p;
        for (c, &x) in src[o..o + len].iter().enumerate() {
            dst[c * stride + r] = x;
        }
    }
}

/// [`lanes_to_rows`]' body: `quads(src, r0, c4, dst, rows)` copies lanes `r0..r0 + 4` of
/// `src` at columns `..c4` (a multiple of 4) to the four rows `rows` and returns `c4`, or
/// returns 0.
#[inline(always)]
fn lanes_to_rows_in(src: &[f64], stride: usize, dst: &mut [f64], offs: &[usize], len: usize, quads: impl Fn(&[f64], usize, usize, &mut [f64], [usize; 4]) -> usize) {
    assert!(offs.len() <= stride && src.len() >= len * stride);
    let (rows4, rest) = offs.as_chunks::<4>();
    for (q, &o) in rows4.iter().enumerate() {
        let r0 = 4 * q;
        for c in quads(src, r0, len & !3, dst, o)..len {
            for (p, &o) in o.iter().enumerate() {
                dst[o + c] = src[c * stride + r0 + p];
            }
        }
    }
    for (p, &o) in rest.iter().enumerate() {
        let r = 4 * rows4.len() + p;
        for (c, y) in dst[o..o + len].iter_mut().enumerate() {
            *y = src[c * stride + r];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;

    #[test]
    fn batched_tree_solves_are_the_single_solves_bit_for_bit() {
        // two trees: dofs 0..2 (a chain), 2..14 (a floating base's chain of six, two
        // branches of three); a symmetric matrix with a dominant diagonal, factored along
        // the pattern
        let none = usize::MAX;
        let parents = [none, 0, none, 2, 3, 4, 5, 6, 7, 8, 9, 7, 11, 12];
        let n = parents.len();
        let h = DMatrix::from_fn(n, n, |i, k| if i == k { 4.0 + i as f64 } else { 0.3 / (1.0 + (i + k) as f64) });
        let mut f = Factorization::with_parents(&parents);
        f.factorize(&h);
        let (s, l) = (2, 12);
        // right-hand sides: one entry (a joint's row), a foot's (base and a branch), dense
        let rhs: Vec<Vec<f64>> = vec![
            (0..l).map(|k| if k == 8 { 1.0 } else { 0.0 }).collect(),
            (0..l).map(|k| if !(6..9).contains(&k) { 0.5 - k as f64 * 0.1 } else { 0.0 }).collect(),
            (0..l).map(|k| (k as f64 * 0.7).sin()).collect(),
            vec![0.0; l],
            (0..l).map(|k| if k == 11 { -2.0 } else { 0.0 }).collect(),
            // -0.0 entries that the single solve keeps (nothing updates them) next to ones it
            // updates: the 16-lane path's masked products must keep them too
            (0..l).map(|k| if k == 10 { 1.5 } else { -0.0 }).collect(),
            (0..l).map(|k| if k == 5 { -0.7 } else if k % 2 == 0 { -0.0 } else { 0.0 }).collect(),
            (0..l).map(|k| (k as f64 * 1.3).cos() * f64::from(u8::from(k % 3 != 1))).collect(),
            vec![-0.0; l],
            (0..l).map(|k| if k == 2 { 3.0 } else { 0.0 }).collect(),
            (0..l).map(|k| if k >= 9 { 0.25 * k as f64 } else { 0.0 }).collect(),
            (0..l).map(|k| if k == 4 { -1.0 } else { 0.0 }).collect(),
        ];
        let mut single = rhs.clone();
        for x in &mut single {
            solve_tree(&f, x, s);
        }
        // the 8-lane path (five right-hand sides) and the 16-lane one (all twelve)
        for nb in [5, rhs.len()] {
            let mut batch = vec![0.0; l * BATCH];
            let mut portable = vec![0.0; l * BATCH];
            for (col, x) in rhs[..nb].iter().enumerate() {
                for (k, &v) in x.iter().enumerate() {
                    batch[k * BATCH + col] = v;
                    portable[k * BATCH + col] = v;
                }
            }
            solve_tree_batch(&f, &mut batch, s, nb);
            solve_tree_batch_in(&f, &mut portable, s, nb);
            for (col, x) in single[..nb].iter().enumerate() {
                assert!(x.iter().any(|&v| v != 0.0) || col == 3 || col == 8);
                for (k, &v) in x.iter().enumerate() {
                    assert_eq!(batch[k * BATCH + col].to_bits(), v.to_bits(), "{nb}: column {col}, dof {k}");
                    assert_eq!(portable[k * BATCH + col].to_bits(), v.to_bits(), "{nb}: column {col}, dof {k}");
                }
            }
        }
    }

    #[test]
    fn w_lower_is_the_sum_entry_by_entry_bit_for_bit() {
        // five rows (and 23: every size of tile, a last row past the last whole quad) over
        // 7 dofs, sparse like a robot's (a servo's one entry, a foot's base and leg), zeros
        // and a -0.0 among them; qH⁻¹ Jᵀ dense, signs mixed
        for k in [5, 23] {
            w_lower_case(k, 7);
        }
    }

    /// [`w_lower`] of `k` rows over `l` dofs against the entry-by-entry sums.
    fn w_lower_case(k: usize, l: usize) {
        let j: Vec<f64> = (0..k * l)
            .map(|i| match (i / l % 5, i % l) {
                (0, 3) => 1.0,
                (1 | 2, c) if c < 3 || c == 5 => 0.3 + (i as f64 * 0.77).sin(),
                (3, 6) => -0.0,
                (4, c) => (i as f64 * 1.3).cos() * f64::from(u8::from(c != 2)),
                _ => 0.0,
            })
            .collect();
        let mj: Vec<f64> = (0..k * l).map(|i| (i as f64 * 0.41).sin() * 1e-3 + (i as f64 * 2.9).cos()).collect();
        let row_off: Vec<usize> = (0..k).map(|a| a * l).collect();
        let (mut nz, mut nz_start) = (vec![], vec![0]);
        for a in 0..k {
            nz.extend((0..l).filter(|&c| j[a * l + c] != 0.0).map(|c| c as u32));
            nz_start.push(nz.len());
        }
        let mut mt = vec![0.0; l * k];
        for (b, c) in (0..k).flat_map(|b| (0..l).map(move |c| (b, c))) {
            mt[c * k + b] = mj[b * l + c];
        }
        let (mut w, mut portable) = (vec![f64::NAN; k * k], vec![f64::NAN; k * k]);
        w_lower(&mut w, (&mt, &j), (&row_off, &nz, &nz_start), k);
        w_lower_in(&mut portable, (&mt, &j), (&row_off, &nz, &nz_start), k);
        for a in 0..k {
            for b in 0..=a {
                let mut y = -0.0;
                for &c in &nz[nz_start[a]..nz_start[a + 1]] {
                    y += j[a * l + c as usize] * mj[b * l + c as usize];
                }
                let x: f64 = 0.0 + y;
                // a nonzero entry, except the row of only a -0.0
                assert!(x != 0.0 || a % 5 == 3);
                for m in [&w, &portable] {
                    assert_eq!(m[a * k + b].to_bits(), x.to_bits(), "entry {a}, {b}");
                    assert_eq!(m[b * k + a].to_bits(), x.to_bits(), "entry {b}, {a}");
                }
            }
        }
    }

    #[test]
    fn inverse3_inverts_and_refuses_singular_blocks() {
        let w = [4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0];
        let i = inverse3(&w);
        for r in 0..3 {
            for c in 0..3 {
                let x: f64 = (0..3).map(|k| w[3 * r + k] * i[3 * k + c]).sum();
                assert!((x - f64::from(u8::from(r == c))).abs() < 1e-12);
            }
        }
        assert_eq!(inverse3(&[1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0]), [0.0; 9]);
    }

    /// The transposes copy every entry to its place, AVX2 or not, for rows and columns not
    /// multiples of four, and back.
    #[test]
    fn rows_to_lanes_and_back_copy_every_entry() {
        for (rows, len, stride) in [(11, 38, 16), (16, 38, 16), (3, 5, 4), (46, 38, 46), (8, 9, 8)] {
            let src: Vec<f64> = (0..rows * 50).map(|i| i as f64 + 0.5).collect();
            let offs: Vec<usize> = (0..rows).map(|r| 50 * r + r % 7).collect();
            let (mut dst, mut portable) = (vec![f64::NAN; len * stride], vec![f64::NAN; len * stride]);
            rows_to_lanes(&src, &offs, len, &mut dst, stride);
            rows_to_lanes_in(&src, &offs, len, &mut portable, stride, |_, _, _, _, _| 0);
            for (r, &o) in offs.iter().enumerate() {
                for c in 0..len {
                    assert_eq!(dst[c * stride + r], src[o + c]);
                    assert_eq!(portable[c * stride + r], src[o + c]);
                }
            }
            let (mut back, mut back_portable) = (vec![0.0; src.len()], vec![0.0; src.len()]);
            lanes_to_rows(&dst, stride, &mut back, &offs, len);
            lanes_to_rows_in(&dst, stride, &mut back_portable, &offs, len, |_, _, _, _, _| 0);
            for &o in &offs {
                assert_eq!(back[o..o + len], src[o..o + len]);
                assert_eq!(back_portable[o..o + len], src[o..o + len]);
            }
        }
    }
}

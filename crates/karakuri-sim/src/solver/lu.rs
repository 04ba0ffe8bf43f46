//! The dense factorisations of the active-set solves (`active.rs`, `condense.rs`): an LU with
//! row pivoting (a set with slides: not symmetric) and a Cholesky factor (the servo rows'
//! `W_SS + eps I`, a set without slides), factored once, applied to one right-hand side or to
//! many; and the row kernels of the sets' updates.
//!
//! On x86-64 the factorisations, the many-right-hand-side solve and the row kernels are
//! compiled twice by `twice!` (`mod.rs`), once for AVX2 (four `f64` an instruction
//! on the eliminations' rows, chosen at run time) and once portable (two), as the core's lanes
//! are (0064): the same operations in the same order (Rust never fuses a multiply and an add),
//! so the same bits either way (0071).

twice! {
    /// Factors `A` (`n x n`, row-major, the first `n²` entries of `a`) in place as `P A = L U`
    /// by Gaussian elimination with row pivoting (`perm`: the row swapped in at each column);
    /// false when a pivot is not larger than `tiny`. `L`'s multipliers are also kept by
    /// columns in the next `n²` entries (`a[n² + c n + i]`, row `i > c`), for [`lu_apply`]'s
    /// forward substitution. A row's elimination runs in whole quads counted back from its
    /// end (the quads lie the same for every row of a column: no scalar remainder), the first
    /// quad's lanes left of the column masked (see [`sub_masked`]): each entry's operations
    /// those of one entry at a time.
    pub(super) fn lu_factor(a: &mut [f64], perm: &mut Vec<usize>, n: usize, tiny: f64) -> bool {
        perm.clear();
        let (a, lt) = a[..2 * n * n].split_at_mut(n * n);
        for c in 0..n {
            // the first largest |entry| of column c from row c down (a NaN never wins)
            let (mut best, mut pivot) = (c, a[c * n + c].abs());
            for (i, row) in a[(c + 1) * n..].chunks_exact(n).enumerate() {
                let x = row[c].abs();
                if x > pivot {
                    (best, pivot) = (c + 1 + i, x);
                }
            }
            // a NaN pivot fails too
            if pivot.is_nan() || pivot <= tiny {
                return false;
            }
            perm.push(best);
            if best != c {
                let (top, bottom) = a.split_at_mut(best * n);
                top[c * n..(c + 1) * n].swap_with_slice(&mut bottom[..n]);
                for col in lt[..c * n].chunks_exact_mut(n) {
                    col.swap(c, best);
                }
            }
            let (top, below) = a.split_at_mut((c + 1) * n);
            eliminate(below, &top[c * n..], c);
            // column c of L (the multipliers just stored), by rows
            for (l, row) in lt[c * n + c + 1..(c + 1) * n].iter_mut().zip(below.chunks_exact(n)) {
                *l = row[c];
            }
        }
        true
    }
}

/// The mask of a first quad whose `lead` lanes lie left of the entries to update: those
/// lanes `0`, the others all ones. Computed, not read from a table of constants: knowing a
/// table's last lane all ones, the compiler split the quad's `and` into scalar pieces through
/// general registers (0138, 0143); a computed mask is one `vandpd` a row.
#[inline(always)]
fn lead_mask(lead: usize) -> [u64; 4] {
    std::array::from_fn(|j| if j >= lead { u64::MAX } else { 0 })
}

/// [`lu_factor`]'s step at column `c`: each row of `below` (rows of `n = u.len()`) less its
/// multiple `f = row[c] / u[c]` of the pivot row `u` from column `c + 1` on (a row whose `f`
/// is zero skipped), `f` stored at column `c`. The rows' quads lie the same for every row of
/// the step: they, the pivot row's quads and the first quad's mask are set up once a step,
/// and at most four quads (a set of up to 17 unknowns) are held in registers.
#[inline(always)]
fn eliminate(below: &mut [f64], u: &[f64], c: usize) {
    let n = u.len();
    let (from, d) = (c + 1, u[c]);
    let quads = (n - from).div_ceil(4);
    if quads == 0 || 4 * quads > n {
        for row in below.chunks_exact_mut(n) {
            let f = row[c] / d;
            if f != 0.0 {
                sub_quads(row, u, f, from);
            }
            row[c] = f;
        }
        return;
    }
    let start = n - 4 * quads;
    let m = &lead_mask(from - start);
    let (us, _) = u[start..].as_chunks::<4>();
    match quads {
        1 => eliminate_quads::<1>(below, us, (c, d, start), m),
        2 => eliminate_quads::<2>(below, us, (c, d, start), m),
        3 => eliminate_quads::<3>(below, us, (c, d, start), m),
        4 => eliminate_quads::<4>(below, us, (c, d, start), m),
        _ => {
            for row in below.chunks_exact_mut(n) {
                let f = row[c] / d;
                if f != 0.0 {
                    let (xs, _) = row[start..].as_chunks_mut::<4>();
                    sub_masked(xs, us, f, m);
                }
                row[c] = f;
            }
        }
    }
}

/// [`eliminate`] over `Q` quads from column `start` of each row (`start + 4 Q` columns), the
/// pivot row's `Q` quads (`us`) loaded once.
#[inline(always)]
fn eliminate_quads<const Q: usize>(below: &mut [f64], us: &[[f64; 4]], (c, d, start): (usize, f64, usize), m: &[u64; 4]) {
    let us: &[[f64; 4]; Q] = us[..Q].try_into().expect("Q quads");
    let us = *us;
    let n = start + 4 * Q;
    for row in below.chunks_exact_mut(n) {
        let f = row[c] / d;
        if f != 0.0 {
            let (xs, _) = row[start..].as_chunks_mut::<4>();
            let xs: &mut [[f64; 4]; Q] = xs.try_into().expect("Q quads");
            sub_masked(xs, &us, f, m);
        }
        row[c] = f;
    }
}

/// `x −= f u` over whole quads (`x`, `u` as many), the first quad's products masked by `m`
/// (a [`lead_mask`]; a masked lane subtracts `+0`, which leaves any `x` as it is, −0
/// included), the others by [`sub_quad_rows`].
#[inline(always)]
fn sub_masked(xs: &mut [[f64; 4]], us: &[[f64; 4]], f: f64, m: &[u64; 4]) {
    let Some(((x0, xs), (u0, us))) = xs.split_first_mut().zip(us.split_first()) else {
        return;
    };
    let (u, mut v) = (*u0, *x0);
    let mut p = [0u64; 4];
    for j in 0..4 {
        p[j] = (f * u[j]).to_bits() & m[j];
    }
    for j in 0..4 {
        v[j] -= f64::from_bits(p[j]);
    }
    *x0 = v;
    sub_quad_rows(xs, us, f);
}

/// `x[j] −= f u[j]` for `j` in `from..n` (`x`, `u`: `n` long), in quads counted back from `n`;
/// the first quad's lanes left of `from` subtract `+0` (their products masked), which leaves
/// any `x` as it is (−0 included). When those quads would start left of the row (`n < 4`,
/// or `from ≤ 1`), quads from `from` and the remainder one at a time.
#[inline(always)]
fn sub_quads(x: &mut [f64], u: &[f64], f: f64, from: usize) {
    let n = x.len();
    let u = &u[..n];
    let quads = (n - from).div_ceil(4);
    if 4 * quads <= n {
        let start = n - 4 * quads;
        let (xs, _) = x[start..].as_chunks_mut::<4>();
        let (us, _) = u[start..].as_chunks::<4>();
        sub_masked(xs, us, f, &lead_mask(from - start));
    } else {
        let (xs, xr) = x[from..].as_chunks_mut::<4>();
        let (us, ur) = u[from..].as_chunks::<4>();
        sub_quad_rows(xs, us, f);
        for (x, &u) in xr.iter_mut().zip(ur) {
            *x -= f * u;
        }
    }
}

/// `x −= f u` quad by quad, each quad's entries loaded before any is stored (`x` and `u` may
/// be parts of one matrix as far as the compiler knows: so its quads stay whole).
#[inline(always)]
fn sub_quad_rows(xs: &mut [[f64; 4]], us: &[[f64; 4]], f: f64) {
    for (xq, uq) in xs.iter_mut().zip(us) {
        let (u, mut v) = (*uq, *xq);
        for j in 0..4 {
            v[j] -= f * u[j];
        }
        *xq = v;
    }
}

twice! {
    /// Solves `A x = r` by [`lu_factor`]'s factors of `A` (`r` overwritten by `x`): the
    /// forward substitution column by column over `L`'s kept columns (each entry of `r` less
    /// its terms in column order, a column whose `r` entry is zero skipped), the back
    /// substitution row by row (each sum in column order).
    pub(super) fn lu_apply(a: &[f64], perm: &[usize], r: &mut [f64], n: usize) {
        let (a, lt) = a[..2 * n * n].split_at(n * n);
        let r = &mut r[..n];
        for (c, &p) in perm[..n].iter().enumerate() {
            r.swap(c, p);
        }
        for (c, col) in lt.chunks_exact(n).enumerate() {
            let (head, tail) = r.split_at_mut(c + 1);
            let rc = head[c];
            if rc != 0.0 {
                for (ri, &l) in tail.iter_mut().zip(&col[c + 1..]) {
                    *ri -= l * rc;
                }
            }
        }
        // `U x = r` by rows, as for a Cholesky factor
        chol_upper(a, r);
    }
}

twice! {
    /// `y[x] −= Σ_q a[q w + x] v[q]` for each `x < w = y.len()` (`a`: `v.len()` rows of `w`),
    /// each sum over `q` in order from −0.0 (as `Sum` of f64), eight `x` side by side.
    pub(super) fn sub_dots(y: &mut [f64], a: &[f64], v: &[f64]) {
        let w = y.len();
        let mut x = 0;
        while x < w {
            let lanes = (w - x).min(8);
            let mut acc = [-0.0f64; 8];
            if lanes == 8 {
                for (q, &vq) in v.iter().enumerate() {
                    let r: &[f64; 8] = a[q * w + x..q * w + x + 8].try_into().expect("8 lanes");
                    for j in 0..8 {
                        acc[j] += r[j] * vq;
                    }
                }
            } else {
                for (q, &vq) in v.iter().enumerate() {
                    for j in 0..lanes {
                        acc[j] += a[q * w + x + j] * vq;
                    }
                }
            }
            for j in 0..lanes {
                y[x + j] -= acc[j];
            }
            x += lanes;
        }
    }
}

twice! {
    /// `y −= Σ_x a[x] v[x]` (`a`: `v.len()` rows of `y.len()`), the rows in order, each entry
    /// of `y` on its own.
    pub(super) fn sub_rows(y: &mut [f64], a: &[f64], v: &[f64]) {
        let w = y.len();
        for (x, &vx) in v.iter().enumerate() {
            y.iter_mut().zip(&a[x * w..(x + 1) * w]).for_each(|(y, a)| *y -= a * vx);
        }
    }
}

twice! {
    /// `y += Σ_q a[q w + ..] v[q]` over the `q` with `v[q] ≠ 0` (`a`: `v.len()` rows of
    /// `w = y.len()`), the rows in order, each entry of `y` on its own.
    pub(super) fn add_rows_nz(y: &mut [f64], a: &[f64], v: &[f64]) {
        let w = y.len();
        for (q, &vq) in v.iter().enumerate() {
            if vq != 0.0 {
                y.iter_mut().zip(&a[q * w..(q + 1) * w]).for_each(|(y, a)| *y += a * vq);
            }
        }
    }
}

twice! {
    /// Factors a symmetric positive definite `A` (`n x n`, row-major; the upper triangle read)
    /// in place as `A = Uᵀ U`, `U` upper triangular in the upper triangle (a Cholesky factor:
    /// each row less the rows above's multiples, then scaled by its pivot's root); false when
    /// a pivot is not larger than `tiny` (or not a number). Row by row from the top (0143):
    /// each entry `A_rj` less the terms `U_cr U_cj` of the rows `c < r` in order (a row whose
    /// `U_cr` is zero skipped), as the factor by columns subtracted them, so the same bits; a
    /// row's entries from its diagonal on are held in registers as quads counted back from its
    /// end (the first quad's lanes left of the diagonal not stored), the first `n mod 4` rows
    /// (whose quads would start left of the matrix) entry by entry.
    pub(super) fn chol_factor(a: &mut [f64], n: usize, tiny: f64) -> bool {
        let a = &mut a[..n * n];
        for r in 0..n {
            let (top, rest) = a.split_at_mut(r * n);
            let row = &mut rest[..n];
            let quads = (n - r).div_ceil(4);
            if 4 * quads > n {
                for uc in top.chunks_exact(n) {
                    let f = uc[r];
                    if f != 0.0 {
                        row[r..].iter_mut().zip(&uc[r..]).for_each(|(x, u)| *x -= f * u);
                    }
                }
                let p = row[r];
                if p.is_nan() || p <= tiny {
                    return false;
                }
                let d = p.sqrt();
                row[r] = d;
                row[r + 1..].iter_mut().for_each(|x| *x /= d);
                continue;
            }
            let mut from = n - 4 * quads;
            while from < n {
                let ok = match ((n - from) / 4).min(6) {
                    1 => chol_block::<1>(row, top, r, from, tiny),
                    2 => chol_block::<2>(row, top, r, from, tiny),
                    3 => chol_block::<3>(row, top, r, from, tiny),
                    4 => chol_block::<4>(row, top, r, from, tiny),
                    5 => chol_block::<5>(row, top, r, from, tiny),
                    _ => chol_block::<6>(row, top, r, from, tiny),
                };
                if !ok {
                    return false;
                }
                from += 4 * ((n - from) / 4).min(6);
            }
        }
        true
    }
}

/// [`chol_factor`]'s row `row` (`r`) at the `B` quads from column `from` (`from ≤ r` for the
/// row's first block, which holds its diagonal and checks its pivot): less the rows above
/// (`top`), scaled by the pivot's root (the diagonal set to it), stored; the first block's
/// lanes left of the diagonal keep their entries. False when the pivot fails.
#[inline(always)]
fn chol_block<const B: usize>(row: &mut [f64], top: &[f64], r: usize, from: usize, tiny: f64) -> bool {
    let n = row.len();
    let mut acc = quads_at::<B>(row, from);
    sub_row_terms(&mut acc, (top, n, r), (top, n, from));
    let d = if from <= r {
        let p = acc[0][r - from];
        if p.is_nan() || p <= tiny {
            return false;
        }
        p.sqrt()
    } else {
        row[r]
    };
    for q in &mut acc {
        for x in q.iter_mut() {
            *x /= d;
        }
    }
    if from <= r {
        let (keep, lead) = (acc[0], r - from);
        let old = quads_at::<1>(row, from)[0];
        acc[0] = std::array::from_fn(|j| if j < lead { old[j] } else if j == lead { d } else { keep[j] });
    }
    let (out, _) = row[from..from + 4 * B].as_chunks_mut::<4>();
    out.copy_from_slice(&acc);
    true
}

/// The `B` quads of `row` from column `from`.
#[inline(always)]
fn quads_at<const B: usize>(row: &[f64], from: usize) -> [[f64; 4]; B] {
    let (q, _) = row[from..from + 4 * B].as_chunks::<4>();
    *<&[[f64; 4]; B]>::try_from(q).expect("B quads")
}

/// `acc −= f_c v_c` over the rows `c` of `fs` and of `vs` side by side, in order (`fs`: rows
/// of `nf`, `f_c` the entry `at` of row `c`; `vs`: rows of `nv`, `v_c` the `B` quads from
/// column `from` of row `c`), a row whose `f_c` is zero skipped: each lane's terms one after
/// another, as the entry-by-entry updates subtract them. `acc` stays in registers.
#[inline(always)]
fn sub_row_terms<const B: usize>(acc: &mut [[f64; 4]; B], (fs, nf, at): (&[f64], usize, usize), (vs, nv, from): (&[f64], usize, usize)) {
    // once, so that no row checks its bounds
    assert!(at < nf && from + 4 * B <= nv, "entries within the rows");
    for (fr, vr) in fs.chunks_exact(nf).zip(vs.chunks_exact(nv)) {
        let f = fr[at];
        if f != 0.0 {
            let v = quads_at::<B>(vr, from);
            for b in 0..B {
                for j in 0..4 {
                    acc[b][j] -= f * v[b][j];
                }
            }
        }
    }
}

twice! {
    /// Solves `Uᵀ X = B` by [`chol_factor`]'s `U` (`n x n`) for `B` of `n` rows of `w`
    /// (row-major, overwritten by `X`), `n = x.len() / w`: row by row from the top, each
    /// entry of `B` less the terms `U_cj X_c` of the rows above in order (a row whose `U_cj`
    /// is zero skipped), then divided by `U_jj`, as the substitution by columns did (0143);
    /// the row's whole quads held in registers up to six at a time, the rest entry by entry.
    pub(super) fn chol_lower_rows(u: &[f64], x: &mut [f64], w: usize) {
        let n = x.len() / w;
        let u = &u[..n * n];
        let whole = w - w % 4;
        for j in 0..n {
            let (top, rest) = x.split_at_mut(j * w);
            let row = &mut rest[..w];
            let d = u[j * n + j];
            let mut from = 0;
            while from < whole {
                let b = ((whole - from) / 4).min(6);
                match b {
                    1 => lower_block::<1>(row, (top, w), (u, n, j), from, d),
                    2 => lower_block::<2>(row, (top, w), (u, n, j), from, d),
                    3 => lower_block::<3>(row, (top, w), (u, n, j), from, d),
                    4 => lower_block::<4>(row, (top, w), (u, n, j), from, d),
                    5 => lower_block::<5>(row, (top, w), (u, n, j), from, d),
                    _ => lower_block::<6>(row, (top, w), (u, n, j), from, d),
                }
                from += 4 * b;
            }
            for e in whole..w {
                let mut v = row[e];
                for (uc, xc) in u.chunks_exact(n).zip(top.chunks_exact(w)) {
                    if uc[j] != 0.0 {
                        v -= uc[j] * xc[e];
                    }
                }
                row[e] = v / d;
            }
        }
    }
}

/// [`chol_lower_rows`]'s row `row` (`j`) at the `B` quads from column `from`: less the solved
/// rows above (`top`, rows of `w`) by `U`'s column `j` (`u`, `n x n`), divided by `d = U_jj`.
#[inline(always)]
fn lower_block<const B: usize>(row: &mut [f64], (top, w): (&[f64], usize), (u, n, j): (&[f64], usize, usize), from: usize, d: f64) {
    let mut acc = quads_at::<B>(row, from);
    sub_row_terms(&mut acc, (u, n, j), (top, w, from));
    for q in &mut acc {
        for x in q.iter_mut() {
            *x /= d;
        }
    }
    let (out, _) = row[from..from + 4 * B].as_chunks_mut::<4>();
    out.copy_from_slice(&acc);
}

/// Solves `U x = r` by [`chol_factor`]'s `U` (`n x n`, `n = r.len()`; `r` overwritten by `x`),
/// or by [`lu_factor`]'s: each sum in column order.
pub(super) fn chol_upper(u: &[f64], r: &mut [f64]) {
    let n = r.len();
    let u = &u[..n * n];
    for c in (0..n).rev() {
        let row = &u[c * n..(c + 1) * n];
        let (head, tail) = r.split_at_mut(c + 1);
        let mut x = head[c];
        for (&a, &rj) in row[c + 1..].iter().zip(tail.iter()) {
            x -= a * rj;
        }
        head[c] = x / row[c];
    }
}

twice! {
    /// Solves `Uᵀ x = r` by [`chol_factor`]'s `U` (`n x n`, `n = r.len()`; `r` overwritten by
    /// `x`): column by column, a column whose `x` entry is zero skipped.
    pub(super) fn chol_lower(u: &[f64], r: &mut [f64]) {
        let n = r.len();
        let u = &u[..n * n];
        for c in 0..n {
            let row = &u[c * n..(c + 1) * n];
            let (head, tail) = r.split_at_mut(c + 1);
            let x = head[c] / row[c];
            head[c] = x;
            if x != 0.0 {
                for (ri, &f) in tail.iter_mut().zip(&row[c + 1..]) {
                    *ri -= f * x;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A symmetric positive definite `n x n` matrix `Bᵀ B + 0.1 I` from a fixed sequence.
    fn spd(n: usize) -> Vec<f64> {
        let b: Vec<f64> = (0..n * n).map(|i| ((i * 7919 % 101) as f64 / 50.0) - 1.0).collect();
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] = (0..n).map(|k| b[k * n + i] * b[k * n + j]).sum::<f64>() + if i == j { 0.1 } else { 0.0 };
            }
        }
        a
    }

    #[test]
    fn cholesky_solves_match_the_lu_and_the_matrix() {
        let n = 9;
        let a = spd(n);
        let mut u = a.clone();
        assert!(chol_factor(&mut u, n, 1e-12));
        // Uᵀ U is A
        for i in 0..n {
            for j in 0..n {
                let s: f64 = (0..=i.min(j)).map(|k| u[k * n + i] * u[k * n + j]).sum();
                assert!((s - a[i * n + j]).abs() < 1e-12 * (1.0 + a[i * n + j].abs()), "({i}, {j})");
            }
        }
        // A x = r by the factor against the LU
        let r: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
        let mut x = r.clone();
        chol_lower(&u, &mut x);
        chol_upper(&u, &mut x);
        let (mut lu, mut perm, mut y) = (a.clone(), Vec::new(), r.clone());
        lu.resize(2 * n * n, 0.0);
        assert!(lu_factor(&mut lu, &mut perm, n, 1e-12));
        lu_apply(&lu, &perm, &mut y, n);
        for i in 0..n {
            assert!((x[i] - y[i]).abs() < 1e-10 * (1.0 + y[i].abs()), "{i}: {} {}", x[i], y[i]);
        }
        // many right-hand sides by rows: each column is the single solve's bits
        // (widths: the remainder alone, whole quads, blocks of up to six quads and a rest)
        for w in [3, 8, 20, 30] {
            let mut rows: Vec<f64> = (0..n * w).map(|i| (i as f64 * 0.37).cos()).collect();
            let cols: Vec<Vec<f64>> = (0..w).map(|c| (0..n).map(|i| rows[i * w + c]).collect()).collect();
            chol_lower_rows(&u, &mut rows, w);
            for (c, col) in cols.iter().enumerate() {
                let mut v = col.clone();
                chol_lower(&u, &mut v);
                for i in 0..n {
                    assert_eq!(v[i].to_bits(), rows[i * w + c].to_bits(), "{w}: ({i}, {c})");
                }
            }
        }
        // an indefinite matrix is refused
        let mut bad = a.clone();
        bad[4 * n + 4] = -1.0;
        assert!(!chol_factor(&mut bad, n, 1e-12));
    }

    #[test]
    fn cholesky_quads_are_the_entry_by_entry_factor_bit_for_bit() {
        for n in 1..=30 {
            let mut a = spd(n);
            for i in 0..n {
                a[i * n + i] += n as f64;
            }
            // zeros in the upper triangle (rows skipped) and −0s in the lower (never read)
            for i in 0..n {
                for j in i + 1..n {
                    if (i + 2 * j) % 7 == 0 {
                        a[i * n + j] = 0.0;
                        a[j * n + i] = -0.0;
                    }
                }
            }
            let mut u = a.clone();
            assert!(chol_factor(&mut u, n, 1e-12), "{n}");
            let mut v = a.clone();
            for c in 0..n {
                let d = v[c * n + c].sqrt();
                v[c * n + c] = d;
                for j in c + 1..n {
                    v[c * n + j] /= d;
                }
                for r in c + 1..n {
                    let f = v[c * n + r];
                    if f != 0.0 {
                        for j in r..n {
                            v[r * n + j] -= f * v[c * n + j];
                        }
                    }
                }
            }
            for i in 0..n {
                for j in i..n {
                    assert_eq!(u[i * n + j].to_bits(), v[i * n + j].to_bits(), "{n}: ({i}, {j})");
                }
            }
        }
    }

    /// [`lu_factor`] and [`lu_apply`] one entry at a time (as they were before the quads).
    fn lu_reference(a: &mut [f64], perm: &mut Vec<usize>, r: &mut [f64], n: usize) {
        perm.clear();
        for c in 0..n {
            let mut best = c;
            for i in c + 1..n {
                if a[i * n + c].abs() > a[best * n + c].abs() {
                    best = i;
                }
            }
            perm.push(best);
            for j in 0..n {
                a.swap(c * n + j, best * n + j);
            }
            for i in c + 1..n {
                let f = a[i * n + c] / a[c * n + c];
                a[i * n + c] = f;
                if f != 0.0 {
                    for j in c + 1..n {
                        a[i * n + j] -= f * a[c * n + j];
                    }
                }
            }
        }
        for c in 0..n {
            r.swap(c, perm[c]);
        }
        for c in 0..n {
            for i in c + 1..n {
                if r[c] != 0.0 {
                    r[i] -= a[i * n + c] * r[c];
                }
            }
        }
        for c in (0..n).rev() {
            let mut x = r[c];
            for j in c + 1..n {
                x -= a[c * n + j] * r[j];
            }
            r[c] = x / a[c * n + c];
        }
    }

    #[test]
    fn lu_quads_are_the_entry_by_entry_elimination_bit_for_bit() {
        for n in 1..=23 {
            // not symmetric, zeros (multipliers of 0: rows skipped) and −0s below the pivots,
            // pivots swapped in from below
            let a: Vec<f64> = (0..n * n)
                .map(|i| match (i / n, i % n, i % 5) {
                    (r, c, _) if r == c => 0.5 + (i % 3) as f64,
                    (r, c, 0) if r > c => 0.0,
                    (r, c, 1) if r > c => -0.0,
                    _ => ((i * 7919 % 101) as f64 / 25.0) - 2.0,
                })
                .collect();
            let r: Vec<f64> = (0..n).map(|i| if i % 4 == 1 { 0.0 } else { (i as f64 * 0.9).cos() }).collect();
            let (mut a1, mut p1, mut r1) = (a.clone(), Vec::new(), r.clone());
            let (mut a2, mut p2, mut r2) = (a.clone(), Vec::new(), r.clone());
            a1.resize(2 * n * n, f64::NAN);
            assert!(lu_factor(&mut a1, &mut p1, n, 1e-12), "{n}");
            lu_apply(&a1, &p1, &mut r1, n);
            lu_reference(&mut a2, &mut p2, &mut r2, n);
            assert_eq!(p1, p2, "{n}");
            assert!(p1.iter().enumerate().any(|(c, &p)| p != c) || n < 3, "{n}: no pivot swapped");
            for i in 0..n * n {
                assert_eq!(a1[i].to_bits(), a2[i].to_bits(), "{n}: entry {i}");
            }
            for i in 0..n {
                assert_eq!(r1[i].to_bits(), r2[i].to_bits(), "{n}: solution {i}");
            }
        }
    }

    #[test]
    fn row_kernels_are_the_serial_sums_bit_for_bit() {
        let (w, nq) = (11, 7);
        let a: Vec<f64> = (0..w * nq).map(|i| ((i * 31 % 17) as f64 - 8.0) / 3.0).collect();
        let v: Vec<f64> = (0..nq).map(|q| if q == 2 { 0.0 } else { (q as f64 - 3.3) / 1.7 }).collect();
        let y0: Vec<f64> = (0..w).map(|x| x as f64 * 0.1 - 0.4).collect();
        let mut y = y0.clone();
        sub_dots(&mut y, &a, &v);
        for x in 0..w {
            let s: f64 = (0..nq).map(|q| a[q * w + x] * v[q]).sum();
            assert_eq!((y0[x] - s).to_bits(), y[x].to_bits(), "{x}");
        }
        let (mut y1, mut y2) = (y0.clone(), y0.clone());
        sub_rows(&mut y1, &a, &v);
        add_rows_nz(&mut y2, &a, &v);
        for x in 0..w {
            let (mut s1, mut s2) = (y0[x], y0[x]);
            for q in 0..nq {
                s1 -= a[q * w + x] * v[q];
                if v[q] != 0.0 {
                    s2 += a[q * w + x] * v[q];
                }
            }
            assert_eq!(s1.to_bits(), y1[x].to_bits());
            assert_eq!(s2.to_bits(), y2[x].to_bits());
        }
    }
}

//! Storing results in lanes into the callers' row-major output (record 0092, 0107): the
//! portable transpose run by run ([`store_rows`]), and the AVX2 stores ([`store_rows_avx2`],
//! [`store_mapped_avx2`]) that move four entries of four states a tile, non-temporal past
//! [`stream_bytes`].

use super::super::kin_lanes::transpose4;
use super::super::lanes::{ask_ahead4, L, LANES};

/// The lanes of `src` (one state's `nv x nv` matrix in lanes) that hold states of group `g`
/// (of `k`) into their rows of `dst`, run by run of `runs` (`(lo, hi, zero)`: entries
/// `lo..hi`, zero in every state when `zero`, else four entries of four states at a time
/// through a 4x4 transpose in registers).
#[inline(always)]
pub(crate) fn store_rows(src: &[L], runs: &[(usize, usize, bool)], g: usize, k: usize, dst: &mut [f64]) {
    let per = src.len();
    let states = LANES.min(k - g * LANES);
    let rows = &mut dst[g * LANES * per..(g * LANES + states) * per];
    if states < LANES {
        for (l, row) in rows.chunks_exact_mut(per).enumerate() {
            for (o, x) in row.iter_mut().zip(src) {
                *o = x.0[l];
            }
        }
        return;
    }
    let (r01, r23) = rows.split_at_mut(2 * per);
    let (r0, r1) = r01.split_at_mut(per);
    let (r2, r3) = r23.split_at_mut(per);
    for &(lo, hi, zero) in runs {
        if zero {
            for r in [&mut *r0, &mut *r1, &mut *r2, &mut *r3] {
                r[lo..hi].fill(0.0);
            }
            continue;
        }
        let (s, o0, o1, o2, o3) = (&src[lo..hi], &mut r0[lo..hi], &mut r1[lo..hi], &mut r2[lo..hi], &mut r3[lo..hi]);
        let blocks = s.chunks_exact(4).zip(o0.chunks_exact_mut(4)).zip(o1.chunks_exact_mut(4)).zip(o2.chunks_exact_mut(4)).zip(o3.chunks_exact_mut(4));
        for ((((x, o0), o1), o2), o3) in blocks {
            let [a, b, c, d] = transpose4(x[0], x[1], x[2], x[3]);
            o0.copy_from_slice(&a.0);
            o1.copy_from_slice(&b.0);
            o2.copy_from_slice(&c.0);
            o3.copy_from_slice(&d.0);
        }
        for e in lo + (hi - lo) / 4 * 4..hi {
            (r0[e], r1[e], r2[e], r3[e]) = (src[e].0[0], src[e].0[1], src[e].0[2], src[e].0[3]);
        }
    }
}

/// The least output of one call (bytes, every result) from which the AVX2 stores stream past
/// the caches: half the L3 of the machine it was measured on (32 MiB; record 0092: 8 MiB
/// streamed TALOS's 12 MB CRBA and M⁻¹ outputs that still fit, 16 MiB leaves them cached).
pub(crate) const STREAM_BYTES: usize = 16 << 20;

/// Output of one call (bytes, every result) from which the AVX2 stores stream past the caches:
/// half the last-level cache (`cpuid`), at least [`STREAM_BYTES`] (record 0145: with the lines
/// asked ahead, TALOS's 35 MB of derivatives at N = 1024 went faster cached in this Xeon's 260 MB
/// L3 than streamed to memory). Read once; [`STREAM_BYTES`] in unit tests, so that they stream.
pub(crate) fn stream_bytes() -> usize {
    static AT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *AT.get_or_init(|| if cfg!(test) { STREAM_BYTES } else { last_level_cache().map_or(STREAM_BYTES, |c| (c / 2).max(STREAM_BYTES)) })
}

/// Bytes of the last cache level `cpuid` describes (leaf 4 on Intel, 0x8000_001D on AMD: the
/// deterministic cache parameters, ways x partitions x line x sets), `None` when it describes none.
#[cfg(target_arch = "x86_64")]
fn last_level_cache() -> Option<usize> {
    use std::arch::x86_64::{__cpuid, __cpuid_count};
    let (max, ext) = (__cpuid(0).eax, __cpuid(0x8000_0000).eax);
    let leaf = if max >= 4 && __cpuid_count(4, 0).eax & 31 != 0 {
        4
    } else if ext >= 0x8000_001D {
        0x8000_001D
    } else {
        return None;
    };
    let mut last = None;
    for sub in 0..16 {
        let r = __cpuid_count(leaf, sub);
        if r.eax & 31 == 0 {
            break;
        }
        let (ways, parts, line) = ((r.ebx >> 22) as usize + 1, ((r.ebx >> 12) & 0x3ff) as usize + 1, (r.ebx & 0xfff) as usize + 1);
        last = Some(ways * parts * line * (r.ecx as usize + 1));
    }
    last
}

/// No cache sizes off x86-64 (the streaming stores are x86-64's only).
#[cfg(not(target_arch = "x86_64"))]
fn last_level_cache() -> Option<usize> {
    None
}

/// Four numbers `v` into `o[..4]`: an ordinary store, or (`stream`) non-temporal ones (one of
/// 256 bits, two of 128 or four of 64, as `o` is aligned).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn put4(o: &mut [f64], v: std::arch::x86_64::__m256d, stream: bool) {
    use std::arch::x86_64::*;
    let o = &mut o[..4];
    let p = o.as_mut_ptr();
    let at = p as usize;
    // SAFETY: `o` holds four f64 (sliced above); each streaming store gets the alignment it
    // needs (checked on the pointer); AVX is enabled on this function.
    #[allow(unsafe_code)]
    unsafe {
        if !stream {
            _mm256_storeu_pd(p, v);
        } else if at.is_multiple_of(32) {
            _mm256_stream_pd(p, v);
        } else if at.is_multiple_of(16) {
            _mm_stream_pd(p, _mm256_castpd256_pd128(v));
            _mm_stream_pd(p.add(2), _mm256_extractf128_pd::<1>(v));
        } else {
            let x: [f64; 4] = std::mem::transmute(v);
            for (t, x) in x.iter().enumerate() {
                _mm_stream_si64(p.add(t).cast::<i64>(), x.to_bits() as i64);
            }
        }
    }
}

/// One number into `o`, non-temporal when `stream` (the tails of [`store_rows_avx2`], so that
/// a cache line is not written both ways).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn put1(o: &mut f64, x: f64, stream: bool) {
    if stream {
        // SAFETY: `o` is one f64, 8-byte aligned, which is all `movnti` needs.
        #[allow(unsafe_code)]
        unsafe {
            std::arch::x86_64::_mm_stream_si64((o as *mut f64).cast::<i64>(), x.to_bits() as i64)
        };
    } else {
        *o = x;
    }
}

/// `$x` (four `&L`) transposed into `$r` (four `&mut [f64]`): entry `l` of `$r[t]` is lane
/// `t` of `$x[l]` (AVX loads, two unpacks, two lane swaps, four stores, non-temporal when
/// `$stream`). A macro so that it is expanded inside the AVX2 functions that use it (a
/// target-feature function is not inlined into its callers: a call per tile cost more than
/// the tile).
macro_rules! tile_avx2 {
    ($x:expr, $r:expr, $stream:expr) => {{
        use std::arch::x86_64::*;
        // SAFETY: each `L` is four f64 aligned to 32 bytes (`repr(C, align(32))`); AVX is
        // enabled on the function this expands in.
        #[allow(unsafe_code)]
        let [a, b, c, d] = $x.map(|l: &L| unsafe { _mm256_load_pd(l.0.as_ptr()) });
        let (t0, t1) = (_mm256_unpacklo_pd(a, b), _mm256_unpackhi_pd(a, b));
        let (t2, t3) = (_mm256_unpacklo_pd(c, d), _mm256_unpackhi_pd(c, d));
        let [r0, r1, r2, r3] = $r;
        put4(r0, _mm256_permute2f128_pd::<0x20>(t0, t2), $stream);
        put4(r1, _mm256_permute2f128_pd::<0x20>(t1, t3), $stream);
        put4(r2, _mm256_permute2f128_pd::<0x31>(t0, t2), $stream);
        put4(r3, _mm256_permute2f128_pd::<0x31>(t1, t3), $stream);
    }};
}
#[cfg(target_arch = "x86_64")]
pub(crate) use tile_avx2;

/// [`store_rows`] through AVX registers, non-temporal when `stream` (then fenced at the end):
/// each block of four entries of four states by eight 128-bit loads (four of them folded into
/// `vinsertf128`), four in-lane unpacks and four stores; a block that is zero in every state by
/// four stores of a zero register (no transpose, no `memset` call per short run). The runs are
/// bounds-checked once each, then written through pointers (record 0107: the per-tile slicing,
/// spills and `memset` calls were about half of TALOS's CRBA call).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn store_rows_avx2(src: &[L], runs: &[(usize, usize, bool)], g: usize, k: usize, dst: &mut [f64], stream: bool) {
    let per = src.len();
    let states = LANES.min(k - g * LANES);
    if states < LANES {
        return store_rows(src, runs, g, k, dst);
    }
    let rows = &mut dst[g * LANES * per..(g * LANES + LANES) * per];
    let s = src.as_ptr().cast::<f64>();
    // SAFETY: `rows` is four rows of `per` entries; entry `e < per` of `src` is the 32-byte
    // aligned `L` at `s + 4 e` (`src.len() == per`, `repr(C, align(32))`).
    #[allow(unsafe_code)]
    unsafe {
        store_runs(runs, rows, stream, |e| s.add(4 * e))
    }
}

/// The group's result whose entry `e` is the lane at `f64` offset `map[e]` of `src` (the lane
/// `src[map[e] / 4]`) into its rows of `dst`, as
/// [`store_rows_avx2`] stores a full matrix (`scratch`: the gathered matrix of a short last
/// group). Record 0107: M read from the compact rows the kernel wrote (about a quarter of
/// `nv²` lanes on TALOS) instead of a full `nv²` matrix of lanes written both ways by the kernel
/// and read back, and M⁻¹ from its lower triangle without the mirror. Record 0125: the offsets
/// are read unchecked and scaled by the load's addressing (four instructions a block of four
/// entries of four states fewer than a checked index of lanes, and four shifts).
///
/// # Safety
///
/// Every `map[e]` is `4 i` for a lane `i < src.len()`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
#[allow(clippy::too_many_arguments, unsafe_code)]
pub(super) unsafe fn store_mapped_avx2(src: &[L], map: &[u32], runs: &[(usize, usize, bool)], scratch: &mut [L], g: usize, k: usize, dst: &mut [f64], stream: bool) {
    let per = map.len();
    let states = LANES.min(k - g * LANES);
    if states < LANES {
        for (x, &i) in scratch.iter_mut().zip(map) {
            *x = src[i as usize / 4];
        }
        return store_rows(scratch, runs, g, k, dst);
    }
    let rows = &mut dst[g * LANES * per..(g * LANES + LANES) * per];
    debug_assert!(map.iter().all(|&i| i % 4 == 0 && (i / 4) < src.len() as u32));
    let s = src.as_ptr().cast::<f64>();
    // SAFETY: `rows` is four rows of `per == map.len()` entries; `store_runs` asks for entries
    // `e < per` only (`map[e]` in bounds), each at `f64` offset `map[e]` of `src`, the start of a
    // lane `L` of `src` (this function's contract), 32-byte aligned (`repr(C, align(32))`).
    unsafe { store_runs(runs, rows, stream, |e| s.add(*map.get_unchecked(e) as usize)) }
}

/// The runs of a group's four rows `rows` (`4 x per` entries, row-major), entry `e` of the four
/// states from the four lanes at `at(e)`: each block of four entries by eight 128-bit loads (four
/// folded into `vinsertf128`), four in-lane unpacks and four stores, a zero block by four stores
/// of a zero register, non-temporal when `stream` (then fenced). The one body of
/// [`store_rows_avx2`] (lanes in a row) and [`store_mapped_avx2`] (lanes through a map).
///
/// # Safety
///
/// `at(e)`, for every `e` of a run, points at four readable `f64` aligned to 32 bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
#[allow(unsafe_code)]
unsafe fn store_runs(runs: &[(usize, usize, bool)], rows: &mut [f64], stream: bool, at: impl Fn(usize) -> *const f64) {
    let per = rows.len() / LANES;
    let o = rows.as_mut_ptr();
    if stream {
        for &(lo, hi, zero) in runs {
            // SAFETY: as this function's (the run is checked inside)
            unsafe { store_run::<true>(o, per, lo, hi, zero, &at) };
        }
        std::arch::x86_64::_mm_sfence();
    } else {
        for &(lo, hi, zero) in runs {
            // SAFETY: as this function's (the run is checked inside)
            unsafe { store_run::<false>(o, per, lo, hi, zero, &at) };
        }
    }
}

/// One run `lo..hi` of [`store_runs`], stored non-temporal when `ST` (a parameter, so that each
/// copy has its own stores).
///
/// # Safety
///
/// `o` points at four rows of `per` writable `f64`; `at(e)`, for `e` in `lo..hi`, at four
/// readable `f64` aligned to 32 bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
#[allow(unsafe_code)]
unsafe fn store_run<const ST: bool>(o: *mut f64, per: usize, lo: usize, hi: usize, zero: bool, at: &impl Fn(usize) -> *const f64) {
    use std::arch::x86_64::*;
    assert!(lo <= hi && hi <= per);
    let mut e = lo;
    // SAFETY: entry `e < hi <= per` of row `l < 4` is `o + l * per + e` (the caller's four
    // rows); the lanes at `at(e)` are 32-byte aligned, so the 128-bit loads of their halves
    // are aligned. AVX2 is enabled on this function.
    unsafe {
        let put = |p: *mut f64, v: __m256d| {
            if ST {
                put4(std::slice::from_raw_parts_mut(p, 4), v, true)
            } else {
                _mm256_storeu_pd(p, v)
            }
        };
        // each row's line ahead, asked for while this block is stored (record 0141)
        let ask = |e: usize| {
            if !ST {
                ask_ahead4(o, per, e);
            }
        };
        if zero {
            let z = _mm256_setzero_pd();
            while e + 4 <= hi {
                ask(e);
                for l in 0..LANES {
                    put(o.add(l * per + e), z);
                }
                e += 4;
            }
        } else {
            while e + 4 <= hi {
                ask(e);
                let [a, b, c, d] = [at(e), at(e + 1), at(e + 2), at(e + 3)];
                let half = |x: *const f64, y: *const f64| _mm256_insertf128_pd::<1>(_mm256_castpd128_pd256(_mm_load_pd(x)), _mm_load_pd(y));
                // [a0 a1 | c0 c1], [b0 b1 | d0 d1], [a2 a3 | c2 c3], [b2 b3 | d2 d3]
                let (t0, t1, t2, t3) = (half(a, c), half(b, d), half(a.add(2), c.add(2)), half(b.add(2), d.add(2)));
                put(o.add(e), _mm256_unpacklo_pd(t0, t1));
                put(o.add(per + e), _mm256_unpackhi_pd(t0, t1));
                put(o.add(2 * per + e), _mm256_unpacklo_pd(t2, t3));
                put(o.add(3 * per + e), _mm256_unpackhi_pd(t2, t3));
                e += 4;
            }
        }
        while e < hi {
            for l in 0..LANES {
                let x = if zero { 0.0 } else { *at(e).add(l) };
                put1(&mut *o.add(l * per + e), x, ST);
            }
            e += 1;
        }
    }
}

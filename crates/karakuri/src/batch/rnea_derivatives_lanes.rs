//! ∂τ/∂q, ∂τ/∂v and M of RNEA in lanes: `algorithms::rnea_derivatives` for four states at once,
//! the same operations in the same order (world frame, the subtree sums `I^C`, `B^C`, `F`, each
//! joint writing its entries with all its ancestors'), so each lane holds the single call's
//! bits, zeros' signs included (record 0076). Symmetric 3x3 matrices (`I_o`, `B^C`'s `S`) keep
//! their 6 entries: the single kernel's are symmetric by construction and read entry by entry,
//! so the bits are the same. No closures in the hot loops (record 0068: a closure does not
//! inherit the `avx2` target feature).

use super::lanes::{add3, cross, dot3, lanes_placement, lanes_sin_cos, mul_mv, parent_placement, scale3, splat3, sub3};
use super::kin_lanes::store_lanes;
use super::lanes::{LMotion, LSe3, L, LANES, M3, V3};
use crate::algorithms::DerivativesWorkspace;
use crate::model::{JointType, Model};
use crate::spatial::{Motion, OriginInertia};

/// A symmetric 3x3 matrix of lanes: `(xx, yy, zz, xy, xz, yz)`, entry `(r, c)` at `SYM[r][c]`.
pub(crate) type Sym3 = [L; 6];
pub(crate) const SYM: [[usize; 3]; 3] = [[0, 3, 4], [3, 1, 5], [4, 5, 2]];

/// `OriginInertia` in lanes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LInertia {
    pub(crate) mass: L,
    pub(crate) h: V3,
    pub(crate) io: Sym3,
}

/// `MomentumVariation` in lanes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LMomVar {
    h_lin: V3,
    h_ang: V3,
    s: Sym3,
}

/// The lane buffers of the derivative kernels for one thread, sized for the model once; every
/// spatial quantity in world coordinates, as `DerivativesWorkspace`'s.
pub(crate) struct DerivLanes {
    /// World placement, velocity, acceleration (gravity folded in) per joint.
    pub(crate) om: Vec<LSe3>,
    pub(crate) ov: Vec<LMotion>,
    pub(crate) oa: Vec<LMotion>,
    /// Body, then subtree inertia, `B`, force per joint.
    pub(crate) ic: Vec<LInertia>,
    pub(crate) bc: Vec<LMomVar>,
    pub(crate) fc: Vec<LMotion>,
    /// Per dof: `J_k`, `∂v/∂q_k`, `∂a/∂q_k`, `∂a/∂q̇_k`.
    pub(crate) j: Vec<LMotion>,
    pub(crate) dv_dq: Vec<LMotion>,
    pub(crate) da_dq: Vec<LMotion>,
    pub(crate) da_dv: Vec<LMotion>,
    /// The group's q̇ and q̈ (or τ) per dof.
    pub(crate) x1: Vec<L>,
    pub(crate) x2: Vec<L>,
    /// Strict ancestor dofs of each joint (`DerivativesWorkspace`'s lists).
    pub(crate) ancestor_dofs: Vec<usize>,
    pub(crate) ancestor_start: Vec<usize>,
    /// ABA route: `δa_i`, `P_i` per joint; the bias τ(q̈ = 0) per dof.
    pub(crate) delta_a: Vec<LMotion>,
    pub(crate) p: Vec<LMotion>,
    pub(crate) b: Vec<L>,
    /// The group's three output matrices (`3 * nv * nv`; the entries no kernel writes stay 0).
    pub(crate) mats: Vec<L>,
}

impl DerivLanes {
    pub(crate) fn new(model: &Model) -> Self {
        let (nj, nv) = (model.njoints, model.nv);
        let d = DerivativesWorkspace::new(model);
        DerivLanes {
            om: vec![LSe3::default(); nj],
            ov: vec![LMotion::default(); nj],
            oa: vec![LMotion::default(); nj],
            ic: vec![LInertia::default(); nj],
            bc: vec![LMomVar::default(); nj],
            fc: vec![LMotion::default(); nj],
            j: vec![LMotion::default(); nv],
            dv_dq: vec![LMotion::default(); nv],
            da_dq: vec![LMotion::default(); nv],
            da_dv: vec![LMotion::default(); nv],
            x1: vec![L::default(); nv],
            x2: vec![L::default(); nv],
            ancestor_dofs: d.ancestor_dofs,
            ancestor_start: d.ancestor_start,
            mats: vec![L::default(); 3 * nv * nv],
            delta_a: vec![LMotion::default(); nj],
            p: vec![LMotion::default(); nj],
            b: vec![L::default(); nv],
        }
    }

    /// The group `g`'s rows of `x1`, `x2` (`nv` per state; lanes past `k` repeat the last state).
    #[inline(always)]
    pub(crate) fn load(&mut self, nv: usize, g: usize, k: usize, x1: &[f64], x2: Option<&[f64]>) {
        for l in 0..LANES {
            let s = (g * LANES + l).min(k - 1);
            for d in 0..nv {
                self.x1[d].0[l] = x1[s * nv + d];
            }
            if let Some(x2) = x2 {
                for d in 0..nv {
                    self.x2[d].0[l] = x2[s * nv + d];
                }
            }
        }
    }
}

/// Where a kernel's matrix entries go: `put(which, r, c, x)` sets entry `(r, c)` of matrix
/// `which` (0: ∂τ/∂q, 1: ∂τ/∂v, 2: M) of the four states.
pub(crate) trait Sink {
    fn put(&mut self, which: usize, r: usize, c: usize, x: L);
}

/// The three matrices of the group in lanes, row-major, `nv * nv` each: written with
/// 256-bit stores, then moved to each state's rows by [`scatter`] (writing the callers' rows
/// lane by lane from the kernel made LLVM compute the entries lane by lane too: 3x slower).
/// Row-major, or column-major when `COL` (the ABA route's layout, that of the single call).
pub(crate) struct LaneMats<'a, const COL: bool> {
    pub(crate) n: usize,
    pub(crate) m: &'a mut [L],
}

impl<const COL: bool> Sink for LaneMats<'_, COL> {
    #[inline(always)]
    fn put(&mut self, which: usize, r: usize, c: usize, x: L) {
        let (a, b) = if COL { (c, r) } else { (r, c) };
        self.m[(which * self.n + a) * self.n + b] = x;
    }
}

#[inline(always)]
fn m_add(a: LMotion, b: LMotion) -> LMotion {
    LMotion { lin: add3(a.lin, b.lin), ang: add3(a.ang, b.ang) }
}
#[inline(always)]
fn m_scale(a: LMotion, s: L) -> LMotion {
    LMotion { lin: [a.lin[0] * s, a.lin[1] * s, a.lin[2] * s], ang: [a.ang[0] * s, a.ang[1] * s, a.ang[2] * s] }
}
/// `S x`, S symmetric.
#[inline(always)]
fn sym_mul(s: &Sym3, x: V3) -> V3 {
    let mut out = [L::default(); 3];
    for (r, o) in out.iter_mut().enumerate() {
        *o = s[SYM[r][0]] * x[0] + s[SYM[r][1]] * x[1] + s[SYM[r][2]] * x[2];
    }
    out
}
/// `Se3::act_motion` of a constant motion.
#[inline(always)]
fn act_motion(o: &LSe3, m: &Motion) -> LMotion {
    let ang = mul_mv(&o.r, splat3(&m.angular));
    LMotion { lin: add3(mul_mv(&o.r, splat3(&m.linear)), cross(o.p, ang)), ang }
}
/// `a b` (nalgebra's 3x3 product: entry `(i, j)` is `(a_i0 b_0j + a_i1 b_1j) + a_i2 b_2j`).
#[inline(always)]
fn mat_mul(a: &M3, b: &M3) -> M3 {
    let mut out = [[L::default(); 3]; 3];
    for (i, row) in out.iter_mut().enumerate() {
        for (j, e) in row.iter_mut().enumerate() {
            *e = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
        }
    }
    out
}

/// `OriginInertia::mul_motion`.
#[inline(always)]
pub(crate) fn inertia_mul(y: &LInertia, v: LMotion) -> LMotion {
    LMotion { lin: sub3(scale3(y.mass, v.lin), cross(y.h, v.ang)), ang: add3(sym_mul(&y.io, v.ang), cross(y.h, v.lin)) }
}

/// `OriginInertia::transformed`: `rotate_symmetric`, then `add_shifted` into the zero inertia.
#[inline(always)]
fn inertia_transformed(y: &OriginInertia, x: &LSe3) -> LInertia {
    let (r, s, sp) = (&x.r, &y.i_o, L::splat);
    let (s00, s01, s02, s11, s12, s22) = (sp(s[(0, 0)]), sp(s[(0, 1)]), sp(s[(0, 2)]), sp(s[(1, 1)]), sp(s[(1, 2)]), sp(s[(2, 2)]));
    let (d0, d1) = (s00 - s22, s11 - s22);
    let a0 = [d0 * r[0][0] + s01 * r[0][1] + s02 * r[0][2], s01 * r[0][0] + d1 * r[0][1] + s12 * r[0][2], s02 * r[0][0] + s12 * r[0][1]];
    let a1 = [d0 * r[1][0] + s01 * r[1][1] + s02 * r[1][2], s01 * r[1][0] + d1 * r[1][1] + s12 * r[1][2], s02 * r[1][0] + s12 * r[1][1]];
    let xx = dot3(a0, r[0]) + s22;
    let yy = dot3(a1, r[1]) + s22;
    let zz = (s00 + s11 + s22) - xx - yy;
    let (xy, xz, yz) = (dot3(a0, r[1]), dot3(a0, r[2]), dot3(a1, r[2]));
    let (m, p) = (sp(y.mass), x.p);
    let h_r = mul_mv(r, splat3(&y.h));
    let g = add3(h_r, scale3(sp(0.5 * y.mass), p));
    let d = sp(2.0) * dot3(g, p);
    let (z, two) = (sp(0.0), sp(2.0));
    let io = [
        z + ((xx - two * p[0] * g[0]) + d),
        z + ((yy - two * p[1] * g[1]) + d),
        z + ((zz - two * p[2] * g[2]) + d),
        z + (xy - (p[0] * g[1] + g[0] * p[1])),
        z + (xz - (p[0] * g[2] + g[0] * p[2])),
        z + (yz - (p[1] * g[2] + g[1] * p[2])),
    ];
    let h = add3([z; 3], add3(h_r, scale3(m, p)));
    LInertia { mass: z + m, h, io }
}

#[inline(always)]
fn inertia_add(a: &mut LInertia, o: &LInertia) {
    a.mass += o.mass;
    a.h = add3(a.h, o.h);
    for (x, y) in a.io.iter_mut().zip(&o.io) {
        *x += *y;
    }
}

/// `MomentumVariation::of_body`.
#[inline(always)]
fn mom_of_body(y: &LInertia, v: &LMotion, h: &LMotion) -> LMomVar {
    let (w, vl, c, z) = (v.ang, v.lin, y.h, L::splat(0.0));
    let sk: M3 = [[z, -w[2], w[1]], [w[2], z, -w[0]], [-w[1], w[0], z]];
    let mut x = [[z; 3]; 3];
    for (r, row) in x.iter_mut().enumerate() {
        for (k, e) in row.iter_mut().enumerate() {
            *e = sk[r][0] * y.io[SYM[0][k]] + sk[r][1] * y.io[SYM[1][k]] + sk[r][2] * y.io[SYM[2][k]];
        }
    }
    let d = L::splat(2.0) * dot3(vl, c);
    let mut s = [z; 6];
    for r in 0..3 {
        for k in r..3 {
            s[SYM[r][k]] = ((x[r][k] + x[k][r]) - (c[r] * vl[k] + vl[r] * c[k])) + if r == k { d } else { z };
        }
    }
    LMomVar { h_lin: h.lin, h_ang: h.ang, s }
}

#[inline(always)]
fn mom_add(a: &mut LMomVar, o: &LMomVar) {
    a.h_lin = add3(a.h_lin, o.h_lin);
    a.h_ang = add3(a.h_ang, o.h_ang);
    for (x, y) in a.s.iter_mut().zip(&o.s) {
        *x += *y;
    }
}

/// `MomentumVariation::mul_motion`.
#[inline(always)]
pub(crate) fn mom_mul(b: &LMomVar, x: &LMotion) -> LMotion {
    let w = x.ang;
    LMotion { lin: scale3(L::splat(2.0), cross(w, b.h_lin)), ang: sub3(sym_mul(&b.s, w), cross(b.h_ang, w)) }
}

/// `MomentumVariation::transpose_mul_motion`.
#[inline(always)]
pub(crate) fn mom_tmul(b: &LMomVar, x: &LMotion) -> V3 {
    add3(add3(scale3(L::splat(2.0), cross(b.h_lin, x.lin)), sym_mul(&b.s, x.ang)), cross(b.h_ang, x.ang))
}

#[inline(always)]
fn column(r: &M3, j: usize) -> V3 {
    [r[0][j], r[1][j], r[2][j]]
}

/// World placement of joint `i` of the group's four states, as `jcalc::place_joints` computes
/// `o_m_i` (a revolute joint about ±x, ±y, ±z behind an unrotated placement mixes the parent's
/// rotation columns; the others compose the parent's placement with `λX_i`).
#[inline(always)]
fn place(m: &Model, w: &mut DerivLanes, i: usize, g: usize, k: usize, q: &[f64]) {
    let (nq, iq) = (m.nq, m.idx_q[i]);
    let o_p = w.om[m.parents[i]];
    let t = &m.joint_placements[i].translation;
    if let JointType::Revolute { axis } | JointType::RevoluteUnbounded { axis } = m.joint_types[i] {
        if let (Some((c, sign)), Some(0)) = (axis.signed_basis(), m.placement_quarter_turn[i]) {
            let mut angle = L::default();
            for l in 0..LANES {
                angle.0[l] = q[(g * LANES + l).min(k - 1) * nq + iq];
            }
            let (s, cos) = lanes_sin_cos(angle);
            let s = L::splat(sign) * s;
            let (c0, c1, c2) = (column(&o_p.r, 0), column(&o_p.r, 1), column(&o_p.r, 2));
            let cols = match c {
                0 => [c0, add3(scale3(cos, c1), scale3(s, c2)), sub3(scale3(cos, c2), scale3(s, c1))],
                1 => [sub3(scale3(cos, c0), scale3(s, c2)), c1, add3(scale3(s, c0), scale3(cos, c2))],
                _ => [add3(scale3(cos, c0), scale3(s, c1)), sub3(scale3(cos, c1), scale3(s, c0)), c2],
            };
            let mut r = [[L::default(); 3]; 3];
            for (a, row) in r.iter_mut().enumerate() {
                for (b, e) in row.iter_mut().enumerate() {
                    *e = cols[b][a];
                }
            }
            w.om[i] = LSe3 { r, p: add3(mul_mv(&o_p.r, splat3(t)), o_p.p) };
            return;
        }
    }
    let li = match lanes_placement(m, i, |l| q[(g * LANES + l).min(k - 1) * nq + iq]) {
        Some(x) => x,
        None => {
            let mut x = LSe3::default();
            for l in 0..LANES {
                let s = (g * LANES + l).min(k - 1);
                x.set_lane(l, &parent_placement(m, i, &q[s * nq..(s + 1) * nq]));
            }
            x
        }
    };
    w.om[i] = LSe3 { r: mat_mul(&o_p.r, &li.r), p: add3(mul_mv(&o_p.r, li.p), o_p.p) };
}

/// `rnea::forward_pass` for the group: placements, then per joint `v_i`, `a_i`, `I_i`, `B_i`,
/// `f_i`, per dof `J_k` and the three partials (`with_a = false`: q̈ = 0).
#[inline(always)]
pub(crate) fn forward(m: &Model, w: &mut DerivLanes, g: usize, k: usize, q: &[f64], with_a: bool) {
    let z = L::splat(0.0);
    let (o, zero) = (L::splat(1.0), LMotion::default());
    w.om[0] = LSe3 { r: [[o, z, z], [z, o, z], [z, z, o]], p: [z; 3] };
    w.ov[0] = zero;
    w.oa[0] = LMotion::splat(&-m.gravity);
    for i in 1..m.njoints {
        place(m, w, i, g, k, q);
        let (om, p) = (w.om[i], m.parents[i]);
        let (v_p, a_p) = (w.ov[p], w.oa[p]);
        let (iv, nv) = (m.idx_v[i], m.nvs[i]);
        let (mut v_j, mut a_j) = (zero, zero);
        for d in iv..iv + nv {
            let j = act_motion(&om, &m.motion_subspace[d]);
            w.j[d] = j;
            v_j = m_add(v_j, m_scale(j, w.x1[d]));
            if with_a {
                a_j = m_add(a_j, m_scale(j, w.x2[d]));
            }
        }
        let v_i = m_add(v_p, v_j);
        let a_i = m_add(m_add(a_p, a_j), v_p.cross(v_j));
        w.ov[i] = v_i;
        w.oa[i] = a_i;
        for d in iv..iv + nv {
            let j = w.j[d];
            let dv_dq = v_p.cross(j);
            w.dv_dq[d] = dv_dq;
            w.da_dq[d] = m_add(a_p.cross(j), v_p.cross(dv_dq));
            w.da_dv[d] = m_add(v_i.cross(j), dv_dq);
        }
        let y = inertia_transformed(&m.origin_inertias[i], &om);
        let h = inertia_mul(&y, v_i);
        w.fc[i] = m_add(inertia_mul(&y, a_i), v_i.cross_force(h));
        w.bc[i] = mom_of_body(&y, &v_i, &h);
        w.ic[i] = y;
    }
}

/// `rnea::backward_pass`: the subtree sums (children first), τ into `tau` when given, and the
/// entries of M, ∂τ/∂v and (when `Q`) ∂τ/∂q between each joint's dofs and those of the joint
/// and its ancestors, into `out`.
#[inline(always)]
pub(crate) fn backward<const Q: bool, S: Sink>(m: &Model, w: &mut DerivLanes, out: &mut S, mut tau: Option<&mut [L]>) {
    for i in (1..m.njoints).rev() {
        let (iv, nv) = (m.idx_v[i], m.nvs[i]);
        let (ic, bc, f) = (w.ic[i], w.bc[i], w.fc[i]);
        let ancestors = &w.ancestor_dofs[w.ancestor_start[i]..w.ancestor_start[i + 1]];
        for k in iv..iv + nv {
            let j_k = w.j[k];
            if let Some(t) = tau.as_deref_mut() {
                t[k] = j_k.dot(f);
            }
            let fa = inertia_mul(&ic, j_k);
            let r = mom_tmul(&bc, &j_k);
            if Q {
                let df_dq = m_add(m_add(inertia_mul(&ic, w.da_dq[k]), mom_mul(&bc, &w.dv_dq[k])), j_k.cross_force(f));
                configuration_entries(w, out, k, iv..iv + nv, ancestors, &fa, r, &df_dq);
            }
            let df_dv = m_add(inertia_mul(&ic, w.da_dv[k]), mom_mul(&bc, &j_k));
            for &j in ancestors {
                let j_j = w.j[j];
                out.put(1, k, j, w.da_dv[j].dot(fa) + dot3(j_j.ang, r));
                out.put(1, j, k, j_j.dot(df_dv));
                let mkj = j_j.dot(fa);
                out.put(2, k, j, mkj);
                out.put(2, j, k, mkj);
            }
            for j in iv..iv + nv {
                out.put(1, k, j, w.da_dv[j].dot(fa) + dot3(w.j[j].ang, r));
                out.put(2, k, j, w.j[j].dot(fa));
            }
        }
        let p = m.parents[i];
        if p > 0 {
            inertia_add(&mut w.ic[p], &ic);
            mom_add(&mut w.bc[p], &bc);
            w.fc[p] = m_add(w.fc[p], f);
        }
    }
}

/// `rnea::configuration_entries`: row k of ∂τ/∂q from `fa` and `r`, column k (the ancestors'
/// rows) from `df_dq`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn configuration_entries<S: Sink>(
    w: &DerivLanes,
    out: &mut S,
    k: usize,
    own: std::ops::Range<usize>,
    ancestors: &[usize],
    fa: &LMotion,
    r: V3,
    df_dq: &LMotion,
) {
    for &j in ancestors {
        out.put(0, k, j, w.da_dq[j].dot(*fa) + dot3(w.dv_dq[j].ang, r));
        out.put(0, j, k, w.j[j].dot(*df_dq));
    }
    for j in own {
        out.put(0, k, j, w.da_dq[j].dot(*fa) + dot3(w.dv_dq[j].ang, r));
    }
}

/// Every group of `LANES` states of the `k` given: ∂τ/∂q, ∂τ/∂v, M into `outs` (row-major,
/// `nv * nv` per state).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn groups(m: &Model, w: &mut DerivLanes, k: usize, q: &[f64], v: &[f64], a: &[f64], mut outs: [&mut [f64]; 3], store: impl Fn(&[L], usize, usize, &mut [f64])) {
    let n = m.nv;
    let mut mats = std::mem::take(&mut w.mats);
    for g in 0..k.div_ceil(LANES) {
        w.load(n, g, k, v, Some(a));
        forward(m, w, g, k, q, true);
        backward::<true, _>(m, w, &mut LaneMats::<false> { n, m: &mut mats }, None);
        for (o, mat) in outs.iter_mut().zip(mats.chunks_exact(n * n)) {
            store(mat, g, k, o);
        }
    }
    w.mats = mats;
}

/// The lanes of `mat` that hold states (`< k`) of group `g` into their rows of `out`, four
/// entries of four states at a time ([`store_lanes`]: a 4x4 transpose in registers, then
/// 256-bit stores, record 0085).
#[inline(always)]
pub(crate) fn scatter(mat: &[L], g: usize, k: usize, out: &mut [f64]) {
    store_lanes(mat, g, k, out);
}

twice! {
    /// ∂τ/∂q, ∂τ/∂v and M of `k` states in lanes, row-major into `dq`, `dv`, `mm`; the AVX2
    /// copy stores through AVX tiles, streamed past the caches when the three results do not
    /// fit (record 0092).
    pub(crate) fn rnea_derivatives_chunk(m: &Model, w: &mut DerivLanes, k: usize, q: &[f64], v: &[f64], a: &[f64], outs: [&mut [f64]; 3]) {
        groups(m, w, k, q, v, a, outs, scatter);
    } avx2 {
        let stream = 3 * k * m.nv * m.nv * 8 >= super::crba_lanes::stream_bytes();
        groups(m, w, k, q, v, a, outs, |s, g, k, o| super::crba_lanes::store_rows_avx2(s, &[(0, s.len(), false)], g, k, o, stream));
    }
}

#[cfg(test)]
mod tests {
    //! The portable build of the kernel (the public call takes the AVX2 one on an AVX2
    //! machine) against the single call, bit for bit; `tests/batch.rs` covers the dispatched one.
    use super::{groups, DerivLanes};
    use crate::algorithms::{self as alg, DerivativesWorkspace, SplitMix64};
    use crate::io::urdf;
    use nalgebra::DVector;

    #[test]
    fn portable_kernel_equals_the_single_call() {
        for (name, root) in [("panda", urdf::Root::Fixed), ("solo12", urdf::Root::FreeFlyer)] {
            let path = format!("{}/../../tests/data/{name}.urdf", env!("CARGO_MANIFEST_DIR"));
            let model = urdf::load(path, root).unwrap();
            let (k, nq, nv) = (6, model.nq, model.nv);
            let mut rng = SplitMix64::new(9);
            let mut q = vec![];
            for _ in 0..k {
                q.extend(alg::random_configuration(&model, &mut rng).iter());
            }
            let (v, a) = (rng.vector(k * nv), rng.vector(k * nv));
            let mut outs: [Vec<f64>; 3] = std::array::from_fn(|_| vec![f64::NAN; k * nv * nv]);
            let [x, y, z] = &mut outs;
            groups(&model, &mut DerivLanes::new(&model), k, &q, v.as_slice(), a.as_slice(), [x, y, z], super::scatter);
            let (mut data, mut ws) = (crate::Data::new(&model), DerivativesWorkspace::new(&model));
            for s in 0..k {
                let row = |x: &[f64], n: usize| DVector::from_column_slice(&x[s * n..(s + 1) * n]);
                alg::rnea_derivatives(&model, &mut data, &mut ws, &row(&q, nq), &row(v.as_slice(), nv), &row(a.as_slice(), nv));
                for (got, want) in outs.iter().zip([&ws.dtau_dq, &ws.dtau_dv, &data.mass_matrix]) {
                    let want = want.transpose();
                    assert!(got[s * nv * nv..(s + 1) * nv * nv].iter().zip(want.as_slice()).all(|(x, y)| x.to_bits() == y.to_bits()), "{name} state {s}");
                }
            }
        }
    }
}

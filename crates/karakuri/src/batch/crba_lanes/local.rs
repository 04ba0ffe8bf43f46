//! CRBA in lanes in joint frames (record 0099), for trees of revolute joints about ±x, ±y, ±z
//! behind unrotated placements (a free-flyer root aside): each composite inertia `(m, h, I_o)`
//! stays in its joint's frame and moves to the parent by a plane rotation of the other two
//! axes and the constant translation; `F = I^c S` is a column of it; `F` walks up the ancestors
//! the same way, and `M[r, k] = S_r · F` is an entry of it (Pinocchio's local convention). The
//! angle's sine and cosine are the only per-state numbers of a joint: no world placement, no
//! world inertia, no root placement (M is the same in any root frame).

// index loops over the dofs and the entries, as the formulas are written
#![allow(clippy::needless_range_loop)]

use crate::batch::kin_lanes::gather_rows;
use crate::batch::lanes::{cross, sin_cos, L, LANES, M3, V3, V6};
use crate::model::{JointType, Model};

/// The joint-frame CRBA's plan and buffers of one thread.
pub(crate) struct LocalCrba {
    /// Each joint's rotation axis `a` and its sign (a free-flyer root: `None`).
    axis: Vec<Option<(usize, f64)>>,
    /// Each joint's placement translation.
    t: Vec<[f64; 3]>,
    /// Where each dof's motion subspace is `±e_c` in its joint's frame: `(c, negated)`.
    unit: Vec<(usize, bool)>,
    /// Each joint's constant share of its composite inertia `[m, h, I_o]` (`I_o` as `xx, xy,
    /// xz, yy, yz, zz`): its body, plus what its children's masses add through their
    /// translations (`m_c t`, `m_c (|t|² 1 − t tᵀ)`).
    init: Vec<[f64; 10]>,
    ic: Vec<[L; 10]>,
    /// The sine (with the axis sign) and cosine of each joint's angle.
    sc: Vec<(L, L)>,
    q: Vec<L>,
}

/// Where `I_o[r][c]` is in a composite inertia's ten numbers.
const IO: [[usize; 3]; 3] = [[4, 5, 6], [5, 7, 8], [6, 8, 9]];

impl LocalCrba {
    /// The plan, or `None` when a joint is not a free-flyer root or a revolute joint about
    /// ±x, ±y, ±z behind an unrotated placement (those take the world-frame kernel: record
    /// 0099 measured the joint-frame one slower with the placements' quarter turns).
    pub(crate) fn new(m: &Model) -> Option<LocalCrba> {
        let mut axis = vec![None; m.njoints];
        for i in 1..m.njoints {
            axis[i] = match m.joint_types[i] {
                JointType::FreeFlyer if m.parents[i] == 0 => None,
                JointType::Revolute { axis } | JointType::RevoluteUnbounded { axis } if m.placement_quarter_turn[i] == Some(0) => Some(axis.signed_basis()?),
                _ => return None,
            };
        }
        let unit = m
            .motion_subspace
            .iter()
            .map(|x| {
                let s = [x.linear.x, x.linear.y, x.linear.z, x.angular.x, x.angular.y, x.angular.z];
                let c = (0..6).find(|&c| s[c].abs() == 1.0)?;
                (0..6).all(|e| e == c || s[e] == 0.0).then_some((c, s[c] < 0.0))
            })
            .collect::<Option<Vec<_>>>()?;
        let t: Vec<[f64; 3]> = m.joint_placements.iter().map(|x| [x.translation.x, x.translation.y, x.translation.z]).collect();
        let mut mass: Vec<f64> = m.origin_inertias.iter().map(|y| y.mass).collect();
        for i in (1..m.njoints).rev() {
            if m.parents[i] > 0 {
                mass[m.parents[i]] += mass[i];
            }
        }
        let mut init: Vec<[f64; 10]> = m
            .origin_inertias
            .iter()
            .map(|y| {
                let i = &y.i_o;
                [y.mass, y.h.x, y.h.y, y.h.z, i[(0, 0)], i[(0, 1)], i[(0, 2)], i[(1, 1)], i[(1, 2)], i[(2, 2)]]
            })
            .collect();
        for i in 1..m.njoints {
            let (p, t) = (m.parents[i], t[i]);
            if p > 0 {
                let (mc, tt) = (mass[i], t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
                init[p][0] += mc;
                for r in 0..3 {
                    init[p][1 + r] += mc * t[r];
                    for c in r..3 {
                        init[p][IO[r][c]] += mc * (if r == c { tt } else { 0.0 } - t[r] * t[c]);
                    }
                }
            }
        }
        let z = L::default();
        Some(LocalCrba { axis, t, unit, init, ic: vec![[z; 10]; m.njoints], sc: vec![(z, z); m.njoints], q: vec![z; m.nq] })
    }
}

/// `R_a(θ) v`: the other two axes turned in their plane (`sn`, `cs` the angle's sine and
/// cosine).
#[inline(always)]
fn turn<const A: usize>(v: V3, sn: L, cs: L) -> V3 {
    let (b, d) = ((A + 1) % 3, (A + 2) % 3);
    let mut o = v;
    o[b] = cs * v[b] - sn * v[d];
    o[d] = sn * v[b] + cs * v[d];
    o
}

/// `X* f` of joint `j` into its parent's frame: `lin' = R lin`, `ang' = R ang + t × lin'`.
#[inline(always)]
fn axis_force<const A: usize>(t: &[f64; 3], (sn, cs): (L, L), f: &mut V6) {
    let (lin, ang) = (turn::<A>([f[0], f[1], f[2]], sn, cs), turn::<A>([f[3], f[4], f[5]], sn, cs));
    let tl = cross([L::splat(t[0]), L::splat(t[1]), L::splat(t[2])], lin);
    *f = [lin[0], lin[1], lin[2], ang[0] + tl[0], ang[1] + tl[1], ang[2] + tl[2]];
}

#[inline(always)]
fn up(w: &LocalCrba, j: usize, f: &mut V6) {
    match w.axis[j] {
        Some((0, _)) => axis_force::<0>(&w.t[j], w.sc[j], f),
        Some((1, _)) => axis_force::<1>(&w.t[j], w.sc[j], f),
        _ => axis_force::<2>(&w.t[j], w.sc[j], f),
    }
}

/// `S · f` of dof `d`: one entry of `f`.
#[inline(always)]
fn s_dot(w: &LocalCrba, d: usize, f: &V6) -> L {
    match w.unit[d] {
        (c, false) => f[c],
        (c, true) => -f[c],
    }
}

/// `I S` of dof `d`: a column of `y`'s 6x6 matrix `[[m 1, [h]×ᵀ], [[h]×, I_o]]`.
#[inline(always)]
fn column(w: &LocalCrba, d: usize, y: &[L; 10]) -> V6 {
    let z = L::splat(0.0);
    let (c, neg) = w.unit[d];
    let [m, hx, hy, hz] = [y[0], y[1], y[2], y[3]];
    let col = match c {
        0 => [m, z, z, z, hz, -hy],
        1 => [z, m, z, -hz, z, hx],
        2 => [z, z, m, hy, -hx, z],
        3 => [z, -hz, hy, y[4], y[5], y[6]],
        4 => [hz, z, -hx, y[5], y[7], y[8]],
        _ => [-hy, hx, z, y[6], y[8], y[9]],
    };
    if neg {
        col.map(|x| -x)
    } else {
        col
    }
}

/// The composite inertia `y` moved to the parent's frame and added to `acc` (the constant
/// shares of its mass already in the parent's `init`): `h'' = R h`, `I'' = R I Rᵀ` (the plane
/// block by the double angle), then `− (t h''ᵀ + h'' tᵀ) + 2 (t · h'') 1`.
#[inline(always)]
fn axis_inertia<const A: usize>(t: &[f64; 3], (sn, cs): (L, L), y: &[L; 10], acc: &mut [L; 10]) {
    let (b, d) = ((A + 1) % 3, (A + 2) % 3);
    let h = turn::<A>([y[1], y[2], y[3]], sn, cs);
    let i: M3 = std::array::from_fn(|r| std::array::from_fn(|c| y[IO[r][c]]));
    let (ss, hs) = (sn * sn, sn * cs);
    let (c2, hs2) = (cs * cs - ss, hs + hs);
    let dif = i[b][b] - i[d][d];
    let delta = ss * dif + hs2 * i[b][d];
    let mut r = i;
    r[b][b] = i[b][b] - delta;
    r[d][d] = i[d][d] + delta;
    r[b][d] = hs * dif + c2 * i[b][d];
    r[d][b] = r[b][d];
    r[A][b] = cs * i[A][b] - sn * i[A][d];
    r[b][A] = r[A][b];
    r[A][d] = sn * i[A][b] + cs * i[A][d];
    r[d][A] = r[A][d];
    let t = [L::splat(t[0]), L::splat(t[1]), L::splat(t[2])];
    let th2 = (t[0] * h[0] + t[1] * h[1] + t[2] * h[2]) * L::splat(2.0);
    for x in 0..3 {
        acc[1 + x] += h[x];
        acc[IO[x][x]] += r[x][x] - (t[x] * h[x] + t[x] * h[x]) + th2;
        for z in x + 1..3 {
            acc[IO[x][z]] += r[x][z] - (t[x] * h[z] + h[x] * t[z]);
        }
    }
}

/// M of the group of states `g` (of `k`) as each dof's row on its path into `fl` (compact, as
/// `chain` and `cs` lay them out; `root_len[d]` free-flyer root dofs begin dof `d`'s path).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn mass_matrix_local(m: &Model, w: &mut LocalCrba, fl: &mut [L], chain: &[usize], cs: &[usize], root_len: &[usize], g: usize, k: usize, q: &[f64]) {
    let rows: [usize; LANES] = std::array::from_fn(|l| (g * LANES + l).min(k - 1));
    gather_rows(q, &rows, m.nq, &mut w.q);
    for i in 1..m.njoints {
        if let Some((_, sign)) = w.axis[i] {
            let (s, c) = sin_cos(w.q[m.idx_q[i]]);
            w.sc[i] = (if sign < 0.0 { -s } else { s }, c);
        }
        for e in 0..10 {
            w.ic[i][e] = L::splat(w.init[i][e]);
        }
    }
    for i in (1..m.njoints).rev() {
        let iv = m.idx_v[i];
        for d in iv..iv + m.nvs[i] {
            let mut f = column(w, d, &w.ic[i]);
            let (s, e, rl) = (cs[d], cs[d + 1], root_len[d]);
            let mut put = |t: usize, x: L| fl[t] = x;
            if w.axis[i].is_none() {
                // the root's own rows: entries of F in its frame
                for t in s..e {
                    put(t, s_dot(w, chain[t], &f));
                }
                continue;
            }
            let x = s_dot(w, d, &f);
            put(e - 1, if m.armature[d] != 0.0 { x + L::splat(m.armature[d]) } else { x });
            // up the ancestors: F into each parent's frame, then its row
            let mut j = i;
            for t in (s + rl..e - 1).rev() {
                up(w, j, &mut f);
                let r = chain[t];
                put(t, s_dot(w, r, &f));
                j = m.dof_joint[r];
            }
            if rl > 0 {
                up(w, j, &mut f);
                for t in s..s + rl {
                    put(t, s_dot(w, chain[t], &f));
                }
            }
        }
        let p = m.parents[i];
        if p > 0 {
            let (t, sc) = (&w.t[i], w.sc[i]);
            let (lo, hi) = w.ic.split_at_mut(i);
            let (acc, y) = (&mut lo[p], &hi[0]);
            match w.axis[i] {
                Some((0, _)) => axis_inertia::<0>(t, sc, y, acc),
                Some((1, _)) => axis_inertia::<1>(t, sc, y, acc),
                _ => axis_inertia::<2>(t, sc, y, acc),
            }
        }
    }
}

//! Constraint rows in joint space: the one place where a point, angular or wrench constraint
//! becomes a row of coefficients over the velocity variables.
//!
//! Every row here is built from the **world motion columns** `S_k` of the dofs (the spatial
//! motion of each dof's unit velocity, at the world origin in world axes: the columns of the
//! world joint Jacobian). A row's coefficient for dof `k` is the velocity it measures per unit
//! `q̇_k`:
//!
//! | row | coefficient | function |
//! | --- | --- | --- |
//! | point `p` (world) along `d` | `d·(S_lin + S_ang × p)` | [`point_coefficient`] |
//! | angular velocity along `d` | `d·S_ang` | [`angular_coefficient`] |
//! | along a world wrench `φ` | `φ·S` | [`wrench_coefficient`] |
//!
//! [`crate::constraints::ConstraintSet`] uses the coefficients over the precomputed supports of
//! its constraints. The simulator (`karakuri-sim`: contacts, loops, and the impact passes)
//! writes its rows with the **row writer**: [`add_point_rows`], [`add_angular_rows`] and their
//! relative forms walk each body's joint chain to the root and add `N` rows at once into a
//! [`RowLayout`]: dense rows over all `nv` dofs ([`DenseRows`]) or the simulator's compact
//! blocks over kinematic trees (each side a [`RowSink`] over one tree's columns). A free body
//! goes fixed-size, and [`set_free_body_point_rows`] writes it from its placement alone.

use crate::algorithms::dof_in_frame;
use crate::model::{JointType, Model};
use crate::spatial::{Force, Motion, Se3, Vec3};

/// The world motion column of every dof, `S_k = X_{world←joint} S_k^joint`, from the joint
/// placements `o_m_i` (`model.nv` entries in `s`). The same kernel as the columns of
/// `algorithms::joint_jacobians` ([`Data::jacobians`](crate::Data::jacobians)), without its
/// forward-kinematics sweep.
pub fn world_motion_columns(model: &Model, o_m_i: &[Se3], s: &mut [Motion]) {
    debug_assert_eq!(s.len(), model.nv);
    for (k, sk) in s.iter_mut().enumerate() {
        *sk = dof_in_frame(model, k, &o_m_i[model.dof_joint[k]]);
    }
}

/// The velocity along `dir` of the world point `p` of a body moved by a dof of world motion
/// column `s`, per unit dof velocity: `dir·(s_lin + s_ang × p)`.
#[inline]
pub fn point_coefficient(s: &Motion, p: &Vec3, dir: &Vec3) -> f64 {
    dir.dot(&(s.linear + s.angular.cross(p)))
}

/// The angular velocity along `dir` per unit velocity of a dof of world column `s`: `dir·s_ang`.
#[inline]
pub fn angular_coefficient(s: &Motion, dir: &Vec3) -> f64 {
    dir.dot(&s.angular)
}

/// The velocity measured by the world wrench `phi`, per unit velocity of a dof of world column
/// `s`: `phi·s` (for a point `p` along `d`, `phi = (d, p × d)` gives [`point_coefficient`]).
#[inline]
pub fn wrench_coefficient(s: &Motion, phi: &Force) -> f64 {
    s.dot(phi)
}

/// Where a row writer writes: `N` rows, each a slice whose entry 0 is the coefficient of dof
/// `first`. The two layouts are two ways of slicing: a **dense** row over all `nv` dofs
/// (`first` 0), or a **compact** block's rows sliced to the columns of one kinematic tree
/// (`first` the tree's first dof).
pub struct RowSink<'a, const N: usize> {
    /// The rows, each over dofs `first..first + len`.
    pub rows: [&'a mut [f64]; N],
    /// The dof of each row's entry 0.
    pub first: usize,
}

/// A layout of `N` rows: the [`RowSink`] over the dofs that move a joint (its tree's columns in
/// a compact block, the whole rows when dense), or none (the universe, which moves nothing).
pub trait RowLayout<const N: usize> {
    /// The rows' entries for the dofs of `joint`'s chain.
    fn sink(&mut self, joint: usize) -> Option<RowSink<'_, N>>;
}

/// The dense layout: `N` rows of length `nv`.
pub struct DenseRows<'a, const N: usize>(pub [&'a mut [f64]; N]);

impl<const N: usize> RowLayout<N> for DenseRows<'_, N> {
    fn sink(&mut self, joint: usize) -> Option<RowSink<'_, N>> {
        (joint != 0).then(|| RowSink {
            rows: self.0.each_mut().map(|r| &mut **r),
            first: 0,
        })
    }
}

/// Adds `sign · coef(S_k)[r]` to row `r` of `sink` for every dof `k` that moves `joint` (its
/// chain to the root). The angular rows' walk (the point rows go by runs: [`add_point_rows`]):
/// a free flyer on the universe (the
/// chain is its six dofs) goes on fixed-size arrays, the same arithmetic entry by entry.
#[inline]
fn add_chain<const N: usize>(
    model: &Model,
    s: &[Motion],
    joint: usize,
    sign: f64,
    sink: RowSink<'_, N>,
    coef: impl Fn(&Motion) -> [f64; N],
) {
    let RowSink { mut rows, first } = sink;
    if model.parents[joint] == 0 && model.nvs[joint] == 6 {
        let k0 = model.idx_v[joint];
        let cols: &[Motion; 6] = s[k0..k0 + 6].try_into().expect("six columns");
        let c0 = k0 - first;
        let mut rows = rows.map(|r| <&mut [f64; 6]>::try_from(&mut r[c0..c0 + 6]).expect("six columns"));
        for (k, sk) in cols.iter().enumerate() {
            let c = coef(sk);
            for (row, x) in rows.iter_mut().zip(c) {
                row[k] += sign * x;
            }
        }
        return;
    }
    let mut j = joint;
    while j > 0 {
        let k0 = model.idx_v[j];
        for (k, sk) in s[k0..k0 + model.nvs[j]].iter().enumerate() {
            let c = coef(sk);
            for (row, x) in rows.iter_mut().zip(c) {
                row[k0 + k - first] += sign * x;
            }
        }
        j = model.parents[j];
    }
}

/// Adds `sign ·` [`point_coefficient`] of the world point `p` of `joint`'s body along each of
/// `dirs` to the `N` rows of `layout`, for every dof that moves `joint` (nothing for the
/// universe). The chain to the root is taken in runs of consecutive dofs (a branch's joints
/// follow each other: the dm_control humanoid's left foot has two runs, the free flyer and
/// waist then the leg; its right foot one), each run's entries in one call of [`point_run`].
pub fn add_point_rows<const N: usize>(
    model: &Model,
    s: &[Motion],
    joint: usize,
    (p, dirs): (&Vec3, &[Vec3; N]),
    sign: f64,
    layout: &mut impl RowLayout<N>,
) {
    let Some(RowSink { mut rows, first }) = layout.sink(joint) else {
        return;
    };
    let (mut k0, mut k1) = (model.idx_v[joint], model.idx_v[joint] + model.nvs[joint]);
    let mut j = model.parents[joint];
    loop {
        let next = (j > 0).then(|| (model.idx_v[j], model.idx_v[j] + model.nvs[j]));
        match next {
            Some((a, b)) if b == k0 => k0 = a,
            _ => {
                point_run((&s[k0..k1], p), (dirs, sign), (&mut rows, k0 - first));
                let Some((a, b)) = next else { return };
                (k0, k1) = (a, b);
            }
        }
        j = model.parents[j];
    }
}

/// Adds `sign ·` [`point_coefficient`] of `p` along each of `dirs` for the consecutive dofs of
/// columns `s` to entries `c0..c0 + s.len()` of each of `rows` (one per direction), one dof
/// at a time: [`point_run`]'s portable body and its AVX2 body's remainder.
#[inline]
fn point_dofs((s, p): (&[Motion], &Vec3), (dirs, sign): (&[Vec3], f64), (rows, c0): (&mut [&mut [f64]], usize)) {
    for (k, sk) in s.iter().enumerate() {
        let vk = sk.linear + sk.angular.cross(p);
        for (row, d) in rows.iter_mut().zip(dirs) {
            row[c0 + k] += sign * d.dot(&vk);
        }
    }
}

crate::twice! {
    /// [`point_dofs`]; the AVX2 copy four dofs at a time in 256-bit lanes: each lane the
    /// scalar formula's operations in its order (nalgebra's cross and dot written out, no fused
    /// multiply-add), so the same bits as one dof at a time, which the remainder takes. The four
    /// columns' fields are gathered by `_mm256_set_pd` (LLVM's vectoriser does not gather them
    /// from plain lanes: record 0140), the rows read and written four entries at a time.
    fn point_run((s, p): (&[Motion], &Vec3), (dirs, sign): (&[Vec3], f64), (rows, c0): (&mut [&mut [f64]], usize)) {
        point_dofs((s, p), (dirs, sign), (rows, c0));
    } avx2 {
        use std::arch::x86_64::*;
        let mut quads = s.chunks_exact(4);
        let mut c = c0;
        let (px, py, pz, sg) = (_mm256_set1_pd(p.x), _mm256_set1_pd(p.y), _mm256_set1_pd(p.z), _mm256_set1_pd(sign));
        for q in &mut quads {
            let [m0, m1, m2, m3] = [&q[0], &q[1], &q[2], &q[3]];
            let lx = _mm256_set_pd(m3.linear.x, m2.linear.x, m1.linear.x, m0.linear.x);
            let ly = _mm256_set_pd(m3.linear.y, m2.linear.y, m1.linear.y, m0.linear.y);
            let lz = _mm256_set_pd(m3.linear.z, m2.linear.z, m1.linear.z, m0.linear.z);
            let ax = _mm256_set_pd(m3.angular.x, m2.angular.x, m1.angular.x, m0.angular.x);
            let ay = _mm256_set_pd(m3.angular.y, m2.angular.y, m1.angular.y, m0.angular.y);
            let az = _mm256_set_pd(m3.angular.z, m2.angular.z, m1.angular.z, m0.angular.z);
            // v = lin + ang × p
            let vx = _mm256_add_pd(lx, _mm256_sub_pd(_mm256_mul_pd(ay, pz), _mm256_mul_pd(az, py)));
            let vy = _mm256_add_pd(ly, _mm256_sub_pd(_mm256_mul_pd(az, px), _mm256_mul_pd(ax, pz)));
            let vz = _mm256_add_pd(lz, _mm256_sub_pd(_mm256_mul_pd(ax, py), _mm256_mul_pd(ay, px)));
            for (row, d) in rows.iter_mut().zip(dirs) {
                let r: &mut [f64; 4] = (&mut row[c..c + 4]).try_into().expect("four dofs");
                let (dx, dy, dz) = (_mm256_set1_pd(d.x), _mm256_set1_pd(d.y), _mm256_set1_pd(d.z));
                let dot = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(dx, vx), _mm256_mul_pd(dy, vy)), _mm256_mul_pd(dz, vz));
                let x = _mm256_add_pd(_mm256_set_pd(r[3], r[2], r[1], r[0]), _mm256_mul_pd(sg, dot));
                let (lo, hi) = (_mm256_castpd256_pd128(x), _mm256_extractf128_pd::<1>(x));
                *r = [_mm_cvtsd_f64(lo), _mm_cvtsd_f64(_mm_unpackhi_pd(lo, lo)), _mm_cvtsd_f64(hi), _mm_cvtsd_f64(_mm_unpackhi_pd(hi, hi))];
            }
            c += 4;
        }
        point_dofs((quads.remainder(), p), (dirs, sign), (rows, c));
    }
}

/// Adds `sign ·` [`angular_coefficient`] along each of `dirs` to the rows of `layout` for
/// every dof that moves `joint`.
pub fn add_angular_rows<const N: usize>(
    model: &Model,
    s: &[Motion],
    joint: usize,
    dirs: &[Vec3; N],
    sign: f64,
    layout: &mut impl RowLayout<N>,
) {
    if let Some(sink) = layout.sink(joint) {
        add_chain(model, s, joint, sign, sink, |sk| dirs.map(|d| angular_coefficient(sk, &d)));
    }
}

/// Adds the rows of the velocity along each of `dirs` of point `p_b` (world) on `joint_b`
/// relative to point `p_a` on `joint_a`: `d·(v_b(p_b) - v_a(p_a))`, B's side first (a
/// contact: `p_a = p_b`; a ball loop: the two anchors).
pub fn add_relative_point_rows<const N: usize>(
    model: &Model,
    s: &[Motion],
    (joint_a, p_a): (usize, &Vec3),
    (joint_b, p_b): (usize, &Vec3),
    dirs: &[Vec3; N],
    layout: &mut impl RowLayout<N>,
) {
    add_point_rows(model, s, joint_b, (p_b, dirs), 1.0, layout);
    add_point_rows(model, s, joint_a, (p_a, dirs), -1.0, layout);
}

/// Adds the rows of the angular velocity along each of `dirs` of `joint_b` relative to
/// `joint_a`, B's side first.
pub fn add_relative_angular_rows<const N: usize>(
    model: &Model,
    s: &[Motion],
    joint_a: usize,
    joint_b: usize,
    dirs: &[Vec3; N],
    layout: &mut impl RowLayout<N>,
) {
    add_angular_rows(model, s, joint_b, dirs, 1.0, layout);
    add_angular_rows(model, s, joint_a, dirs, -1.0, layout);
}

/// Whether `joint` is a free body: a free flyer on the universe with nothing below it (its
/// tree is its six dofs, its velocity the twist in its own frame).
#[inline]
pub fn is_free_body(model: &Model, joint: usize) -> bool {
    joint != 0
        && model.parents[joint] == 0
        && model.joint_types[joint] == JointType::FreeFlyer
        && model.subtree_end_v[joint] - model.idx_v[joint] == 6
}

/// The free-body fast path of [`add_point_rows`]: **sets** the six entries (from dof `k0`) of
/// a free body placed at `x` (rotation `R`, origin `o`; see [`is_free_body`]) in the rows of
/// `sink`. Its velocity is the twist in its own frame, so the rows are `Rᵀ d` over the linear
/// dofs and `Rᵀ ((p − o) × d) = (Rᵀ (p − o)) × (Rᵀ d)` over the angular ones (`d` each of
/// `dirs` times `sign`): four 3 x 3 products and three cross products instead of six point
/// velocities. For a block whose other side is another tree (nothing else writes these
/// entries).
pub fn set_free_body_point_rows<const N: usize>(
    x: &Se3,
    k0: usize,
    (p, dirs): (&Vec3, &[Vec3; N]),
    sign: f64,
    sink: RowSink<'_, N>,
) {
    let c0 = k0 - sink.first;
    // in the body's axes: Rᵀ (r × d) = (Rᵀ r) × (Rᵀ d)
    let r = x.rotation.tr_mul(&(p - x.translation));
    for (row, d) in sink.rows.into_iter().zip(dirs) {
        let lin = x.rotation.tr_mul(d) * sign;
        let ang = r.cross(&lin);
        row[c0..c0 + 6].copy_from_slice(&[lin.x, lin.y, lin.z, ang.x, ang.y, ang.z]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::{forward_kinematics_velocity, joint_jacobians, neutral};
    use crate::model::{Axis, JointId, JointType, ModelBuilder};
    use crate::spatial::{Inertia, Mat3};
    use crate::Data;
    use nalgebra::DVector;

    /// A point row times v is the point's velocity along the direction (from forward
    /// kinematics), and the columns equal the world Jacobian's.
    #[test]
    fn point_and_angular_rows_give_the_velocities_of_forward_kinematics() {
        let mut b = ModelBuilder::new("chain");
        let i = Inertia::new(1.0, Vec3::new(0.1, 0.0, 0.0), Mat3::identity() * 0.01);
        let j1 = b
            .add_joint(
                JointId::UNIVERSE,
                "a",
                JointType::FreeFlyer,
                Se3::identity(),
            )
            .unwrap();
        b.add_body(j1, "a", i).unwrap();
        let j2 = b
            .add_joint(
                j1,
                "b",
                JointType::Revolute {
                    axis: Axis::from_unit(Vec3::y()),
                },
                Se3::from_translation(Vec3::new(0.3, 0.1, 0.0)),
            )
            .unwrap();
        b.add_body(j2, "b", i).unwrap();
        let model = b.build().unwrap();
        let mut data = Data::new(&model);
        let mut q = neutral(&model);
        q[7] = 0.7;
        q[0] = 0.2;
        let v = DVector::from_fn(model.nv, |k, _| 0.3 + 0.1 * k as f64);
        let jac = joint_jacobians(&model, &mut data, &q).clone();
        let mut s = vec![Motion::zero(); model.nv];
        world_motion_columns(&model, data.joint_placements().unwrap(), &mut s);
        for (k, sk) in s.iter().enumerate() {
            assert_eq!(sk.to_vec6().as_slice(), jac.column(k).as_slice());
        }
        forward_kinematics_velocity(&model, &mut data, &q, &v);
        let (o_m_i, vel) = (data.joint_placements().unwrap(), data.joint_velocities().unwrap());
        let x = o_m_i[2];
        let vw = x.act_motion(&vel[2]);
        let p = x.transform_point(&Vec3::new(0.0, 0.0, 0.4));
        let dir = Vec3::new(0.3, -0.5, 0.8).normalize();
        let mut row = vec![0.0; model.nv];
        add_point_rows(&model, &s, 2, (&p, &[dir]), 1.0, &mut DenseRows([&mut row]));
        let u: f64 = row.iter().zip(v.iter()).map(|(a, b)| a * b).sum();
        assert!((u - dir.dot(&(vw.linear + vw.angular.cross(&p)))).abs() < 1e-14);
        let phi = Force::new(dir, p.cross(&dir));
        let w: f64 = (0..model.nv)
            .map(|k| wrench_coefficient(&s[k], &phi) * v[k])
            .sum();
        assert!((u - w).abs() < 1e-14);
        row.fill(0.0);
        add_relative_angular_rows(&model, &s, 1, 2, &[dir], &mut DenseRows([&mut row]));
        let u: f64 = row.iter().zip(v.iter()).map(|(a, b)| a * b).sum();
        let va = o_m_i[1].act_motion(&vel[1]);
        assert!((u - dir.dot(&(vw.angular - va.angular))).abs() < 1e-14);
    }

    /// The point rows written by runs of dofs, four at a time, are bit for bit the per-dof
    /// formula `sign · point_coefficient`, on chains of runs of every length modulo four.
    #[test]
    fn point_rows_by_runs_are_the_per_dof_coefficients_bit_for_bit() {
        let mut b = ModelBuilder::new("tree");
        let i = Inertia::new(1.0, Vec3::new(0.1, 0.0, 0.0), Mat3::identity() * 0.01);
        let root = b.add_joint(JointId::UNIVERSE, "root", JointType::FreeFlyer, Se3::identity()).unwrap();
        b.add_body(root, "root", i).unwrap();
        // two branches of revolute chains from the root: the second's dofs follow the first's
        let axes = [Vec3::x(), Vec3::y(), Vec3::z(), Vec3::new(1.0, 2.0, -0.5).normalize()];
        let mut tips = vec![];
        for (branch, len) in [(0, 7), (1, 5)] {
            let mut parent = root;
            for k in 0..len {
                let name = format!("j{branch}_{k}");
                let placement = Se3::new(crate::spatial::exp3(&Vec3::new(0.3, -0.2, 0.1 * k as f64)), Vec3::new(0.1, 0.05 * branch as f64, 0.2));
                let axis = Axis::from_unit(axes[(k + branch) % 4]);
                parent = b.add_joint(parent, &name, JointType::Revolute { axis }, placement).unwrap();
                b.add_body(parent, &name, i).unwrap();
                tips.push(parent.0);
            }
        }
        let model = b.build().unwrap();
        let mut data = Data::new(&model);
        let mut q = neutral(&model);
        for (k, x) in q.iter_mut().enumerate().skip(7) {
            *x = 0.3 * (k as f64).sin();
        }
        joint_jacobians(&model, &mut data, &q);
        let mut s = vec![Motion::zero(); model.nv];
        world_motion_columns(&model, data.joint_placements().unwrap(), &mut s);
        let p = Vec3::new(0.31, -0.27, 0.93);
        let dirs = [Vec3::new(0.3, -0.5, 0.8).normalize(), Vec3::new(-0.7, 0.1, 0.2), Vec3::new(0.0, 0.6, -0.4)];
        for &joint in tips.iter().chain([&root.0]) {
            for sign in [1.0, -1.0] {
                let mut rows = vec![vec![0.25; model.nv]; 3];
                let [r0, r1, r2] = &mut rows[..] else { unreachable!() };
                add_point_rows(&model, &s, joint, (&p, &dirs), sign, &mut DenseRows([r0, r1, r2]));
                let mut moves = vec![false; model.nv];
                let mut j = joint;
                while j > 0 {
                    moves[model.idx_v[j]..model.idx_v[j] + model.nvs[j]].fill(true);
                    j = model.parents[j];
                }
                for (row, d) in rows.iter().zip(&dirs) {
                    for k in 0..model.nv {
                        let want = if moves[k] { 0.25 + sign * point_coefficient(&s[k], &p, d) } else { 0.25 };
                        assert_eq!(row[k].to_bits(), want.to_bits(), "joint {joint}, dof {k}");
                    }
                }
            }
        }
    }
}

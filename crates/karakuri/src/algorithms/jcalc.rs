//! The joint kernels, in one place as spatial_v2's `jcalc`: every dispatch of the recursions
//! on a joint's kind or on the fast-path tags the model stores (defined beside the joint kinds
//! in `model/joint.rs`: `Model::dof_axis`, S_k a basis vector; `Model::signed_dof_axis`, S_k
//! plus or minus one; `Model::elementary_rotation_axis` and `Model::placement_quarter_turn`, a
//! revolute about ±x, ±y, ±z behind an unrotated or quarter-turn placement;
//! `Axis::signed_basis`) happens here, and the recursions call these functions rather than
//! matching themselves.
//!
//! * placements: [`place_joints`], the one protocol every recursion starts with (the joint
//!   angles first, then each joint's `X_J(q)` and placements, parents first);
//! * motion subspaces: [`joint_motion`] (`S_i x_i`), [`project_force`] (`S_iᵀ f`), [`dof_dot`],
//!   [`dof_in_frame`] (`X S_k`), [`inertia_times_dof`] (`I S_k`), [`axis_motion`] and
//!   [`motion_cross_axis`] for one basis-vector dof;
//! * the composite steps [`add_inertia_to_parent`] (`I_λ += λX_i* I_i`) and
//!   [`add_articulated_to_parent`] (ABA's `IA_λ += λX_i* Ia_i λX_i⁻¹`).

use crate::data::Data;
use crate::model::{mul_axis_rotation, revolute_placement_after, JointType, Model};
use crate::spatial::quarter_turn::dispatch_quarter_turn;
use crate::spatial::{sin_cos, ArticulatedInertia, Force, Mat3, Motion, OriginInertia, Se3, Vec3};

/// The placement protocol: the `(sin q, cos q)` of every revolute joint first, then for each
/// joint `i` in order (parents first) its placements `li_m_i = X_T X_J(q)` and
/// `o_m_i = o_m_λ(i) li_m_i`, then `step(data, i)`, the recursion's own work on joint `i`
/// (it may read the placements of `i` and of its ancestors). The angles are apart from the
/// chain because a sine's latency is that of a few placements: inside the chain, each joint
/// waited on its own. `step` is inlined: the loop is the one a recursion would write.
#[inline(always)]
pub(crate) fn place_joints(model: &Model, data: &mut Data, q: &[f64], mut step: impl FnMut(&mut Data, usize)) {
    joint_angles(model, data, q);
    for i in 1..model.njoints {
        update_joint_placement::<true>(model, data, q, i);
        step(data, i);
    }
}

/// [`place_joints`] right after CRBA placed the joints at the same `q`
/// ([`compute_all_terms`](super::compute_all_terms)): the angles and `li_m_i` are in `data`
/// already, and so are the world placements `o_m_i` unless a floating root made its body
/// CRBA's working frame; only then are the placements computed again (without the angles).
/// The same numbers as [`place_joints`], bit for bit, for the price of a scan of the roots.
#[inline(always)]
pub(crate) fn place_joints_after_crba(model: &Model, data: &mut Data, q: &[f64], mut step: impl FnMut(&mut Data, usize)) {
    let replace = (1..model.njoints).any(|i| is_floating_root(model, i));
    for i in 1..model.njoints {
        if replace {
            // CRBA's li_m_i stand (the same q): only the world placements are computed again
            update_joint_placement::<false>(model, data, q, i);
        }
        step(data, i);
    }
}

/// `(sin q, cos q)` of every revolute joint into `data.joint_sin_cos`: the first half of
/// [`place_joints`] ([`update_joint_placement`] reads them). Apart from the
/// placements so that they do not wait on it: the angles are independent, the placements a
/// chain, and a sine takes as long as a few joint placements.
#[inline(always)]
fn joint_angles(model: &Model, data: &mut Data, q: &[f64]) {
    for i in 1..model.njoints {
        if let JointType::Revolute { .. } | JointType::RevoluteUnbounded { .. } = model.joint_types[i] {
            data.joint_sin_cos[i] = sin_cos(q[model.idx_q[i]]);
        }
    }
}

/// Placement of joint `i` for configuration `q`: `li_m_i` (placement ∘ X_J(q)) and `o_m_i`
/// (parents first), revolute angles from [`joint_angles`]: the per-joint half of
/// [`place_joints`], private so that no recursion calls it without the first. A revolute joint about ±x, ±y, ±z whose placement has no
/// rotation (the usual URDF case) skips both 3x3 products: `o_R_i = o_R_λ R_J` mixes two
/// columns of the parent's rotation.
#[inline(always)]
fn update_joint_placement<const LOCAL: bool>(model: &Model, data: &mut Data, q: &[f64], i: usize) {
    // LOCAL false: `li_m_i` holds this q's already ([`place_joints_after_crba`]), only
    // `o_m_i` is computed, by the same operations as with it
    let placement = &model.joint_placements[i];
    let p = model.parents[i];
    if let JointType::Revolute { axis } | JointType::RevoluteUnbounded { axis } = model.joint_types[i] {
        let (s, cos) = data.joint_sin_cos[i];
        match axis.signed_basis() {
            Some((c, sign)) if model.placement_quarter_turn[i] == Some(0) => {
                let s = sign * s; // about −e_c by q = about e_c by −q
                if LOCAL {
                    data.li_m_i[i] = Se3::new(mul_axis_rotation(&Mat3::identity(), c, s, cos), placement.translation);
                }
                let o_p = data.o_m_i[p];
                data.o_m_i[i] = Se3::new(mul_axis_rotation(&o_p.rotation, c, s, cos), o_p.transform_point(&placement.translation));
                return;
            }
            _ if LOCAL => data.li_m_i[i] = revolute_placement_after(&axis, placement, s, cos),
            _ => {}
        }
    } else if LOCAL {
        let (iq, nq) = (model.idx_q[i], model.nqs[i]);
        data.li_m_i[i] = model.joint_types[i].placement_after(placement, &q[iq..iq + nq]);
    }
    data.o_m_i[i] = data.o_m_i[p].compose(&data.li_m_i[i]);
}

/// `parent += λX_i* y`: the inertia `y`, given in joint `i`'s frame, added to its parent's in
/// the parent's frame (`li` = `li_m_i`). When the joint is a revolute about ±x, ±y or ±z and its
/// placement has no rotation or a quarter turn, `λX_i` is an elementary rotation (with its
/// entries moved) and a translation: about 20 flops, not 60, fused with the sum.
#[inline(always)]
pub(crate) fn add_inertia_to_parent(model: &Model, i: usize, li: &Se3, y: &OriginInertia, parent: &mut OriginInertia) {
    match (model.elementary_rotation_axis[i], model.placement_quarter_turn[i]) {
        (Some(axis), Some(0)) => add_turned_plane::<0>(axis, li, y, parent),
        (Some(axis), Some(turn)) => add_turned_inertia(turn, axis, li, y, parent),
        _ => parent.add_transformed(y, li),
    }
}

/// `parent += λX_i* y λX_i⁻¹` for an articulated-body inertia `y` in joint `i`'s frame (ABA's
/// backward step), with the same fast paths as [`add_inertia_to_parent`]: plane turns of the
/// other two axes for a revolute about ±x, ±y, ±z behind an unrotated or quarter-turn
/// placement, three 3x3 conjugations otherwise.
#[inline(always)]
pub(crate) fn add_articulated_to_parent(model: &Model, i: usize, li: &Se3, y: &ArticulatedInertia, parent: &mut ArticulatedInertia) {
    match (model.elementary_rotation_axis[i], model.placement_quarter_turn[i]) {
        (Some(axis), Some(0)) => add_turned_articulated::<0>(axis, li, y, parent),
        (Some(axis), Some(turn)) => add_turned_articulated_after(turn, axis, li, y, parent),
        _ => parent.add_transformed(y, li),
    }
}

#[inline(always)]
fn add_turned_articulated<const Q: u8>(axis: usize, li: &Se3, y: &ArticulatedInertia, parent: &mut ArticulatedInertia) {
    match axis {
        0 => parent.add_transformed_plane::<Q, 1, 2, 0>(y, li),
        1 => parent.add_transformed_plane::<Q, 2, 0, 1>(y, li),
        _ => parent.add_transformed_plane::<Q, 0, 1, 2>(y, li),
    }
}

/// [`add_articulated_to_parent`] after a quarter-turn placement: one instance per turn and
/// axis, called rather than inlined.
#[inline(never)]
fn add_turned_articulated_after(turn: u8, axis: usize, li: &Se3, y: &ArticulatedInertia, parent: &mut ArticulatedInertia) {
    dispatch_quarter_turn!(turn, add_turned_articulated(axis, li, y, parent))
}

#[inline(always)]
fn add_turned_plane<const Q: u8>(axis: usize, li: &Se3, y: &OriginInertia, parent: &mut OriginInertia) {
    match axis {
        0 => parent.add_transformed_plane::<Q, 1, 2, 0>(y, li),
        1 => parent.add_transformed_plane::<Q, 2, 0, 1>(y, li),
        _ => parent.add_transformed_plane::<Q, 0, 1, 2>(y, li),
    }
}

/// [`add_inertia_to_parent`] after a quarter-turn placement: one instance per turn and axis
/// (72), called rather than inlined so that the recursions using it stay small.
#[inline(never)]
fn add_turned_inertia(turn: u8, axis: usize, li: &Se3, y: &OriginInertia, parent: &mut OriginInertia) {
    dispatch_quarter_turn!(turn, add_turned_plane(axis, li, y, parent))
}

/// `λX_i m` (`li` = `li_m_i`: a motion of the parent expressed in joint `i`'s frame); a revolute
/// about ±x, ±y, ±z behind an unrotated placement turns the other two axes in their plane
/// (`li.rotation` = `R_K(θ)`, read off it) instead of two 3x3 products.
#[inline(always)]
pub(crate) fn motion_to_joint(model: &Model, i: usize, li: &Se3, m: &Motion) -> Motion {
    match (model.elementary_rotation_axis[i], model.placement_quarter_turn[i]) {
        (Some(0), Some(0)) => turned_inv::<1, 2>(li, m),
        (Some(1), Some(0)) => turned_inv::<2, 0>(li, m),
        (Some(_), Some(0)) => turned_inv::<0, 1>(li, m),
        _ => li.inv_act_motion(m),
    }
}

/// `λX_i* f` (a force of joint `i`'s frame expressed in its parent's), with the plane turn of
/// [`motion_to_joint`].
#[inline(always)]
pub(crate) fn force_to_parent(model: &Model, i: usize, li: &Se3, f: &Force) -> Force {
    match (model.elementary_rotation_axis[i], model.placement_quarter_turn[i]) {
        (Some(0), Some(0)) => turned_force::<1, 2>(li, f),
        (Some(1), Some(0)) => turned_force::<2, 0>(li, f),
        (Some(_), Some(0)) => turned_force::<0, 1>(li, f),
        _ => li.act_force(f),
    }
}

/// `Rᵀ x` for `R` the elementary rotation in the plane `(I, J)` of cosine `c`, sine `s`.
#[inline(always)]
fn plane_t<const I: usize, const J: usize>(c: f64, s: f64, x: &Vec3) -> Vec3 {
    let mut o = *x;
    o[I] = c * x[I] + s * x[J];
    o[J] = c * x[J] - s * x[I];
    o
}

/// `R x` for `R` the elementary rotation in the plane `(I, J)` of cosine `c`, sine `s`.
#[inline(always)]
fn plane<const I: usize, const J: usize>(c: f64, s: f64, x: &Vec3) -> Vec3 {
    let mut o = *x;
    o[I] = c * x[I] - s * x[J];
    o[J] = s * x[I] + c * x[J];
    o
}

#[inline(always)]
fn turned_inv<const I: usize, const J: usize>(li: &Se3, m: &Motion) -> Motion {
    let (c, s) = (li.rotation[(I, I)], li.rotation[(J, I)]);
    Motion::new(plane_t::<I, J>(c, s, &(m.linear - li.translation.cross(&m.angular))), plane_t::<I, J>(c, s, &m.angular))
}

#[inline(always)]
fn turned_force<const I: usize, const J: usize>(li: &Se3, f: &Force) -> Force {
    let (c, s) = (li.rotation[(I, I)], li.rotation[(J, I)]);
    let linear = plane::<I, J>(c, s, &f.linear);
    Force::new(linear, plane::<I, J>(c, s, &f.angular) + li.translation.cross(&linear))
}

/// `I S_k`: the inertia `y` (in dof `k`'s joint frame) times dof `k`'s motion subspace; a
/// column of the 6x6 inertia, read off without products when `S_k` is a basis vector.
#[inline(always)]
pub(crate) fn inertia_times_dof(model: &Model, k: usize, y: &OriginInertia) -> Force {
    let (h, m) = (&y.h, y.mass);
    match model.dof_axis[k] {
        Some(0) => Force::new(Vec3::new(m, 0.0, 0.0), Vec3::new(0.0, h.z, -h.y)),
        Some(1) => Force::new(Vec3::new(0.0, m, 0.0), Vec3::new(-h.z, 0.0, h.x)),
        Some(2) => Force::new(Vec3::new(0.0, 0.0, m), Vec3::new(h.y, -h.x, 0.0)),
        Some(3) => Force::new(Vec3::new(0.0, -h.z, h.y), y.i_o.column(0).into()),
        Some(4) => Force::new(Vec3::new(h.z, 0.0, -h.x), y.i_o.column(1).into()),
        Some(5) => Force::new(Vec3::new(-h.y, h.x, 0.0), y.i_o.column(2).into()),
        _ => y.mul_motion(&model.motion_subspace[k]),
    }
}

/// The signed axis `(c, σ)` of a joint of one dof whose motion subspace is `σ e_c`
/// (`Model::signed_dof_axis`: revolute about, prismatic along, ±x, ±y or ±z).
#[inline(always)]
pub(crate) fn signed_unit_dof(model: &Model, i: usize) -> Option<(usize, f64)> {
    if model.nvs[i] == 1 {
        model.signed_dof_axis[model.idx_v[i]]
    } else {
        None
    }
}

/// `v_i = λX_i v_λ + S_i q̇_i` (`li` = `li_m_i`, `vp` = `v_λ`, `vs` the joint velocities) and,
/// when `BIAS`, the joint's acceleration terms `v_i × S_i q̇_i (+ S_i q̈_i` when `acc` is given;
/// zero otherwise). Plane turns ([`motion_to_joint`]) and, for a [`signed_unit_dof`] joint, code
/// specialised to its axis (one component added, a cross product with a basis vector): the
/// same numbers as the general products (`inv_act_motion`, [`joint_motion`], `cross`) but for
/// the sign of exact zeros, since the terms dropped are products with zero entries (record 0094).
#[inline(always)]
pub(crate) fn joint_velocity<const BIAS: bool>(model: &Model, i: usize, li: &Se3, vp: &Motion, vs: &[f64], acc: Option<&[f64]>) -> (Motion, Motion) {
    let vp = motion_to_joint(model, i, li, vp);
    let iv = model.idx_v[i];
    let signed = signed_unit_dof(model, i);
    // S = σ e_c: S q̇ = (σ q̇) e_c, σ q̇ exact (record 0102)
    let sigma = signed.map_or(1.0, |(_, s)| s);
    let one = (sigma * vs[iv], acc.map(|a| sigma * a[iv]));
    match signed.map(|(c, _)| c) {
        Some(0) => unit_velocity::<0, BIAS>(vp, one),
        Some(1) => unit_velocity::<1, BIAS>(vp, one),
        Some(2) => unit_velocity::<2, BIAS>(vp, one),
        Some(3) => unit_velocity::<3, BIAS>(vp, one),
        Some(4) => unit_velocity::<4, BIAS>(vp, one),
        Some(5) => unit_velocity::<5, BIAS>(vp, one),
        _ => {
            let v_j = joint_motion(model, i, vs);
            let vi = vp + v_j;
            if !BIAS {
                return (vi, Motion::zero());
            }
            let mut bias = vi.cross(&v_j);
            if let Some(a) = acc {
                bias += joint_motion(model, i, a);
            }
            (vi, bias)
        }
    }
}

/// Component `E` (of `[linear; angular]`) of a motion.
#[inline(always)]
fn component<const E: usize>(m: &mut Motion) -> &mut f64 {
    if E < 3 {
        &mut m.linear[E]
    } else {
        &mut m.angular[E - 3]
    }
}

/// [`joint_velocity`] of a joint whose motion subspace is `e_E`, `(q̇, q̈)` its velocity and
/// acceleration: `v_i = v_p + q̇ e_E`, `v_i × q̇ e_E + q̈ e_E` (the cross product's entry on
/// `E` is an exact zero: q̈ is written there).
#[inline(always)]
fn unit_velocity<const E: usize, const BIAS: bool>(vp: Motion, (x, acc): (f64, Option<f64>)) -> (Motion, Motion) {
    let mut vi = vp;
    *component::<E>(&mut vi) += x;
    if !BIAS {
        return (vi, Motion::zero());
    }
    let mut bias = motion_cross_axis(&vi, E, x);
    if let Some(a) = acc {
        *component::<E>(&mut bias) = a;
    }
    (vi, bias)
}

/// `S_iᵀ f` into `out[idx_v..]` as [`project_force`], one component read per basis-vector dof.
#[inline(always)]
pub(crate) fn project_force_fast(model: &Model, i: usize, f: &Force, out: &mut [f64]) {
    let iv = model.idx_v[i];
    for k in iv..iv + model.nvs[i] {
        out[k] = signed_dof_dot(model, k, f);
    }
}

/// `S_i x_i`: the joint motion of joint `i` for the dof values `x` (velocity or acceleration).
#[inline]
pub(crate) fn joint_motion(model: &Model, i: usize, x: &[f64]) -> Motion {
    let iv = model.idx_v[i];
    let mut m = Motion::zero();
    for k in iv..iv + model.nvs[i] {
        m += model.motion_subspace[k] * x[k];
    }
    m
}

/// `Sᵢᵀ f` written into `out[idx_v..idx_v + nv]`.
#[inline]
pub(crate) fn project_force(model: &Model, i: usize, f: &Force, out: &mut [f64]) {
    let iv = model.idx_v[i];
    for k in iv..iv + model.nvs[i] {
        out[k] = model.motion_subspace[k].dot(f);
    }
}

/// Joint `i` is a free flyer (S the identity in its frame).
#[inline(always)]
pub(crate) fn is_free_flyer(model: &Model, i: usize) -> bool {
    model.joint_types[i] == JointType::FreeFlyer
}

/// Joint `i` is a free flyer hanging from the universe: a floating base, whose frame CRBA and
/// hybrid dynamics use as the working frame of its subtree.
#[inline(always)]
pub(crate) fn is_floating_root(model: &Model, i: usize) -> bool {
    model.parents[i] == 0 && is_free_flyer(model, i)
}

/// Joint `i` hangs from the universe and has no joint below it (a tree of one joint: a
/// pendulum's hinge, a free body): its block of M is constant in its own frame.
#[inline(always)]
pub fn is_lone_root(model: &Model, i: usize) -> bool {
    model.parents[i] == 0 && model.subtree_end_v[i] - model.idx_v[i] == model.nvs[i]
}

/// `S_k` of dof `k` moved by the placement `x` of its joint (`x S_k`): a column of `R` (and
/// `p ×` it for a rotation) when `S_k` is a basis vector, no matrix product.
#[inline(always)]
pub(crate) fn dof_in_frame(model: &Model, k: usize, x: &Se3) -> Motion {
    match model.dof_axis[k] {
        Some(c) if c < 3 => Motion::new(x.rotation.column(c).into(), Vec3::zeros()),
        Some(c) => {
            let w: Vec3 = x.rotation.column(c - 3).into();
            Motion::new(x.translation.cross(&w), w)
        }
        None => x.act_motion(&model.motion_subspace[k]),
    }
}

/// `S_kᵀ f` for dof k: one component read where S is a basis vector.
#[inline(always)]
pub(crate) fn dof_dot(model: &Model, k: usize, f: &Force) -> f64 {
    match model.dof_axis[k] {
        Some(0) => f.linear.x,
        Some(1) => f.linear.y,
        Some(2) => f.linear.z,
        Some(3) => f.angular.x,
        Some(4) => f.angular.y,
        Some(5) => f.angular.z,
        _ => model.motion_subspace[k].dot(f),
    }
}

/// `S_kᵀ f` for dof k as [`dof_dot`], also on the negative axes: `σ f_c` (the general dot
/// product's value: its other terms are products with zeros, and negation is exact).
#[inline(always)]
pub(crate) fn signed_dof_dot(model: &Model, k: usize, f: &Force) -> f64 {
    match model.signed_dof_axis[k] {
        Some((0, s)) => s * f.linear.x,
        Some((1, s)) => s * f.linear.y,
        Some((2, s)) => s * f.linear.z,
        Some((3, s)) => s * f.angular.x,
        Some((4, s)) => s * f.angular.y,
        Some((_, s)) => s * f.angular.z,
        None => model.motion_subspace[k].dot(f),
    }
}

/// `m + x e_c` with the sum on one component (a match on `c`, so that the motion is not
/// written through a runtime index and read back as a vector: a stalled store forward).
#[inline(always)]
pub(crate) fn plus_axis(mut m: Motion, c: usize, x: f64) -> Motion {
    match c {
        0 => m.linear.x += x,
        1 => m.linear.y += x,
        2 => m.linear.z += x,
        3 => m.angular.x += x,
        4 => m.angular.y += x,
        _ => m.angular.z += x,
    }
    m
}

/// `x e_c` for the flattened `[linear; angular]` index `c`.
#[inline(always)]
pub(crate) fn axis_motion(c: usize, x: f64) -> Motion {
    let mut m = Motion::zero();
    if c < 3 {
        m.linear[c] = x;
    } else {
        m.angular[c - 3] = x;
    }
    m
}

/// `u × (x e_a)` for a 3-vector `u` and axis `a` in 0..3.
#[inline(always)]
fn cross_axis(u: &Vec3, a: usize, x: f64) -> Vec3 {
    match a {
        0 => Vec3::new(0.0, u.z * x, -u.y * x),
        1 => Vec3::new(-u.z * x, 0.0, u.x * x),
        _ => Vec3::new(u.y * x, -u.x * x, 0.0),
    }
}

/// `v ×ₘ (x e_c)`.
#[inline(always)]
pub(crate) fn motion_cross_axis(v: &Motion, c: usize, x: f64) -> Motion {
    if c < 3 {
        Motion::new(cross_axis(&v.angular, c, x), Vec3::zeros())
    } else {
        Motion::new(cross_axis(&v.linear, c - 3, x), cross_axis(&v.angular, c - 3, x))
    }
}


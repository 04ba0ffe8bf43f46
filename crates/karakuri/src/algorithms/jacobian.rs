//! Joint and frame Jacobians and their time variation (RBDA §4.1.4), with Pinocchio's
//! reference frames.

use super::dof_in_frame;
use crate::algorithms::kinematics::{forward_kinematics, forward_kinematics_velocity};
use crate::data::{Data, Fresh, Stale};
use crate::model::{FrameId, JointId, Model};
use crate::spatial::{Motion, Se3};
use nalgebra::{DMatrix, DVector};

/// The frame a Jacobian is expressed in (Pinocchio's `ReferenceFrame`). Rows are
/// `[linear; angular]`; `J v` is:
/// - `World`: the spatial velocity of the body, expressed at the world origin in world axes
///   (linear = velocity of the body point currently at the world origin);
/// - `Local`: the spatial velocity in the joint's (or frame's) own frame;
/// - `LocalWorldAligned`: the velocity of the joint (frame) origin and the angular velocity,
///   both in world axes: what a controller tracking a point usually wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReferenceFrame {
    /// World origin, world axes.
    World,
    /// The joint or frame itself.
    Local,
    /// The joint or frame origin, world axes.
    LocalWorldAligned,
}

/// Placements and the world Jacobian columns of every dof (`data.jacobian`, 6 x nv,
/// [`Data::jacobians`]). Fresh after: placements, Jacobians.
pub fn joint_jacobians<'a>(model: &Model, data: &'a mut Data, q: &DVector<f64>) -> &'a DMatrix<f64> {
    forward_kinematics(model, data, q);
    fill_world_columns(model, data);
    data.fresh = Fresh::PLACEMENTS | Fresh::JACOBIANS;
    &data.jacobian
}

/// The world Jacobian columns from the world placements in `data` (the caller makes them
/// fresh and sets the bits).
pub(crate) fn fill_world_columns(model: &Model, data: &mut Data) {
    for (k, &i) in model.dof_joint.iter().enumerate() {
        write_col(&mut data.jacobian, k, &dof_in_frame(model, k, &data.o_m_i[i]));
    }
}

/// Writes motion `c` as column `k` of the 6-row matrix `m` (linear, then angular): the slice
/// `6k..6k + 6` of its column-major storage, one bounds check a column (record 0122).
#[inline]
pub(crate) fn write_col(m: &mut DMatrix<f64>, k: usize, c: &Motion) {
    debug_assert_eq!(m.nrows(), 6);
    let col: &mut [f64; 6] = (&mut m.as_mut_slice()[6 * k..6 * k + 6]).try_into().expect("6 rows");
    *col = [c.linear.x, c.linear.y, c.linear.z, c.angular.x, c.angular.y, c.angular.z];
}

#[inline]
fn read_col(m: &DMatrix<f64>, k: usize) -> Motion {
    Motion::from_slice(m.column(k).as_slice())
}

/// Re-expresses a world-frame column in `rf` relative to the placement `o_m_x`.
#[inline]
fn express(col: &Motion, o_m_x: &Se3, rf: ReferenceFrame) -> Motion {
    match rf {
        ReferenceFrame::World => *col,
        ReferenceFrame::Local => o_m_x.inv_act_motion(col),
        ReferenceFrame::LocalWorldAligned => {
            Motion::new(col.linear - o_m_x.translation.cross(&col.angular), col.angular)
        }
    }
}

/// The Jacobian of `joint` in `rf` into `out` (6 x nv), from the world columns in
/// `data.jacobian`: needs the Jacobians fresh ([`joint_jacobians`] first), else [`Stale`].
/// Columns of dofs that do not move the joint are zero.
pub fn joint_jacobian(model: &Model, data: &Data, joint: JointId, rf: ReferenceFrame, out: &mut DMatrix<f64>) -> Result<(), Stale> {
    data.require(Fresh::PLACEMENTS | Fresh::JACOBIANS, "joint_jacobian")?;
    let o_m_i = data.o_m_i[joint.0];
    jacobian_at(model, data, joint.0, &o_m_i, rf, out);
    Ok(())
}

/// The Jacobian of a frame in `rf` into `out` (6 x nv); `Local` and `LocalWorldAligned` refer
/// to the frame's own origin (and axes). Needs the Jacobians fresh ([`joint_jacobians`]
/// first), else [`Stale`].
pub fn frame_jacobian(model: &Model, data: &Data, frame: FrameId, rf: ReferenceFrame, out: &mut DMatrix<f64>) -> Result<(), Stale> {
    data.require(Fresh::PLACEMENTS | Fresh::JACOBIANS, "frame_jacobian")?;
    let f = model.frame(frame);
    let o_m_f = data.o_m_i[f.parent_joint.0].compose(&f.placement);
    jacobian_at(model, data, f.parent_joint.0, &o_m_f, rf, out);
    Ok(())
}

fn jacobian_at(model: &Model, data: &Data, joint: usize, o_m_x: &Se3, rf: ReferenceFrame, out: &mut DMatrix<f64>) {
    assert!(out.nrows() == 6 && out.ncols() == model.nv, "Jacobian output must be 6 x nv");
    out.fill(0.0);
    let mut j = joint;
    while j > 0 {
        for k in model.idx_v[j]..model.idx_v[j] + model.nvs[j] {
            write_col(out, k, &express(&read_col(&data.jacobian, k), o_m_x, rf));
        }
        j = model.parents[j];
    }
}

/// World Jacobians and their time derivative (`data.jacobian`, `data.jacobian_dot`) for
/// (q, q̇): column k of J̇ is `v_i × J_k`, v_i the world spatial velocity of the dof's body.
/// Fresh after: placements, velocities, Jacobians and their time derivative.
pub fn joint_jacobian_time_variation(model: &Model, data: &mut Data, q: &DVector<f64>, v: &DVector<f64>) {
    forward_kinematics_velocity(model, data, q, v);
    fill_world_columns(model, data);
    for k in 0..model.nv {
        let i = model.dof_joint[k];
        let ov = data.o_m_i[i].act_motion(&data.v[i]);
        let col = read_col(&data.jacobian, k);
        write_col(&mut data.jacobian_dot, k, &ov.cross(&col));
    }
    data.fresh = Fresh::PLACEMENTS | Fresh::VELOCITIES | Fresh::JACOBIANS | Fresh::JACOBIAN_DOT;
}

/// The time derivative of [`joint_jacobian`] in `rf` into `out` (6 x nv). Needs
/// [`joint_jacobian_time_variation`] first, else [`Stale`].
pub fn joint_jacobian_dot(model: &Model, data: &Data, joint: JointId, rf: ReferenceFrame, out: &mut DMatrix<f64>) -> Result<(), Stale> {
    data.require(Fresh::PLACEMENTS | Fresh::VELOCITIES | Fresh::JACOBIANS | Fresh::JACOBIAN_DOT, "joint_jacobian_dot")?;
    assert!(out.nrows() == 6 && out.ncols() == model.nv, "Jacobian output must be 6 x nv");
    out.fill(0.0);
    let o_m_i = data.o_m_i[joint.0];
    // world spatial velocity of the joint frame
    let ov = o_m_i.act_motion(&data.v[joint.0]);
    let p = o_m_i.translation;
    let p_dot = ov.linear + ov.angular.cross(&p);
    let mut j = joint.0;
    while j > 0 {
        for k in model.idx_v[j]..model.idx_v[j] + model.nvs[j] {
            let jw = read_col(&data.jacobian, k);
            let djw = read_col(&data.jacobian_dot, k);
            let col = match rf {
                ReferenceFrame::World => djw,
                // d/dt (X⁻¹ J) = X⁻¹ (J̇ - v × J)
                ReferenceFrame::Local => o_m_i.inv_act_motion(&(djw - ov.cross(&jw))),
                ReferenceFrame::LocalWorldAligned => Motion::new(
                    djw.linear - p_dot.cross(&jw.angular) - p.cross(&djw.angular),
                    djw.angular,
                ),
            };
            write_col(out, k, &col);
        }
        j = model.parents[j];
    }
    Ok(())
}

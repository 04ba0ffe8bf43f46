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
//! its constraints; the simulator (`karakuri-sim`) writes whole rows with [`add_point_row`],
//! [`add_angular_row`] and their relative forms, walking each body's joint chain to the root.

use crate::algorithms::dof_in_frame;
use crate::model::Model;
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

/// Adds `sign ·` [`point_coefficient`] to `row` (length nv) for every dof that moves `joint`
/// (its chain to the root; nothing for the universe).
pub fn add_point_row(
    model: &Model,
    s: &[Motion],
    joint: usize,
    p: &Vec3,
    dir: &Vec3,
    sign: f64,
    row: &mut [f64],
) {
    let mut j = joint;
    while j > 0 {
        for k in model.idx_v[j]..model.idx_v[j] + model.nvs[j] {
            row[k] += sign * point_coefficient(&s[k], p, dir);
        }
        j = model.parents[j];
    }
}

/// Adds `sign ·` [`angular_coefficient`] to `row` for every dof that moves `joint`.
pub fn add_angular_row(
    model: &Model,
    s: &[Motion],
    joint: usize,
    dir: &Vec3,
    sign: f64,
    row: &mut [f64],
) {
    let mut j = joint;
    while j > 0 {
        for k in model.idx_v[j]..model.idx_v[j] + model.nvs[j] {
            row[k] += sign * angular_coefficient(&s[k], dir);
        }
        j = model.parents[j];
    }
}

/// Adds the row of the velocity along `dir` of point `p_b` (world) on `joint_b` relative to
/// point `p_a` on `joint_a`: `dir·(v_b(p_b) - v_a(p_a))` (a contact: `p_a = p_b`; a ball loop:
/// the two anchors).
pub fn add_relative_point_row(
    model: &Model,
    s: &[Motion],
    (joint_a, p_a): (usize, &Vec3),
    (joint_b, p_b): (usize, &Vec3),
    dir: &Vec3,
    row: &mut [f64],
) {
    add_point_row(model, s, joint_b, p_b, dir, 1.0, row);
    add_point_row(model, s, joint_a, p_a, dir, -1.0, row);
}

/// Adds the row of the angular velocity along `dir` of `joint_b` relative to `joint_a`.
pub fn add_relative_angular_row(
    model: &Model,
    s: &[Motion],
    joint_a: usize,
    joint_b: usize,
    dir: &Vec3,
    row: &mut [f64],
) {
    add_angular_row(model, s, joint_b, dir, 1.0, row);
    add_angular_row(model, s, joint_a, dir, -1.0, row);
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
        add_point_row(&model, &s, 2, &p, &dir, 1.0, &mut row);
        let u: f64 = row.iter().zip(v.iter()).map(|(a, b)| a * b).sum();
        assert!((u - dir.dot(&(vw.linear + vw.angular.cross(&p)))).abs() < 1e-14);
        let phi = Force::new(dir, p.cross(&dir));
        let w: f64 = (0..model.nv)
            .map(|k| wrench_coefficient(&s[k], &phi) * v[k])
            .sum();
        assert!((u - w).abs() < 1e-14);
        row.fill(0.0);
        add_relative_angular_row(&model, &s, 1, 2, &dir, &mut row);
        let u: f64 = row.iter().zip(v.iter()).map(|(a, b)| a * b).sum();
        let va = o_m_i[1].act_motion(&vel[1]);
        assert!((u - dir.dot(&(vw.angular - va.angular))).abs() < 1e-14);
    }
}

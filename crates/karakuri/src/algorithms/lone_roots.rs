//! [`compute_all_terms`](super::compute_all_terms) for a world of *lone roots*: every joint
//! hangs from the universe and has no joint below it, and none is a free flyer (pendulums,
//! sliders, a Newton's cradle). Each such joint's terms involve only its own placement: its
//! velocity is `S q̇`, its acceleration at `q̈ = 0` is zero and its gravity acceleration the
//! universe's `−g` brought into its frame, its block of M is constant in its own frame
//! (`Sᵀ I S`), and nothing is carried between joints. So one pass over the joints does what
//! CRBA, RNEA and the Jacobian fill do in three (with their composite inertias, working-frame
//! columns and parent accumulations, all of which are identities or zeros here), with the
//! same arithmetic for each quantity: the same numbers bit for bit.

use super::all_terms::ALL_TERMS;
use super::crba::lone_root_block;
use super::jacobian::write_col;
use super::{axis_motion, check_len, dof_dot, dof_in_frame, is_free_flyer, is_lone_root, joint_motion, place_joints, project_force};
use crate::data::Data;
use crate::model::Model;
use crate::spatial::Motion;
use nalgebra::DVector;

/// Proof that a model is a world of lone roots (no free flyer), for
/// [`compute_all_terms_of_lone_roots`]: made only by [`LoneRoots::of`], which checks the
/// model, so that the check is made once (when the world is built) and not every step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoneRoots {
    /// The model's joint count (the universe included), held against the model it is used
    /// with.
    njoints: usize,
}

impl LoneRoots {
    /// `Some` when every joint of `model` is a lone root that is not a free flyer (and there
    /// is at least one).
    pub fn of(model: &Model) -> Option<LoneRoots> {
        let lone = model.njoints > 1 && (1..model.njoints).all(|i| is_lone_root(model, i) && !is_free_flyer(model, i));
        lone.then_some(LoneRoots { njoints: model.njoints })
    }
}

/// [`compute_all_terms`](super::compute_all_terms) of a model of lone roots (`lone`, from
/// [`LoneRoots::of`] on this model): the same quantities, bit for bit, fresh together after
/// it. Per joint: its placement ([`place_joints`]), `v = S q̇`, `a = 0`, `a_g = X⁻¹ (−g)`,
/// `f = I a_g + v ×* I v`, `τ = Sᵀ f` (= the nonlinear effects), its world Jacobian columns
/// `X S` and its block of M. The sign of an exactly zero torque may differ from
/// `compute_all_terms`' (a one-dof joint's `Sᵀ f` reads the one component).
///
/// # Panics
/// When `lone` was made for a model with another joint count, or `q`, `v` have the wrong
/// sizes.
pub fn compute_all_terms_of_lone_roots(model: &Model, lone: &LoneRoots, data: &mut Data, q: &DVector<f64>, v: &DVector<f64>) {
    assert_eq!(lone.njoints, model.njoints, "LoneRoots made for another model");
    check_len("q", q, model.nq);
    check_len("v", v, model.nv);
    data.a_gf[0] = -model.gravity;
    data.v[0] = Motion::zero();
    data.a[0] = Motion::zero();
    let vs = v.as_slice();
    place_joints(model, data, q.as_slice(), |data, i| {
        // RNEA's forward step of a root (rnea.rs) with q̈ = 0; a one-dof joint along a basis
        // axis: `S q̇` is `0 + q̇` on the axis and +0 elsewhere (what `joint_motion`'s sum from
        // zero gives, bit for bit)
        let v0 = model.idx_v[i];
        let one_axis = if model.nvs[i] == 1 { model.dof_axis[v0] } else { None };
        let v_j = match one_axis {
            Some(c) => axis_motion(c, 0.0 + vs[v0]),
            None => joint_motion(model, i, vs),
        };
        let x = data.li_m_i[i];
        data.v[i] = v_j;
        let a_j = Motion::zero();
        data.a[i] = a_j;
        data.a_gf[i] = x.inv_act_motion(&data.a_gf[0]) + a_j;
        let inertia = &model.inertias[i];
        let h = inertia.mul_motion(&data.v[i]);
        data.f[i] = inertia.mul_motion(&data.a_gf[i]) + data.v[i].cross_force(&h);
        // RNEA's backward step (no parent to carry f to); along a basis axis `Sᵀ f` is the
        // one component (the general dot adds zeros: the same value, but for the sign of
        // an exact zero)
        match one_axis {
            Some(_) => data.tau[v0] = dof_dot(model, v0, &data.f[i]),
            None => project_force(model, i, &data.f[i], data.tau.as_mut_slice()),
        }
        // the Jacobian's columns (fill_world_columns) and CRBA's block
        for k in v0..v0 + model.nvs[i] {
            write_col(&mut data.jacobian, k, &dof_in_frame(model, k, &data.o_m_i[i]));
        }
        lone_root_block(model, i, &model.origin_inertias[i], data.mass_matrix.as_mut_slice());
    });
    data.nle.copy_from(&data.tau);
    data.fresh = ALL_TERMS;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::{compute_all_terms, random_configuration, SplitMix64};
    use crate::model::{Axis, JointId, JointType, ModelBuilder};
    use crate::spatial::{exp3, Inertia, Mat3, Se3, Vec3};

    fn bits(x: &[f64]) -> Vec<u64> {
        x.iter().map(|x| x.to_bits()).collect()
    }

    /// Every kind of lone root but the free flyer, behind rotated, unrotated and quarter-turn
    /// placements: the one pass gives compute_all_terms' numbers bit for bit.
    #[test]
    fn lone_roots_give_compute_all_terms_bit_for_bit() {
        let mut b = ModelBuilder::new("lone");
        let kinds = [
            JointType::Revolute { axis: Axis::Y },
            JointType::Revolute { axis: Axis::Unaligned(Vec3::new(-1.0, 0.0, 0.0)) },
            JointType::RevoluteUnbounded { axis: Axis::Z },
            JointType::Revolute { axis: Axis::Unaligned(Vec3::new(0.6, 0.0, -0.8)) },
            JointType::Prismatic { axis: Axis::Z },
            JointType::Spherical,
            JointType::Planar,
        ];
        let inertia = Inertia::new(1.3, Vec3::new(0.05, -0.1, -0.7), Mat3::from_diagonal(&Vec3::new(0.02, 0.03, 0.04)));
        for (n, kind) in kinds.into_iter().enumerate() {
            let rotation = match n % 3 {
                0 => Mat3::identity(),
                1 => exp3(&Vec3::new(0.0, 0.0, std::f64::consts::FRAC_PI_2)),
                _ => exp3(&Vec3::new(0.3, -0.5, 0.9 * n as f64)),
            };
            let j = b.add_joint(JointId::UNIVERSE, &format!("j{n}"), kind, Se3::new(rotation, Vec3::new(0.1 * n as f64, -0.2, 1.3))).unwrap();
            b.add_body(j, &format!("b{n}"), inertia).unwrap();
        }
        let model = b.build().unwrap();
        let lone = LoneRoots::of(&model).expect("lone roots");
        let (mut general, mut one_pass) = (Data::new(&model), Data::new(&model));
        let mut rng = SplitMix64::new(7);
        for _ in 0..5 {
            let q = random_configuration(&model, &mut rng);
            let v = DVector::from_fn(model.nv, |_, _| rng.range(-3.0, 3.0));
            compute_all_terms(&model, &mut general, &q, &v);
            compute_all_terms_of_lone_roots(&model, &lone, &mut one_pass, &q, &v);
            assert_eq!(general.fresh(), one_pass.fresh());
            assert_eq!(bits(general.mass_matrix().unwrap().as_slice()), bits(one_pass.mass_matrix().unwrap().as_slice()));
            assert_eq!(bits(general.nonlinear_effects().unwrap().as_slice()), bits(one_pass.nonlinear_effects().unwrap().as_slice()));
            assert_eq!(bits(general.jacobians().unwrap().as_slice()), bits(one_pass.jacobians().unwrap().as_slice()));
            let flat = |d: &Data| {
                let mut out = Vec::new();
                for x in d.joint_placements().unwrap().iter().chain(d.parent_placements().unwrap()) {
                    out.extend(x.rotation.iter().chain(x.translation.iter()).copied());
                }
                for m in d.joint_velocities().unwrap().iter().chain(d.joint_accelerations().unwrap()).chain(d.joint_accelerations_with_gravity().unwrap()) {
                    out.extend(m.linear.iter().chain(m.angular.iter()).copied());
                }
                bits(&out)
            };
            assert_eq!(flat(&general), flat(&one_pass));
        }
    }

    /// A chain, a free body or no joint at all: not lone roots.
    #[test]
    fn other_models_are_not_lone_roots() {
        let inertia = Inertia::new(1.0, Vec3::zeros(), Mat3::identity());
        let mut b = ModelBuilder::new("chain");
        let j = b.add_joint(JointId::UNIVERSE, "a", JointType::Revolute { axis: Axis::X }, Se3::identity()).unwrap();
        b.add_body(j, "a", inertia).unwrap();
        let j = b.add_joint(j, "b", JointType::Revolute { axis: Axis::X }, Se3::identity()).unwrap();
        b.add_body(j, "b", inertia).unwrap();
        assert!(LoneRoots::of(&b.build().unwrap()).is_none());
        let mut b = ModelBuilder::new("free");
        let j = b.add_joint(JointId::UNIVERSE, "a", JointType::FreeFlyer, Se3::identity()).unwrap();
        b.add_body(j, "a", inertia).unwrap();
        assert!(LoneRoots::of(&b.build().unwrap()).is_none());
        assert!(LoneRoots::of(&ModelBuilder::new("empty").build().unwrap()).is_none());
    }
}

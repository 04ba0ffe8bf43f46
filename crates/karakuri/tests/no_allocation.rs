//! The hot-path algorithms allocate nothing once `Data` exists (a counting global allocator).
#![allow(unsafe_code)] // implementing GlobalAlloc is unsafe by definition (counting/mod.rs)

mod counting;

use karakuri::algorithms::*;
use karakuri::constraints::{constrained_dynamics_derivatives, ConstrainedDerivatives};
use karakuri::io::urdf::{self, Root};
use karakuri::{Data, JointId};

/// The only test in this binary, so no other thread allocates while it counts.
#[test]
fn hot_paths_allocate_nothing() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/talos_reduced.urdf");
    let model = urdf::load(path, Root::FreeFlyer).unwrap();
    let mut data = Data::new(&model);
    let mut rng = SplitMix64::new(1);
    let q = random_configuration(&model, &mut rng);
    let (v, a) = (rng.vector(model.nv), rng.vector(model.nv));
    let mut j = nalgebra::DMatrix::zeros(6, model.nv);
    let mut x = v.clone();
    let mut derivatives = DerivativesWorkspace::new(&model);
    let f_ext = vec![karakuri::spatial::Force::new(v.fixed_rows::<3>(0).into(), a.fixed_rows::<3>(0).into()); model.njoints];
    let mut cs = karakuri::constraints::ConstraintSet::new();
    for name in ["leg_left_6_joint", "leg_right_6_joint"] {
        cs.add_frame_contact_6d(model.joint_id(name).unwrap(), karakuri::spatial::Se3::identity(), Some(name));
    }
    cs.add_point_contact_3d(model.joint_id("arm_left_7_joint").unwrap(), karakuri::spatial::Vec3::zeros(), None);
    cs.bind(&model).unwrap();
    let mut constrained = ConstrainedDerivatives::new(&model, &cs);
    let method = karakuri::constraints::Method::RangeSpaceSparse;
    let mut run = |data: &mut Data| {
        forward_kinematics(&model, data, &q);
        forward_kinematics_velocity(&model, data, &q, &v);
        forward_kinematics_acceleration(&model, data, &q, &v, &a);
        update_frame_placements(&model, data).unwrap();
        inverse_dynamics(&model, data, &q, &v, &a);
        nonlinear_effects(&model, data, &q, &v);
        gravity_torques(&model, data, &q);
        mass_matrix(&model, data, &q);
        factorize_mass_matrix(data).unwrap().solve(x.as_mut_slice());
        forward_dynamics(&model, data, &q, &v, &a);
        mass_matrix_inverse(&model, data, &q);
        joint_jacobians(&model, data, &q);
        joint_jacobian(&model, data, JointId(model.njoints - 1), ReferenceFrame::LocalWorldAligned, &mut j).unwrap();
        joint_jacobian_time_variation(&model, data, &q, &v);
        joint_jacobian_dot(&model, data, JointId(model.njoints - 1), ReferenceFrame::Local, &mut j).unwrap();
        compute_all_terms(&model, data, &q, &v);
        data.nonlinear_effects().unwrap();
        data.jacobians().unwrap();
        center_of_mass(&model, data, &q);
        center_of_mass_jacobian(&model, data, &q);
        kinetic_energy(&model, data, &q, &v);
        potential_energy(&model, data, &q);
        rnea_derivatives(&model, data, &mut derivatives, &q, &v, &a);
        rnea_derivatives_with_forces(&model, data, &mut derivatives, &q, &v, &a, &f_ext);
        aba_derivatives(&model, data, &mut derivatives, &q, &v, &a);
        aba_derivatives_with_forces(&model, data, &mut derivatives, &q, &v, &a, &f_ext);
        constrained_dynamics_derivatives(&model, data, &mut cs, &mut constrained, &q, &v, &a, method).unwrap();
    };
    run(&mut data);
    let before = counting::allocations();
    run(&mut data);
    let after = counting::allocations();
    assert_eq!(after - before, 0, "hot-path algorithms allocated {} times", after - before);
}

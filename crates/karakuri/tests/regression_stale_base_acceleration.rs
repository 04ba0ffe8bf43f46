//! Regression: `forward_dynamics` (ABA) leaves `data.a[0] = -gravity`, and
//! `forward_kinematics_acceleration` started its recursion from `data.a[0]`, so body
//! accelerations after an ABA call had gravity in them, and Kokkevis's constrained dynamics
//! (which runs both) was wrong on its second call (found from the Python tests of issue 18).

use karakuri::algorithms::*;
use karakuri::constraints::{ConstraintSet, Method};
use karakuri::io::urdf::{self, Root};
use karakuri::spatial::Vec3;
use karakuri::Data;
use nalgebra::DVector;

fn solo12() -> karakuri::Model {
    urdf::load(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/solo12.urdf"), Root::FreeFlyer).unwrap()
}

#[test]
fn body_accelerations_after_aba_do_not_include_gravity() {
    let model = solo12();
    let mut rng = SplitMix64::new(7);
    let q = random_configuration(&model, &mut rng);
    let (v, a) = (rng.vector(model.nv), rng.vector(model.nv));
    let mut fresh = Data::new(&model);
    forward_kinematics_acceleration(&model, &mut fresh, &q, &v, &a);
    let mut data = Data::new(&model);
    forward_dynamics(&model, &mut data, &q, &v, &DVector::zeros(model.nv));
    forward_kinematics_acceleration(&model, &mut data, &q, &v, &a);
    let (ours, expected) = (data.joint_accelerations().unwrap(), fresh.joint_accelerations().unwrap());
    for i in 0..model.njoints {
        assert!((ours[i].to_vec6() - expected[i].to_vec6()).amax() < 1e-12, "body {i}");
    }
}

#[test]
fn kokkevis_twice_gives_the_same_answer() {
    let model = solo12();
    let mut rng = SplitMix64::new(3);
    let q = random_configuration(&model, &mut rng);
    let v = rng.vector(model.nv);
    let tau = DVector::zeros(model.nv);
    let mut cs = ConstraintSet::new();
    for foot in ["FL_KFE", "FR_KFE", "HL_KFE", "HR_KFE"] {
        cs.add_point_contact_3d(model.joint_id(foot).unwrap(), Vec3::zeros(), Some(foot));
    }
    cs.bind(&model).unwrap();
    let mut data = Data::new(&model);
    let direct = cs.forward_dynamics(&model, &mut data, &q, &v, &tau, Method::Direct).unwrap().clone();
    for _ in 0..2 {
        let k = cs.forward_dynamics(&model, &mut data, &q, &v, &tau, Method::Kokkevis).unwrap();
        assert!((k - &direct).amax() < 1e-9);
    }
}

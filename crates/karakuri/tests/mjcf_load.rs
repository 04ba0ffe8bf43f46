//! The MJCF loader's model beyond MuJoCo's numbers (tests/mjcf_mujoco.rs): names of unnamed
//! elements, frames, armature in forward dynamics.

use std::path::PathBuf;

use karakuri::algorithms::{forward_dynamics, inverse_dynamics, mass_matrix, random_configuration, SplitMix64};
use karakuri::io::mjcf;
use karakuri::model::{FrameKind, JointType};
use karakuri::Data;
use nalgebra::DVector;

fn features() -> karakuri::Model {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/mjcf/features/features.xml");
    mjcf::load(path).unwrap()
}

#[test]
fn joints_come_in_mujoco_order_and_unnamed_ones_are_named_by_rule() {
    let m = features();
    let names: Vec<&str> = m.joint_names.iter().map(String::as_str).collect();
    assert_eq!(
        names,
        ["universe", "root", "hip_x", "hip_y", "hip_slide", "knee", "shoulder", "wrist", "tiny_hinge", "body8_joint0", "body8_joint1"]
    );
    assert_eq!(m.joint_types[1], JointType::FreeFlyer);
    assert_eq!(m.joint_types[6], JointType::Spherical);
    // the chain of three joints in "upper": the body name on the last
    assert_eq!(m.body_names[4], "upper");
    assert_eq!(m.body_names[10], "body8");
    for (name, kind) in [("imu", FrameKind::Operational), ("foot", FrameKind::Operational), ("world_marker", FrameKind::Operational), ("prop", FrameKind::Body), ("upper", FrameKind::Body)] {
        assert!(m.frames.iter().any(|f| f.name == name && f.kind == kind), "no frame {name}");
    }
    // armature from the classes: main 0.01, heavy 0.2 (knee), the joint's own 0.05 (shoulder)
    assert_eq!(m.armature[m.idx_v[5]], 0.2);
    assert_eq!(&m.armature[m.idx_v[6]..m.idx_v[6] + 3], &[0.05; 3]);
    assert_eq!(m.armature[m.idx_v[2]], 0.01);
    assert_eq!(&m.armature[0..6], &[0.0; 6], "<freejoint> takes no defaults");
    assert_eq!(m.damping[m.idx_v[2]], 0.1);
    // hinge range in degrees; the slide's in metres
    assert!((m.upper_position_limit[m.idx_q[2]] - 90f64.to_radians()).abs() < 1e-15);
    assert_eq!(m.lower_position_limit[m.idx_q[4]], -0.1);
}

#[test]
fn forward_dynamics_with_armature_inverts_the_mass_matrix() {
    let m = features();
    let mut data = Data::new(&m);
    for seed in 0..5 {
        let q = random_configuration(&m, &mut SplitMix64::new(seed));
        let v = DVector::from_fn(m.nv, |i, _| ((i as f64 + seed as f64) * 0.7).sin());
        let tau = DVector::from_fn(m.nv, |i, _| ((i as f64) * 1.3 + seed as f64).cos());
        let a = forward_dynamics(&m, &mut data, &q, &v, &tau).clone();
        let back = inverse_dynamics(&m, &mut data, &q, &v, &a).clone();
        assert!((&back - &tau).amax() < 1e-10, "ABA then RNEA: {:e}", (&back - &tau).amax());
        let mm = mass_matrix(&m, &mut data, &q).clone();
        let zero = DVector::zeros(m.nv);
        let bias = inverse_dynamics(&m, &mut data, &q, &v, &zero).clone();
        assert!((mm * &a + bias - &tau).amax() < 1e-10);
    }
}

#[test]
fn an_unnamed_body_and_radian_angles() {
    let xml = r#"<mujoco><compiler angle="radian"/><worldbody>
      <body euler="0 0 1.5707963267948966"><joint range="-1 1"/><geom size="0.1"/><site/></body>
    </worldbody></mujoco>"#;
    let (m, warnings) = mjcf::parse_str(xml, "radian.xml").unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(m.joint_names[1], "body1_joint0");
    assert_eq!(m.upper_position_limit[0], 1.0);
    assert!(m.frames.iter().any(|f| f.name == "body1_site0"));
    assert!((m.joint_placements[1].rotation[(1, 0)] - 1.0).abs() < 1e-15);
}

//! Choreonoid's own sample models (tests/data/body, copied from choreonoid/share/model with its
//! MIT licence) through the `.body` loader, checked against the numbers each file states, read
//! here by a minimal line reader of its own (not the loader's YAML): every link's mass, centre
//! of mass and inertia, the joint order and ranges, the sensors, the standard pose.

use std::path::{Path, PathBuf};

use karakuri::io::body::{self, BodyJointKind, BodyModel, DeviceKind, ExtraJointKind};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/body").join(rel)
}

/// One link of a file as its text states it.
#[derive(Debug, Default)]
struct Stated {
    name: String,
    line: usize,
    mass: Option<f64>,
    element_masses: Vec<f64>,
    com: Option<Vec<f64>>,
    inertia: Option<Vec<f64>>,
    range: Option<Vec<f64>>,
    joint_type: Option<String>,
    joint_id: Option<i32>,
}

fn numbers(s: &str) -> Vec<f64> {
    s.split(|c: char| c == ',' || c == '[' || c == ']' || c.is_whitespace()).filter(|t| !t.is_empty()).map(|t| t.parse().unwrap()).collect()
}

/// The links of the `links:` list: each `  -` item's keys at four spaces (either spelling),
/// `mass:` deeper down as an element's mass when the element at that indentation is a
/// `RigidBody` (Choreonoid ignores it in a `Transform`); bracketed values may span lines.
fn stated_links(text: &str) -> Vec<Stated> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| l.starts_with("links:")).unwrap();
    let mut out: Vec<Stated> = vec![];
    let mut element_type = std::collections::BTreeMap::new();
    let mut i = start + 1;
    while i < lines.len() && (lines[i].starts_with(' ') || lines[i].trim().is_empty()) {
        let l = lines[i];
        if l.starts_with("  -") {
            out.push(Stated { line: i + 1, ..Default::default() });
        }
        let Some((key, value)) = l.split_once(':') else {
            i += 1;
            continue;
        };
        let indent = key.len() - key.trim_start().len();
        let key = key.trim().replace('_', "").to_lowercase();
        let mut value = value.trim().to_string();
        if value.starts_with('[') && !value.contains(']') {
            while !value.contains(']') {
                i += 1;
                value.push(' ');
                value.push_str(lines[i].trim());
            }
        }
        let link = out.last_mut().unwrap();
        if key == "type" {
            element_type.insert(indent, value.clone());
        }
        match (indent, key.as_str()) {
            (4, "name") => link.name = value,
            (4, "mass") => link.mass = Some(value.parse().unwrap()),
            (i, "mass") if i > 4 && element_type.get(&i).is_some_and(|t| t == "RigidBody") => link.element_masses.push(value.parse().unwrap()),
            (4, "centerofmass") => link.com = Some(numbers(&value)),
            (4, "inertia") => link.inertia = Some(numbers(&value)),
            (4, "jointrange") => link.range = Some(numbers(&value)),
            (4, "jointtype") => link.joint_type = Some(value),
            (4, "jointid") => link.joint_id = Some(value.parse().unwrap()),
            _ => {}
        }
        i += 1;
    }
    out
}

/// Every link's mass properties as stated (own plus RigidBody elements' masses), and each
/// moving link's model inertia equal to them; ranges in radians; joints in file order.
fn check_against_file(rel: &str) -> BodyModel {
    let path = data(rel);
    let b = body::load_body(&path).unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(&path).unwrap();
    let stated: Vec<Stated> = stated_links(&text).into_iter().filter(|s| !s.name.is_empty()).collect();
    let mut moving = vec![];
    for s in &stated {
        let l = b.links.iter().find(|l| l.name == s.name).unwrap_or_else(|| panic!("{rel}:{}: link {} not loaded", s.line, s.name));
        let mass = s.mass.unwrap_or(0.0) + s.element_masses.iter().sum::<f64>();
        assert!((l.mass - mass).abs() <= 1e-12 * mass, "{rel}:{}: {} mass {} vs stated {mass}", s.line, s.name, l.mass);
        if s.element_masses.is_empty() {
            let com = s.com.clone().unwrap_or(vec![0.0; 3]);
            assert_eq!(l.com.as_slice(), &com[..], "{rel}:{}: {} centre of mass", s.line, s.name);
            assert_eq!(&l.inertia[..], &s.inertia.clone().unwrap()[..], "{rel}:{}: {} inertia", s.line, s.name);
        }
        let kind = s.joint_type.as_deref().unwrap_or("fixed");
        if kind == "revolute" || kind == "prismatic" || kind == "slide" {
            moving.push(s.name.clone());
            let j = b.model.joint_id(&s.name).unwrap().0;
            let inertia = &b.model.inertias[j];
            if s.element_masses.is_empty() && b.links.iter().filter(|x| x.joint == j).count() == 1 {
                assert!((inertia.mass - mass).abs() <= 1e-12 * mass, "{rel}: {} model mass", s.name);
                assert!((inertia.com - l.com).norm() <= 1e-12, "{rel}: {} model centre of mass", s.name);
                let stated = nalgebra::Matrix3::from_row_slice(&l.inertia);
                assert!((inertia.inertia_com - stated).amax() <= 1e-12, "{rel}: {} model inertia", s.name);
            }
            let iq = b.model.idx_q[j];
            let (lo, hi) = (b.model.lower_position_limit[iq], b.model.upper_position_limit[iq]);
            if let Some(r) = &s.range {
                let unit = if kind == "revolute" { std::f64::consts::PI / 180.0 } else { 1.0 };
                assert_eq!((lo, hi), (r[0] * unit, r[1] * unit), "{rel}:{}: {} range", s.line, s.name);
            }
            assert_eq!(b.links.iter().find(|x| x.name == s.name).unwrap().joint_id, s.joint_id, "{rel}: {} jointId", s.name);
        }
    }
    let model_order: Vec<&String> = b.model.joint_names.iter().skip(1).filter(|n| moving.contains(n)).collect();
    assert_eq!(model_order, moving.iter().collect::<Vec<_>>(), "{rel}: joint order");
    b
}

fn device_names(b: &BodyModel, kind: DeviceKind) -> Vec<(String, String)> {
    b.devices.iter().filter(|d| d.kind == kind).map(|d| (d.name.clone(), b.links[d.link].name.clone())).collect()
}

#[test]
fn sr1_as_its_file_states() {
    let b = check_against_file("SR1/SR1.body");
    assert_eq!(b.model.nv, 6 + 29);
    assert_eq!(b.links[0].kind, BodyJointKind::Free);
    // SR1.body line 12: translation [0, 0, 0.7135] of the free root: its start
    assert_eq!(b.root_placement.translation.z, 0.7135);
    let total: f64 = stated_links(&std::fs::read_to_string(data("SR1/SR1.body")).unwrap()).iter().filter_map(|s| s.mass).sum();
    assert!((b.model.total_mass() - total).abs() < 1e-12, "{} vs {total}", b.model.total_mass());
    // the elements: WaistAccelSensor (line 33), WaistGyro, WaistIMU; ankle force sensors; cameras listed
    let s = |a: &str, l: &str| (a.to_string(), l.to_string());
    assert_eq!(device_names(&b, DeviceKind::AccelerationSensor), vec![s("WaistAccelSensor", "WAIST")]);
    assert_eq!(device_names(&b, DeviceKind::RateGyroSensor), vec![s("WaistGyro", "WAIST")]);
    assert_eq!(device_names(&b, DeviceKind::Imu), vec![s("WaistIMU", "WAIST")]);
    assert_eq!(device_names(&b, DeviceKind::ForceSensor), vec![s("LeftAnkleForceSensor", "LLEG_ANKLE_R"), s("RightAnkleForceSensor", "RLEG_ANKLE_R")]);
    assert_eq!(device_names(&b, DeviceKind::Other("Camera".into())).len(), 2);
    // camera rotation [[0, 1, 0, -90], [0, 0, 1, -90]] composed left to right: the optical
    // axis (camera -z) ends up along the chest's +x
    let cam = b.devices.iter().find(|d| d.name == "LeftCamera").unwrap();
    let forward = cam.placement.rotation * -nalgebra::Vector3::z();
    assert!((forward - nalgebra::Vector3::x()).norm() < 1e-12, "{forward}");
    // standard_pose: values by jointId, degrees
    let stated = stated_links(&std::fs::read_to_string(data("SR1/SR1.body")).unwrap());
    let pose: [f64; 29] = [0., -30., 0., 60., -30., 0., 20., -10., 0., -40., 0., 0., 0., 0., -30., 0., 60., -30., 0., 20., 10., 0., -40., 0., 0., 0., 0., 0., 0.];
    assert_eq!(b.standard_pose.len(), 29);
    for (name, value) in &b.standard_pose {
        let id = stated.iter().find(|s| &s.name == name).unwrap().joint_id.unwrap() as usize;
        assert_eq!(*value, pose[id].to_radians(), "{name}");
    }
    assert_eq!(b.collision_rules.disabled_link_chain_level, Some(3));
    assert!(b.warnings.is_empty(), "{:?}", b.warnings);
    // the shapes: boxes and cylinders, all both visual and collision (no Visual/Collision nodes)
    assert!(b.shapes.iter().all(|s| s.visual && s.collision));
}

#[test]
fn pa10_gr001_as_their_files_state() {
    let pa10 = check_against_file("PA10/PA10.body");
    // BASE is fixed (line 9) and the first link: on the universe; J1..J7 and the two fingers
    assert_eq!(pa10.links[0].joint, 0);
    assert_eq!(pa10.model.nv, 9);
    assert_eq!(pa10.model.joint_types[8], karakuri::model::JointType::Prismatic { axis: karakuri::model::Axis::Y });
    // Visual .wrl resources are not read; Collision shapes only collide
    assert!(pa10.shapes.iter().filter(|s| matches!(s.geometry, body::BodyGeometry::Vrml { .. })).all(|s| s.visual && !s.collision));
    // rotorInertia 3.0E-4 of J1 (line 37) is J1's armature
    assert_eq!(pa10.model.armature[0], 3.0e-4);
    let gr = check_against_file("GR001/GR001.body");
    assert_eq!(gr.model.nv, 6 + 20);
    // R_HIP_R's axis -X (line 63)
    let l = gr.links.iter().find(|l| l.name == "R_HIP_R").unwrap();
    assert_eq!(l.axis, -nalgebra::Vector3::x());
    assert!(gr.shapes.iter().all(|s| matches!(s.geometry, body::BodyGeometry::Mesh { .. })));
}

#[test]
fn tank_through_its_sub_body() {
    let b = body::load_body(data("Tank/Tank.body")).unwrap_or_else(|e| panic!("{e}"));
    let mut total = 0.0;
    for f in ["Tank/Tank.body", "Tank/TankBody.body"] {
        for s in stated_links(&std::fs::read_to_string(data(f)).unwrap()) {
            total += s.mass.unwrap_or(0.0) + s.element_masses.iter().sum::<f64>();
        }
    }
    let links: f64 = b.links.iter().map(|l| l.mass).sum();
    assert!((links - total).abs() < 1e-12, "{links} vs {total}");
    // the SubBody node's translation (Tank.body line 10) overrides TankBody's (0.11)
    assert_eq!(b.root_placement.translation.z, 0.106);
    let tracks: Vec<_> = b.links.iter().filter(|l| l.kind == BodyJointKind::PseudoContinuousTrack).collect();
    assert_eq!(tracks.len(), 2);
    assert!(tracks.iter().all(|t| t.axis == nalgebra::Vector3::y() && t.joint == 1));
    assert_eq!(device_names(&b, DeviceKind::RateGyroSensor), vec![("GYRO".to_string(), "CHASSIS".to_string())]);
    // TankBody's CHASSIS inertia diag(0.1, 0.1, 0.5) is not physical: repaired, said
    assert!(b.warnings.iter().any(|w| w.contains("CHASSIS") && w.contains("triangle")), "{:?}", b.warnings);
}

#[test]
fn closed_link_sample_extra_joint() {
    let b = body::load_body(data("misc/ClosedLinkSample.body")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(b.extra_joints.len(), 1);
    let e = &b.extra_joints[0];
    assert_eq!((e.kind, e.link1.as_str(), e.link2.as_str()), (ExtraJointKind::Hinge, "J1", "J3"));
    assert_eq!((e.point1.x, e.point2.y), (0.2, 0.1));
    // the root's rotation [1, 0, 0, -90] (line 10): the fixed root's frame on the universe
    let r = b.links[0].placement.rotation;
    assert!((r * nalgebra::Vector3::y() - -nalgebra::Vector3::z()).norm() < 1e-12);
}

#[test]
fn format_2_and_aliases() {
    let text = "format: ChoreonoidBody\nformatVersion: 2.0\nname: T\nlinks:\n  - name: A\n    jointType: free\n    mass: 2.0\n    inertia: &I [0.1, 0, 0, 0, 0.1, 0, 0, 0, 0.1]\n  - name: B\n    parent: A\n    jointType: slide\n    jointAxis: [0, 0, 2]\n    jointRange: [-0.1, 0.2]\n    mass: 1.0\n    inertia: *I\n    elements:\n      - type: RigidBody\n        translation: [0, 0, 1]\n        mass: 1.0\n        inertia: *I\n";
    let b = body::parse_str(text, "t.body").unwrap_or_else(|e| panic!("{e}"));
    let j = b.model.joint_id("B").unwrap().0;
    assert_eq!(b.model.joint_types[j], karakuri::model::JointType::Prismatic { axis: karakuri::model::Axis::Z });
    assert_eq!((b.model.lower_position_limit[6 + 1], b.model.upper_position_limit[7]), (-0.1, 0.2));
    // two bodies of 1 kg at z = 0 and z = 1: 2 kg at z = 0.5, inertia 0.1·2 + 2·0.5² about x
    let i = &b.model.inertias[j];
    assert_eq!((i.mass, i.com.z), (2.0, 0.5));
    assert!((i.inertia_com[(0, 0)] - (0.2 + 0.5)).abs() < 1e-12);
    assert!(body::parse_str(&text.replace("formatVersion: 2.0", "formatVersion: 2.0\nangleUnit: radian"), "t.body").is_err());
}

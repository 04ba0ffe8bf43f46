//! The URDF loader against Pinocchio 4.1's models of the reference robots (`tests/data/*.json`,
//! section `model`), and `package://` mesh resolution.

use std::path::{Path, PathBuf};

use karakuri::io::urdf::{self, LoadOptions, Root, Shape};
use karakuri::model::{Axis, FrameKind, JointType};
use karakuri::spatial::{Mat3, Vec3};
use karakuri::Model;
use serde_json::Value;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data")
}

fn vec3(v: &Value) -> Vec3 {
    Vec3::new(
        v[0].as_f64().unwrap(),
        v[1].as_f64().unwrap(),
        v[2].as_f64().unwrap(),
    )
}

fn mat3(v: &Value) -> Mat3 {
    Mat3::from_fn(|i, j| v[i][j].as_f64().unwrap())
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// The joint type Pinocchio's class name and axis stand for, in our kinds.
fn expected_type(j: &Value) -> JointType {
    let class = j["type"].as_str().unwrap();
    if class == "JointModelFreeFlyer" {
        return JointType::FreeFlyer;
    }
    let v = vec3(&j["axis"]);
    let axis = if class.ends_with("Unaligned") {
        Axis::Unaligned(v)
    } else {
        match class.chars().last().unwrap() {
            'X' => Axis::X,
            'Y' => Axis::Y,
            'Z' => Axis::Z,
            _ => panic!("unknown joint class {class}"),
        }
    };
    match j["kind"].as_str().unwrap() {
        "revolute" => JointType::Revolute { axis },
        "revolute_unbounded" => JointType::RevoluteUnbounded { axis },
        "prismatic" => JointType::Prismatic { axis },
        k => panic!("unknown joint kind {k}"),
    }
}

fn same_type(a: &JointType, b: &JointType) -> bool {
    let ax = |a: &Axis, b: &Axis| match (a, b) {
        (Axis::Unaligned(u), Axis::Unaligned(v)) => (u - v).amax() < 1e-12,
        _ => a == b,
    };
    match (a, b) {
        (JointType::Revolute { axis: a }, JointType::Revolute { axis: b })
        | (JointType::RevoluteUnbounded { axis: a }, JointType::RevoluteUnbounded { axis: b })
        | (JointType::Prismatic { axis: a }, JointType::Prismatic { axis: b }) => ax(a, b),
        _ => a == b,
    }
}

fn load_reference(robot: &str) -> (Model, Value) {
    let json: Value = serde_json::from_str(
        &std::fs::read_to_string(data_dir().join(format!("{robot}.json"))).unwrap(),
    )
    .unwrap();
    let root = match json["source"]["root_joint"].as_str().unwrap() {
        "free_flyer" => Root::FreeFlyer,
        _ => Root::Fixed,
    };
    let model = urdf::load(data_dir().join(format!("{robot}.urdf")), root)
        .unwrap_or_else(|e| panic!("{e}"));
    (model, json)
}

fn check_joint(model: &Model, j: &Value) {
    let name = j["name"].as_str().unwrap();
    let id = model
        .joint_id(name)
        .unwrap_or_else(|| panic!("joint {name} missing"))
        .0;
    let ty = &model.joint_types[id];
    assert!(
        same_type(ty, &expected_type(j)),
        "{name}: {ty:?} vs {}",
        j["type"]
    );
    assert_eq!(
        model.joint_names[model.parents[id]],
        j["parent"].as_str().unwrap(),
        "{name}: parent"
    );
    assert_eq!(
        model.nvs[id],
        j["nv"].as_u64().unwrap() as usize,
        "{name}: nv"
    );
    assert_eq!(
        model.nqs[id],
        j["nq_plain"].as_u64().unwrap() as usize,
        "{name}: nq"
    );

    let x = &model.joint_placements[id];
    let (r, p) = (mat3(&j["placement"]["R"]), vec3(&j["placement"]["p"]));
    assert!(
        (x.rotation - r).amax() < 1e-12,
        "{name}: R {} vs {r}",
        x.rotation
    );
    assert!(
        (x.translation - p).amax() < 1e-12,
        "{name}: p {} vs {p}",
        x.translation
    );

    let inertia = &model.inertias[id];
    let ji = &j["inertia"];
    let mass = ji["mass"].as_f64().unwrap();
    assert!(
        (inertia.mass - mass).abs() < 1e-10,
        "{name}: mass {} vs {mass}",
        inertia.mass
    );
    assert!(
        (inertia.com - vec3(&ji["com"])).amax() < 1e-10,
        "{name}: com {} vs {}",
        inertia.com,
        ji["com"]
    );
    let i_com = mat3(&ji["I_com"]);
    assert!(
        (inertia.inertia_com - i_com).amax() < 1e-10,
        "{name}: I_com {} vs {i_com}",
        inertia.inertia_com
    );

    // position limits where finite and meaningful for our plain-angle kinds
    if !matches!(
        ty,
        JointType::RevoluteUnbounded { .. } | JointType::FreeFlyer
    ) {
        let (lo, hi) = (
            floats(&j["lower_position_limit"]),
            floats(&j["upper_position_limit"]),
        );
        let q = model.idx_q[id];
        for k in 0..lo.len() {
            if lo[k].abs() < 1e300 {
                assert_eq!(
                    model.lower_position_limit[q + k],
                    lo[k],
                    "{name}: lower limit"
                );
            }
            if hi[k].abs() < 1e300 {
                assert_eq!(
                    model.upper_position_limit[q + k],
                    hi[k],
                    "{name}: upper limit"
                );
            }
        }
    }
}

fn check_robot(robot: &str) {
    let (model, json) = load_reference(robot);
    let m = &json["model"];
    assert_eq!(model.nq, m["nq_plain"].as_u64().unwrap() as usize, "nq");
    assert_eq!(model.nv, m["nv"].as_u64().unwrap() as usize, "nv");
    assert_eq!(
        model.njoints,
        m["njoints"].as_u64().unwrap() as usize,
        "njoints"
    );
    assert_eq!(model.joint_names[0], "universe");
    // Pinocchio's total_mass also counts the links merged into the universe (fixed base): compare
    // with the moving bodies only
    let moving_mass: f64 = m["joints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["inertia"]["mass"].as_f64().unwrap())
        .sum();
    assert!(
        (model.total_mass() - moving_mass).abs() < 1e-9,
        "total mass"
    );
    for j in m["joints"].as_array().unwrap() {
        check_joint(&model, j);
    }
    // parents precede children
    assert!((1..model.njoints).all(|i| model.parents[i] < i));
}

#[test]
fn ur5_matches_pinocchio() {
    check_robot("ur5");
}

#[test]
fn panda_matches_pinocchio() {
    check_robot("panda");
}

#[test]
fn kinova_continuous_matches_pinocchio() {
    check_robot("kinova_continuous");
}

#[test]
fn solo12_matches_pinocchio() {
    check_robot("solo12");
}

#[test]
fn anymal_matches_pinocchio() {
    check_robot("anymal");
}

#[test]
fn talos_reduced_matches_pinocchio() {
    check_robot("talos_reduced");
}

#[test]
fn panda_details_mimic_velocity_effort_frames() {
    let opts = LoadOptions {
        root: Root::Fixed,
        package_dirs: vec![],
    };
    let (model, geometry) = urdf::load_with(data_dir().join("panda.urdf"), &opts).unwrap();
    assert_eq!(model.name, "panda");
    let f2 = model.joint_id("panda_finger_joint2").unwrap().0;
    let mimic = model.mimic[f2].as_ref().expect("mimic recorded");
    assert_eq!(mimic.joint, "panda_finger_joint1");
    assert!(geometry
        .warnings
        .iter()
        .any(|w| w.contains("independent") && w.contains("panda_finger_joint2")));
    let j1 = model.joint_id("panda_joint1").unwrap().0;
    assert_eq!(model.velocity_limit[model.idx_v[j1]], 2.1750);
    assert_eq!(model.effort_limit[model.idx_v[j1]], 87.0);
    assert_eq!(model.body_names[j1], "panda_link1");
    // merged fixed joint and link stay frames
    let f = model.frame(model.frame_id("panda_joint8").unwrap());
    assert_eq!(f.kind, FrameKind::FixedJoint);
    assert_eq!(model.joint_names[f.parent_joint.0], "panda_joint7");
    assert!((f.placement.translation - Vec3::new(0.0, 0.0, 0.107)).amax() < 1e-12);
    let link0 = model.frame(model.frame_id("panda_link0").unwrap());
    assert_eq!((link0.kind, link0.parent_joint.0), (FrameKind::Body, 0));
    assert!(!geometry.visuals.is_empty() && !geometry.collisions.is_empty());
}

#[test]
fn free_flyer_root_joint_moves_the_root_link() {
    let (model, _) = load_reference("solo12");
    assert_eq!(model.joint_names[1], "root_joint");
    assert_eq!(model.joint_types[1], JointType::FreeFlyer);
    assert_eq!(model.body_names[1], "base_link");
}

#[test]
fn package_urls_are_resolved_in_package_dirs() {
    let tmp = std::env::temp_dir().join(format!("karakuri_urdf_pkg_{}", std::process::id()));
    let mesh = tmp.join("share/my_robot/meshes/part.stl");
    std::fs::create_dir_all(mesh.parent().unwrap()).unwrap();
    std::fs::write(&mesh, b"solid part\nendsolid part\n").unwrap();
    let xml = r#"<robot name="r">
      <link name="base">
        <visual><origin xyz="0 0 1"/><geometry><mesh filename="package://my_robot/meshes/part.stl" scale="2 2 2"/></geometry>
          <material name="red"><color rgba="1 0 0 1"/></material></visual>
        <collision><geometry><mesh filename="package://my_robot/meshes/missing.stl"/></geometry></collision>
        <collision><geometry><box size="1 2 3"/></geometry></collision>
      </link>
    </robot>"#;
    let empty = tmp.join("empty");
    let opts = LoadOptions {
        root: Root::Fixed,
        package_dirs: vec![empty.clone(), tmp.join("share/my_robot"), tmp.join("share")],
    };
    let (_, geometry) = urdf::parse_str(xml, "inline.urdf", &opts).unwrap();

    let v = &geometry.visuals[0];
    assert_eq!(
        (v.name.as_str(), v.link.as_str(), v.parent_joint.0),
        ("base_0", "base", 0)
    );
    assert_eq!(v.material_rgba, Some([1.0, 0.0, 0.0, 1.0]));
    assert!((v.placement.translation - Vec3::new(0.0, 0.0, 1.0)).amax() < 1e-15);
    let Shape::Mesh {
        resolved,
        tried,
        scale,
        ..
    } = &v.shape
    else {
        panic!("not a mesh")
    };
    assert_eq!(*scale, Vec3::new(2.0, 2.0, 2.0));
    // `D/pkg/rest` for every dir, plus `D/rest` when D is named pkg, in order
    assert_eq!(tried[0], empty.join("my_robot/meshes/part.stl"));
    assert_eq!(
        tried[1],
        tmp.join("share/my_robot/my_robot/meshes/part.stl")
    );
    assert_eq!(tried[2], tmp.join("share/my_robot/meshes/part.stl"));
    assert_eq!(resolved.as_deref(), Some(mesh.as_path()));

    let Shape::Mesh {
        resolved, tried, ..
    } = &geometry.collisions[0].shape
    else {
        panic!("not a mesh")
    };
    assert!(resolved.is_none() && tried.len() >= 4);
    assert_eq!(
        geometry.collisions[1].shape,
        Shape::Box {
            size: Vec3::new(1.0, 2.0, 3.0)
        }
    );
    assert!(geometry.warnings.iter().any(|w| w.contains("missing.stl")));
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// `package:///rest` (TALOS in example-robot-data): no package name, so the rest is looked up
/// in each package directory, as Pinocchio's retrieveResourcePath does (`D + "/" + "/rest"`),
/// then in the URDF's directory and its ancestors.
#[test]
fn three_slash_package_urls_are_relative_to_package_dirs_and_ancestors() {
    let tmp = std::env::temp_dir().join(format!("karakuri_urdf_pkg3_{}", std::process::id()));
    let share = tmp.join("share");
    let rel = "example-robot-data/robots/talos_data/meshes/torso/torso_2.STL";
    let mesh = share.join(rel);
    let urdf_dir = share.join("example-robot-data/robots/talos_data/robots");
    std::fs::create_dir_all(mesh.parent().unwrap()).unwrap();
    std::fs::create_dir_all(&urdf_dir).unwrap();
    std::fs::write(&mesh, b"solid t\nendsolid t\n").unwrap();
    let xml = format!(
        r#"<robot name="talos"><link name="torso">
          <visual><geometry><mesh filename="package:///{rel}"/></geometry></visual></link></robot>"#
    );
    let urdf_path = urdf_dir.join("talos.urdf");
    std::fs::write(&urdf_path, &xml).unwrap();
    let mesh_of = |g: &urdf::Geometry| match &g.visuals[0].shape {
        Shape::Mesh { resolved, tried, .. } => (resolved.clone(), tried.clone()),
        _ => panic!("not a mesh"),
    };
    // a package directory: D/rest first
    let opts = LoadOptions {
        root: Root::Fixed,
        package_dirs: vec![tmp.join("elsewhere"), share.clone()],
    };
    let (_, g) = urdf::load_with(&urdf_path, &opts).unwrap();
    let (resolved, tried) = mesh_of(&g);
    assert_eq!(tried[0], tmp.join("elsewhere").join(rel));
    assert_eq!(tried[1], mesh);
    assert_eq!(resolved.as_deref(), Some(mesh.as_path()));
    // no package directory: the URDF's ancestor `share` holds the rest
    let (_, g) = urdf::load_with(&urdf_path, &LoadOptions::default()).unwrap();
    assert_eq!(mesh_of(&g).0.as_deref(), Some(mesh.as_path()));
    assert!(g.warnings.is_empty(), "{:?}", g.warnings);
    // not found: the warning says what package:/// means and how to fix it
    let (_, g) = urdf::parse_str(&xml, "talos.urdf", &LoadOptions::default()).unwrap();
    assert!(mesh_of(&g).0.is_none());
    let w = g.warnings.iter().find(|w| w.contains("not found")).expect("a warning");
    assert!(w.contains("names no package") && w.contains("--package-dir"), "{w}");
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn relative_and_file_urls_are_resolved() {
    let tmp = std::env::temp_dir().join(format!("karakuri_urdf_rel_{}", std::process::id()));
    std::fs::create_dir_all(tmp.join("meshes")).unwrap();
    std::fs::write(tmp.join("meshes/a.stl"), b"x").unwrap();
    let abs = tmp.join("meshes/a.stl");
    let xml = format!(
        r#"<robot name="r"><link name="base">
          <visual><geometry><mesh filename="meshes/a.stl"/></geometry></visual>
          <visual><geometry><mesh filename="file://{}"/></geometry></visual></link></robot>"#,
        abs.display()
    );
    let urdf_path = tmp.join("robot.urdf");
    std::fs::write(&urdf_path, xml).unwrap();
    let (_, geometry) = urdf::load_with(&urdf_path, &LoadOptions::default()).unwrap();
    for v in &geometry.visuals {
        let Shape::Mesh { resolved, .. } = &v.shape else {
            panic!("not a mesh")
        };
        assert_eq!(resolved.as_deref(), Some(abs.as_path()));
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn fixed_joints_merge_inertia_into_the_moving_parent() {
    // a 1 kg point at x = 1 on a fixed joint rotated by 90° about z, under a revolute joint
    let xml = r#"<robot name="m">
      <link name="base"/>
      <link name="arm"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.3"/></inertial></link>
      <link name="tip"><inertial><origin xyz="1 0 0"/><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.3"/></inertial></link>
      <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
        <limit lower="-1" upper="1" velocity="2" effort="3"/><dynamics damping="0.5" friction="0.25"/></joint>
      <joint name="weld" type="fixed"><origin xyz="0 0 2" rpy="0 0 1.5707963267948966"/><parent link="arm"/><child link="tip"/></joint>
    </robot>"#;
    let (model, _) = urdf::parse_str(xml, "m.urdf", &LoadOptions::default()).unwrap();
    assert_eq!((model.nq, model.nv, model.njoints), (1, 1, 2));
    let i = &model.inertias[1];
    assert!((i.mass - 2.0).abs() < 1e-15);
    assert!(
        (i.com - Vec3::new(0.0, 0.5, 1.0)).amax() < 1e-12,
        "{}",
        i.com
    );
    // tip's inertia rotated: ixx and iyy swap
    assert!(
        (i.inertia_com[(0, 0)] - (0.1 + 0.2 + 2.0 * 1.25)).abs() < 1e-12,
        "{}",
        i.inertia_com
    );
    assert_eq!(model.joint_types[1], JointType::Revolute { axis: Axis::Z });
    assert_eq!(
        (model.lower_position_limit[0], model.upper_position_limit[0]),
        (-1.0, 1.0)
    );
    assert_eq!((model.velocity_limit[0], model.effort_limit[0]), (2.0, 3.0));
    assert_eq!((model.damping[0], model.friction[0]), (0.5, 0.25));
    let tip = model.frame(model.frame_id("tip").unwrap());
    assert_eq!((tip.kind, tip.parent_joint.0), (FrameKind::Body, 1));
    assert!((tip.placement.translation - Vec3::new(0.0, 0.0, 2.0)).amax() < 1e-15);
}

#[test]
fn negative_axis_is_unaligned_and_planar_is_supported() {
    let xml = r#"<robot name="m">
      <link name="base"/>
      <link name="a"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
      <link name="b"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>
      <joint name="slide" type="planar"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/></joint>
      <joint name="turn" type="continuous"><parent link="a"/><child link="b"/><axis xyz="-2 0 0"/></joint>
    </robot>"#;
    let (model, _) = urdf::parse_str(
        xml,
        "m.urdf",
        &LoadOptions {
            root: Root::FreeFlyer,
            package_dirs: vec![],
        },
    )
    .unwrap();
    assert_eq!(
        model.joint_names,
        ["universe", "root_joint", "slide", "turn"]
    );
    assert_eq!(model.joint_types[2], JointType::Planar);
    assert_eq!(
        model.joint_types[3],
        JointType::RevoluteUnbounded {
            axis: Axis::Unaligned(Vec3::new(-1.0, 0.0, 0.0))
        }
    );
    assert_eq!((model.nq, model.nv), (7 + 3 + 1, 6 + 3 + 1));
}

/// Regression: icub's `l_ankle_2` has a numerically zero inertia whose eigenvalues come out as
/// ±1e-20; Pinocchio loads it, and so must we.
#[test]
fn numerically_zero_inertia_loads() {
    let xml = r#"<robot name="r">
      <link name="base"/>
      <link name="a"><inertial><mass value="0.1"/><inertia ixx="0" ixy="1.355e-20" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
      <link name="b"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
      <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      <joint name="j2" type="fixed"><parent link="a"/><child link="b"/></joint>
    </robot>"#;
    let (model, _) = urdf::parse_str(xml, "tiny.urdf", &LoadOptions::default()).expect("loads");
    assert_eq!(model.nv, 1);
}

#[test]
fn nearly_aligned_axes_snap_to_signed_basis_vectors() {
    // icub's axes carry cos(π/2) residues; within 1e-12 they are taken as ±e_c exactly
    let joint = |name: &str, parent: &str, child: &str, axis: &str| {
        format!(r#"<joint name="{name}" type="continuous"><parent link="{parent}"/><child link="{child}"/><axis xyz="{axis}"/></joint>"#)
    };
    let link = |name: &str| {
        format!(r#"<link name="{name}"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>"#)
    };
    let xml = format!(
        r#"<robot name="m"><link name="base"/>{}{}{}{}{}{}</robot>"#,
        link("a"),
        link("b"),
        link("c"),
        joint("neg_y", "base", "a", "0 -1 6.12323e-17"),
        joint("pos_y", "a", "b", "0 1 6.12323e-17"),
        joint("tilted", "b", "c", "0 -1 1e-6"),
    );
    let (model, _) = urdf::parse_str(&xml, "m.urdf", &LoadOptions::default()).unwrap();
    let axis = |j: usize| match model.joint_types[j] {
        JointType::RevoluteUnbounded { axis } => axis,
        other => panic!("{other:?}"),
    };
    assert_eq!(axis(1).signed_basis(), Some((1, -1.0)));
    assert_eq!(axis(2), Axis::Y);
    assert_eq!(axis(3).signed_basis(), None, "1e-6 off the axis is a real tilt");
}

/// The mesh of `tests/data/package_tree`'s `demo_description` package.
fn demo_mesh() -> PathBuf {
    data_dir().join("package_tree/demo_description/meshes/tetra.obj")
}

/// The resolved path of every mesh of a geometry (visuals then collisions), canonical.
fn resolved_meshes(geometry: &urdf::Geometry) -> Vec<Option<PathBuf>> {
    let objects = geometry.visuals.iter().chain(&geometry.collisions);
    let resolved = objects.filter_map(|o| match &o.shape {
        Shape::Mesh { resolved, .. } => Some(resolved.as_ref().map(|p| p.canonicalize().unwrap())),
        _ => None,
    });
    resolved.collect()
}

#[test]
fn package_urls_are_found_in_the_urdf_file_ancestors() {
    // inside its package (demo_description/urdf/demo.urdf: the ancestor is named the package)
    // and beside it (robots/demo_beside.urdf: an ancestor holds demo_description), with no
    // package directory given
    let mesh = demo_mesh().canonicalize().unwrap();
    for urdf_file in ["demo_description/urdf/demo.urdf", "robots/demo_beside.urdf"] {
        let path = data_dir().join("package_tree").join(urdf_file);
        let (_, geometry) = urdf::load_with(&path, &LoadOptions::default()).unwrap();
        assert_eq!(resolved_meshes(&geometry), vec![Some(mesh.clone()); 2], "{urdf_file}");
        assert!(geometry.warnings.is_empty(), "{urdf_file}: {:#?}", geometry.warnings);
    }
}

#[test]
fn package_dirs_come_before_the_ancestors_and_the_nearest_ancestor_first() {
    let tmp = std::env::temp_dir().join(format!("karakuri_urdf_anc_{}", std::process::id()));
    let near = tmp.join("ws/pkg/meshes/m.obj"); // ws/pkg/urdf/r.urdf is inside this pkg
    let far = tmp.join("pkg/meshes/m.obj"); // tmp holds another pkg, further up
    for m in [&near, &far] {
        std::fs::create_dir_all(m.parent().unwrap()).unwrap();
        std::fs::copy(demo_mesh(), m).unwrap();
    }
    let urdf_path = tmp.join("ws/pkg/urdf/r.urdf");
    std::fs::create_dir_all(urdf_path.parent().unwrap()).unwrap();
    let xml = r#"<robot name="r"><link name="base">
      <visual><geometry><mesh filename="package://pkg/meshes/m.obj"/></geometry></visual></link></robot>"#;
    std::fs::write(&urdf_path, xml).unwrap();
    let load = |package_dirs: Vec<PathBuf>| {
        let opts = LoadOptions {
            root: Root::Fixed,
            package_dirs,
        };
        let (_, geometry) = urdf::load_with(&urdf_path, &opts).unwrap();
        let Shape::Mesh {
            resolved, tried, ..
        } = geometry.visuals[0].shape.clone()
        else {
            panic!("not a mesh")
        };
        // (a ROS_PACKAGE_PATH set around the test adds its own candidates between)
        let tried: Vec<PathBuf> = tried.into_iter().filter(|p| p.starts_with(&tmp)).collect();
        (resolved, tried)
    };

    let (resolved, tried) = load(vec![]);
    assert_eq!(tried, vec![near.clone(), far.clone()]);
    assert_eq!(resolved.as_ref(), Some(&near));
    // a package directory given is tried first, and not again as an ancestor
    let (resolved, tried) = load(vec![tmp.clone()]);
    assert_eq!(tried, vec![far.clone(), near.clone()]);
    assert_eq!(resolved.as_ref(), Some(&far));
    // the nearest missing, the next ancestor's copy is found
    std::fs::remove_file(&near).unwrap();
    let (resolved, _) = load(vec![]);
    assert_eq!(resolved.as_ref(), Some(&far));
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn a_package_found_nowhere_is_one_warning_naming_the_paths_tried_and_the_fix() {
    let tmp = std::env::temp_dir().join(format!("karakuri_urdf_nopkg_{}", std::process::id()));
    let urdf_path = tmp.join("robots/r.urdf");
    std::fs::create_dir_all(urdf_path.parent().unwrap()).unwrap();
    let xml = r#"<robot name="r"><link name="base">
      <visual><geometry><mesh filename="package://nowhere_pkg/meshes/a.stl"/></geometry></visual>
      <collision><geometry><mesh filename="package://nowhere_pkg/meshes/b.stl"/></geometry></collision></link></robot>"#;
    std::fs::write(&urdf_path, xml).unwrap();
    let given = tmp.join("given");
    let opts = LoadOptions {
        root: Root::Fixed,
        package_dirs: vec![given.clone()],
    };
    let (_, geometry) = urdf::load_with(&urdf_path, &opts).unwrap();
    assert_eq!(resolved_meshes(&geometry), vec![None, None]);
    let missing: Vec<_> = geometry.warnings.iter().filter(|w| w.contains("not found")).collect();
    assert_eq!(missing.len(), 1, "{:#?}", geometry.warnings);
    let w = missing[0];
    for part in [
        "2 of 2 mesh files not found",
        "'package://nowhere_pkg/meshes/a.stl'",
        &given.join("nowhere_pkg/meshes/a.stl").display().to_string(),
        &format!("no directory named 'nowhere_pkg' is '{}'", tmp.join("robots").display()),
        "package_dirs",
        "ROS_PACKAGE_PATH",
    ] {
        assert!(w.contains(part), "'{part}' not in: {w}");
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}

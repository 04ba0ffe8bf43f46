//! Bad MJCF input gives an error naming the file, the line and the element; never a panic.

use karakuri::io::mjcf::{self, MjcfError};

fn err(xml: &str) -> MjcfError {
    match mjcf::parse_str(xml, "bad.xml") {
        Ok(_) => panic!("accepted:\n{xml}"),
        Err(e) => e,
    }
}

/// The error is at `line`, on `<element>`, and its text contains `words`.
fn check(xml: &str, line: u32, element: &str, words: &str) {
    let e = err(xml);
    assert_eq!(e.file, "bad.xml", "{e}");
    assert_eq!(e.line, Some(line), "{e}");
    assert_eq!(e.element, element, "{e}");
    assert!(e.reason.contains(words), "'{words}' not in: {e}");
    assert!(e.to_string().starts_with(&format!("bad.xml:{line}: <{element}>: ")), "{e}");
}

#[test]
fn malformed_xml_names_the_line() {
    let e = err("<mujoco>\n<worldbody>\n<body>\n</worldbody></mujoco>");
    assert_eq!((e.file.as_str(), e.line.is_some()), ("bad.xml", true), "{e}");
    assert!(e.reason.contains("malformed XML"), "{e}");
}

#[test]
fn unknown_elements_and_attributes_in_the_tree_are_refused() {
    check("<mujoco><worldbody>\n<body>\n<joint/><gizmo/></body></worldbody></mujoco>", 3, "gizmo", "unknown element <gizmo>");
    check("<mujoco><worldbody>\n<body>\n<joint axsi=\"1 0 0\"/></body></worldbody></mujoco>", 3, "joint", "unknown attribute 'axsi'");
    check("<mujoco>\n<wordlbody/></mujoco>", 2, "wordlbody", "unknown element");
    check("<mujoco><worldbody>\n<body pso=\"0 0 1\"/></worldbody></mujoco>", 2, "body", "unknown attribute 'pso'");
    check("<mujoco><default>\n<geom sise=\"1\"/></default></mujoco>", 2, "geom", "unknown attribute 'sise'");
}

#[test]
fn simulation_only_sections_are_read_past() {
    let xml = r#"<mujoco><option timestep="0.002"><flag contact="disable"/></option>
      <visual><global offwidth="800"/></visual><asset><material name="m" rgba="1 0 0 1"/></asset>
      <worldbody><body name="b"><joint name="j"/><geom size="0.1"/></body></worldbody>
      <actuator><motor joint="j"/></actuator><sensor><jointpos joint="j"/></sensor>
      <contact><exclude body1="world" body2="b"/></contact><equality/><tendon/><keyframe><key qpos="0.1"/></keyframe>
    </mujoco>"#;
    let (model, _) = mjcf::parse_str(xml, "ok.xml").unwrap();
    assert_eq!(model.nv, 1);
}

#[test]
fn undefined_class_joint_on_world_and_negative_mass_are_refused() {
    check("<mujoco><worldbody>\n<body>\n<geom class=\"nope\" size=\"1\"/></body></worldbody></mujoco>", 3, "geom", "undefined default class 'nope'");
    check("<mujoco><worldbody>\n<body childclass=\"nope\"/></worldbody></mujoco>", 2, "body", "undefined default class");
    check("<mujoco><worldbody>\n<joint/></worldbody></mujoco>", 2, "joint", "world body");
    check("<mujoco><worldbody><body>\n<inertial pos=\"0 0 0\" mass=\"-1\" diaginertia=\"1 1 1\"/></body></worldbody></mujoco>", 2, "inertial", "negative mass");
    check("<mujoco><worldbody><body>\n<geom size=\"1\" mass=\"-2\"/></body></worldbody></mujoco>", 2, "geom", "negative mass");
    check("<mujoco><worldbody><body>\n<geom size=\"1\" density=\"-2\"/></body></worldbody></mujoco>", 2, "geom", "negative density");
}

#[test]
fn unsupported_features_are_refused() {
    check("<mujoco><worldbody>\n<composite type=\"grid\"/></worldbody></mujoco>", 2, "composite", "not supported");
    check("<mujoco><worldbody><body>\n<flexcomp/></body></worldbody></mujoco>", 2, "flexcomp", "not supported");
    check("<mujoco>\n<extension/></mujoco>", 2, "extension", "not supported");
    check("<mujoco>\n<deformable/></mujoco>", 2, "deformable", "not supported");
    check("<mujoco><worldbody><body><joint/><geom size=\"1\"/><body>\n<freejoint/></body></body></worldbody></mujoco>", 2, "freejoint", "free joint");
    check(
        "<mujoco><asset><mesh name=\"m\" vertex=\"0 0 0 1 0 0 0 1 0 0 0 1\"/></asset><worldbody><body><joint/>\n<geom type=\"mesh\" mesh=\"m\"/></body></worldbody></mujoco>",
        2,
        "geom",
        "<inertial>",
    );
    check("<mujoco>\n<compiler coordinate=\"global\"/></mujoco>", 2, "compiler", "global");
}

#[test]
fn missing_include_and_mesh_files_are_named() {
    let dir = std::env::temp_dir().join(format!("karakuri-mjcf-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let main = dir.join("main.xml");
    std::fs::write(&main, "<mujoco>\n<include file=\"missing.xml\"/></mujoco>").unwrap();
    let e = mjcf::load(&main).unwrap_err();
    assert_eq!((e.line, e.element.as_str()), (Some(2), "include"), "{e}");
    assert!(e.reason.contains("missing.xml"), "{e}");
    std::fs::write(&main, "<mujoco><compiler meshdir=\"meshes\"/><asset>\n<mesh file=\"arm.stl\"/></asset></mujoco>").unwrap();
    let e = mjcf::load(&main).unwrap_err();
    assert_eq!((e.line, e.element.as_str()), (Some(2), "mesh"), "{e}");
    assert!(e.reason.contains("meshes/arm.stl"), "{e}");
    // an included file that includes itself
    std::fs::write(dir.join("loop.xml"), "<mujoco>\n<include file=\"loop.xml\"/></mujoco>").unwrap();
    std::fs::write(&main, "<mujoco><include file=\"loop.xml\"/></mujoco>").unwrap();
    let e = mjcf::load(&main).unwrap_err();
    assert!(e.reason.contains("includes itself"), "{e}");
    assert!(e.file.ends_with("loop.xml"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

//! Bad URDFs: each is refused with an error naming the file, the line, the element and the
//! reason; nothing panics.

use karakuri::io::urdf::{self, LoadOptions, Root, UrdfError};

const INERTIAL: &str = r#"<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>"#;

/// A robot whose first line is `<robot name="t">`, followed by `body` (so `body`'s first line is 2).
fn robot(body: &str) -> String {
    format!("<robot name=\"t\">\n{body}\n</robot>\n")
}

fn link(name: &str) -> String {
    format!(r#"<link name="{name}">{INERTIAL}</link>"#)
}

fn joint(name: &str, kind: &str, parent: &str, child: &str) -> String {
    format!(
        r#"<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>"#
    )
}

fn parse(xml: &str) -> Result<(), UrdfError> {
    urdf::parse_str(xml, "bad.urdf", &LoadOptions::default()).map(|_| ())
}

/// The error, checked for its element, a distinctive part of its reason, its line, and a
/// Display of the form `bad.urdf:LINE: <ELEMENT>: ...`.
fn expect_error(xml: &str, element: &str, reason: &str, line: u32) -> UrdfError {
    let e = parse(xml).expect_err("a bad URDF was accepted");
    assert_eq!(e.element, element, "element of: {e}");
    assert!(
        e.reason.contains(reason),
        "reason of '{e}' lacks '{reason}'"
    );
    assert_eq!(e.file, "bad.urdf");
    assert_eq!(e.line, Some(line), "line of: {e}");
    let shown = e.to_string();
    assert!(
        shown.starts_with(&format!("bad.urdf:{line}: <{element}>: ")),
        "display: {shown}"
    );
    e
}

#[test]
fn good_robot_is_accepted() {
    let xml = robot(
        &[
            link("base"),
            link("arm"),
            joint("j", "revolute", "base", "arm"),
        ]
        .join("\n"),
    );
    parse(&xml).unwrap();
}

#[test]
fn missing_parent_link() {
    let xml = robot(&[link("base"), link("arm"), "<joint name=\"j\" type=\"revolute\">".into(),
        "<parent link=\"nope\"/><child link=\"arm\"/><limit effort=\"1\" velocity=\"1\"/></joint>".into()].join("\n"));
    expect_error(&xml, "parent", "parent link 'nope' is not defined", 5);
}

#[test]
fn missing_child_link() {
    let xml = robot(&[link("base"), joint("j", "revolute", "base", "arm")].join("\n"));
    expect_error(&xml, "child", "child link 'arm' is not defined", 3);
}

#[test]
fn cycle() {
    let xml = robot(
        &[
            link("base"),
            link("a"),
            link("b"),
            joint("j0", "revolute", "base", "a"),
            joint("j1", "revolute", "b", "a2"),
        ]
        .join("\n"),
    );
    // sanity: an unknown link is reported before topology
    expect_error(&xml, "child", "'a2'", 6);
    let xml = robot(
        &[
            link("base"),
            link("a"),
            link("b"),
            joint("j0", "revolute", "base", "a"),
            link("c"),
            joint("j1", "revolute", "b", "c"),
            joint("j2", "revolute", "c", "b"),
        ]
        .join("\n"),
    );
    let e = expect_error(&xml, "joint", "form a cycle", 7);
    assert!(
        e.reason.contains("'j1'") && e.reason.contains("'j2'"),
        "{e}"
    );
}

#[test]
fn everything_is_a_cycle_so_no_root() {
    let xml = robot(
        &[
            link("a"),
            link("b"),
            joint("j1", "revolute", "a", "b"),
            joint("j2", "revolute", "b", "a"),
        ]
        .join("\n"),
    );
    expect_error(&xml, "joint", "form a cycle", 4);
}

#[test]
fn self_loop() {
    let xml = robot(&[link("a"), link("b"), joint("j1", "revolute", "b", "b")].join("\n"));
    expect_error(&xml, "joint", "form a cycle", 4);
}

#[test]
fn bad_numbers() {
    let origin = |attrs: &str| {
        robot(
            &[
                link("base"),
                link("arm"),
                r#"<joint name="j" type="revolute"><parent link="base"/><child link="arm"/>"#
                    .to_string(),
                format!(r#"<origin {attrs}/><limit effort="1" velocity="1"/></joint>"#),
            ]
            .join("\n"),
        )
    };
    expect_error(&origin(r#"xyz="1 2""#), "origin", "expected 3 number(s)", 5);
    expect_error(&origin(r#"xyz="1 2 3 4""#), "origin", "found 4", 5);
    expect_error(
        &origin(r#"rpy="0 zero 0""#),
        "origin",
        "'zero' is not a number",
        5,
    );
    expect_error(
        &origin(r#"xyz="0 NaN 0""#),
        "origin",
        "not a finite number",
        5,
    );
    expect_error(
        &origin(r#"xyz="0 inf 0""#),
        "origin",
        "not a finite number",
        5,
    );
    let mass = robot(r#"<link name="a"><inertial><mass value="abc"/></inertial></link>"#);
    expect_error(&mass, "mass", "'abc' is not a number", 2);
}

#[test]
fn unknown_joint_type() {
    let xml = robot(
        &[
            link("base"),
            link("arm"),
            joint("j", "hinge", "base", "arm"),
        ]
        .join("\n"),
    );
    expect_error(&xml, "joint", "unknown joint type 'hinge'", 4);
}

#[test]
fn negative_mass() {
    let xml = robot(concat!(
        "<link name=\"a\">\n<inertial>\n<mass value=\"-1\"/>\n",
        "<inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial></link>"
    ));
    expect_error(&xml, "mass", "negative", 4);
}

#[test]
fn two_roots() {
    let xml = robot(
        &[
            link("base"),
            link("arm"),
            link("stray"),
            joint("j", "revolute", "base", "arm"),
        ]
        .join("\n"),
    );
    let e = expect_error(&xml, "link", "several root links", 4);
    assert!(
        e.reason.contains("'base'") && e.reason.contains("'stray'"),
        "{e}"
    );
}

#[test]
fn not_xml() {
    expect_error(
        "this is not XML",
        "xml",
        "not a well-formed XML document",
        1,
    );
    expect_error(
        "<robot name=\"t\">\n<link name=\"a\">\n</robot>",
        "xml",
        "not a well-formed XML",
        3,
    );
    expect_error("", "xml", "not a well-formed XML", 1);
}

#[test]
fn not_a_robot() {
    expect_error(
        "<?xml version=\"1.0\"?>\n<sdf version=\"1.6\"/>",
        "sdf",
        "not a URDF",
        2,
    );
}

#[test]
fn missing_attribute() {
    let xml = robot(
        &[
            link("base"),
            link("arm"),
            r#"<joint name="j" type="revolute"><parent link="base"/><child link="arm"/>"#.into(),
            r#"<limit lower="0" upper="1" effort="1"/></joint>"#.into(),
        ]
        .join("\n"),
    );
    expect_error(&xml, "limit", "missing required attribute `velocity`", 5);
    expect_error(
        &robot("<link/>"),
        "link",
        "missing required attribute `name`",
        2,
    );
    let no_type = robot(
        &[
            link("a"),
            link("b"),
            r#"<joint name="j"><parent link="a"/><child link="b"/></joint>"#.into(),
        ]
        .join("\n"),
    );
    expect_error(&no_type, "joint", "missing required attribute `type`", 4);
    expect_error(
        "<robot>\n</robot>",
        "robot",
        "missing required attribute `name`",
        1,
    );
    let no_child = robot(
        &[
            link("a"),
            r#"<joint name="j" type="fixed"><parent link="a"/></joint>"#.into(),
        ]
        .join("\n"),
    );
    expect_error(&no_child, "joint", "missing required element <child>", 3);
    let no_inertia = robot(r#"<link name="a"><inertial><mass value="1"/></inertial></link>"#);
    expect_error(
        &no_inertia,
        "inertial",
        "missing required element <inertia>",
        2,
    );
    let partial =
        robot(r#"<link name="a"><inertial><mass value="1"/><inertia ixx="1"/></inertial></link>"#);
    expect_error(&partial, "inertia", "missing required attribute `ixy`", 2);
}

#[test]
fn duplicate_names() {
    expect_error(
        &robot(&[link("a"), link("a")].join("\n")),
        "link",
        "duplicate link name 'a'",
        3,
    );
    let xml = robot(
        &[
            link("a"),
            link("b"),
            link("c"),
            joint("j", "revolute", "a", "b"),
            joint("j", "revolute", "a", "c"),
        ]
        .join("\n"),
    );
    expect_error(&xml, "joint", "duplicate joint name 'j'", 6);
}

#[test]
fn link_with_two_parents() {
    let xml = robot(
        &[
            link("a"),
            link("b"),
            link("c"),
            joint("j1", "revolute", "a", "c"),
            joint("j2", "revolute", "b", "c"),
        ]
        .join("\n"),
    );
    expect_error(&xml, "joint", "is the child of both joint 'j1'", 6);
}

#[test]
fn zero_axis() {
    let xml = robot(
        &[
            link("a"),
            link("b"),
            r#"<joint name="j" type="revolute"><parent link="a"/><child link="b"/>"#.into(),
            r#"<axis xyz="0 0 0"/><limit effort="1" velocity="1"/></joint>"#.into(),
        ]
        .join("\n"),
    );
    expect_error(&xml, "axis", "zero length", 5);
    // accepted on fixed joints (common in generated files)
    let fixed = robot(&[link("a"), link("b"), r#"<joint name="j" type="fixed"><parent link="a"/><child link="b"/><axis xyz="0 0 0"/></joint>"#.into()].join("\n"));
    parse(&fixed).unwrap();
}

#[test]
fn planar_joint_must_be_normal_to_z() {
    let xml = robot(
        &[
            link("a"),
            link("b"),
            r#"<joint name="p" type="planar"><parent link="a"/><child link="b"/>"#.into(),
            r#"<axis xyz="1 0 0"/></joint>"#.into(),
        ]
        .join("\n"),
    );
    expect_error(&xml, "axis", "only planar joints normal to +z", 5);
}

#[test]
fn limits_out_of_order() {
    let xml = robot(
        &[
            link("a"),
            link("b"),
            r#"<joint name="j" type="prismatic"><parent link="a"/><child link="b"/>"#.into(),
            r#"<limit lower="1" upper="-1" effort="1" velocity="1"/></joint>"#.into(),
        ]
        .join("\n"),
    );
    expect_error(&xml, "limit", "above upper limit", 5);
}

#[test]
fn root_joint_name_is_reserved_with_a_free_flyer() {
    let xml = robot(
        &[
            link("a"),
            link("b"),
            joint("root_joint", "revolute", "a", "b"),
        ]
        .join("\n"),
    );
    parse(&xml).unwrap();
    let opts = LoadOptions {
        root: Root::FreeFlyer,
        package_dirs: vec![],
    };
    let e = urdf::parse_str(&xml, "bad.urdf", &opts).unwrap_err();
    assert_eq!((e.element.as_str(), e.line), ("joint", Some(4)));
    assert!(e.reason.contains("reserved"), "{e}");
}

#[test]
fn unknown_geometry() {
    let xml =
        robot(r#"<link name="a"><visual><geometry><torus r="1"/></geometry></visual></link>"#);
    expect_error(&xml, "torus", "unknown geometry", 2);
}

#[test]
fn unreadable_file() {
    let e = urdf::load("/nonexistent/robot.urdf", Root::Fixed).unwrap_err();
    assert_eq!(e.line, None);
    assert!(
        e.to_string()
            .starts_with("/nonexistent/robot.urdf: cannot read"),
        "{e}"
    );
}

#[test]
fn fixtures_in_tests_data_bad_are_refused() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/bad");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "urdf") {
            let e = urdf::load(&path, Root::Fixed).expect_err("a bad fixture was accepted");
            assert!(e.line.is_some(), "{e}");
            n += 1;
        }
    }
    assert!(n >= 3);
}

#[test]
fn truncated_files_never_panic() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/panda.urdf");
    let text = std::fs::read_to_string(path).unwrap();
    for root in [Root::Fixed, Root::FreeFlyer] {
        let opts = LoadOptions {
            root,
            package_dirs: vec![],
        };
        for cut in (0..text.len())
            .step_by(97)
            .filter(|&c| text.is_char_boundary(c))
        {
            let _ = urdf::parse_str(&text[..cut], "cut.urdf", &opts);
            // and with a closing tag so that more of it parses
            let _ = urdf::parse_str(&format!("{}</robot>", &text[..cut]), "cut.urdf", &opts);
        }
    }
}

#[test]
fn negative_box_size() {
    let xml = robot(
        &[
            link("base"),
            r#"<link name="arm"><collision><geometry>"#.into(),
            r#"<box size="0.1 -0.2 0.3"/></geometry></collision></link>"#.into(),
        ]
        .join("\n"),
    );
    expect_error(&xml, "box", "must not be negative", 4);
}

#[test]
fn duplicate_parent_element() {
    let xml = robot(
        &[
            link("base"),
            link("arm"),
            link("other"),
            r#"<joint name="j" type="fixed"><parent link="base"/>"#.into(),
            r#"<parent link="other"/><child link="arm"/></joint>"#.into(),
        ]
        .join("\n"),
    );
    let e = expect_error(&xml, "parent", "a second <parent>", 6);
    assert!(e.reason.contains("line 5"), "{e}");
}

#[test]
fn duplicate_inertial_element() {
    let xml = robot(&[format!("<link name=\"base\">{INERTIAL}\n{INERTIAL}</link>")].join("\n"));
    expect_error(&xml, "inertial", "a second <inertial>", 3);
}

#[test]
fn duplicate_shape_in_one_geometry() {
    let xml = robot(
        &[
            r#"<link name="base"><visual><geometry><sphere radius="1"/>"#,
            r#"<box size="1 1 1"/></geometry></visual></link>"#,
        ]
        .join("\n"),
    );
    expect_error(&xml, "box", "a second shape", 3);
}

#[test]
fn empty_joint_name() {
    let xml = robot(
        &[
            link("base"),
            link("arm"),
            joint("", "revolute", "base", "arm"),
        ]
        .join("\n"),
    );
    expect_error(&xml, "joint", "empty name", 4);
}

#[test]
fn blank_link_name() {
    let xml = robot(&[link("base"), link("  "), joint("j", "revolute", "base", "  ")].join("\n"));
    expect_error(&xml, "link", "empty name", 3);
}

#[test]
fn mass_out_of_range() {
    let xml = robot(r#"<link name="base"><inertial><mass value="1e308"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>"#);
    expect_error(&xml, "mass", "out of range", 2);
}

#[test]
fn subnormal_inertia() {
    let xml = robot(r#"<link name="base"><inertial><mass value="1"/><inertia ixx="5e-324" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>"#);
    expect_error(&xml, "inertia", "subnormal", 2);
}

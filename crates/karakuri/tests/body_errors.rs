//! Bad `.body` input: each error names the file, the line and the key, and says why.

use karakuri::io::body;

const GOOD: &str = "format: ChoreonoidBody
formatVersion: 1.0
angleUnit: degree
name: T
links:
  -
    name: BASE
    jointType: free
    mass: 1.0
    inertia: [ 0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01 ]
  -
    name: ARM
    parent: BASE
    jointType: revolute
    jointAxis: Y
    mass: 1.0
    inertia: [ 0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01 ]
  -
    name: HAND
    parent: ARM
    jointType: revolute
    mass: 1.0
    inertia: [ 0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01 ]
";

fn error(text: &str) -> body::BodyError {
    match body::parse_str(text, "/nowhere/t.body") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

fn check(text: String, line: u32, key: &str, reason: &str) {
    let e = error(&text);
    assert_eq!(e.file, "/nowhere/t.body", "{e}");
    assert_eq!(e.line, Some(line), "{e}");
    assert!(e.key.contains(key), "key {key:?} in {e}");
    assert!(e.reason.contains(reason), "reason {reason:?} in {e}");
    assert!(e.to_string().starts_with(&format!("/nowhere/t.body:{line}: ")), "{e}");
}

#[test]
fn the_good_one_loads() {
    let b = body::parse_str(GOOD, "/nowhere/t.body").unwrap();
    assert_eq!(b.model.nv, 8);
}

#[test]
fn unknown_joint_type() {
    check(GOOD.replace("jointType: revolute\n    jointAxis", "jointType: hinge\n    jointAxis"), 14, "jointType", "unknown joint type 'hinge'");
}

#[test]
fn missing_parent() {
    check(GOOD.replace("parent: ARM", "parent: ELBOW"), 20, "parent", "parent link 'ELBOW' of 'HAND' is not defined");
    check(GOOD.replace("    parent: ARM\n", ""), 19, "parent", "'HAND' has no parent");
}

#[test]
fn cycle() {
    check(GOOD.replace("parent: BASE", "parent: HAND"), 13, "parent", "cycle: ARM -> HAND -> ARM");
}

#[test]
fn negative_mass() {
    check(GOOD.replacen("mass: 1.0", "mass: -2", 2).replacen("mass: -2", "mass: 1.0", 1), 16, "links[1].mass", "negative mass -2");
}

#[test]
fn missing_resource_and_sub_body() {
    let shape = "    elements:\n      - type: Shape\n        geometry: { type: Resource, uri: \"parts/arm.stl\" }\n";
    check(GOOD.replace("    mass: 1.0\n    inertia: [ 0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01 ]\n  -\n    name: HAND", &format!("{shape}  -\n    name: HAND")), 18, "resource.uri", "resource 'parts/arm.stl' not found");
    let sub = "  -\n    type: SubBody\n    uri: hand.body\n    parent: ARM\n";
    check(format!("{GOOD}{sub}"), 26, "links[3].uri", "cannot read sub-body");
}

#[test]
fn bad_values() {
    check(GOOD.replace("jointAxis: Y", "jointAxis: [0, 0, 0]"), 15, "jointAxis", "zero vector");
    check(GOOD.replace("jointAxis: Y", "jointAxis: W"), 15, "jointAxis", "unknown axis");
    check(GOOD.replacen("inertia: [ 0.01, 0, 0,", "inertia: [ 0.01, 1, 0,", 1), 10, "inertia", "not symmetric");
    check(GOOD.replace("formatVersion: 1.0", "formatVersion: 3.0"), 2, "formatVersion", "not supported");
    check(GOOD.replace("name: HAND", "name: ARM"), 19, "name", "defined twice");
    check(GOOD.replace("angleUnit: degree", "angleUnit: grad"), 3, "angleUnit", "'degree' or 'radian'");
    check(GOOD.replace("    jointType: free\n", "    jointType: free\n    translation: [1, 2]\n"), 9, "translation", "expected 3 numbers");
    check(GOOD.replace("mass: 1.0\n    inertia", "mass: 1e300\n    inertia"), 9, "mass", "out of range");
    check(format!("{GOOD}rootLink: WRIST\n"), 24, "rootLink", "'WRIST' is not defined");
    check(GOOD.replace("links:", "links: [\n"), 7, "", "YAML");
}

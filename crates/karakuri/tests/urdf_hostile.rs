//! Hostile or huge URDFs: refused or loaded quickly, never a blow-up.

use std::time::{Duration, Instant};

use karakuri::io::urdf::{self, LoadOptions, Root};

/// "Billion laughs": ten levels of ten references, 10¹⁰ copies once expanded (it used to take
/// gigabytes and seconds at a few levels). Refused before parsing, naming the line.
#[test]
fn entity_expansion_is_refused() {
    let mut xml = String::from("<?xml version=\"1.0\"?>\n<!DOCTYPE robot [\n<!ENTITY e0 \"lol\">\n");
    for k in 1..10 {
        let refs: String = (0..10).map(|_| format!("&e{};", k - 1)).collect();
        xml.push_str(&format!("<!ENTITY e{k} \"{refs}\">\n"));
    }
    xml.push_str("]>\n<robot name=\"&e9;\"><link name=\"a\"/></robot>\n");
    let start = Instant::now();
    let e = urdf::parse_str(&xml, "laughs.urdf", &LoadOptions::default()).expect_err("entities accepted");
    assert!(start.elapsed() < Duration::from_secs(1));
    assert_eq!((e.element.as_str(), e.line), ("xml", Some(3)), "{e}");
    assert!(e.reason.contains("entity declarations"), "{e}");
}

/// A document type declaration without entities is harmless and accepted.
#[test]
fn doctype_without_entities_is_accepted() {
    let xml = "<?xml version=\"1.0\"?>\n<!DOCTYPE robot>\n<robot name=\"r\"><link name=\"a\"/></robot>\n";
    urdf::parse_str(xml, "doctype.urdf", &LoadOptions::default()).unwrap();
}

/// A serial chain of `n` revolute links, each with a unit inertia.
fn chain(n: usize) -> String {
    let mut xml = String::from("<robot name=\"chain\">\n<link name=\"l0\"/>\n");
    for k in 1..=n {
        xml.push_str(&format!(
            "<link name=\"l{k}\"><inertial><origin xyz=\"0 0 0.05\"/><mass value=\"1\"/><inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.01\" iyz=\"0\" izz=\"0.01\"/></inertial></link>\n\
             <joint name=\"j{k}\" type=\"revolute\"><parent link=\"l{}\"/><child link=\"l{k}\"/><origin xyz=\"0 0 0.1\"/><axis xyz=\"0 1 0\"/><limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/></joint>\n",
            k - 1
        ));
    }
    xml.push_str("</robot>\n");
    xml
}

/// 5000 links in series: ModelBuilder::build tested every pair of joints for ancestry
/// (n² · depth = 1.25e11 steps, 42 s); the subtree ranges now cost links × depth.
#[test]
fn serial_chain_of_5000_links_loads_fast() {
    let xml = chain(5000);
    let start = Instant::now();
    let (model, _) = urdf::parse_str(&xml, "chain.urdf", &LoadOptions { root: Root::FreeFlyer, ..LoadOptions::default() }).unwrap();
    let elapsed = start.elapsed();
    println!("5000-link chain loaded in {elapsed:?}");
    assert_eq!((model.njoints, model.nv), (5002, 5006));
    // every joint's subtree is the contiguous rest of the chain
    let j = 2500;
    let ranges = &model.subtree_v_ranges[model.subtree_v_ranges_start[j]..model.subtree_v_ranges_start[j + 1]];
    assert_eq!(ranges, [(model.idx_v[j], model.nv)]);
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
}

/// Found while writing these tests: elements nested 100 000 deep overflowed the stack (the XML
/// reader recurses once per level) and aborted the process. Refused before parsing.
#[test]
fn elements_nested_100000_deep_overflowed_the_stack() {
    let depth = 100_000;
    let xml = format!("<robot name=\"r\"><link name=\"a\"/>\n{}{}</robot>", "<x>".repeat(depth), "</x>".repeat(depth));
    let start = Instant::now();
    let e = urdf::parse_str(&xml, "deep.urdf", &LoadOptions::default()).expect_err("accepted");
    assert!(start.elapsed() < Duration::from_secs(2));
    assert_eq!((e.element.as_str(), e.line), ("xml", Some(2)), "{e}");
    assert!(e.reason.contains("nested more than 256 deep"), "{e}");
    // 200 levels (with comments, CDATA, quoted '>' and self-closing tags on the way) still parse
    // as XML: the robot loads, the unknown elements ignored
    let xml = format!(
        "<?xml version=\"1.0\"?><!DOCTYPE robot [<!ELEMENT robot ANY>]><robot name=\"r\"><!-- <a><b> --><link name=\"a\"/>{}<y v=\">\"/><![CDATA[<z>]]>{}</robot>",
        "<x>".repeat(200),
        "</x>".repeat(200)
    );
    urdf::parse_str(&xml, "deep.urdf", &LoadOptions::default()).unwrap();
}

/// 20 000 sibling links with no joints: one error naming the roots, quickly.
#[test]
fn many_unconnected_links_are_one_quick_error() {
    let links: String = (0..20_000).map(|k| format!("<link name=\"l{k}\"/>")).collect();
    let xml = format!("<robot name=\"r\">{links}</robot>");
    let start = Instant::now();
    let e = urdf::parse_str(&xml, "roots.urdf", &LoadOptions::default()).expect_err("accepted");
    assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
    assert!(e.reason.contains("several root links"), "{}", &e.reason[..200]);
}

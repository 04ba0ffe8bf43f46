//! Seeded mutation testing of the URDF loader on stable Rust (the coverage-guided target is
//! `fuzz/fuzz_targets/urdf_parse.rs`, for `cargo fuzz`).
//!
//! Every URDF of `tests/data` (and `tests/data/erd`) is mutated (numbers replaced by extreme
//! values, spans deleted, duplicated or moved, attribute values swapped, elements spliced from
//! other files, hostile snippets and deep nesting inserted) and loaded. Each load must return within
//! `PER_INPUT_LIMIT` without panicking, and a loaded model must hold finite numbers only, with a
//! finite mass matrix and bias forces at the neutral configuration. A failing input is written
//! to `target/urdf-fuzz/` and named in the failure; it then becomes a regression test below.
//!
//! The loop is `tests/fuzz/mod.rs`'s, shared with the MJCF and `.body` fuzz tests; CI runs it
//! for `KARAKURI_FUZZ_SECS` seconds (default 20) from `KARAKURI_FUZZ_SEED` (default fixed).

mod fuzz;

use std::path::{Path, PathBuf};

use karakuri::io::urdf::{self, Geometry, LoadOptions, Root, Shape};
use karakuri::spatial::Se3;
use karakuri::Model;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn seeds() -> Vec<(String, String)> {
    let mut out = vec![];
    for dir in ["tests/data", "tests/data/erd"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(repo_root().join(dir))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "urdf"))
            .collect();
        files.sort();
        for f in files {
            let name = f.file_name().unwrap().to_string_lossy().to_string();
            out.push((name, std::fs::read_to_string(&f).unwrap()));
        }
    }
    // small hand-written ones, so that mutations often reach the tree and inertia checks
    out.push(("pendulum".into(), PENDULUM.into()));
    out
}

const PENDULUM: &str = r#"<robot name="p">
  <link name="base"/>
  <link name="rod"><inertial><origin xyz="0 0 -0.5" rpy="0 1.5707963267948966 0"/><mass value="1"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.01"/></inertial>
    <collision><origin xyz="0 0 -0.5"/><geometry><cylinder radius="0.02" length="1"/></geometry></collision></link>
  <link name="tip"><inertial><mass value="0.5"/><inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="rod"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="2"/><dynamics damping="0.1" friction="0.01"/></joint>
  <joint name="tip_joint" type="fixed"><parent link="rod"/><child link="tip"/><origin xyz="0 0 -1"/></joint>
</robot>
"#;

const EXTREME_NUMBERS: &[&str] = &[
    "0", "-0", "1", "-1", "1e308", "-1e308", "1.7976931348623157e308", "5e-324", "2.2e-308", "1e-300",
    "1e15", "1e16", "-1e15", "NaN", "inf", "-inf", "1e", "", "0x10", "3.14159265358979", "1e-12",
    "99999999999999999999", "-0.0000001", "1 2", "1 2 3 4",
];

const SNIPPETS: &[&str] = &[
    "<!DOCTYPE robot>",
    "<!DOCTYPE robot [<!ENTITY a \"aaaa\">]>",
    "<joint name=\"x\" type=\"floating\"><parent link=\"base\"/><child link=\"base\"/></joint>",
    "<joint name=\"\" type=\"planar\"><parent link=\"a\"/><child link=\"b\"/><axis xyz=\"1 0 0\"/></joint>",
    "<link name=\"extra\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" ixy=\"1\" ixz=\"1\" iyy=\"1\" iyz=\"1\" izz=\"1\"/></inertial></link>",
    "<inertial><mass value=\"0\"/><inertia ixx=\"0\" ixy=\"0\" ixz=\"0\" iyy=\"0\" iyz=\"0\" izz=\"0\"/></inertial>",
    "<geometry><mesh filename=\"package://x/../../../etc/passwd\" scale=\"-1 0 1\"/></geometry>",
    "<mimic joint=\"nonexistent\" multiplier=\"1e308\"/>",
    "<capsule radius=\"-1\" length=\"2\"/>",
    "<a><b><c><d><e><f><g><h></h></g></f></e></d></c></b></a>",
    "<xacro:include xmlns:xacro=\"http://ros.org/wiki/xacro\" filename=\"x\"/>",
    "&lt;&#x10FFFF;&#0;",
    "<origin xyz=\"1e15 1e15 1e15\" rpy=\"1e300 -1e300 7\"/>",
    "<limit lower=\"1\" upper=\"-1\" effort=\"-1\" velocity=\"NaN\"/>",
    "<axis xyz=\"0 0 0\"/>",
];

const URDF: fuzz::Dialect = fuzz::Dialect {
    numbers: EXTREME_NUMBERS,
    snippets: SNIPPETS,
    swaps: &[("revolute", "continuous"), ("fixed", "floating"), ("prismatic", "planar"), ("continuous", "fixed"), ("revolute", "fixed")],
    // elements nested up to 100 000 deep (the XML reader recurses per level)
    nests: &[("<n>", "</n>")],
    max_depth_log2: 16,
    attributes: true,
};

fn se3_finite(x: &Se3) -> bool {
    x.rotation.iter().chain(x.translation.iter()).all(|v| v.is_finite())
}

/// Every number of a loaded model is finite (limits may be infinite, never NaN), and so are the
/// mass matrix and the bias forces at the neutral configuration.
fn check_finite(model: &Model, geometry: &Geometry) -> Result<(), String> {
    for j in 0..model.njoints {
        let i = &model.inertias[j];
        if !i.mass.is_finite() || !i.com.iter().chain(i.inertia_com.iter()).all(|v| v.is_finite()) {
            return Err(format!("inertia of joint {j} not finite: {i:?}"));
        }
        if !se3_finite(&model.joint_placements[j]) {
            return Err(format!("placement of joint {j} not finite"));
        }
    }
    if !model.origin_inertias.iter().all(|o| o.to_matrix().iter().all(|v| v.is_finite())) {
        return Err("origin inertia not finite".into());
    }
    let limits = [&model.lower_position_limit, &model.upper_position_limit, &model.velocity_limit, &model.effort_limit];
    if limits.iter().any(|l| l.iter().any(|x| x.is_nan())) {
        return Err("NaN limit".into());
    }
    if !model.damping.iter().chain(&model.friction).all(|x| x.is_finite()) {
        return Err("damping or friction not finite".into());
    }
    if !model.frames.iter().all(|f| se3_finite(&f.placement)) {
        return Err("frame placement not finite".into());
    }
    for g in geometry.visuals.iter().chain(&geometry.collisions) {
        let shape_finite = match &g.shape {
            Shape::Box { size } => size.iter().all(|v| v.is_finite()),
            Shape::Cylinder { radius, length } | Shape::Capsule { radius, length } => radius.is_finite() && length.is_finite(),
            Shape::Sphere { radius } => radius.is_finite(),
            Shape::Mesh { scale, .. } => scale.iter().all(|v| v.is_finite()),
        };
        if !shape_finite || !se3_finite(&g.placement) {
            return Err(format!("geometry '{}' not finite", g.name));
        }
    }
    // forward dynamics is defined unless the loader warned of dofs moving no mass
    fuzz::dynamics_finite(model, geometry.warnings.iter().any(|w| w.contains("move no mass")))
}

/// Loads `xml` as a URDF rooted as `root`: whether it loaded; `Err` for an error without a
/// reason or a non-finite model.
fn load(xml: &str, root: Root) -> Result<bool, String> {
    let opts = LoadOptions { root, ..LoadOptions::default() };
    match urdf::parse_str(xml, "fuzz.urdf", &opts) {
        Ok((model, geometry)) => check_finite(&model, &geometry).map(|()| true),
        Err(e) if e.to_string().is_empty() || e.reason.is_empty() => Err(format!("an error without a reason: {e:?}")),
        Err(_) => Ok(false),
    }
}

#[test]
fn mutated_urdfs_never_panic_hang_or_load_non_finite_numbers() {
    let c = fuzz::Campaign { name: "urdf", extension: "urdf", default_secs: 20.0, default_seed: 0x6b61_7261_6b75_7269 };
    let (runs, _) = fuzz::campaign(&c, &seeds(), |_, text, other, rng| {
        let xml = fuzz::mutate(&URDF, text, other, rng);
        let root = if rng.next_u64().is_multiple_of(2) { Root::Fixed } else { Root::FreeFlyer };
        let input = xml.clone();
        (xml, fuzz::guarded(move || load(&input, root)).map_err(|why| format!("root {root:?}: {why}")))
    });
    assert!(runs > 0);
}

// Regression tests: inputs the mutation run found, reduced by hand.

/// Found by the mutation run (seed 7737591397539476073, input 301, from anymal.urdf) before
/// lengths, masses and inertias were bounded: an inertia entry of f64::MAX loaded, and the
/// mass matrix overflowed to infinity.
#[test]
fn fuzz_inertia_entry_of_f64_max_made_the_mass_matrix_infinite() {
    let xml = PENDULUM.replace(r#"iyy="0.1""#, r#"iyy="1.7976931348623157e308""#);
    let e = urdf::parse_str(&xml, "p.urdf", &LoadOptions::default()).expect_err("accepted");
    assert_eq!((e.element.as_str(), e.line), ("inertia", Some(4)), "{e}");
    assert!(e.reason.contains("out of range"), "{e}");
    assert!(load(&xml, Root::FreeFlyer).is_ok());
}

/// Found by the mutation run (seed 6, input 999, from the pendulum): a free-flying base link
/// without mass carrying one hinge. Each dof moves mass, but the base's rotation about the
/// hinge axis and the hinge repeat each other: the mass matrix is singular and forward
/// dynamics gave NaN. Now the loader names the joint in a warning (the simulator refuses it).
#[test]
fn fuzz_massless_floating_base_over_one_hinge_made_forward_dynamics_nan() {
    let xml = r#"<robot name="p">
  <link name="base"/>
  <link name="rod"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.01"/></inertial></link>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="rod"/></joint>
</robot>"#;
    let opts = LoadOptions { root: Root::FreeFlyer, ..LoadOptions::default() };
    let (_, geometry) = urdf::parse_str(xml, "p.urdf", &opts).unwrap();
    assert!(
        geometry.warnings.iter().any(|w| w.contains("'root_joint' (line 1)") && w.contains("move no mass")),
        "{:#?}",
        geometry.warnings
    );
    assert!(load(xml, Root::FreeFlyer).is_ok());
    // fixed to the world, the same robot is a regular pendulum
    let (_, geometry) = urdf::parse_str(xml, "p.urdf", &LoadOptions::default()).unwrap();
    assert!(geometry.warnings.is_empty(), "{:#?}", geometry.warnings);
}

/// Found by the mutation run (seed 5, input 255, from kinova_continuous.urdf): a finger link
/// of 10 g with its centre of mass 1e15 m away (m c² = 1e28 kg m² beside inertias of 1e-7):
/// forward dynamics lost every digit and returned infinities. The articulated-inertia pivots
/// now flag the finger joints as numerically massless, with a warning.
#[test]
fn fuzz_finger_mass_1e15_m_away_made_forward_dynamics_infinite() {
    let text = std::fs::read_to_string(repo_root().join("tests/data/kinova_continuous.urdf")).unwrap();
    // the second of the four distal fingers' centres of mass (line 401)
    let at = text.match_indices(r#"<origin xyz="0.022 0 0"/>"#).nth(1).unwrap().0;
    let xml = format!("{}{}", &text[..at], text[at..].replacen("0.022 0 0", "-1e15 0 0", 1));
    assert_ne!(xml, text);
    assert!(load(&xml, Root::FreeFlyer).is_ok());
}

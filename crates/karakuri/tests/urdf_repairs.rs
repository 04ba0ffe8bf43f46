//! URDFs that Pinocchio loads although some inertia is not physical, or some joint moves no
//! mass: karakuri loads them too, with a warning naming the link or joint and what was done.
//! Each repaired inertia is checked against its analytic value.

use karakuri::io::urdf::{self, LoadOptions, Root};
use karakuri::model::{Axis, JointId, JointType, ModelBuilder};
use karakuri::spatial::{Inertia, Mat3, Se3, Vec3};
use karakuri::{Model, ModelError};

const INERTIAL: &str = r#"<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>"#;

fn robot(body: &str) -> String {
    format!("<robot name=\"t\">\n{body}\n</robot>\n")
}

fn link(name: &str) -> String {
    format!(r#"<link name="{name}">{INERTIAL}</link>"#)
}

fn link_with_inertia(name: &str, i: [f64; 6]) -> String {
    let [ixx, ixy, ixz, iyy, iyz, izz] = i;
    format!(
        r#"<link name="{name}"><inertial><mass value="1"/><inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" izz="{izz}"/></inertial></link>"#
    )
}

fn joint(name: &str, kind: &str, parent: &str, child: &str) -> String {
    format!(
        r#"<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>"#
    )
}

fn load(xml: &str, root: Root) -> (Model, Vec<String>) {
    let opts = LoadOptions { root, ..LoadOptions::default() };
    let (m, g) = urdf::parse_str(xml, "t.urdf", &opts).unwrap_or_else(|e| panic!("refused: {e}"));
    (m, g.warnings)
}

fn sorted_eigenvalues(a: &Mat3) -> [f64; 3] {
    let mut e: Vec<f64> = a.symmetric_eigenvalues().iter().copied().collect();
    e.sort_by(f64::total_cmp);
    [e[0], e[1], e[2]]
}

#[test]
fn non_psd_moving_link_is_replaced_by_the_nearest_physical_inertia() {
    // eigenvalues 3, -1, 1; second moments ½tr − λ = -1.5, 2.5, 0.5 -> 0, 2.5, 0.5, so the
    // repaired moments (sums of the other two) are 3, 0.5, 2.5
    let xml = robot(&[link("base"), link_with_inertia("arm", [1.0, 2.0, 0.0, 1.0, 0.0, 1.0]), joint("j", "revolute", "base", "arm")].join("\n"));
    let (model, warnings) = load(&xml, Root::Fixed);
    let w = warnings.iter().find(|w| w.contains("'arm'")).unwrap_or_else(|| panic!("{warnings:#?}"));
    assert!(w.contains("not positive semi-definite") && w.contains("nearest physical inertia") && w.starts_with("t.urdf:4:"), "{w}");
    let i = &model.inertias[1];
    let e = sorted_eigenvalues(&i.inertia_com);
    for (got, want) in e.iter().zip([0.5, 2.5, 3.0]) {
        assert!((got - want).abs() < 1e-12, "{e:?}");
    }
    // the eigenvector of the largest moment is kept: (1, 1, 0)/√2
    let u = Vec3::new(1.0, 1.0, 0.0).normalize();
    assert!((u.dot(&(i.inertia_com * u)) - 3.0).abs() < 1e-12);
    assert_eq!((i.mass, i.com), (1.0, Vec3::zeros()));
}

#[test]
fn rank_one_moving_link_violating_the_triangle_inequality_is_repaired() {
    // all entries 1: moments 3, 0, 0 -> second moments -1.5, 1.5, 1.5 -> 0, 1.5, 1.5 -> 3, 1.5, 1.5
    let xml = robot(&[link("base"), link_with_inertia("arm", [1.0; 6]), joint("j", "revolute", "base", "arm")].join("\n"));
    let (model, warnings) = load(&xml, Root::Fixed);
    assert!(warnings.iter().any(|w| w.contains("'arm'") && w.contains("triangle inequality") && w.contains("nearest physical")), "{warnings:#?}");
    let e = sorted_eigenvalues(&model.inertias[1].inertia_com);
    for (got, want) in e.iter().zip([1.5, 1.5, 3.0]) {
        assert!((got - want).abs() < 1e-12, "{e:?}");
    }
}

/// TIAGo's antenna links (CAD rounding: a moment of -3.5e-8 on a 1 mg link) are fixed to the
/// base: merged into a physical body they load exactly as written, as in Pinocchio.
#[test]
fn tiago_like_antenna_with_a_slightly_negative_moment_loads_as_written() {
    let antenna = r#"<link name="antenna"><inertial><mass value="0.000001"/><inertia ixx="2.4e-8" ixy="6.1e-8" ixz="1.2e-8" iyy="2.8e-8" iyz="0.8e-8" izz="3.8e-8"/></inertial></link>"#;
    let fixed = r#"<joint name="antenna_joint" type="fixed"><parent link="base"/><child link="antenna"/><origin xyz="0.1 0 0.2"/></joint>"#;
    let xml = robot(&[link("base"), link("arm"), antenna.into(), fixed.into(), joint("j", "revolute", "base", "arm")].join("\n"));
    // floating: merged into the base's body, which stays physical: no change
    let (model, warnings) = load(&xml, Root::FreeFlyer);
    let w = warnings.iter().find(|w| w.contains("'antenna'")).unwrap_or_else(|| panic!("{warnings:#?}"));
    assert!(w.contains("not positive semi-definite") && w.contains("loaded as written"), "{w}");
    let base = Inertia::new(1.0, Vec3::zeros(), Mat3::identity() * 0.1);
    let a = Mat3::new(2.4e-8, 6.1e-8, 1.2e-8, 6.1e-8, 2.8e-8, 0.8e-8, 1.2e-8, 0.8e-8, 3.8e-8);
    let antenna = Inertia::new(1e-6, Vec3::zeros(), a).transformed(&Se3::new(Mat3::identity(), Vec3::new(0.1, 0.0, 0.2)));
    let want = base.combined(&antenna);
    let got = &model.inertias[1];
    assert!((got.inertia_com - want.inertia_com).amax() < 1e-18 && (got.com - want.com).amax() < 1e-18);
    // fixed base: the antenna is part of the world, its inertia unused
    let (_, warnings) = load(&xml, Root::Fixed);
    assert!(warnings.iter().any(|w| w.contains("'antenna'") && w.contains("unused (fixed to the world)")), "{warnings:#?}");
}

#[test]
fn joint_moving_no_mass_loads_with_a_warning_and_the_builder_refuses_it() {
    let xml = robot(&[link("a"), "<link name=\"b\"/>".into(), joint("j", "revolute", "a", "b")].join("\n"));
    let (model, warnings) = load(&xml, Root::Fixed);
    assert_eq!(model.nv, 1);
    let w = warnings.iter().find(|w| w.contains("'j' (line 4)")).unwrap_or_else(|| panic!("{warnings:#?}"));
    assert!(w.contains("move no mass") && w.contains("lock them") && w.contains("armature"), "{w}");
    // a model built for simulation (ModelBuilder::build, as the simulator's world) is refused
    let mut b = ModelBuilder::new("t");
    let j = b.add_joint(JointId::UNIVERSE, "j", JointType::Revolute { axis: Axis::Z }, Se3::identity()).unwrap();
    b.add_body(j, "b", Inertia::zero()).unwrap();
    match b.build() {
        Err(ModelError::BadInertia { reason, .. }) => assert!(reason.contains("'j' moves no mass") && reason.contains("lock it"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

/// Two hinges on one axis with a massless link between them: each moves mass, but together they
/// repeat one motion, so the mass matrix is singular (the second pivot of ABA is zero).
#[test]
fn two_identical_hinges_in_series_are_named_in_a_warning() {
    let xml = robot(
        &[
            link("a"),
            "<link name=\"b\"/>".into(),
            link("c"),
            joint("j1", "revolute", "a", "b"),
            joint("j2", "revolute", "b", "c"),
        ]
        .join("\n"),
    );
    let (_, warnings) = load(&xml, Root::Fixed);
    let w = warnings.iter().find(|w| w.contains("move no mass")).unwrap_or_else(|| panic!("{warnings:#?}"));
    assert!(w.contains("'j1' (line 5)") && !w.contains("'j2'"), "{w}");
    // a different axis for the second hinge makes it regular
    let xml = xml.replacen(r#"<axis xyz="0 0 1"/>"#, r#"<axis xyz="0 1 0"/>"#, 2).replacen(r#"<axis xyz="0 1 0"/>"#, r#"<axis xyz="0 0 1"/>"#, 1);
    let (_, warnings) = load(&xml, Root::Fixed);
    assert!(warnings.is_empty(), "{warnings:#?}");
}

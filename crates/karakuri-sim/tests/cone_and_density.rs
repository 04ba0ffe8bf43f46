//! The cone shape (scene `type: cone`, `.body` `geometry: Cone`): its contacts and its mass
//! properties; bodies whose mass comes from their shapes and `density`, against analytic
//! formulas and an independent slice-by-slice integration.

mod common;

use common::ground_and;
use karakuri::spatial::{Solid, Vec3};
use karakuri_sim::scene::BodySpec;
use karakuri_sim::{Scene, World};

/// Mass properties of a solid of revolution about z with radius `r(z)` on `[z0, z1]`, density
/// `rho`, by the midpoint rule over `n` discs: (mass, com z, I_zz, I_xx about the com).
fn slices(r: impl Fn(f64) -> f64, z0: f64, z1: f64, rho: f64, n: usize) -> (f64, f64, f64, f64) {
    let dz = (z1 - z0) / n as f64;
    let (mut m, mut mz, mut izz, mut ixx0) = (0.0, 0.0, 0.0, 0.0);
    for k in 0..n {
        let z = z0 + (k as f64 + 0.5) * dz;
        let a = r(z);
        let dm = rho * std::f64::consts::PI * a * a * dz;
        m += dm;
        mz += dm * z;
        izz += 0.5 * dm * a * a;
        ixx0 += dm * (0.25 * a * a + z * z);
    }
    let c = mz / m;
    (m, c, izz, ixx0 - m * c * c)
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

#[test]
fn a_cones_mass_properties_are_the_textbook_ones() {
    let (rho, r, hl) = (1200.0, 0.15, 0.2);
    let h = 2.0 * hl;
    let i = Solid::Cone { radius: r, half_length: hl }.inertia(rho);
    // m = ρ π r² h / 3, the centre of mass h/4 above the base, I_axis = 3/10 m r²,
    // I_perp (about the centre of mass) = 3/20 m r² + 3/80 m h²
    let m = rho * std::f64::consts::PI * r * r * h / 3.0;
    assert!(close(i.mass, m, 1e-14));
    assert!((i.com.z - (-hl + h / 4.0)).abs() < 1e-15 && i.com.x == 0.0 && i.com.y == 0.0);
    assert!(close(i.inertia_com[(2, 2)], 0.3 * m * r * r, 1e-14));
    assert!(close(i.inertia_com[(0, 0)], 3.0 / 20.0 * m * r * r + 3.0 / 80.0 * m * h * h, 1e-14));
    // and by slices (nothing shared with the formulas)
    let (sm, sc, szz, sxx) = slices(|z| r * (hl - z) / h, -hl, hl, rho, 20_000);
    assert!(close(i.mass, sm, 1e-6) && (i.com.z - sc).abs() < 1e-6);
    assert!(close(i.inertia_com[(2, 2)], szz, 1e-6) && close(i.inertia_com[(0, 0)], sxx, 1e-6));
}

#[test]
fn every_primitive_matches_its_slices() {
    let rho = 800.0;
    let (r, hl) = (0.1, 0.25);
    let cases: Vec<(Solid, Box<dyn Fn(f64) -> f64>, f64)> = vec![
        (Solid::Sphere { radius: r }, Box::new(move |z: f64| (r * r - z * z).max(0.0).sqrt()), r),
        (Solid::Cylinder { radius: r, half_length: hl }, Box::new(move |_| r), hl),
        (
            Solid::Capsule { radius: r, half_length: hl },
            Box::new(move |z: f64| if z.abs() <= hl { r } else { (r * r - (z.abs() - hl).powi(2)).max(0.0).sqrt() }),
            hl + r,
        ),
    ];
    for (solid, radius, top) in cases {
        let i = solid.inertia(rho);
        let (m, c, izz, ixx) = slices(radius, -top, top, rho, 40_000);
        assert!(close(i.mass, m, 1e-6), "{solid:?}: {} vs {m}", i.mass);
        assert!(c.abs() < 1e-9);
        assert!(close(i.inertia_com[(2, 2)], izz, 1e-5) && close(i.inertia_com[(0, 0)], ixx, 1e-5), "{solid:?}");
    }
    // a box: m = 8 ρ abc, I_xx = m (b² + c²) / 3 with half sides a, b, c
    let i = Solid::Box { half_extents: Vec3::new(0.1, 0.2, 0.3) }.inertia(rho);
    let m = rho * 8.0 * 0.1 * 0.2 * 0.3;
    assert!(close(i.mass, m, 1e-14) && close(i.inertia_com[(0, 0)], m * (0.04 + 0.09) / 3.0, 1e-14));
}

fn body(text: &str) -> BodySpec {
    let s = Scene::from_str(&ground_and("", text), "t.yaml").unwrap();
    s.bodies.into_iter().find(|b| b.name == "b").unwrap()
}

#[test]
fn a_body_with_a_density_takes_its_shapes_mass_properties() {
    // a box of 0.2 × 0.2 × 0.1 m and a cone on top of it (base on the box's top face), 500 kg/m³
    let b = body(
        r#"
  - name: b
    density: 500
    joints: [{type: free, q0: {position: [0, 0, 0.05]}}]
    shapes:
      - {type: box, half_extents: [0.1, 0.1, 0.05]}
      - {type: cone, radius: 0.1, half_length: 0.1, pose: {position: [0, 0, 0.15]}}"#,
    );
    let i = b.mass_properties().unwrap();
    let pi = std::f64::consts::PI;
    let (mb, mc) = (500.0 * 0.2 * 0.2 * 0.1, 500.0 * pi * 0.01 * 0.2 / 3.0);
    assert!(close(i.mass, mb + mc, 1e-14));
    // the cone's centre of mass is 0.05 m above its base (z = 0.05 + 0.05)
    let zc = mc * 0.10 / (mb + mc);
    assert!((i.com.z - zc).abs() < 1e-14, "{} vs {zc}", i.com.z);
    // I_zz: the box's m (a² + b²) / 3 and the cone's 3/10 m r² (one axis)
    assert!(close(i.inertia_com[(2, 2)], mb * 0.02 / 3.0 + 0.3 * mc * 0.01, 1e-12));
    // the world reports the computed mass, and the body falls and rests on its box
    let mut w = World::new(Scene::from_str(&ground_and("", r#"
  - name: b
    density: 500
    joints: [{type: free, q0: {position: [0, 0, 0.3]}}]
    shapes:
      - {type: box, half_extents: [0.1, 0.1, 0.05]}
      - {type: cone, radius: 0.1, half_length: 0.1, pose: {position: [0, 0, 0.15]}}"#), "t.yaml").unwrap()).unwrap();
    assert!(close(w.bodies()[w.body_index("b").unwrap()].mass, mb + mc, 1e-14));
    w.run(1.0).unwrap();
    assert!((w.state("b").unwrap().pose.translation.z - 0.05).abs() < 1.5e-3);
}

#[test]
fn density_errors_name_the_key() {
    let e = common::error_of(&ground_and("", r#"
  - name: b
    density: 500
    mass: 1
    joints: [{type: free}]
    shapes: [{type: sphere, radius: 0.1}]"#), "t.yaml");
    assert!(e.contains("bodies[1].density") && e.contains("not both"), "{e}");
    let e = common::error_of(&ground_and("", r#"
  - name: b
    density: -5
    joints: [{type: free}]
    shapes: [{type: sphere, radius: 0.1}]"#), "t.yaml");
    assert!(e.contains("bodies[1].density") && e.contains("positive"), "{e}");
    let e = common::error_of(&ground_and("", r#"
  - name: b
    density: 500
    joints: [{type: free}]
    shapes: [{type: convex_mesh, vertices: [[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]]}]"#), "t.yaml");
    assert!(e.contains("shapes[0]") && e.contains("mass, com and inertia"), "{e}");
    let e = common::error_of(&ground_and("", r#"
  - name: b
    mass: 1
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    joints: [{type: free}]
    shapes: [{type: cone, radius: -0.1, half_length: 0.1}]"#), "t.yaml");
    assert!(e.contains("shapes[0].radius"), "{e}");
}

#[test]
fn a_cone_rests_on_its_base_and_on_its_side() {
    // base down: the centre (half its height) at 0.1 m; tipped over onto its side (a line
    // contact from apex to base rim): the axis at the slant angle, the centre at r cos(α)
    // above the floor with tan α = r / h
    let (r, hl) = (0.1, 0.1);
    let cone = |pos: [f64; 3], quat: [f64; 4]| format!(r#"
  - name: c
    mass: 1
    inertia: [[0.001, 0, 0], [0, 0.001, 0], [0, 0, 0.001]]
    joints: [{{type: free, q0: {{position: {pos:?}, orientation: {quat:?}}}}}]
    shapes: [{{type: cone, radius: {r}, half_length: {hl}, material: m}}]"#);
    let mut w = World::new(Scene::from_str(&ground_and("", &cone([0.0, 0.0, 0.2], [0.0, 0.0, 0.0, 1.0])), "t.yaml").unwrap()).unwrap();
    w.run(1.0).unwrap();
    let z = w.state("c").unwrap().pose.translation.z;
    assert!((z - hl).abs() < 1.5e-3, "base down: {z}");
    // on its side: start with the axis horizontal, a little above the floor
    let s = std::f64::consts::FRAC_1_SQRT_2;
    let mut w = World::new(Scene::from_str(&ground_and("", &cone([0.0, 0.0, 0.15], [s, 0.0, 0.0, s])), "t.yaml").unwrap()).unwrap();
    w.run(2.0).unwrap();
    let st = w.state("c").unwrap();
    let axis = st.pose.rotation * Vec3::z();
    let h = 2.0 * hl;
    let alpha = (r / h).atan();
    // resting on the slant line: the axis tilts by α from horizontal (apex down)
    assert!((axis.z.abs().asin() - alpha).abs() < 0.02, "axis {axis:?}, slant {alpha}");
    // the cone's frame origin (mid-height on the axis) sits (r/2) cos α above the floor
    let z = st.pose.translation.z;
    assert!((z - 0.5 * r * alpha.cos()).abs() < 2e-3, "on its side: {z} vs {}", 0.5 * r * alpha.cos());
}

#[test]
fn a_body_file_cone_is_a_cone() {
    let dir = std::env::temp_dir().join(format!("karakuri-cone-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cone.body");
    // Choreonoid's cone runs along y, apex at +y: the link turned so that y points up
    std::fs::write(&path, r#"format: ChoreonoidBody
formatVersion: 1.0
angleUnit: degree
name: ConeBody
links:
  -
    name: CONE
    translation: [ 0, 0, 0.4 ]
    rotation: [ 1, 0, 0, 90 ]
    jointType: free
    mass: 2.0
    inertia: [ 0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01 ]
    elements:
      Shape:
        geometry: { type: Cone, radius: 0.1, height: 0.3 }
"#).unwrap();
    let mut w = World::from_file(&path).unwrap();
    w.run(1.5).unwrap();
    let st = w.state("cone/CONE").unwrap();
    // resting on its base: the link origin (mid-height) 0.15 m up, the cone's y still up
    assert!((st.pose.translation.z - 0.15).abs() < 1.5e-3, "{:?}", st.pose.translation);
    assert!((st.pose.rotation * Vec3::y()).z > 0.999);
    std::fs::remove_dir_all(&dir).ok();
}

//! MJCF height fields with data (docs/MJCF.md, "Height fields"): the grids the loader reads
//! (inline `elevation`, colour, 16-bit grey and palette PNGs, MuJoCo's binary format, a flat
//! one left to a program) equal MuJoCo 4.0.0's `hfield_nrow`, `hfield_ncol`, `hfield_size` and
//! `hfield_data` bit for bit (`scripts/mjcf_hfield_reference.py` wrote `*.hfield.json`); the
//! solid the simulator collides with is closed and outward (its exact volume is the prism's);
//! a ball rolls down a planar height field touching it where the plane says, at the rolling
//! acceleration 5/7 g sin θ, and a box comes to rest on it; bad data are refused by name.

use std::path::{Path, PathBuf};

use karakuri::io::mjcf::mesh_inertia::{mesh_mass, MeshInertia};
use karakuri::io::mjcf::{self, GeomShape};
use karakuri_sim::mesh::MeshFiles;
use karakuri_sim::scene::mjcf_geometry::hfield_solid;
use karakuri_sim::{Scene, World};
use serde_json::Value;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/mjcf/hfield")
}

/// Every height field of `model` against MuJoCo's compiled grid.
fn grids_equal_mujocos(model: &str) {
    let path = dir().join(model);
    let world = mjcf::load_world_with(&path, &MeshFiles).unwrap_or_else(|e| panic!("{e}"));
    let reference: Value = serde_json::from_str(&std::fs::read_to_string(path.with_extension("hfield.json")).unwrap()).unwrap();
    let hfields = reference["hfields"].as_object().unwrap();
    let mut seen = 0;
    for g in &world.geoms {
        let GeomShape::HeightField { name, extents, grid } = &g.shape else { continue };
        let r = &hfields[name.as_str()];
        let size: Vec<f64> = r["size"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        assert_eq!(extents.as_slice(), size.as_slice(), "{model} {name}: size");
        let data: Vec<f64> = r["data"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        let (nrow, ncol) = (r["nrow"].as_u64().unwrap() as usize, r["ncol"].as_u64().unwrap() as usize);
        match grid {
            Some(grid) => {
                assert_eq!((grid.nrow, grid.ncol), (nrow, ncol), "{model} {name}: rows and columns");
                let ours: Vec<f64> = grid.data.iter().map(|&x| f64::from(x)).collect();
                assert_eq!(ours, data, "{model} {name}: hfield_data");
            }
            // flat: MuJoCo's data are all zeros
            None => assert!(data.iter().all(|&x| x == 0.0), "{model} {name}: flat here, not in MuJoCo"),
        }
        seen += 1;
    }
    assert_eq!(seen, hfields.len(), "{model}: every height field is a geom");
}

#[test]
fn grids_are_mujocos_from_inline_png_and_binary_data() {
    grids_equal_mujocos("slope.xml");
    grids_equal_mujocos("files.xml");
    // plain load_world has no PNG decoder: it names the remedy
    let e = mjcf::load_world(dir().join("files.xml")).unwrap_err().to_string();
    assert!(e.contains("rgb.png") && e.contains("load_world_with"), "{e}");
}

/// The solid of the slope's height field is closed and faces outward: the exact (signed)
/// volume of its triangles is the prism's, area × (base + mean height of the plane).
#[test]
fn the_collision_solid_is_closed_and_outward() {
    let world = mjcf::load_world_with(dir().join("slope.xml"), &MeshFiles).unwrap();
    let GeomShape::HeightField { extents, grid: Some(grid), .. } = &world.geoms[0].shape else { panic!("no grid") };
    let (v, t) = hfield_solid(extents, grid);
    let m = mesh_mass(&v, &t, None, MeshInertia::Exact).unwrap();
    // z = 0.05 (x + 1) + 0.08 (y + 1) over [-1, 1]²: mean 0.13; base 0.1
    let want = 4.0 * (0.1 + 0.13);
    // the grid is single precision (MuJoCo's 7/13 is 7.0000005/13)
    assert!((m.volume - want).abs() < 1e-7, "volume {} vs {want}", m.volume);
}

/// The slope's surface in world coordinates (the geom at (0.5, −0.25, 0.1)): the plane
/// z = 0.05 (x + 1) + 0.08 (y + 1) of the geom's frame (see slope.xml).
fn slope_z(x: f64, y: f64) -> f64 {
    let (xl, yl) = (x - 0.5, y + 0.25);
    0.1 + 0.05 * (xl + 1.0) + 0.08 * (yl + 1.0)
}

/// Distance of a point above the slope's plane.
fn above(p: &karakuri::spatial::Vec3) -> f64 {
    (p.z - slope_z(p.x, p.y)) / (1.0f64 + 0.05 * 0.05 + 0.08 * 0.08).sqrt()
}

#[test]
fn a_ball_rolls_on_the_plane_and_a_box_rests_on_it() {
    let mut w = World::new(Scene::from_file(dir().join("slope.xml")).unwrap()).unwrap();
    w.run(0.5).unwrap();
    let s0 = *w.state("slope/ball").unwrap();
    // touching the surface where the plane is (radius 0.1), within the contact tolerance
    let d0 = above(&s0.pose.translation);
    assert!((d0 - 0.1).abs() < 2e-3, "ball centre {d0} m above the plane, radius 0.1");
    w.run(0.5).unwrap();
    let s1 = w.state("slope/ball").unwrap();
    let d1 = above(&s1.pose.translation);
    assert!((d1 - 0.1).abs() < 2e-3, "ball centre {d1} m above the plane after rolling");
    // rolling without slipping down the steepest line: a = 5/7 g sin θ, tan θ = |(0.05, 0.08)|
    let tan = (0.05f64 * 0.05 + 0.08 * 0.08).sqrt();
    let a = 5.0 / 7.0 * 9.81 * tan / (1.0 + tan * tan).sqrt();
    let down = karakuri::spatial::Vec3::new(-0.05, -0.08, -tan * tan).normalize();
    let dv = (s1.linear - s0.linear).dot(&down);
    assert!((dv - a * 0.5).abs() < 0.02 * a * 0.5, "speed gained {dv} m/s in 0.5 s, rolling gives {}", a * 0.5);
    assert!((s1.linear - s0.linear).cross(&down).norm() < 0.02 * dv, "the ball leaves the steepest line");
    // the box (half height 0.05, friction 1 > tan θ) sticks, resting on its face
    let b = w.state("slope/box").unwrap();
    assert!(b.linear.norm() < 1e-3, "box still moving at {} m/s", b.linear.norm());
    let db = above(&b.pose.translation);
    assert!((db - 0.05).abs() < 2e-3, "box centre {db} m above the plane, half height 0.05");
}

/// The ball dropped on the colour PNG's terrain lands on it: its centre ends 0.05 m above the
/// surface under it (the largest elevation of the cells around it bounds it).
#[test]
fn a_ball_lands_on_a_png_terrain() {
    let mut w = World::new(Scene::from_file(dir().join("files.xml")).unwrap()).unwrap();
    w.run(1.0).unwrap();
    let p = w.state("files/ball").unwrap().pose.translation;
    // rgb.png spans z 0..0.1 over [-0.6, 0.6] × [-0.4, 0.4]
    assert!(p.z > 0.05 && p.z < 0.1 + 0.05 + 2e-3, "ball at {p:?}");
    assert!(p.x.abs() < 0.6 && p.y.abs() < 0.4, "ball off the terrain at {p:?}");
}

fn refused(hfield: &str, words: &[&str]) {
    let xml = format!(r#"<mujoco><asset>{hfield}</asset><worldbody><geom type="hfield" hfield="h"/></worldbody></mujoco>"#);
    let e = mjcf::parse_world_str_with(&xml, "bad.xml", Some(&MeshFiles)).unwrap_err().to_string();
    assert!(e.contains("bad.xml") && e.contains("hfield"), "{e}");
    for w in words {
        assert!(e.contains(w), "'{w}' not in: {e}");
    }
}

#[test]
fn bad_height_fields_are_refused_by_name() {
    refused(r#"<hfield name="h" nrow="2" ncol="2" elevation="1 2 3" size="1 1 1 1"/>"#, &["3 elevation numbers", "nrow 2"]);
    refused(r#"<hfield name="h" nrow="1" ncol="2" elevation="1 2" size="1 1 1 1"/>"#, &["at least 2"]);
    refused(r#"<hfield name="h" nrow="2" ncol="2" elevation="nan 1 2 3" size="1 1 1 1"/>"#, &["finite"]);
    refused(r#"<hfield name="h" nrow="2" ncol="2" elevation="-1e38 1 2 3e38" size="1 1 1 1"/>"#, &["exceeds"]);
    refused(r#"<hfield name="h" nrow="2" ncol="2" size="1 0 1 1"/>"#, &["positive"]);
    refused(r#"<hfield name="h" nrow="2.5" ncol="2" size="1 1 1 1"/>"#, &["integer"]);
    refused(r#"<hfield name="h" file="missing.png" size="1 1 1 1"/>"#, &["missing.png"]);
    let dir = std::env::temp_dir().join(format!("karakuri-hfield-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bad.png"), b"\x89PNG\r\n\x1a\nnot a png").unwrap();
    std::fs::write(dir.join("bad.bin"), [2u8, 0, 0, 0, 2, 0, 0, 0, 1, 2]).unwrap();
    let wide: Vec<u8> = [2i32.to_le_bytes(), 2i32.to_le_bytes()].into_iter().flatten().chain([-3e38f32, 0.0, 1.0, 3e38].iter().flat_map(|x| x.to_le_bytes())).collect();
    std::fs::write(dir.join("wide.bin"), wide).unwrap();
    for (file, word) in [("bad.png", "PNG"), ("bad.bin", "bytes for nrow 2"), ("wide.bin", "range")] {
        let xml = format!(r#"<mujoco><asset><hfield name="h" file="{file}" size="1 1 1 1"/></asset><worldbody><geom type="hfield" hfield="h"/></worldbody></mujoco>"#);
        let e = mjcf::parse_world_str_with(&xml, &dir.join("m.xml").display().to_string(), Some(&MeshFiles)).unwrap_err().to_string();
        assert!(e.contains(file) && e.contains(word), "{e}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A ball that starts with its centre 0.02 m under the surface (as barkour's keyframe leaves a
/// foot in its terrain, which MuJoCo's soft contacts push out) is pushed out upward and rests
/// on the surface: the solid's contact, not the triangle's back face (which would push it down
/// through the terrain).
#[test]
fn a_ball_started_inside_the_terrain_comes_out_on_top() {
    // a ramp along x only: z = 0.2 (x + 1) / 2 over x in [-1, 1]; at x = 0.3: 0.13
    let xml = r#"<mujoco><asset><hfield name="ramp" nrow="2" ncol="3" elevation="0 1 2 0 1 2" size="1 1 0.2 0.1"/></asset>
      <worldbody><geom type="hfield" hfield="ramp"/>
      <body name="ball" pos="0.3 0 0.11"><freejoint/><geom type="sphere" size="0.05" mass="1" friction="1"/></body></worldbody></mujoco>"#;
    let dir = std::env::temp_dir().join(format!("karakuri-hfield-in-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("inside.xml");
    std::fs::write(&path, xml).unwrap();
    let mut w = World::new(Scene::from_file(&path).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    // the scene's depenetration speed takes it out of its 0.07 m overlap in a fraction of this
    w.run(1.0).unwrap();
    let p = w.state("inside/ball").unwrap().pose.translation;
    // the ramp's plane z = 0.1 (x + 1), normal (−0.1, 0, 1) / |·|: the centre 0.05 above it
    let d = (p.z - 0.1 * (p.x + 1.0)) / (1.0f64 + 0.01).sqrt();
    assert!((d - 0.05).abs() < 2e-3, "ball centre {d} m above the ramp (at {p:?}), radius 0.05");
}

/// The PNG decoder on mutated images (bytes flipped, spans cut or repeated, chunk lengths
/// changed) of the three test PNGs: an image or an error, never a panic; a decoded image has
/// `width × height` pixels. 3000 inputs, seeded (`karakuri::algorithms::SplitMix64`).
#[test]
fn mutated_pngs_decode_or_are_refused() {
    let mut rng = karakuri::algorithms::SplitMix64::new(0x706e67);
    let seeds: Vec<Vec<u8>> = ["rgb.png", "grey16.png", "palette.png"].iter().map(|f| std::fs::read(dir().join(f)).unwrap()).collect();
    let (mut decoded, mut refused) = (0, 0);
    for run in 0..3000 {
        let mut b = seeds[run % seeds.len()].clone();
        for _ in 0..1 + rng.next_u64() % 4 {
            let at = rng.next_u64() as usize % b.len().max(1);
            match rng.next_u64() % 4 {
                0 => b[at] ^= 1 << (rng.next_u64() % 8),
                1 => b.truncate(at),
                2 => {
                    let end = (at + 1 + rng.next_u64() as usize % 64).min(b.len());
                    let span = b[at..end].to_vec();
                    b.splice(at..at, span);
                }
                // a chunk length or an image dimension (big-endian words) made large
                _ => {
                    if at + 4 <= b.len() {
                        b[at..at + 4].copy_from_slice(&(rng.next_u64() as u32 | 0x0100_0000).to_be_bytes());
                    }
                }
            }
            if b.is_empty() {
                break;
            }
        }
        match std::panic::catch_unwind(|| karakuri_sim::mesh::png_grey(&b)) {
            Ok(Ok((w, h, px))) => {
                assert_eq!(px.len(), w * h, "input {run}");
                decoded += 1;
            }
            Ok(Err(e)) => {
                assert!(e.starts_with("PNG"), "input {run}: {e}");
                refused += 1;
            }
            Err(_) => panic!("input {run}: the PNG decoder panicked on {b:?}"),
        }
    }
    println!("3000 mutated PNGs: {decoded} decoded, {refused} refused");
}

//! `karakuri view` draws example-robot-data's Go2, Panda and UR5 with their COLLADA visual
//! meshes (not the collision hulls of the fallback), and finds TALOS's `package:///` meshes.
//! Needs an installed example-robot-data (`EXAMPLE_ROBOT_DATA_DIR`, else the `cmeel.prefix` of
//! Python's site packages); skipped with a note when there is none.

#[path = "../../karakuri/tests/example_robot_data/mod.rs"]
mod example_robot_data;

use std::path::{Path, PathBuf};

use karakuri::io::urdf::{self, LoadOptions, Root, Shape};
use karakuri_cli::viewer::looks::pose7;
use karakuri_cli::viewer::{model, page};
use serde_json::Value;

/// Every URDF visual that is a mesh is on the page as that file's mesh (the same triangles,
/// bit for bit, as `karakuri_sim::mesh` reads them) at the visual's pose, on its body.
fn check_visual_meshes(urdf_path: &Path, package_dirs: &[PathBuf]) -> usize {
    let data = model::page_data(urdf_path, false, package_dirs).unwrap();
    let opts = LoadOptions {
        root: Root::Fixed,
        package_dirs: package_dirs.to_vec(),
    };
    let (_, geometry) = urdf::load_with(urdf_path, &opts).unwrap();
    let notes: Vec<&str> = data["notes"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(!notes.iter().any(|n| n.contains("visual")), "{}: {notes:#?}", urdf_path.display());
    let meshes = data["meshes"].as_array().unwrap();
    let mut n = 0;
    for g in &geometry.visuals {
        let Shape::Mesh { resolved, scale, filename, .. } = &g.shape else { continue };
        let file = resolved.as_ref().unwrap_or_else(|| panic!("{filename} not found"));
        let mesh = karakuri_sim::mesh::load(file, [scale.x, scale.y, scale.z]).unwrap();
        let want_i = page::u32s(mesh.triangles.iter().flatten().copied());
        let want_pose = pose7(&g.placement);
        let body = &data["bodies"][g.parent_joint.0];
        let found = body["shapes"].as_array().unwrap().iter().any(|s| {
            s["type"] == "mesh"
                && s["layer"] == "visual"
                && meshes[s["mesh"].as_u64().unwrap() as usize]["i"] == want_i
                && s["pose"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .zip(want_pose)
                    .all(|(a, b)| (a.as_f64().unwrap() - b).abs() < 1e-12)
        });
        assert!(found, "{}: visual '{filename}' of link '{}' is not drawn", urdf_path.display(), g.link);
        n += 1;
    }
    n
}

#[test]
fn go2_panda_and_ur5_are_drawn_with_their_collada_meshes() {
    let Some(erd) = example_robot_data::robots_dir() else {
        println!("note: example-robot-data not found (set EXAMPLE_ROBOT_DATA_DIR): test skipped");
        return;
    };
    for (urdf, at_least) in [
        ("go2_description/urdf/go2.urdf", 13),
        ("panda_description/urdf/panda.urdf", 10),
        ("ur_description/urdf/ur5_robot.urdf", 7),
    ] {
        let path = erd.join(urdf);
        let dae = std::fs::read_to_string(&path).unwrap().matches(".dae\"").count();
        let drawn = check_visual_meshes(&path, &[]);
        assert!(dae >= at_least && drawn >= dae, "{urdf}: {drawn} visual meshes drawn, {dae} .dae named");
    }
}

#[test]
fn talos_three_slash_package_meshes_are_found_with_and_without_package_dir() {
    let Some(erd) = example_robot_data::robots_dir() else {
        println!("note: example-robot-data not found (set EXAMPLE_ROBOT_DATA_DIR): test skipped");
        return;
    };
    let path = erd.join("talos_data/robots/talos_full_v2.urdf");
    let share = erd.parent().unwrap().parent().unwrap().to_path_buf();
    for dirs in [vec![], vec![share]] {
        let drawn = check_visual_meshes(&path, &dirs);
        assert!(drawn >= 40, "{drawn} TALOS visual meshes drawn");
        let data = model::page_data(&path, false, &dirs).unwrap();
        let notes = data["notes"].as_array().unwrap();
        assert!(notes.iter().all(|n| !n.as_str().unwrap().contains("not found")), "{notes:#?}");
    }
}

//! Mesh-file shapes (STL binary and ASCII, OBJ), static triangle-mesh floors, their errors,
//! store/restore of `file`, and URDF robots whose `<collision>` elements become shapes.

use std::path::{Path, PathBuf};

use karakuri_sim::scene::{Geometry, MeshFile};
use karakuri_sim::{Scene, World};

fn repo(rel: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(rel)
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("karakuri-sim-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn z_of(w: &World, name: &str) -> f64 {
    w.state(name).unwrap().pose.translation.z
}

#[test]
fn convex_meshes_from_stl_and_obj_rest_at_their_heights() {
    let scene = Scene::from_file(repo("tests/scenes/mesh_shapes.yaml")).unwrap();
    // the files were read, scaled, and their vertices kept with the file reference
    let Geometry::ConvexMesh { vertices, file } = &scene.bodies[1].shapes[0].geometry else {
        panic!("not a convex mesh")
    };
    assert_eq!(vertices.len(), 8);
    assert!(vertices.iter().all(|v| v.iter().all(|x| (x.abs() - 0.1).abs() < 1e-7)));
    assert_eq!(
        file,
        &Some(MeshFile {
            path: "../data/meshes/cube_binary.stl".into(),
            scale: [0.2; 3]
        })
    );
    let mut w = World::new(scene).unwrap();
    w.run(1.0).unwrap();
    for (name, h) in [("cube_binary", 0.1), ("slab_ascii", 0.05), ("tetra_obj", 0.0)] {
        let z = z_of(&w, name);
        assert!((z - h).abs() < 2e-3, "{name} rests at {z}, expected {h}");
        let up = w.state(name).unwrap().pose.rotation[(2, 2)];
        assert!(up > 0.9999, "{name} tipped over ({up})");
    }
}

#[test]
fn a_static_trimesh_floor_holds_a_sphere() {
    let scene = Scene::from_file(repo("tests/scenes/trimesh_floor.yaml")).unwrap();
    let Geometry::TriMesh { triangles, .. } = &scene.bodies[0].shapes[0].geometry else {
        panic!("not a triangle mesh")
    };
    assert_eq!(triangles.len(), 2, "the OBJ quad is triangulated");
    let mut w = World::new(scene).unwrap();
    w.run(1.0).unwrap();
    for (name, h) in [("ball_a", 0.1), ("ball_b", 0.6)] {
        let z = z_of(&w, name);
        assert!((z - h).abs() < 2e-3, "{name} rests at {z}, expected {h}");
    }
}

fn error_of(text: &str, file: &Path) -> String {
    match Scene::from_str(text, &file.display().to_string()).and_then(World::new) {
        Ok(_) => panic!("scene accepted"),
        Err(e) => e.to_string(),
    }
}

const FREE: &str = "joints: [{type: free}]\n    mass: 1\n    inertia: [[1,0,0],[0,1,0],[0,0,1]]";

#[test]
fn mesh_file_errors_name_the_path_and_the_reason() {
    let scene_file = repo("tests/scenes/bad_mesh.yaml"); // not read: names the base directory
    let body = |shape: &str| format!("name: t\nbodies:\n  - name: g\n  - name: b\n    {FREE}\n    shapes: [{shape}]\n");
    let e = error_of(&body("{type: convex_mesh, file: ../data/meshes/nope.stl}"), &scene_file);
    assert!(
        e.contains("bad_mesh.yaml")
            && e.contains("bodies[1].shapes[0].file")
            && e.contains("not found")
            && e.contains("data/meshes/nope.stl"),
        "{e}"
    );
    // the resolved path tried is given
    assert!(
        e.contains(&repo("tests/scenes/../data/meshes/nope.stl").display().to_string()),
        "{e}"
    );
    let e = error_of(&body("{type: convex_mesh, file: ../data/meshes/flat.obj}"), &scene_file);
    assert!(
        e.contains("bodies[1].shapes[0].file") && e.contains("4 non-coplanar") && e.contains("one plane"),
        "{e}"
    );
    let e = error_of(&body("{type: convex_mesh, file: mesh_shapes.yaml}"), &scene_file);
    assert!(e.contains("unsupported mesh format '.yaml'"), "{e}");
    // an unreadable STL: a text file that is neither ASCII nor binary STL
    let dir = temp_dir("badstl");
    std::fs::write(dir.join("junk.stl"), "this is not a mesh\n").unwrap();
    let e = error_of(&body("{type: convex_mesh, file: junk.stl}"), &dir.join("s.yaml"));
    assert!(
        e.contains("bodies[1].shapes[0].file") && e.contains("not a readable STL"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
    let e = error_of(
        &body("{type: convex_mesh, file: ../data/meshes/tetra.obj, vertices: [[0,0,0]]}"),
        &scene_file,
    );
    assert!(
        e.contains("bodies[1].shapes[0].vertices") && e.contains("either"),
        "{e}"
    );
    let e = error_of(&body("{type: trimesh, file: ../data/meshes/floor.obj}"), &scene_file);
    assert!(e.contains("static bodies only"), "{e}");
}

#[test]
fn a_saved_scene_keeps_the_mesh_file_not_its_vertices() {
    let scene = Scene::from_file(repo("tests/scenes/mesh_shapes.yaml")).unwrap();
    let v = scene.to_value();
    let sh = &v["bodies"][2]["shapes"][0];
    assert_eq!(sh["file"], "../data/meshes/cube_ascii.stl");
    assert_eq!(sh["scale"], serde_json::json!([0.4, 0.2, 0.1]));
    assert!(sh.get("vertices").is_none(), "{sh}");
    // beside the original: paths unchanged, the reload is the same scene
    let here = repo("tests/scenes/mesh_shapes.saved-test.json");
    scene.save(&here).unwrap();
    let mut back = Scene::from_file(&here).unwrap();
    std::fs::remove_file(&here).ok();
    back.source = scene.source.clone();
    assert_eq!(back, scene);
    // elsewhere: relative paths are rewritten to reach the same files
    let dir = temp_dir("savemesh");
    for ext in ["json", "yaml"] {
        let path = dir.join(format!("moved.{ext}"));
        scene.save(&path).unwrap();
        let back = Scene::from_file(&path).unwrap();
        for (a, b) in scene.bodies.iter().zip(&back.bodies) {
            match (
                &a.shapes.first().map(|s| &s.geometry),
                &b.shapes.first().map(|s| &s.geometry),
            ) {
                (
                    Some(Geometry::ConvexMesh {
                        vertices: va,
                        file: Some(fa),
                    }),
                    Some(Geometry::ConvexMesh {
                        vertices: vb,
                        file: Some(fb),
                    }),
                ) => {
                    assert_eq!(va, vb);
                    assert_eq!(fa.scale, fb.scale);
                    assert!(fb.path.ends_with(&fa.path[3..]), "{} vs {}", fa.path, fb.path);
                }
                (x, y) => assert_eq!(x, y),
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A robot of two links: `base` (a 0.2 x 0.2 x 0.1 m box collision) and, under it through a
/// fixed joint 0.1 m down, `skid` (the unit cube mesh scaled to 0.3 x 0.3 x 0.1 m, found
/// through `package://meshes/`).
const ROBOT: &str = r#"<?xml version="1.0"?>
<robot name="skidbox">
  <link name="base">
    <inertial><mass value="1.0"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision>
  </link>
  <link name="skid">
    <inertial><mass value="0.5"/><inertia ixx="0.004" iyy="0.004" izz="0.007" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision>
      <origin xyz="0 0 -0.1" rpy="0 0 0.3"/>
      <geometry><mesh filename="package://meshes/cube_binary.stl" scale="0.3 0.3 0.1"/></geometry>
    </collision>
  </link>
  <joint name="base_to_skid" type="fixed"><parent link="base"/><child link="skid"/></joint>
</robot>
"#;

fn robot_scene(dir: &Path, robot_opts: &str) -> String {
    std::fs::write(dir.join("skidbox.urdf"), ROBOT).unwrap();
    format!(
        r#"
name: urdf_collisions
world: {{gravity: [0, 0, -9.81], dt: 0.001}}
bodies:
  - name: ground
    shapes: [{{type: plane}}]
robots:
  - name: r
    urdf: skidbox.urdf
    root: floating
    pose: {{position: [0, 0, 0.3]}}
{robot_opts}
"#
    )
}

fn run_robot(dir: &Path, name: &str, robot_opts: &str) -> Result<f64, String> {
    let path = dir.join(name);
    std::fs::write(&path, robot_scene(dir, robot_opts)).unwrap();
    let scene = Scene::from_file(&path).map_err(|e| e.to_string())?;
    let mut w = World::new(scene).map_err(|e| e.to_string())?;
    w.run(0.8).unwrap();
    Ok(z_of(&w, "r/base"))
}

#[test]
fn urdf_collision_box_and_package_mesh_land_the_robot_at_the_right_height() {
    let dir = temp_dir("urdfcol");
    let pkg = repo("tests/data").canonicalize().unwrap();
    let pkg = pkg.display();
    // the mesh skid (bottom 0.15 m below the base origin) holds the robot: base at 0.15
    let z = run_robot(&dir, "a.yaml", &format!("    package_dirs: ['{pkg}']")).unwrap();
    assert!((z - 0.15).abs() < 2e-3, "base at {z}, expected 0.15 (on the mesh skid)");
    // primitives only: the base box (half height 0.05) holds it
    let z = run_robot(&dir, "b.yaml", "    collision: primitives").unwrap();
    assert!((z - 0.05).abs() < 2e-3, "base at {z}, expected 0.05 (on the box)");
    // no URDF collision: it falls through the floor
    let z = run_robot(&dir, "c.yaml", "    collision: none").unwrap();
    assert!(z < -1.0, "base at {z}: expected a free fall");
    // the mesh cannot be found: every path tried is listed
    let e = run_robot(&dir, "d.yaml", "    package_dirs: [no_such_dir]").unwrap_err();
    assert!(
        e.contains("d.yaml")
            && e.contains("robots[0].collision")
            && e.contains("link 'skid'")
            && e.contains("package://meshes/cube_binary.stl")
            && e.contains("no_such_dir/meshes/cube_binary.stl")
            && e.contains("package_dirs"),
        "{e}"
    );
    // a saved scene keeps the options
    let scene = Scene::from_file(dir.join("b.yaml")).unwrap();
    let v = scene.to_value();
    assert_eq!(v["robots"][0]["collision"], "primitives");
    std::fs::remove_dir_all(&dir).ok();
}

/// A URDF inside its ROS package (`tests/data/package_tree/demo_description/urdf/demo.urdf`)
/// finds its `package://demo_description/...` collision mesh through the URDF's ancestors,
/// with no `package_dirs` (before: refused, the mesh not found).
#[test]
fn a_urdf_inside_its_package_finds_its_collision_mesh_without_package_dirs() {
    let urdf = repo("tests/data/package_tree/demo_description/urdf/demo.urdf");
    let text = format!(
        "name: pkg\nworld: {{gravity: [0, 0, -9.81], dt: 0.001}}\nrobots:\n  - {{name: d, urdf: '{}', root: fixed}}\n",
        urdf.display()
    );
    let w = World::new(Scene::from_str(&text, "pkg.yaml").unwrap()).unwrap();
    assert!(!w.warnings().iter().any(|s| s.contains("not found")), "{:#?}", w.warnings());
}

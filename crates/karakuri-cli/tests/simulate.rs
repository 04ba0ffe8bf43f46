//! `karakuri simulate` through the library: the bundled demo, its CSV files, and a demo that
//! needs no file beside the binary.

use karakuri_sim::World;

#[test]
fn the_demo_robot_lands_on_its_feet_and_the_cli_writes_its_csv_files() {
    let dir = std::env::temp_dir().join(format!("karakuri-sim-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let args = karakuri_cli::simulate::SimulateArgs {
        scene: None,
        duration: Some(0.6),
        dt: None,
        out: Some(dir.join("traj.csv")),
        steps: Some(dir.join("steps.csv")),
    };
    let mut last = 0.0;
    let summary = karakuri_cli::simulate::simulate(&args, &mut |f| last = f).unwrap();
    assert_eq!((summary.steps, last), (600, 1.0));
    assert!(summary.contacts_final >= 4, "{summary}");
    let traj = std::fs::read_to_string(dir.join("traj.csv")).unwrap();
    assert!(traj.starts_with("step,t,body,px,py,pz,qx,qy,qz,qw,vx,vy,vz,wx,wy,wz\n"));
    let base: Vec<&str> = traj.lines().filter(|l| l.contains(",solo/base_link,")).collect();
    assert_eq!(base.len(), 601);
    let z: f64 = base[600].split(',').nth(5).unwrap().parse().unwrap();
    assert!(z > 0.15, "the robot collapsed: base at {z} m");
    let steps = std::fs::read_to_string(dir.join("steps.csv")).unwrap();
    assert_eq!(steps.lines().count(), 602);
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 13, item 6: the bundled demo names no file, so a copied binary runs it anywhere.
#[test]
fn the_bundled_demo_refers_to_no_file() {
    let scene = karakuri_cli::simulate::demo_scene().unwrap();
    assert!(scene.robots.iter().all(|r| karakuri_sim::scene::builtin_urdf(&r.urdf).is_some()));
    let mesh_file = |s: &karakuri_sim::scene::ShapeSpec| {
        matches!(
            s.geometry,
            karakuri_sim::scene::Geometry::ConvexMesh { file: Some(_), .. } | karakuri_sim::scene::Geometry::TriMesh { file: Some(_), .. }
        )
    };
    assert!(!scene.bodies.iter().flat_map(|b| &b.shapes).any(mesh_file));
    assert!(scene.robots.iter().all(|r| r.collision == karakuri_sim::scene::RobotCollision::None && r.package_dirs.is_empty()));
    World::new(scene).unwrap();
}


//! Issue 13, item 10 through the CLI: a run that diverges stops before writing the diverged
//! state and does not succeed, even when the divergence is in the last step.

/// A box in free fall with `max_speed` 3 m/s passes it in step 306 (Euler speed g n dt,
/// 3 / (9.81 · 0.001) = 305.8); the run is 306 steps long, so the divergence is in its last
/// step. The run fails naming step 306 and the box, and the trajectory holds steps 0 to 305,
/// every number finite and every speed under 3 m/s.
#[test]
fn nan_escaping_a_run_diverging_in_its_last_step_writes_no_bad_row_and_fails() {
    let dir = std::env::temp_dir().join(format!("karakuri-hardening-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("fall.yaml");
    std::fs::write(
        &scene,
        r#"
name: fall
world: {gravity: [0, 0, -9.81], dt: 0.001, duration: 0.306}
engine: {max_speed: 3.0}
bodies:
  - name: box
    joints: [{type: free, q0: {position: [0, 0, 100]}}]
    mass: 1.0
    inertia: [[0.006667, 0, 0], [0, 0.006667, 0], [0, 0, 0.006667]]
    shapes: [{type: box, half_extents: [0.1, 0.1, 0.1]}]
"#,
    )
    .unwrap();
    let args = karakuri_cli::simulate::SimulateArgs {
        scene: Some(scene),
        out: Some(dir.join("traj.csv")),
        steps: Some(dir.join("steps.csv")),
        ..Default::default()
    };
    let e = karakuri_cli::simulate::simulate(&args, &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("step 306") && e.contains("'box'"), "{e}");
    let traj = std::fs::read_to_string(dir.join("traj.csv")).unwrap();
    let rows: Vec<Vec<&str>> = traj.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 306, "steps 0..=305");
    assert_eq!(rows.last().unwrap()[0], "305");
    for r in &rows {
        let x: Vec<f64> = r.iter().enumerate().filter(|(i, _)| *i != 2).map(|(_, s)| s.parse().unwrap()).collect();
        assert!(x.iter().all(|v| v.is_finite()), "{r:?}");
        assert!(x[9].abs() < 3.0, "{r:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

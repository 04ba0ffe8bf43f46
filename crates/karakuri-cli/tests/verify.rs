//! `karakuri verify` on every bundled Pinocchio reference file.

use std::path::PathBuf;
use std::process::Command;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data")
}

fn verify(robot: &str, extra: &[&str]) -> (bool, String) {
    let dir = data_dir();
    let out = Command::new(env!("CARGO_BIN_EXE_karakuri"))
        .arg("verify")
        .arg(dir.join(format!("{robot}.urdf")))
        .arg(dir.join(format!("{robot}.json")))
        .args(extra)
        .output()
        .expect("runs karakuri");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}

#[test]
fn every_reference_robot_verifies() {
    for robot in ["ur5", "panda", "kinova_continuous", "solo12", "anymal", "talos_reduced"] {
        let (ok, text) = verify(robot, &[]);
        assert!(ok, "{robot}:\n{text}");
        assert!(text.contains("rnea") && text.contains(" ok"), "{robot}:\n{text}");
    }
}

#[test]
fn unknown_only_key_is_an_error() {
    let (ok, text) = verify("ur5", &["--only", "rnea,bogus"]);
    assert!(!ok);
    assert!(text.contains("unknown key 'bogus'"), "{text}");
}

#[test]
fn a_wrong_model_is_reported_not_panicking() {
    let dir = data_dir();
    let out = Command::new(env!("CARGO_BIN_EXE_karakuri"))
        .arg("verify")
        .arg(dir.join("ur5.urdf"))
        .arg(dir.join("panda.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nv"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn inspect_prints_the_tree() {
    let out = Command::new(env!("CARGO_BIN_EXE_karakuri"))
        .arg("inspect")
        .arg(data_dir().join("solo12.urdf"))
        .arg("--floating")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("nq = 19, nv = 18"), "{text}");
    assert!(text.contains("root_joint") && text.contains("free_flyer"), "{text}");
}

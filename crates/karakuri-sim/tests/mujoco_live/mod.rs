//! MuJoCo run live from a test: `python3 -c SCRIPT` with `import mujoco` (4.0.0; `.ci/run` puts
//! a venv that has it first on the PATH). What the script prints is returned; when MuJoCo is
//! not at hand the test is skipped with a note, except under CI (`CI=true`), where that fails:
//! a comparison with the peer must not pass by not running.

use std::process::Command;

/// The script's stdout, or `None` (with a note) when python3 or `import mujoco` fails outside CI.
pub fn run(script: &str) -> Option<Vec<u8>> {
    let out = Command::new("python3").args(["-c", script]).output();
    let why = match &out {
        Ok(o) if o.status.success() => return Some(o.stdout.clone()),
        Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
        Err(e) => e.to_string(),
    };
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "MuJoCo not at hand under CI (python3 -c \"import mujoco\"): {why}"
    );
    eprintln!("skipped: MuJoCo not at hand (python3 -c \"import mujoco\"): {why}");
    None
}

//! What a new user meets in the first hour (issue 13, "first hour" and "bad input"): each test
//! is named after the item it pins.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo(rel: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(rel)
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("karakuri-cli-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn karakuri(args: &[&str], cwd: Option<&Path>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_karakuri"));
    c.args(args);
    if let Some(d) = cwd {
        c.current_dir(d);
    }
    c.output().expect("runs karakuri")
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// A URDF with one link and no joint.
fn one_link_urdf(dir: &Path) -> PathBuf {
    let p = dir.join("one.urdf");
    std::fs::write(&p, r#"<robot name="one"><link name="base"/></robot>"#).unwrap();
    p
}

fn version(v: &str) -> Vec<u64> {
    v.split('.').map(|x| x.parse().unwrap_or(0)).collect()
}

/// Item 3: the declared `rust-version` is at least every locked dependency's, read from the
/// manifests in cargo's registry cache (dependencies not found there are skipped; the test needs
/// at least one found, so it cannot pass vacuously after a build).
#[test]
fn rust_version_covers_every_locked_dependency() {
    let manifest = std::fs::read_to_string(repo("Cargo.toml")).unwrap();
    let declared = manifest
        .lines()
        .find_map(|l| l.trim().strip_prefix("rust-version = "))
        .map(|v| v.trim_matches('"').to_string())
        .expect("[workspace.package] rust-version");
    let lock = std::fs::read_to_string(repo("Cargo.lock")).unwrap();
    let cargo_home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(std::env::var("HOME").unwrap()).join(".cargo"));
    let registries: Vec<PathBuf> = std::fs::read_dir(cargo_home.join("registry/src"))
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    let (mut found, mut too_new) = (0, vec![]);
    let mut name = "";
    for line in lock.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = n.trim_matches('"');
        } else if let Some(v) = line.strip_prefix("version = ") {
            let dir = format!("{name}-{}", v.trim_matches('"'));
            let Some(toml) = registries.iter().map(|r| r.join(&dir).join("Cargo.toml")).find(|p| p.is_file()) else {
                continue;
            };
            found += 1;
            let text = std::fs::read_to_string(toml).unwrap();
            if let Some(rv) = text.lines().find_map(|l| l.trim().strip_prefix("rust-version = ")) {
                let rv = rv.trim_matches('"');
                if version(rv) > version(&declared) {
                    too_new.push(format!("{dir} needs {rv}"));
                }
            }
        }
    }
    if registries.is_empty() {
        eprintln!("no cargo registry cache at {}: nothing to compare", cargo_home.display());
        return;
    }
    assert!(found > 10, "only {found} locked packages found in the registry cache");
    assert!(too_new.is_empty(), "rust-version {declared} is below: {}", too_new.join(", "));
}

/// Item 4: the README's library example is compiled by `cargo test --doc` (a doctest of this
/// crate) and is written as a program that compiles: a `main` returning `Result`, `nalgebra`
/// named with its version.
#[test]
fn readme_library_example_is_a_compiled_doctest() {
    let lib = std::fs::read_to_string(repo("crates/karakuri-cli/src/lib.rs")).unwrap();
    assert!(lib.contains("include_str!(\"../../../README.md\")") && lib.contains("cfg(doctest)"));
    let readme = std::fs::read_to_string(repo("README.md")).unwrap();
    let example = readme.split("```rust").nth(1).expect("a Rust block").split("```").next().unwrap();
    assert!(example.contains("fn main() -> Result<"), "{example}");
    assert!(readme.contains("nalgebra = \"0.35\""));
}

/// Item 5: the binary is not documented, so `target/doc/karakuri/` is the library's page (the
/// binary and the library share the name `karakuri`).
#[test]
fn cargo_doc_shows_the_library_not_the_binary() {
    let toml = std::fs::read_to_string(repo("crates/karakuri-cli/Cargo.toml")).unwrap();
    let bin = toml.split("[[bin]]").nth(1).expect("a [[bin]] section");
    let bin = bin.split("\n[").next().unwrap();
    assert!(bin.contains("name = \"karakuri\"") && bin.contains("doc = false"), "{bin}");
}

/// Item 6: the demo runs from a copy of the binary in a directory with nothing else in it, and
/// (issue 31) without a warning about its own assets: its page draws Solo-12's real meshes.
#[test]
fn a_copied_binary_runs_the_bundled_demo() {
    let dir = temp_dir("copied");
    let exe = dir.join("karakuri");
    std::fs::copy(env!("CARGO_BIN_EXE_karakuri"), &exe).unwrap();
    let out = Command::new(&exe)
        .args(["simulate", "--duration", "0.01", "--html", "demo.html"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    let page = std::fs::read_to_string(dir.join("demo.html")).unwrap_or_default();
    std::fs::remove_dir_all(&dir).ok();
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("demo_solo12") && stdout.contains("10 ("), "{stdout}");
    assert!(!stderr.contains("warning"), "{stderr}");
    assert!(!page.contains("not found"), "the page notes missing meshes");
}

/// Item 7: a URDF's warnings reach the user (ANYmal's base inertia).
#[test]
fn urdf_warnings_are_printed() {
    let out = karakuri(&["inspect", repo("tests/data/anymal.urdf").to_str().unwrap(), "--floating"], None);
    let (_, stderr) = text(&out);
    assert!(out.status.success());
    assert!(stderr.contains("warning:") && stderr.contains("triangle inequality"), "{stderr}");
}

/// Item 7: a simulated robot's URDF warnings are printed too (the scene's robot is ANYmal).
#[test]
fn urdf_warnings_of_a_scene_robot_are_printed() {
    let dir = temp_dir("robotwarn");
    let scene = dir.join("anymal.yaml");
    let urdf = repo("tests/data/anymal.urdf");
    std::fs::write(
        &scene,
        format!(
            "name: w\nbodies: [{{name: floor, shapes: [{{type: plane}}]}}]\nrobots:\n  - {{name: a, urdf: '{}', collision: none, pose: {{position: [0, 0, 0.6]}}}}\n",
            urdf.display()
        ),
    )
    .unwrap();
    let out = karakuri(&["simulate", scene.to_str().unwrap(), "--duration", "0.002"], None);
    let (stdout, stderr) = text(&out);
    std::fs::remove_dir_all(&dir).ok();
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stderr.contains("warning: robots[0]") && stderr.contains("triangle inequality"), "{stderr}");
}

/// Item 7: `inspect` on a model without bodies prints a total mass of 0, not -0.
#[test]
fn inspect_total_mass_of_a_one_link_model_is_not_negative_zero() {
    let dir = temp_dir("onelink");
    let out = karakuri(&["inspect", one_link_urdf(&dir).to_str().unwrap()], None);
    std::fs::remove_dir_all(&dir).ok();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("total mass = 0.000000 kg"), "{stdout}");
}

/// Item 7: the run summary names the energy lost in impacts and friction as dissipation.
#[test]
fn summary_calls_dissipation_by_its_name() {
    let out = karakuri(&["simulate", repo("tests/scenes/02_bounce.json").to_str().unwrap(), "--duration", "1"], None);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let line = stdout.lines().find(|l| l.starts_with("energy")).expect("an energy line");
    assert!(line.contains("dissipated") && !line.contains("drift"), "{line}");
}

/// Item 7: a duration that rounds to no step is an error, not an empty run.
#[test]
fn a_duration_shorter_than_half_a_step_is_an_error() {
    let out = karakuri(&["simulate", repo("tests/scenes/02_bounce.json").to_str().unwrap(), "--duration", "0.0004"], None);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("shorter than half a time step"), "{stderr}");
}

/// Item 7: a file that is not a scene is named by its format, not called bad JSON (an `.xml`
/// is read as MJCF: a URDF in it says so).
#[test]
fn simulate_model_xml_names_the_format() {
    let dir = temp_dir("xml");
    let model = dir.join("model.xml");
    std::fs::write(&model, "<robot name='r'/>").unwrap();
    let out = karakuri(&["simulate", model.to_str().unwrap()], None);
    let urdf = dir.join("model.urdf");
    std::fs::write(&urdf, "<robot name='r'/>").unwrap();
    let out_urdf = karakuri(&["simulate", urdf.to_str().unwrap()], None);
    std::fs::remove_dir_all(&dir).ok();
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("MJCF") && stderr.contains(".json, .yaml or .yml") && !stderr.contains("JSON"), "{stderr}");
    let (_, stderr) = text(&out_urdf);
    assert!(!out_urdf.status.success());
    assert!(stderr.contains("'.urdf'") && stderr.contains(".json, .yaml or .yml") && !stderr.contains("JSON"), "{stderr}");
}

/// Issue 28 item 2: a lone MJCF file is a scene of that one robot (its timestep, 2 s).
#[test]
fn simulate_an_mjcf_file() {
    let out = karakuri(&["simulate", repo("tests/data/mjcf/gymnasium/hopper.xml").to_str().unwrap()], None);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
}

/// `--keyframe NAME` starts an MJCF model from that `<key>`; a name the file lacks is an
/// error listing its keyframes (mujoco-mjx's humanoid has stand_on_left_leg, squat, ...).
#[test]
fn simulate_an_mjcf_file_from_a_named_keyframe() {
    let model = repo("tests/data/mjcf/mujoco_mjx/humanoid.xml");
    let model = model.to_str().unwrap();
    let out = karakuri(&["simulate", model, "--keyframe", "squat", "--duration", "0.05"], None);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let out = karakuri(&["simulate", model, "--keyframe", "nope", "--duration", "0.05"], None);
    let (_, stderr) = text(&out);
    assert!(!out.status.success() && stderr.contains("robots[0].keyframe") && stderr.contains("squat"), "{stderr}");
}

/// `karakuri inspect` and `karakuri view` read an MJCF file as they read a URDF: the tree with
/// MuJoCo's sizes (gymnasium's ant: nq 15, nv 14, a free root and 8 hinges), a page with its
/// geoms; `--floating` is refused (an MJCF model says its free joints itself).
#[test]
fn inspect_and_view_an_mjcf_file() {
    let ant = repo("tests/data/mjcf/gymnasium/ant.xml");
    let ant = ant.to_str().unwrap();
    let out = karakuri(&["inspect", ant], None);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("nq = 15, nv = 14, joints = 9") && stdout.contains("free_flyer"), "{stdout}");
    let out = karakuri(&["inspect", ant, "--floating"], None);
    assert!(!out.status.success() && text(&out).1.contains("--floating"), "{:?}", text(&out));
    let dir = temp_dir("viewmjcf");
    let page = dir.join("ant.html");
    let out = karakuri(&["view", ant, "--html", page.to_str().unwrap()], None);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let bytes = std::fs::metadata(&page).unwrap().len();
    std::fs::remove_dir_all(&dir).ok();
    assert!(bytes > 10_000, "{bytes} bytes");
}

/// Item 8: `karakuri bench` on a model without joints times what applies and does not panic.
#[test]
fn bench_on_a_one_link_model_does_not_panic() {
    let dir = temp_dir("benchone");
    let out = karakuri(
        &["bench", one_link_urdf(&dir).to_str().unwrap(), "--time", "0.001", "--only", "rnea,hybrid,hybrid_crba"],
        None,
    );
    std::fs::remove_dir_all(&dir).ok();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("rnea") && !stdout.contains("hybrid_crba"), "{stdout}");
}

/// Item 9: a step count beyond any run (subnormal dt, duration 1e308) is refused at once.
#[test]
fn a_subnormal_dt_or_a_huge_duration_is_refused() {
    let bounce = repo("tests/scenes/02_bounce.json");
    let bounce = bounce.to_str().unwrap();
    for (args, expect) in [
        (vec!["--duration", "1e308"], "more than the 1e9"),
        (vec!["--dt", "5e-324"], "--dt must be"),
        (vec!["--dt", "1e-8", "--duration", "100"], "more than the 1e9"),
    ] {
        let mut all = vec!["simulate", bounce];
        all.extend(&args);
        let out = karakuri(&all, None);
        let (_, stderr) = text(&out);
        assert!(!out.status.success() && stderr.contains(expect), "{args:?}: {stderr}");
    }
}

//! Reading and writing scene files: a file's text is parsed (JSON or YAML), read into the
//! typed [`Scene`] (serde, errors located inside the file), checked ([`super::validate`]), and
//! its mesh files and tables are read ([`super::geometry`], `load_scene_tables`); writing
//! serialises the same types, paths rebased to the new file's directory.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::table::TableFile;
use super::{builtin_urdf, geometry, scene_error, short, validate};
use super::{ActuatorSpec, ControllerSpec, Geometry, JointSpec, Scene, ShapeSpec, Target, TOP_KEYS};
use crate::SimError;

impl Scene {
    /// Reads a scene from a `.json`, `.yaml` or `.yml` file, or makes one of an MJCF `.xml` /
    /// `.mjcf` file alone ([`Scene::from_mjcf`]) or of a Choreonoid `.body` file alone (on a
    /// floor); any other extension is an error naming it.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Scene, SimError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        if matches!(ext.as_str(), "xml" | "mjcf") {
            return Scene::from_mjcf(path);
        }
        if ext == "body" {
            return super::body_geometry::scene_of_body(path);
        }
        if !matches!(ext.as_str(), "json" | "yaml" | "yml") {
            let hint = match ext.as_str() {
                "urdf" | "xacro" | "sdf" => {
                    " (a robot model is not a scene: name it in a scene's robots[].urdf; SDF is not read)"
                }
                _ => "",
            };
            let ext = if ext.is_empty() { "no extension".to_string() } else { format!(".{ext}") };
            return Err(scene_error(&file, "", format!("unknown scene format '{ext}': scene files are .json, .yaml or .yml{hint}")));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| scene_error(&file, "", format!("cannot read the scene file: {e}")))?;
        let mut scene = Scene::from_str(&text, &file)?;
        scene.source = Some(path.to_path_buf());
        Ok(scene)
    }

    /// A scene of one MJCF file alone: the model as robot `name` (the file's stem), the file's
    /// `<option>` timestep and gravity, a 2 s run. Its own plane geoms are the floor.
    pub fn from_mjcf(path: impl AsRef<std::path::Path>) -> Result<Scene, SimError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let world = karakuri::io::mjcf::load_world_with(path, &crate::mesh::MeshFiles).map_err(|e| scene_error(&file, "", format!("cannot load it as an MJCF model ({e}); scene files are .json, .yaml or .yml")))?;
        let name = path.file_stem().map_or("robot".into(), |s| s.to_string_lossy().into_owned());
        let (o, g) = (&world.option, world.option.gravity);
        let mjcf = path.file_name().map_or(file.clone(), |s| s.to_string_lossy().into_owned());
        let value = serde_json::json!({
            "name": name,
            "world": { "gravity": [g.x, g.y, g.z], "dt": o.timestep, "duration": 2.0 },
            "robots": [{ "name": name, "mjcf": mjcf }],
        });
        let mut scene = Scene::from_value(&value, &file)?;
        scene.source = Some(path.to_path_buf());
        // MuJoCo's Euler, implicit and implicitfast are semi-implicit Euler (implicit in the
        // dampers, springs and servos); its RK4 is `auto`: RK4 where the world is smooth, semi-implicit
        // Euler where it has contacts, limits, actuators, springs or dampers (the load warning says so)
        scene.engine.integrator = match o.integrator {
            karakuri::io::mjcf::Integrator::Rk4 => super::Integrator::Auto,
            _ => super::Integrator::SemiImplicitEuler,
        };
        Ok(scene)
    }

    /// Parses a scene; `file` names it in errors, relative paths in it (mesh files, URDF files)
    /// are resolved against its directory, and its extension (`.yaml`/`.yml`) selects YAML,
    /// anything else JSON.
    #[allow(clippy::should_implement_trait)] // the file name is a second argument
    pub fn from_str(text: &str, file: &str) -> Result<Scene, SimError> {
        let lower = file.to_ascii_lowercase();
        let value: Value = if lower.ends_with(".yaml") || lower.ends_with(".yml") {
            serde_saphyr::from_str(text).map_err(|e| scene_error(file, "", format!("not valid YAML: {e}")))?
        } else {
            serde_json::from_str(text).map_err(|e| scene_error(file, "", format!("not valid JSON: {e}")))?
        };
        Scene::from_value(&value, file)
    }

    /// Builds a scene from a value tree (as read from JSON or YAML): the types, the checks and
    /// the scene's mesh files; `file` as in [`Scene::from_str`].
    pub fn from_value(value: &Value, file: &str) -> Result<Scene, SimError> {
        let Value::Object(top) = value else {
            return Err(scene_error(file, "", format!("expected a mapping, found {}", short(value))));
        };
        let (known, extra): (Map<String, Value>, Map<String, Value>) =
            top.clone().into_iter().partition(|(k, _)| TOP_KEYS.contains(&k.as_str()));
        let known = Value::Object(known);
        let mut scene: Scene = serde_path_to_error::deserialize(&known).map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." { String::new() } else { path };
            located(file, path, e.inner().to_string())
        })?;
        scene.extra = extra;
        scene.source = Some(PathBuf::from(file));
        validate::validate(&mut scene, file)?;
        geometry::load_scene_meshes(&mut scene, file)?;
        load_scene_tables(&mut scene, file)?;
        Ok(scene)
    }

    /// Writes every parameter (defaults included) as a value tree, the kept top-level keys
    /// after the scene's own.
    pub fn to_value(&self) -> Value {
        let mut v = serde_json::to_value(self).expect("a scene's numbers are finite (checked at load)");
        if let Value::Object(m) = &mut v {
            m.extend(self.extra.iter().map(|(k, x)| (k.clone(), x.clone())));
        }
        v
    }

    /// Writes the scene to `path`, as YAML for `.yaml`/`.yml` and JSON otherwise. Relative
    /// file references (mesh files, URDF files, package directories) are rewritten relative to
    /// the new file's directory when it differs from the directory they were read against.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), SimError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let to_dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let v = self.rebased(&self.base_dir(), &to_dir).to_value();
        let lower = file.to_ascii_lowercase();
        let text = if lower.ends_with(".yaml") || lower.ends_with(".yml") {
            serde_saphyr::to_string(&v).map_err(|e| SimError::Output(format!("{file}: {e}")))?
        } else {
            serde_json::to_string_pretty(&v).map_err(|e| SimError::Output(format!("{file}: {e}")))?
        };
        std::fs::write(path, text).map_err(|e| SimError::Output(format!("{file}: {e}")))
    }

    /// The directory relative paths are resolved against.
    pub fn base_dir(&self) -> PathBuf {
        self.source
            .as_ref()
            .and_then(|p| p.parent())
            .filter(|d| !d.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."))
    }

    /// A copy whose relative file references, read against `from`, point to the same files
    /// from `to` (unchanged where either directory or the file cannot be resolved).
    fn rebased(&self, from: &Path, to: &Path) -> Scene {
        let mut s = self.clone();
        let (Ok(from_c), Ok(to_c)) = (from.canonicalize(), to.canonicalize()) else {
            return s;
        };
        if from_c == to_c {
            return s;
        }
        let fix = |p: &mut String| {
            if Path::new(p.as_str()).is_absolute() || p.contains("://") || builtin_urdf(p).is_some() {
                return;
            }
            if let Ok(target) = from_c.join(p.as_str()).canonicalize() {
                if let Some(r) = relative_path(&target, &to_c) {
                    *p = r.to_string_lossy().into_owned();
                }
            }
        };
        let fix_shape = |sh: &mut ShapeSpec| {
            if let Geometry::ConvexMesh { file: Some(f), .. } | Geometry::TriMesh { file: Some(f), .. } = &mut sh.geometry {
                fix(&mut f.path);
            }
        };
        for b in &mut s.bodies {
            b.shapes.iter_mut().for_each(fix_shape);
        }
        for b in &mut s.bodies {
            for j in &mut b.joints {
                if let JointSpec::Hinge { actuator: Some(ActuatorSpec { target: Target::Table { table }, .. }), .. } = j {
                    fix(&mut table.path);
                }
            }
        }
        for c in &mut s.controllers {
            if let ControllerSpec::Trajectory { table, .. } = c {
                fix(&mut table.path);
            }
        }
        for r in &mut s.robots {
            for a in &mut r.actuators {
                if let Target::Table { table } = &mut a.target {
                    fix(&mut table.path);
                }
            }
            if !r.urdf.is_empty() {
                fix(&mut r.urdf);
            }
            r.mjcf.iter_mut().for_each(fix);
            r.body.iter_mut().for_each(fix);
            r.package_dirs.iter_mut().for_each(fix);
            r.shapes.iter_mut().for_each(|(_, sh)| fix_shape(sh));
        }
        s
    }
}

/// A reading error at `path`: a reason that starts with a key in backticks (`` `radius`: ``,
/// from the layout conversions) moves that key into the path; serde's words for keys and kinds
/// become the format's (`unknown key (expected one of: ...)`, `unknown value`).
fn located(file: &str, mut path: String, reason: String) -> SimError {
    let mut reason = reason.replace("unknown field", "unknown key").replace("unknown variant", "unknown value");
    for (rust, words) in [("f64", "a number"), ("u64", "a non-negative integer"), ("usize", "a non-negative integer"), ("u32", "a non-negative integer")] {
        if let Some(head) = reason.strip_suffix(&format!("expected {rust}")) {
            reason = format!("{head}expected {words}");
        }
    }
    // a missing key: into the path, as the conversions' errors
    if let Some(key) = reason.strip_prefix("missing field `").and_then(|r| r.strip_suffix('`')) {
        reason = format!("`{key}`: missing");
    }
    if let Some(rest) = reason.strip_prefix('`') {
        if let Some((key, tail)) = rest.split_once("`: ") {
            if !key.contains(' ') {
                path = if path.is_empty() { key.to_string() } else { format!("{path}.{key}") };
                reason = tail.to_string();
            }
        }
    }
    // serde's path already ends with an unknown key: say what was expected instead of repeating it
    if reason.starts_with("unknown key `") {
        let expected = reason.split_once(", expected ").map_or("", |(_, e)| e);
        reason = format!("unknown key (expected {})", expected.replace('`', ""));
    }
    scene_error(file, &path, reason)
}

/// `target` relative to the directory `dir` (both absolute and canonical).
fn relative_path(target: &Path, dir: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let t: Vec<Component> = target.components().collect();
    let d: Vec<Component> = dir.components().collect();
    if t.first() != d.first() {
        return None; // another root or drive
    }
    let common = t.iter().zip(&d).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..d.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c.as_os_str());
    }
    Some(out)
}

/// Reads a table for the scene at `at` (its path inside the file, for the error): resolved
/// against the scene file's directory.
fn load_table(scene_file: &str, base: &Path, at: &str, t: &mut TableFile, columns: Option<usize>) -> Result<(), SimError> {
    let resolved = crate::mesh::resolve(base, &t.path);
    if !resolved.is_file() {
        let reason = format!("table file '{}' not found (tried '{}')", t.path, resolved.display());
        return Err(scene_error(scene_file, at, reason));
    }
    t.read(&resolved, columns).map_err(|e| scene_error(scene_file, at, e))
}

/// Reads every table the scene names: actuator targets `{table: FILE}` (one value column),
/// `trajectory` controllers' tables (one column per joint).
fn load_scene_tables(scene: &mut Scene, file: &str) -> Result<(), SimError> {
    let base = scene.base_dir();
    for (bi, b) in scene.bodies.iter_mut().enumerate() {
        for (k, j) in b.joints.iter_mut().enumerate() {
            if let JointSpec::Hinge { actuator: Some(a), .. } = j {
                if let Target::Table { table } = &mut a.target {
                    load_table(file, &base, &format!("bodies[{bi}].joints[{k}].actuator.target.table"), table, Some(1))?;
                }
            }
        }
    }
    for (ri, r) in scene.robots.iter_mut().enumerate() {
        for (ai, a) in r.actuators.iter_mut().enumerate() {
            if let Target::Table { table } = &mut a.target {
                load_table(file, &base, &format!("robots[{ri}].actuators[{ai}].target.table"), table, Some(1))?;
            }
        }
    }
    for (ci, c) in scene.controllers.iter_mut().enumerate() {
        if let ControllerSpec::Trajectory { table, joints, .. } = c {
            load_table(file, &base, &format!("controllers[{ci}].table"), table, Some(joints.len()))?;
        }
    }
    Ok(())
}

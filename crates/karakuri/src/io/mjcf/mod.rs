//! MJCF (MuJoCo's XML) loader for the dynamics: the kinematic tree, inertias, armature and
//! gravity of a MuJoCo model as a [`Model`], in MuJoCo's joint and dof order, checked against
//! MuJoCo 4.0.0's own mass matrices and bias forces (`docs/MJCF.md`).
//!
//! Three passes, as MuJoCo's compiler: [`xml`] reads the files (includes expanded), then
//! `<compiler>` and `<default>` classes are read ([`defaults`]) and `<worldbody>` is resolved
//! into bodies with their joints and inertias ([`bodies`], [`inertia`], frames by [`orient`]),
//! then [`build`] makes the model.
//!
//! * Joints and dofs come in MuJoCo's order (bodies depth first in document order, a body's
//!   joints in order); names as in the file; an unnamed body is `body<i>` (`i` its MuJoCo
//!   id), an unnamed joint `<body>_joint<k>` (`k` its rank in its body), an unnamed site
//!   `<body>_site<k>`.
//! * `hinge` → revolute (limited when `range` applies), `slide` → prismatic, `ball` →
//!   spherical, `free` and `<freejoint>` → free flyer. karakuri's q is MuJoCo's qpos but for
//!   quaternions (`[x y z w]` here, `[w x y z]` in MuJoCo), and v is MuJoCo's qvel but for a
//!   free joint's linear velocity (body axes here, world axes in MuJoCo): see
//!   [`from_mujoco_qpos`], [`from_mujoco_qvel`] and their inverses.
//! * Bodies without joints are merged into the body that carries them (a `Body` frame stays);
//!   sites become `Operational` frames.
//! * Simulation-only sections (actuator, sensor, contact, equality, tendon, keyframe, option
//!   but its gravity, visual, asset but mesh files' presence, …) are read past; unknown
//!   elements or attributes in the tree, and unsupported features (composite, flex, plugins,
//!   inertia of mesh geoms) are refused with file, line and element.
//!
//! ```
//! use karakuri::io::mjcf;
//! let xml = r#"<mujoco><worldbody><body name="rod">
//!   <joint name="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -1" size="0.05"/>
//! </body></worldbody></mujoco>"#;
//! let (model, _warnings) = mjcf::parse_str(xml, "pendulum.xml").unwrap();
//! assert_eq!((model.nq, model.nv), (1, 1));
//! ```

mod actuators;
mod bodies;
mod build;
mod constraints;
mod convert;
mod defaults;
mod geoms;
mod inertia;
mod options;
mod orient;
mod sensors;
mod types;
mod world;
mod xml;

use std::fmt;
use std::path::Path;

pub use convert::{from_mujoco_qpos, from_mujoco_qvel, to_mujoco_qpos, to_mujoco_qvel};
pub use types::{
    Actuator, ActuatorDynamics, ContactPair, Equality, EqualityKind, FixedTendon, Geom, GeomShape, Integrator, JointProps, Keyframe,
    MjcfWorld, Sensor, SensorKind, SimOption, Transmission,
};

use crate::model::Model;
use crate::spatial::Vec3;
use defaults::{Compiler, Defaults};
use xml::{numbers, Element};

/// An MJCF loading error: where it is and what is wrong.
///
/// Displayed as `"{file}:{line}: <{element}>: {reason}"` (parts left out when unknown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MjcfError {
    /// The file (or the source name given to [`parse_str`]).
    pub file: String,
    /// The 1-based line of the offending element, if known.
    pub line: Option<u32>,
    /// The tag of the offending element.
    pub element: String,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for MjcfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if !self.element.is_empty() {
            write!(f, ": <{}>", self.element)?;
        }
        write!(f, ": {}", self.reason)
    }
}

impl std::error::Error for MjcfError {}

/// Reads and loads an MJCF file (warnings dropped: see [`load_with_warnings`]).
pub fn load(path: impl AsRef<Path>) -> Result<Model, MjcfError> {
    load_with_warnings(path).map(|(m, _)| m)
}

/// Reads and loads an MJCF file; also returns warnings (dofs whose forward dynamics is
/// undefined: they move no mass and have no armature).
pub fn load_with_warnings(path: impl AsRef<Path>) -> Result<(Model, Vec<String>), MjcfError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| MjcfError {
        file: name.clone(),
        line: None,
        element: String::new(),
        reason: format!("cannot read the MJCF file: {e}"),
    })?;
    parse_str(&text, &name)
}

/// Loads MJCF text. `source_name` names it in errors; if it is a path, its directory is the
/// base of `<include>` and mesh paths.
pub fn parse_str(text: &str, source_name: &str) -> Result<(Model, Vec<String>), MjcfError> {
    let base_dir = Path::new(source_name).parent().filter(|d| !d.as_os_str().is_empty());
    let root = xml::read_tree(text, source_name, base_dir)?;
    let parsed = parse_tree(&root, base_dir)?;
    Ok((parsed.model, parsed.warnings))
}

/// Reads and loads an MJCF file with its simulation sections ([`MjcfWorld`]).
pub fn load_world(path: impl AsRef<Path>) -> Result<MjcfWorld, MjcfError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| MjcfError {
        file: name.clone(),
        line: None,
        element: String::new(),
        reason: format!("cannot read the MJCF file: {e}"),
    })?;
    parse_world_str(&text, &name)
}

/// [`load_world`] of MJCF text (`source_name` as in [`parse_str`]).
pub fn parse_world_str(text: &str, source_name: &str) -> Result<MjcfWorld, MjcfError> {
    let base_dir = Path::new(source_name).parent().filter(|d| !d.as_os_str().is_empty());
    let root = xml::read_tree(text, source_name, base_dir)?;
    let parsed = parse_tree(&root, base_dir)?;
    world::assemble(&root, parsed, base_dir)
}

/// The tree read and resolved: what [`parse_str`] returns and what [`world`] builds on.
struct Parsed {
    model: Model,
    warnings: Vec<String>,
    bodies: Vec<bodies::BodySpec>,
    compiler: Compiler,
    defaults: Defaults,
}

fn parse_tree(root: &Element, base_dir: Option<&Path>) -> Result<Parsed, MjcfError> {
    root.check_attrs(&["model"])?;
    let mut compiler = Compiler::default();
    let mut defaults = Defaults::default();
    let mut gravity = Vec3::new(0.0, 0.0, -9.81);
    let mut worldbodies = vec![];
    for e in root.children.iter().filter(|e| e.tag == "compiler") {
        compiler.apply(e)?;
    }
    for e in &root.children {
        match e.tag.as_str() {
            "compiler" => {}
            "option" => gravity = option_gravity(e, gravity)?,
            "default" => defaults.read(e)?,
            "asset" => check_meshes(e, &compiler, base_dir)?,
            "worldbody" => worldbodies.push(e),
            "size" | "visual" | "statistic" | "custom" | "contact" | "equality" | "tendon" | "actuator" | "sensor"
            | "keyframe" => {}
            "extension" | "deformable" => {
                return Err(e.error(format!("<{}> (plugins, flex) is not supported by this loader", e.tag)))
            }
            other => return Err(e.error(format!("unknown element <{other}> in <mujoco>"))),
        }
    }
    let mut bodies = bodies::resolve(&worldbodies, &defaults, &compiler)?;
    if let Some(total) = compiler.settotalmass {
        // mj_setTotalmass: every body's mass and inertia scaled alike
        let now: f64 = bodies.iter().skip(1).map(|b| b.inertia.mass).sum();
        let scale = (total / now.max(1e-15)).max(1e-15);
        for b in bodies.iter_mut().skip(1) {
            b.inertia.mass *= scale;
            b.inertia.inertia_com *= scale;
        }
    }
    let name = root.attr("model").unwrap_or("MuJoCo Model");
    let (model, massless) = build::build(name, &bodies, gravity)?;
    let warnings = massless
        .iter()
        .map(|&k| {
            let j = model.dof_joint[k];
            format!("joint '{}' moves no mass and has no armature: forward dynamics is undefined", model.joint_names[j])
        })
        .collect();
    Ok(Parsed { model, warnings, bodies, compiler, defaults })
}

/// `<option gravity>` and `<flag gravity="disable">`.
fn option_gravity(e: &Element, mut g: Vec3) -> Result<Vec3, MjcfError> {
    if let Some(t) = e.attr("gravity") {
        g = Vec3::from(numbers::<3>(e, "gravity", t)?);
    }
    for f in e.children.iter().filter(|f| f.tag == "flag") {
        if f.attr("gravity") == Some("disable") {
            g = Vec3::zeros();
        }
    }
    Ok(g)
}

/// Every `<mesh file>` must exist (under `meshdir`, relative to the model's directory).
fn check_meshes(asset: &Element, c: &Compiler, base_dir: Option<&Path>) -> Result<(), MjcfError> {
    for m in asset.children.iter().filter(|m| m.tag == "mesh") {
        let Some(file) = m.attr("file") else { continue };
        let file = if c.strippath { Path::new(file).file_name().map(Path::new).unwrap_or(Path::new(file)) } else { Path::new(file) };
        let mut path = base_dir.map(Path::to_path_buf).unwrap_or_default();
        if let Some(d) = &c.meshdir {
            path.push(d);
        }
        path.push(file);
        if !path.is_file() {
            return Err(m.error(format!("mesh file not found: {}", path.display())));
        }
    }
    Ok(())
}

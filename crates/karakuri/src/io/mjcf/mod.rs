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
//!   elements or attributes in the tree, and unsupported features (composite, flex, plugins)
//!   are refused with file, line and element.
//! * Mesh geoms weigh what MuJoCo's compiler finds ([`mesh_inertia`]) when their body has no
//!   `<inertial>`; their files are read through a [`MeshSource`] given to [`load_with`] /
//!   [`load_world_with`] (karakuri-sim's `mesh::MeshFiles`); [`load`] has none and names such
//!   a geom in its error.
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
mod error;
mod geoms;
pub mod hfield;
mod inertia;
pub mod mesh_inertia;
mod names;
mod options;
mod orient;
mod parse;
mod sensors;
mod types;
mod world;
mod xml;

use std::path::Path;

pub use error::MjcfError;
pub use hfield::HeightGrid;
pub use mesh_inertia::{MeshSource, MeshTriangles};
pub use convert::{from_mujoco_qpos, from_mujoco_qvel, to_mujoco_qpos, to_mujoco_qvel};
pub use types::{SpatialTendon, 
    Actuator, ActuatorDynamics, ContactPair, Equality, EqualityKind, FixedTendon, Geom, GeomShape, Integrator, JointProps, Keyframe,
    MjcfWorld, Sensor, SensorKind, SimOption, Transmission,
};

use crate::model::Model;


/// Reads and loads an MJCF file (warnings dropped: see [`load_with_warnings`]).
pub fn load(path: impl AsRef<Path>) -> Result<Model, MjcfError> {
    load_with_warnings(path).map(|(m, _)| m)
}

/// Reads and loads an MJCF file; also returns warnings (dofs whose forward dynamics is
/// undefined: they move no mass and have no armature).
pub fn load_with_warnings(path: impl AsRef<Path>) -> Result<(Model, Vec<String>), MjcfError> {
    let (text, name) = read(path.as_ref())?;
    parse_str(&text, &name)
}

/// [`load_with_warnings`] reading mesh files through `meshes` (mesh geoms' inertia).
pub fn load_with(path: impl AsRef<Path>, meshes: &dyn MeshSource) -> Result<(Model, Vec<String>), MjcfError> {
    let (text, name) = read(path.as_ref())?;
    parse_str_with(&text, &name, Some(meshes))
}

fn read(path: &Path) -> Result<(String, String), MjcfError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| MjcfError {
        file: name.clone(),
        line: None,
        element: String::new(),
        reason: format!("cannot read the MJCF file: {e}"),
    })?;
    Ok((text, name))
}

/// Loads MJCF text. `source_name` names it in errors; if it is a path, its directory is the
/// base of `<include>` and mesh paths.
pub fn parse_str(text: &str, source_name: &str) -> Result<(Model, Vec<String>), MjcfError> {
    parse_str_with(text, source_name, None)
}

/// [`parse_str`] with a mesh reader (`None`: a mesh geom's inertia is an error).
pub fn parse_str_with(text: &str, source_name: &str, meshes: Option<&dyn MeshSource>) -> Result<(Model, Vec<String>), MjcfError> {
    let base_dir = Path::new(source_name).parent().filter(|d| !d.as_os_str().is_empty());
    let root = xml::read_tree(text, source_name, base_dir)?;
    let parsed = parse::parse_tree(&root, base_dir, meshes)?;
    Ok((parsed.model, parsed.warnings))
}

/// Reads and loads an MJCF file with its simulation sections ([`MjcfWorld`]).
pub fn load_world(path: impl AsRef<Path>) -> Result<MjcfWorld, MjcfError> {
    let (text, name) = read(path.as_ref())?;
    parse_world_str(&text, &name)
}

/// [`load_world`] reading mesh files through `meshes` (mesh geoms' inertia) and height fields'
/// PNG images.
pub fn load_world_with(path: impl AsRef<Path>, meshes: &dyn MeshSource) -> Result<MjcfWorld, MjcfError> {
    let (text, name) = read(path.as_ref())?;
    parse_world_str_with(&text, &name, Some(meshes))
}

/// [`load_world`] of MJCF text (`source_name` as in [`parse_str`]).
pub fn parse_world_str(text: &str, source_name: &str) -> Result<MjcfWorld, MjcfError> {
    parse_world_str_with(text, source_name, None)
}

/// [`parse_world_str`] with a mesh reader.
pub fn parse_world_str_with(text: &str, source_name: &str, meshes: Option<&dyn MeshSource>) -> Result<MjcfWorld, MjcfError> {
    let base_dir = Path::new(source_name).parent().filter(|d| !d.as_os_str().is_empty());
    let root = xml::read_tree(text, source_name, base_dir)?;
    let parsed = parse::parse_tree(&root, base_dir, meshes)?;
    world::assemble(&root, parsed, base_dir, meshes)
}

//! Passes 1 to 3 for both entry points: the tree read (`<compiler>`, `<option>` gravity,
//! `<default>`, mesh files' presence, `<worldbody>`), the bodies resolved and the [`Model`]
//! built; [`Parsed`] keeps what the simulation sections ([`super::world`]) build on.

use std::path::Path;

use super::bodies::{self, BodySpec};
use super::build;
use super::defaults::{Compiler, Defaults};
use super::error::MjcfError;
use super::mesh_inertia::{MeshAssets, MeshSource};
use super::xml::{numbers, Element};
use crate::model::Model;
use crate::spatial::Vec3;

/// The tree read and resolved: what `parse_str` returns and what `world` builds on.
pub(super) struct Parsed {
    pub model: Model,
    pub warnings: Vec<String>,
    pub bodies: Vec<BodySpec>,
    pub compiler: Compiler,
    pub defaults: Defaults,
}

/// Reads `root` (includes expanded) into the model and the resolved bodies.
pub(super) fn parse_tree(root: &Element, base_dir: Option<&Path>, source: Option<&dyn MeshSource>) -> Result<Parsed, MjcfError> {
    root.check_attrs(&["model"])?;
    let mut compiler = Compiler::default();
    let mut defaults = Defaults::default();
    let mut gravity = Vec3::new(0.0, 0.0, -9.81);
    let mut worldbodies = vec![];
    let mut assets = vec![];
    for e in root.children.iter().filter(|e| e.tag == "compiler") {
        compiler.apply(e)?;
    }
    for e in &root.children {
        match e.tag.as_str() {
            "compiler" => {}
            "option" => gravity = option_gravity(e, gravity)?,
            "default" => defaults.read(e)?,
            "asset" => {
                check_meshes(e, &compiler, base_dir)?;
                assets.push(e);
            }
            "worldbody" => worldbodies.push(e),
            "size" | "visual" | "statistic" | "custom" | "contact" | "equality" | "tendon" | "actuator" | "sensor"
            | "keyframe" => {}
            "extension" | "deformable" => {
                return Err(e.error(format!("<{}> (plugins, flex) is not supported by this loader", e.tag)))
            }
            other => return Err(e.error(format!("unknown element <{other}> in <mujoco>"))),
        }
    }
    let meshes = MeshAssets::read(&assets, &defaults, &compiler, base_dir, source)?;
    let mut bodies = bodies::resolve(&worldbodies, &defaults, &compiler, &meshes)?;
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
        let path = c.asset_path(Path::new(file), base_dir);
        if !path.is_file() {
            return Err(m.error(format!("mesh file not found: {}", path.display())));
        }
    }
    Ok(())
}

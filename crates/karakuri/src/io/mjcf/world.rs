//! Pass 4 (simulation): the model's simulation sections as an [`MjcfWorld`] beside the
//! [`Model`](crate::model::Model): geoms and joints from the resolved bodies, assets' files,
//! then `<option>`, `<tendon>`, `<actuator>`, `<sensor>`, `<equality>`, `<contact>` and
//! `<keyframe>` ([`super::actuators`], [`super::sensors`], [`super::constraints`],
//! [`super::options`]), objects named in them looked up by name.

use std::collections::HashMap;
use std::path::Path;

use super::build::body_name;
use super::types::{GeomShape, MjcfWorld};
use super::defaults::{Compiler, Defaults};
use super::hfield;
use super::mesh_inertia::{MeshAssets, MeshSource};
use super::xml::{numbers, Element};
use super::error::MjcfError;
use super::names::Names;
use super::parse::Parsed;
use super::{actuators, constraints, options, sensors};

/// Builds the world from the parsed tree (`root` the whole file, includes expanded).
pub(super) fn assemble(root: &Element, parsed: Parsed, base_dir: Option<&Path>, source: Option<&dyn MeshSource>) -> Result<MjcfWorld, MjcfError> {
    let Parsed { model, mut warnings, bodies, compiler, defaults } = parsed;
    let mut geoms = vec![];
    let mut sites = vec![];
    let mut joints = vec![];
    let mut names = Names { bodies: vec![], joints: vec![], sites: vec![], geoms: vec![], tendons: vec![], actuators: vec![] };
    for (i, b) in bodies.iter().enumerate() {
        let bname = body_name(b, i);
        for (k, j) in b.joints.iter().enumerate() {
            let mut p = j.props.clone();
            p.name = j.name.clone().unwrap_or_else(|| format!("{bname}_joint{k}"));
            names.joints.push(p.name.clone());
            joints.push(p);
        }
        for (k, (s, x)) in b.sites.iter().enumerate() {
            let sname = s.clone().unwrap_or_else(|| format!("{bname}_site{k}"));
            names.sites.push(sname.clone());
            sites.push((sname, i, *x));
        }
        for g in &b.geoms {
            names.geoms.push(g.name.clone());
            geoms.push(super::types::Geom { body: i, ..g.clone() });
        }
        names.bodies.push(bname);
    }
    let assets = Assets::read(root, &compiler, &defaults, base_dir, source)?;
    for g in &mut geoms {
        assets.resolve(&mut g.shape, &g.at)?;
    }
    let mut world = MjcfWorld {
        option: options::option(root)?,
        model,
        warnings: vec![],
        body_names: names.bodies.clone(),
        geoms,
        sites,
        joints,
        tendons: vec![],
        spatial_tendons: vec![],
        actuators: vec![],
        sensors: vec![],
        equalities: vec![],
        contact_pairs: vec![],
        contact_excludes: vec![],
        keyframes: vec![],
        qpos0: vec![],
    };
    let sections = |tag: &'static str| root.children.iter().filter(move |e| e.tag == tag);
    for e in sections("tendon") {
        let (fixed, spatial) = actuators::tendons(e, &names, &defaults, &compiler, world.tendons.len() + world.spatial_tendons.len())?;
        world.tendons.extend(fixed);
        world.spatial_tendons.extend(spatial);
    }
    names.tendons = world.tendons.iter().map(|t| t.name.clone()).collect();
    for e in sections("actuator") {
        world.actuators.extend(actuators::actuators(e, &names, &defaults, &compiler, world.actuators.len())?);
    }
    names.actuators = world.actuators.iter().map(|a| a.name.clone()).collect();
    for e in sections("sensor") {
        world.sensors.extend(sensors::sensors(e, &names, &mut warnings)?);
    }
    for e in sections("equality") {
        world.equalities.extend(constraints::equalities(e, &names, &defaults)?);
    }
    for e in sections("contact") {
        constraints::contact(e, &names, &defaults, &mut world)?;
    }
    let (qpos0, quats) = options::qpos0(&bodies);
    for e in sections("keyframe") {
        let start = world.keyframes.len();
        world.keyframes.extend(options::keyframes(e, (&qpos0, &quats), world.model.nv, world.actuators.len(), start)?);
    }
    // <size nkey>: keys beyond those written are qpos0 at rest
    for e in sections("size") {
        let nkey = e.attr("nkey").map(|t| numbers::<1>(e, "nkey", t)).transpose()?.map_or(0.0, |v| v[0]);
        if nkey > 10_000.0 {
            return Err(e.error(format!("nkey {nkey}: more than 10000 keyframes")));
        }
        while (world.keyframes.len() as f64) < nkey {
            let (nv, nu) = (world.model.nv, world.actuators.len());
            let name = format!("key{}", world.keyframes.len());
            world.keyframes.push(super::types::Keyframe { name, time: 0.0, qpos: qpos0.clone(), qvel: vec![0.0; nv], ctrl: vec![0.0; nu] });
        }
    }
    world.qpos0 = qpos0;
    world.warnings = warnings;
    Ok(world)
}

/// `<asset>`: mesh files and scales (read by [`MeshAssets::read`], class defaults applied),
/// height fields' sizes and grids ([`hfield::read`]).
struct Assets {
    meshes: MeshAssets<'static>,
    hfields: HashMap<String, hfield::HfieldAsset>,
}

impl Assets {
    fn read(root: &Element, c: &Compiler, defaults: &Defaults, base_dir: Option<&Path>, source: Option<&dyn MeshSource>) -> Result<Self, MjcfError> {
        let assets: Vec<&Element> = root.children.iter().filter(|e| e.tag == "asset").collect();
        let meshes = MeshAssets::read(&assets, defaults, c, base_dir, None)?;
        let mut hfields = HashMap::new();
        for h in assets.iter().flat_map(|a| a.children.iter()).filter(|e| e.tag == "hfield") {
            // MuJoCo names an unnamed hfield after its file
            let name = h.attr("name").or(h.attr("file").and_then(|f| Path::new(f).file_stem()?.to_str())).unwrap_or_default();
            hfields.insert(name.to_string(), hfield::read(h, c, base_dir, source)?);
        }
        Ok(Assets { meshes, hfields })
    }

    /// Fills a mesh's file and scale, a height field's sizes and grid.
    fn resolve(&self, shape: &mut GeomShape, at: &str) -> Result<(), MjcfError> {
        let error = |reason: String| MjcfError { file: at.into(), line: None, element: "geom".into(), reason };
        let missing = |what: &str, name: &str| error(format!("no {what} asset named '{name}'"));
        match shape {
            GeomShape::Mesh { name, file, scale } => {
                let (f, s) = self.meshes.file(name).ok_or_else(|| missing("mesh", name))?;
                let f = f.ok_or_else(|| {
                    error(format!("mesh '{name}' is written inline (vertex lists), which is not supported for collisions: write it to an STL or OBJ file"))
                })?;
                (*file, *scale) = (f.to_path_buf(), s);
            }
            GeomShape::HeightField { name, extents, grid } => {
                let h = self.hfields.get(name.as_str()).ok_or_else(|| missing("hfield", name))?;
                (*extents, *grid) = (h.size, h.grid.clone());
            }
            _ => {}
        }
        Ok(())
    }
}

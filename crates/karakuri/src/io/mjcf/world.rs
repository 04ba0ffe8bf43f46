//! Pass 4 (simulation): the model's simulation sections as an [`MjcfWorld`] beside the
//! [`Model`](crate::model::Model): geoms and joints from the resolved bodies, assets' files,
//! then `<option>`, `<tendon>`, `<actuator>`, `<sensor>`, `<equality>`, `<contact>` and
//! `<keyframe>` ([`super::actuators`], [`super::sensors`], [`super::constraints`],
//! [`super::options`]), objects named in them looked up by name.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::build::body_name;
use super::types::{GeomShape, MjcfWorld};
use super::xml::{numbers, numbers_vec, Element};
use super::error::MjcfError;
use super::names::Names;
use super::parse::Parsed;
use super::{actuators, constraints, options, sensors};
use crate::spatial::Vec3;

/// Builds the world from the parsed tree (`root` the whole file, includes expanded).
pub(super) fn assemble(root: &Element, parsed: Parsed, base_dir: Option<&Path>) -> Result<MjcfWorld, MjcfError> {
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
    let assets = Assets::read(root, &compiler, &defaults, base_dir)?;
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

/// `<asset>`: mesh files and scales (class defaults applied), height fields' sizes.
struct Assets {
    meshes: HashMap<String, (PathBuf, Vec3)>,
    hfields: HashMap<String, ([f64; 4], bool)>,
}

impl Assets {
    fn read(root: &Element, c: &super::defaults::Compiler, defaults: &super::defaults::Defaults, base_dir: Option<&Path>) -> Result<Self, MjcfError> {
        let mut out = Assets { meshes: HashMap::new(), hfields: HashMap::new() };
        for m in root.children.iter().filter(|e| e.tag == "asset").flat_map(|a| a.children.iter()) {
            match m.tag.as_str() {
                "mesh" => {
                    let Some(file) = m.attr("file") else {
                        return Err(m.error("a mesh without a 'file' (vertex lists) is not supported for collisions: write it to an STL or OBJ file"));
                    };
                    let file = if c.strippath { Path::new(file).file_name().map(Path::new).unwrap_or(Path::new(file)) } else { Path::new(file) };
                    let mut path = base_dir.map(Path::to_path_buf).unwrap_or_default();
                    if let Some(d) = &c.meshdir {
                        path.push(d);
                    }
                    path.push(file);
                    let name = m.attr("name").map(str::to_string).unwrap_or_else(|| {
                        file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
                    });
                    // a mesh's scale may come from its class (`<default><mesh scale>`), as MuJoCo
                    let r = super::defaults::Resolved::new(m, "main", defaults)?;
                    let scale = match r.get("scale") {
                        Some(t) => Vec3::from(numbers::<3>(m, "scale", t)?),
                        None => Vec3::repeat(1.0),
                    };
                    out.meshes.insert(name, (path, scale));
                }
                "hfield" => {
                    let name = m.attr("name").map(str::to_string).unwrap_or_default();
                    let size = numbers::<4>(m, "size", m.attr("size").unwrap_or(""))?;
                    let data = m.attr("elevation").map(|t| numbers_vec(m, "elevation", t)).transpose()?;
                    let flat = m.attr("file").is_none() && data.is_none_or(|d| d.iter().all(|x| *x == 0.0));
                    out.hfields.insert(name, (size, flat));
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// Fills a mesh's file and scale, a height field's sizes.
    fn resolve(&self, shape: &mut GeomShape, at: &str) -> Result<(), MjcfError> {
        let missing = |what: &str, name: &str| MjcfError {
            file: at.into(),
            line: None,
            element: "geom".into(),
            reason: format!("no {what} asset named '{name}'"),
        };
        match shape {
            GeomShape::Mesh { name, file, scale } => {
                let (f, s) = self.meshes.get(name.as_str()).ok_or_else(|| missing("mesh", name))?;
                (*file, *scale) = (f.clone(), *s);
            }
            GeomShape::HeightField { name, extents, flat } => {
                let (e, f) = self.hfields.get(name.as_str()).ok_or_else(|| missing("hfield", name))?;
                (*extents, *flat) = (*e, *f);
            }
            _ => {}
        }
        Ok(())
    }
}

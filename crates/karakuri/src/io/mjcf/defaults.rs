//! Pass 2a: the `<compiler>` settings and the `<default>` classes (MuJoCo's defaults
//! mechanism): an attribute not written on a `<joint>`, `<geom>` or `<site>` is taken from its
//! class, else that class's parent, up to `main`; the class is the element's `class`, else the
//! nearest enclosing `childclass`, else `main`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::xml::{numbers, Element};
use super::MjcfError;

/// The attributes MuJoCo accepts on the elements of the kinematic tree (and in their defaults).
pub(super) const JOINT_ATTRS: &[&str] = &[
    "name", "class", "type", "group", "pos", "axis", "springdamper", "limited", "actuatorfrclimited", "solreflimit",
    "solimplimit", "solreffriction", "solimpfriction", "stiffness", "range", "actuatorfrcrange", "actuatorgravcomp",
    "margin", "ref", "springref", "armature", "damping", "frictionloss", "user",
];
/// See [`JOINT_ATTRS`].
pub(super) const GEOM_ATTRS: &[&str] = &[
    "name", "class", "type", "contype", "conaffinity", "condim", "group", "priority", "size", "material", "friction",
    "mass", "density", "shellinertia", "solmix", "solref", "solimp", "margin", "gap", "surfacevel", "adhesion", "fromto", "pos", "quat",
    "axisangle", "xyaxes", "zaxis", "euler", "hfield", "mesh", "fitscale", "rgba", "fluidshape", "fluidcoef", "user",
];
/// See [`JOINT_ATTRS`].
pub(super) const SITE_ATTRS: &[&str] = &[
    "name", "class", "type", "group", "pos", "quat", "axisangle", "xyaxes", "zaxis", "euler", "size", "fromto",
    "material", "rgba", "user",
];

/// How body inertias are found (`compiler/@inertiafromgeom`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum InertiaFromGeom {
    /// From the geoms when the body has no `<inertial>` (MuJoCo's default).
    Auto,
    /// Always from the geoms.
    True,
    /// Never (bodies without `<inertial>` are massless).
    False,
}

/// The `<compiler>` settings that shape the model.
#[derive(Clone, Debug)]
pub(super) struct Compiler {
    /// Angles in degrees (MuJoCo's default) rather than radians.
    pub degree: bool,
    pub eulerseq: [u8; 3],
    pub autolimits: bool,
    pub inertia_from_geom: InertiaFromGeom,
    pub group_range: (i64, i64),
    pub boundmass: f64,
    pub boundinertia: f64,
    pub settotalmass: Option<f64>,
    pub meshdir: Option<PathBuf>,
    pub strippath: bool,
}

impl Default for Compiler {
    fn default() -> Self {
        Compiler {
            degree: true,
            eulerseq: *b"xyz",
            autolimits: true,
            inertia_from_geom: InertiaFromGeom::Auto,
            group_range: (0, 5),
            boundmass: 0.0,
            boundinertia: 0.0,
            settotalmass: None,
            meshdir: None,
            strippath: false,
        }
    }
}

impl Compiler {
    /// An asset file's path, as MuJoCo finds mesh and height-field files: its name alone under
    /// `strippath`, under `meshdir` (or `assetdir`), relative to the model's directory.
    pub fn asset_path(&self, file: &Path, base_dir: Option<&Path>) -> PathBuf {
        let file = if self.strippath { file.file_name().map(Path::new).unwrap_or(file) } else { file };
        let mut path = base_dir.map(Path::to_path_buf).unwrap_or_default();
        if let Some(d) = &self.meshdir {
            path.push(d);
        }
        path.push(file);
        path
    }
}

const COMPILER_ATTRS: &[&str] = &[
    "angle", "eulerseq", "meshdir", "texturedir", "assetdir", "autolimits", "inertiafromgeom", "inertiagrouprange",
    "boundmass", "boundinertia", "settotalmass", "balanceinertia", "coordinate", "discardvisual", "convexhull",
    "usethread", "fusestatic", "strippath", "fitaabb", "alignfree", "saveinertial", "exactmeshinertia", "conflict",
];

fn boolean(e: &Element, name: &str, v: &str) -> Result<bool, MjcfError> {
    match v {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(e.error(format!("attribute '{name}' must be 'true' or 'false', not '{v}'"))),
    }
}

impl Compiler {
    /// Applies one `<compiler>` element (several are applied in order).
    pub fn apply(&mut self, e: &Element) -> Result<(), MjcfError> {
        e.check_attrs(COMPILER_ATTRS)?;
        for (k, v) in &e.attrs {
            match k.as_str() {
                "angle" => {
                    self.degree = match v.as_str() {
                        "degree" => true,
                        "radian" => false,
                        _ => return Err(e.error(format!("angle must be 'degree' or 'radian', not '{v}'"))),
                    }
                }
                "eulerseq" => {
                    let b = v.as_bytes();
                    if b.len() != 3 || !b.iter().all(|c| b"xyzXYZ".contains(c)) {
                        return Err(e.error(format!("eulerseq must be three of x, y, z, X, Y, Z, not '{v}'")));
                    }
                    self.eulerseq = [b[0], b[1], b[2]];
                }
                "meshdir" => self.meshdir = Some(PathBuf::from(v)),
                "assetdir" if self.meshdir.is_none() => self.meshdir = Some(PathBuf::from(v)),
                "autolimits" => self.autolimits = boolean(e, k, v)?,
                "strippath" => self.strippath = boolean(e, k, v)?,
                "inertiafromgeom" => {
                    self.inertia_from_geom = match v.as_str() {
                        "auto" => InertiaFromGeom::Auto,
                        "true" => InertiaFromGeom::True,
                        "false" => InertiaFromGeom::False,
                        _ => return Err(e.error(format!("inertiafromgeom must be auto, true or false, not '{v}'"))),
                    }
                }
                "inertiagrouprange" => {
                    let [a, b] = numbers::<2>(e, k, v)?;
                    self.group_range = (a as i64, b as i64);
                }
                "boundmass" => self.boundmass = numbers::<1>(e, k, v)?[0],
                "boundinertia" => self.boundinertia = numbers::<1>(e, k, v)?[0],
                "settotalmass" => {
                    let m = numbers::<1>(e, k, v)?[0];
                    self.settotalmass = (m > 0.0).then_some(m);
                }
                "coordinate" if v != "local" => {
                    return Err(e.error("coordinate=\"global\" was removed from MuJoCo and is not supported"))
                }
                "balanceinertia" | "alignfree" | "discardvisual" if boolean(e, k, v)? => {
                    return Err(e.error(format!("{k}=\"true\" is not supported (it changes the bodies' inertias or frames)")))
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// One default class: its parent and, per element kind, the attributes it sets.
#[derive(Clone, Debug, Default)]
struct Class {
    parent: Option<String>,
    by_tag: HashMap<String, Vec<(String, String)>>,
}

/// Every default class by name (`main` for the top-level `<default>`).
#[derive(Clone, Debug, Default)]
pub(super) struct Defaults {
    classes: HashMap<String, Class>,
}

impl Defaults {
    /// Reads a top-level `<default>` element and the classes nested in it.
    pub fn read(&mut self, e: &Element) -> Result<(), MjcfError> {
        self.read_class(e, None)
    }

    fn read_class(&mut self, e: &Element, parent: Option<&str>) -> Result<(), MjcfError> {
        e.check_attrs(&["class"])?;
        let name = match (e.attr("class"), parent) {
            (Some(c), _) => c.to_string(),
            (None, None) => "main".to_string(),
            (None, Some(_)) => return Err(e.error("a nested <default> needs a 'class' attribute")),
        };
        if parent.is_some() && self.classes.contains_key(&name) {
            return Err(e.error(format!("default class '{name}' is defined twice")));
        }
        let class = self.classes.entry(name.clone()).or_default();
        if class.parent.is_none() && name != "main" {
            class.parent = Some(parent.unwrap_or("main").to_string());
        }
        for c in &e.children {
            let known = match c.tag.as_str() {
                "default" => {
                    self.read_class(c, Some(&name))?;
                    continue;
                }
                "joint" => JOINT_ATTRS,
                "geom" => GEOM_ATTRS,
                "site" => SITE_ATTRS,
                // defaults of simulation-only elements: checked where they are used
                _ => &[],
            };
            if !known.is_empty() {
                c.check_attrs(known)?;
            }
            let set = self.classes.get_mut(&name).expect("inserted above").by_tag.entry(default_key(&c.tag).to_string()).or_default();
            for (k, v) in &c.attrs {
                set.retain(|(k2, _)| k2 != k);
                set.push((k.clone(), v.clone()));
            }
        }
        Ok(())
    }

    /// Whether a class of this name exists (`main` always does).
    pub fn has(&self, class: &str) -> bool {
        class == "main" || self.classes.contains_key(class)
    }

    /// The value of `attr` of a `tag` element of class `class` not written on the element.
    fn lookup<'s>(&'s self, mut class: &'s str, tag: &str, attr: &str) -> Option<&'s str> {
        for _ in 0..=self.classes.len() {
            let c = self.classes.get(class)?;
            if let Some((_, v)) = c.by_tag.get(tag).and_then(|a| a.iter().find(|(k, _)| k == attr)) {
                return Some(v);
            }
            class = c.parent.as_deref()?;
        }
        None
    }
}

/// The actuator shortcuts, which share one default per class in MuJoCo.
pub(super) const ACTUATOR_TAGS: &[&str] =
    &["general", "motor", "position", "velocity", "damper", "cylinder", "muscle", "adhesion", "intvelocity", "dcmotor"];

/// The key under which an element's defaults are kept: `actuator` for every actuator
/// shortcut (MuJoCo keeps one actuator default per class), else the tag.
pub(super) fn default_key(tag: &str) -> &str {
    if ACTUATOR_TAGS.contains(&tag) {
        "actuator"
    } else {
        tag
    }
}

/// An element of the tree with its default class resolved.
#[derive(Clone, Copy)]
pub(super) struct Resolved<'a> {
    pub e: &'a Element,
    class: &'a str,
    defaults: &'a Defaults,
}

impl<'a> Resolved<'a> {
    /// Resolves `e`'s class (its `class`, else `childclass`, the enclosing childclass).
    pub fn new(e: &'a Element, childclass: &'a str, defaults: &'a Defaults) -> Result<Self, MjcfError> {
        let class = e.attr("class").unwrap_or(childclass);
        if !defaults.has(class) {
            return Err(e.error(format!("undefined default class '{class}'")));
        }
        Ok(Resolved { e, class, defaults })
    }
    /// The attribute as written, else from the class.
    pub fn get(&self, attr: &str) -> Option<&'a str> {
        self.e.attr(attr).or_else(|| self.defaults.lookup(self.class, default_key(&self.e.tag), attr))
    }
    /// The values of `attr` from the element up its classes, nearest first (MuJoCo fills a
    /// vector attribute written with fewer numbers from what the class gives).
    pub fn chain(&self, attr: &str) -> Vec<&'a str> {
        let mut out: Vec<&'a str> = self.e.attr(attr).into_iter().collect();
        let key = default_key(&self.e.tag);
        let mut class = Some(self.class);
        for _ in 0..=self.defaults.classes.len() {
            let Some(c) = class.and_then(|k| self.defaults.classes.get(k)) else { break };
            if let Some((_, v)) = c.by_tag.get(key).and_then(|a| a.iter().find(|(k, _)| k == attr)) {
                out.push(v);
            }
            class = c.parent.as_deref();
        }
        out
    }
    /// A vector attribute of at most `N` numbers over `init`: the class values first (farthest
    /// first), each overwriting the leading entries it writes.
    pub fn filled<const N: usize>(&self, attr: &str, init: [f64; N]) -> Result<[f64; N], MjcfError> {
        let mut out = init;
        for text in self.chain(attr).into_iter().rev() {
            let v = super::xml::numbers_vec(self.e, attr, text)?;
            if v.len() > N {
                return Err(self.e.error(format!("attribute '{attr}' takes at most {N} numbers, found {}", v.len())));
            }
            out[..v.len()].copy_from_slice(&v);
        }
        Ok(out)
    }
    /// A number attribute, or `default`.
    pub fn num(&self, attr: &str, default: f64) -> Result<f64, MjcfError> {
        match self.get(attr) {
            Some(v) => Ok(numbers::<1>(self.e, attr, v)?[0]),
            None => Ok(default),
        }
    }
}

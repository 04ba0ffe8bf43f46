//! XML to a plain description of the robot: every attribute is checked and converted here, with
//! the line of each element kept for later (tree-level) errors. No tree semantics yet.

use std::collections::HashMap;

use roxmltree::{Document, Node};

use super::{Shape, UrdfError};
use crate::model::Mimic;
use crate::spatial::{Inertia, Mat3, Se3, Vec3};

type Result<T> = std::result::Result<T, UrdfError>;

/// The largest magnitude of a length (m), mass (kg) or inertia entry (kg m²): far beyond any
/// machine, and small enough that masses times squared distances summed over thousands of
/// links stay far from overflow.
const MAX_QUANTITY: f64 = 1e15;

/// The robot as written.
pub(super) struct UrdfRobot {
    pub name: String,
    pub line: u32,
    pub links: Vec<UrdfLink>,
    pub joints: Vec<UrdfJoint>,
    pub warnings: Vec<String>,
}

/// A `<link>`.
pub(super) struct UrdfLink {
    pub name: String,
    pub line: u32,
    pub inertial: Option<UrdfInertial>,
    pub visuals: Vec<UrdfGeometry>,
    pub collisions: Vec<UrdfGeometry>,
}

/// A link's `<inertial>`, already in the link frame.
pub(super) struct UrdfInertial {
    /// Line of the `<inertia>` element.
    pub line: u32,
    pub inertia: Inertia,
}

/// A `<visual>` or `<collision>`.
pub(super) struct UrdfGeometry {
    pub name: Option<String>,
    pub origin: Se3,
    /// Meshes still unresolved (`resolved: None`, `tried` empty).
    pub shape: Shape,
    pub rgba: Option<[f64; 4]>,
}

/// URDF joint types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum JointKind {
    Revolute,
    Continuous,
    Prismatic,
    Fixed,
    Floating,
    Planar,
}

/// `<limit>` (urdfdom: `effort` and `velocity` required, `lower`/`upper` default to 0).
pub(super) struct UrdfLimit {
    pub line: u32,
    pub lower: f64,
    pub upper: f64,
    pub velocity: f64,
    pub effort: f64,
}

/// A `<joint>`.
pub(super) struct UrdfJoint {
    pub name: String,
    pub line: u32,
    pub kind: JointKind,
    pub parent: String,
    pub parent_line: u32,
    pub child: String,
    pub child_line: u32,
    pub origin: Se3,
    /// Unit axis (default +x).
    pub axis: Vec3,
    /// Line of the `<axis>` element, if any.
    pub axis_line: Option<u32>,
    pub limit: Option<UrdfLimit>,
    pub damping_friction: Option<(f64, f64)>,
    pub mimic: Option<Mimic>,
}

/// Position of elements and the error factory.
struct Ctx<'a> {
    file: &'a str,
    /// Byte offset of the start of each line after the first (the position of each '\n' + 1):
    /// a binary search gives an element's line (`Document::text_pos_at` scans the text from the
    /// start each time, quadratic over a large file).
    line_starts: Vec<usize>,
    ns: Option<&'a str>,
}

impl Ctx<'_> {
    fn line(&self, node: Node) -> u32 {
        let at = node.range().start;
        u32::try_from(1 + self.line_starts.partition_point(|&s| s <= at)).unwrap_or(u32::MAX)
    }

    fn err(&self, node: Node, reason: impl Into<String>) -> UrdfError {
        UrdfError {
            file: self.file.to_string(),
            line: Some(self.line(node)),
            element: node.tag_name().name().to_string(),
            reason: reason.into(),
        }
    }

    /// Element children of `node` with this tag (in the robot's namespace).
    fn children<'n, 'i>(&self, node: Node<'n, 'i>, tag: &str) -> Vec<Node<'n, 'i>> {
        node.children()
            .filter(|c| {
                c.is_element() && c.tag_name().name() == tag && c.tag_name().namespace() == self.ns
            })
            .collect()
    }

    /// The child element with this tag, if any; a second one is an error (urdfdom would read
    /// the first and silently ignore the others).
    fn child<'n, 'i>(&self, node: Node<'n, 'i>, tag: &str) -> Result<Option<Node<'n, 'i>>> {
        let mut found = self.children(node, tag).into_iter();
        let first = found.next();
        if let (Some(first), Some(second)) = (first, found.next()) {
            return Err(self.err(
                second,
                format!(
                    "a second <{tag}> in this <{}> (the first is on line {}): give one <{tag}> only",
                    node.tag_name().name(),
                    self.line(first)
                ),
            ));
        }
        Ok(first)
    }

    /// A required name attribute: present and not empty.
    fn name(&self, node: Node, what: &str) -> Result<String> {
        let name = self.attr(node, "name", what)?;
        if name.trim().is_empty() {
            return Err(self.err(
                node,
                format!("empty name=\"{name}\": give {what} a non-empty name"),
            ));
        }
        Ok(name.to_string())
    }

    /// A required attribute.
    fn attr<'n>(&self, node: Node<'n, '_>, name: &str, what: &str) -> Result<&'n str> {
        node.attribute(name).ok_or_else(|| {
            self.err(
                node,
                format!("missing required attribute `{name}` ({what}); add {name}=\"...\""),
            )
        })
    }

    /// A required child element.
    fn required_child<'n, 'i>(
        &self,
        node: Node<'n, 'i>,
        tag: &str,
        what: &str,
    ) -> Result<Node<'n, 'i>> {
        self.child(node, tag)?
            .ok_or_else(|| self.err(node, format!("missing required element <{tag}> ({what})")))
    }

    /// Parses `n` finite numbers separated by white space.
    fn numbers(&self, node: Node, attr: &str, text: &str, n: usize) -> Result<Vec<f64>> {
        let words: Vec<&str> = text.split_ascii_whitespace().collect();
        if words.len() != n {
            return Err(self.err(
                node,
                format!("attribute {attr}=\"{text}\": expected {n} number(s) separated by spaces, found {}", words.len()),
            ));
        }
        // lengths, masses and inertias: bounded so that every product the dynamics forms stays
        // finite (limits, damping and colours may be any finite number)
        let bounded = matches!(
            attr,
            "xyz" | "value" | "ixx" | "ixy" | "ixz" | "iyy" | "iyz" | "izz" | "size" | "radius" | "length" | "scale"
        );
        words
            .iter()
            .map(|w| match w.parse::<f64>() {
                Ok(x) if !x.is_finite() => Err(self.err(
                    node,
                    format!("attribute {attr}=\"{text}\": '{w}' is not a finite number"),
                )),
                Ok(x) if bounded && x.abs() > MAX_QUANTITY => Err(self.err(
                    node,
                    format!("attribute {attr}=\"{text}\": '{w}' is out of range: lengths, masses and inertias must be within ±{MAX_QUANTITY:e} (SI units: m, kg, kg m²)"),
                )),
                Ok(x) if bounded && x != 0.0 && !x.is_normal() => Err(self.err(
                    node,
                    format!("attribute {attr}=\"{text}\": '{w}' is too small to compute with (a subnormal number): write 0"),
                )),
                Ok(x) => Ok(x),
                Err(_) => Err(self.err(
                    node,
                    format!("attribute {attr}=\"{text}\": '{w}' is not a number"),
                )),
            })
            .collect()
    }

    fn number(&self, node: Node, attr: &str, text: &str) -> Result<f64> {
        Ok(self.numbers(node, attr, text, 1)?[0])
    }

    fn opt_number(&self, node: Node, attr: &str, default: f64) -> Result<f64> {
        node.attribute(attr)
            .map_or(Ok(default), |t| self.number(node, attr, t))
    }

    fn req_number(&self, node: Node, attr: &str, what: &str) -> Result<f64> {
        let text = self.attr(node, attr, what)?;
        self.number(node, attr, text)
    }

    fn opt_vec3(&self, node: Node, attr: &str, default: Vec3) -> Result<Vec3> {
        match node.attribute(attr) {
            None => Ok(default),
            Some(t) => {
                let v = self.numbers(node, attr, t, 3)?;
                Ok(Vec3::new(v[0], v[1], v[2]))
            }
        }
    }

    fn nonnegative(&self, node: Node, attr: &str, x: f64) -> Result<f64> {
        if x < 0.0 {
            return Err(self.err(node, format!("attribute {attr}={x} must not be negative")));
        }
        Ok(x)
    }

    /// An `<origin xyz rpy>` child (identity when absent).
    fn origin(&self, parent: Node) -> Result<Se3> {
        match self.child(parent, "origin")? {
            None => Ok(Se3::identity()),
            Some(o) => {
                let xyz = self.opt_vec3(o, "xyz", Vec3::zeros())?;
                let rpy = self.opt_vec3(o, "rpy", Vec3::zeros())?;
                Ok(Se3::new(rpy_to_matrix(rpy), xyz))
            }
        }
    }
}

/// The rotation of URDF roll-pitch-yaw angles, `Rz(yaw) Ry(pitch) Rx(roll)`, computed as
/// urdfdom (`Rotation::setFromRPY`, normalised quaternion) and Pinocchio (Eigen's
/// quaternion-to-matrix) do, so placements agree to the last bit.
pub(super) fn rpy_to_matrix(rpy: Vec3) -> Mat3 {
    let (sr, cr) = (rpy.x / 2.0).sin_cos();
    let (sp, cp) = (rpy.y / 2.0).sin_cos();
    let (sy, cy) = (rpy.z / 2.0).sin_cos();
    let mut x = sr * cp * cy - cr * sp * sy;
    let mut y = cr * sp * cy + sr * cp * sy;
    let mut z = cr * cp * sy - sr * sp * cy;
    let mut w = cr * cp * cy + sr * sp * sy;
    let s = (x * x + y * y + z * z + w * w).sqrt();
    if s == 0.0 {
        (x, y, z, w) = (0.0, 0.0, 0.0, 1.0);
    } else {
        (x, y, z, w) = (x / s, y / s, z / s, w / s);
    }
    let (tx, ty, tz) = (2.0 * x, 2.0 * y, 2.0 * z);
    let (twx, twy, twz) = (tx * w, ty * w, tz * w);
    let (txx, txy, txz) = (tx * x, ty * x, tz * x);
    let (tyy, tyz, tzz) = (ty * y, tz * y, tz * z);
    Mat3::new(
        1.0 - (tyy + tzz),
        txy - twz,
        txz + twy,
        txy + twz,
        1.0 - (txx + tzz),
        tyz - twx,
        txz - twy,
        tyz + twx,
        1.0 - (txx + tyy),
    )
}

/// Parses the document into a [`UrdfRobot`].
pub(super) fn parse_robot(xml: &str, file: &str) -> Result<UrdfRobot> {
    // A document type declaration alone is harmless, but its entities expand (a few kB of
    // nested entities make gigabytes): URDF readers (urdfdom's TinyXML) do not expand them, so
    // they are refused before parsing.
    if let Some(at) = xml.find("<!ENTITY") {
        return Err(UrdfError {
            file: file.to_string(),
            line: Some(1 + xml[..at].matches('\n').count() as u32),
            element: "xml".into(),
            reason: "entity declarations (<!ENTITY ...>) are not supported (URDF readers do not expand them, and nested entities can expand without bound): write the text out or expand the file with xacro".into(),
        });
    }
    check_nesting(xml, file)?;
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = Document::parse_with_options(xml, options).map_err(|e| UrdfError {
        file: file.to_string(),
        line: Some(e.pos().row),
        element: "xml".into(),
        reason: format!("not a well-formed XML document: {e}"),
    })?;
    let root = doc.root_element();
    let ctx = Ctx {
        file,
        line_starts: xml.match_indices('\n').map(|(i, _)| i + 1).collect(),
        ns: root.tag_name().namespace(),
    };
    if root.tag_name().name() != "robot" {
        return Err(ctx.err(
            root,
            format!(
                "the root element is <{}>, expected <robot name=\"...\">: this is not a URDF file",
                root.tag_name().name()
            ),
        ));
    }
    let name = ctx.attr(root, "name", "the robot's name")?.to_string();
    let materials = parse_materials(&ctx, root)?;
    let mut warnings = Vec::new();
    if root.descendants().any(|n| {
        n.is_element()
            && n.tag_name()
                .namespace()
                .is_some_and(|u| u.contains("xacro"))
    }) {
        warnings.push(format!(
            "{file}: contains xacro elements, which are ignored: expand the file with `xacro` first"
        ));
    }
    let links = ctx
        .children(root, "link")
        .into_iter()
        .map(|n| parse_link(&ctx, n, &materials))
        .collect::<Result<Vec<_>>>()?;
    let joints = ctx
        .children(root, "joint")
        .into_iter()
        .map(|n| parse_joint(&ctx, n))
        .collect::<Result<Vec<_>>>()?;
    Ok(UrdfRobot {
        name,
        line: ctx.line(root),
        links,
        joints,
        warnings,
    })
}

/// How deep elements may nest: a URDF nests about 5 deep; the XML reader recurses once per
/// level, so 100 000 nested elements overflowed the stack.
const MAX_NESTING: usize = 256;

/// Refuses documents whose elements nest deeper than [`MAX_NESTING`], before the XML reader
/// sees them.
fn check_nesting(xml: &str, file: &str) -> Result<()> {
    match crate::io::xml_depth::line_deeper_than(xml, MAX_NESTING) {
        None => Ok(()),
        Some(line) => Err(UrdfError {
            file: file.to_string(),
            line: Some(line),
            element: "xml".into(),
            reason: format!("elements nested more than {MAX_NESTING} deep: a URDF nests about 5 deep (<robot>, <link>, <visual>, <geometry>, <box>)"),
        }),
    }
}

/// Robot-level `<material name><color rgba/></material>`.
fn parse_materials(ctx: &Ctx, root: Node) -> Result<HashMap<String, [f64; 4]>> {
    let mut out = HashMap::new();
    for m in ctx.children(root, "material") {
        let name = ctx.attr(m, "name", "the material's name")?;
        if let Some(rgba) = material_color(ctx, m)? {
            out.insert(name.to_string(), rgba);
        }
    }
    Ok(out)
}

fn material_color(ctx: &Ctx, material: Node) -> Result<Option<[f64; 4]>> {
    let Some(color) = ctx.child(material, "color")? else {
        return Ok(None);
    };
    let text = ctx.attr(color, "rgba", "red, green, blue, alpha in [0, 1]")?;
    let v = ctx.numbers(color, "rgba", text, 4)?;
    Ok(Some([v[0], v[1], v[2], v[3]]))
}

fn parse_link(ctx: &Ctx, node: Node, materials: &HashMap<String, [f64; 4]>) -> Result<UrdfLink> {
    let name = ctx.name(node, "the link")?;
    let inertial = ctx
        .child(node, "inertial")?
        .map(|n| parse_inertial(ctx, n))
        .transpose()?;
    let geoms = |tag| {
        ctx.children(node, tag)
            .into_iter()
            .map(|n| parse_geometry(ctx, n, materials))
            .collect::<Result<Vec<_>>>()
    };
    Ok(UrdfLink {
        name,
        line: ctx.line(node),
        inertial,
        visuals: geoms("visual")?,
        collisions: geoms("collision")?,
    })
}

/// `<inertial>`: the inertia in the link frame (`com` = origin xyz, `I_com` = R I Rᵀ).
fn parse_inertial(ctx: &Ctx, node: Node) -> Result<UrdfInertial> {
    let origin = ctx.origin(node)?;
    let mass_node = ctx.required_child(node, "mass", "<mass value=\"...\"/> in kg")?;
    let mass = ctx.req_number(mass_node, "value", "the mass in kg")?;
    if mass < 0.0 {
        return Err(ctx.err(
            mass_node,
            format!("mass {mass} is negative: a mass must be ≥ 0 kg"),
        ));
    }
    let i_node = ctx.required_child(
        node,
        "inertia",
        "<inertia ixx ixy ixz iyy iyz izz/> in kg m²",
    )?;
    let mut c = [0.0; 6];
    for (k, attr) in ["ixx", "ixy", "ixz", "iyy", "iyz", "izz"]
        .iter()
        .enumerate()
    {
        c[k] = ctx.req_number(
            i_node,
            attr,
            "a rotational inertia entry in kg m², about the centre of mass",
        )?;
    }
    let [ixx, ixy, ixz, iyy, iyz, izz] = c;
    let i = Mat3::new(ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz);
    let r = origin.rotation;
    Ok(UrdfInertial {
        line: ctx.line(i_node),
        inertia: Inertia::new(mass, origin.translation, r * i * r.transpose()),
    })
}

fn parse_geometry(
    ctx: &Ctx,
    node: Node,
    materials: &HashMap<String, [f64; 4]>,
) -> Result<UrdfGeometry> {
    let origin = ctx.origin(node)?;
    let g = ctx.required_child(
        node,
        "geometry",
        "one of <box>, <cylinder>, <sphere>, <mesh>",
    )?;
    let shape = parse_shape(ctx, g)?;
    let rgba = match ctx.child(node, "material")? {
        None => None,
        Some(m) => match material_color(ctx, m)? {
            Some(c) => Some(c),
            None => m.attribute("name").and_then(|n| materials.get(n).copied()),
        },
    };
    Ok(UrdfGeometry {
        name: node.attribute("name").map(str::to_string),
        origin,
        shape,
        rgba,
    })
}

fn parse_shape(ctx: &Ctx, g: Node) -> Result<Shape> {
    let mut shapes = g.children().filter(|c| c.is_element());
    let Some(s) = shapes.next() else {
        return Err(ctx.err(
            g,
            "empty <geometry>: add one of <box>, <cylinder>, <sphere>, <mesh>",
        ));
    };
    if let Some(second) = shapes.next() {
        return Err(ctx.err(second, format!(
            "a second shape in this <geometry> (the first is <{}> on line {}): a <geometry> holds one shape; give each its own <visual> or <collision>",
            s.tag_name().name(), ctx.line(s)
        )));
    }
    let positive = |attr: &str, what: &str| -> Result<f64> {
        let x = ctx.req_number(s, attr, what)?;
        ctx.nonnegative(s, attr, x)
    };
    Ok(match s.tag_name().name() {
        "box" => {
            let text = ctx.attr(s, "size", "side lengths \"x y z\" in m")?;
            let v = ctx.numbers(s, "size", text, 3)?;
            if v.iter().any(|&x| x < 0.0) {
                return Err(ctx.err(s, format!("attribute size=\"{text}\": side lengths must not be negative")));
            }
            Shape::Box { size: Vec3::new(v[0], v[1], v[2]) }
        }
        "cylinder" => Shape::Cylinder { radius: positive("radius", "in m")?, length: positive("length", "in m")? },
        "capsule" => Shape::Capsule { radius: positive("radius", "in m")?, length: positive("length", "in m")? },
        "sphere" => Shape::Sphere { radius: positive("radius", "in m")? },
        "mesh" => Shape::Mesh {
            filename: ctx.attr(s, "filename", "the mesh file, e.g. package://pkg/meshes/part.stl")?.to_string(),
            resolved: None,
            tried: vec![],
            scale: ctx.opt_vec3(s, "scale", Vec3::new(1.0, 1.0, 1.0))?,
        },
        other => {
            return Err(ctx.err(s, format!(
                "unknown geometry <{other}>: expected <box>, <cylinder>, <sphere>, <capsule> or <mesh>"
            )))
        }
    })
}

fn parse_joint_kind(ctx: &Ctx, node: Node) -> Result<JointKind> {
    let t = ctx.attr(
        node,
        "type",
        "revolute, continuous, prismatic, fixed, floating or planar",
    )?;
    Ok(match t {
        "revolute" => JointKind::Revolute,
        "continuous" => JointKind::Continuous,
        "prismatic" => JointKind::Prismatic,
        "fixed" => JointKind::Fixed,
        "floating" => JointKind::Floating,
        "planar" => JointKind::Planar,
        other => {
            return Err(ctx.err(node, format!(
                "unknown joint type '{other}': expected revolute, continuous, prismatic, fixed, floating or planar"
            )))
        }
    })
}

/// `<parent link>` or `<child link>`: the link name and the element's line.
fn joint_link(ctx: &Ctx, node: Node, tag: &'static str) -> Result<(String, u32)> {
    let n = ctx.required_child(node, tag, &format!("<{tag} link=\"...\"/> naming a link"))?;
    Ok((
        ctx.attr(n, "link", "the name of a link")?.to_string(),
        ctx.line(n),
    ))
}

/// The unit axis (default +x). A zero axis is an error only for joints that use it (urdfdom
/// files often give fixed joints `xyz="0 0 0"`).
fn joint_axis(ctx: &Ctx, node: Node, kind: JointKind) -> Result<(Vec3, Option<u32>)> {
    let Some(a) = ctx.child(node, "axis")? else {
        return Ok((Vec3::x(), None));
    };
    let v = ctx.opt_vec3(a, "xyz", Vec3::x())?;
    let n = v.norm();
    if matches!(kind, JointKind::Fixed | JointKind::Floating) {
        return Ok((if n > 0.0 { v / n } else { Vec3::x() }, Some(ctx.line(a))));
    }
    if n.is_nan() || n <= 1e-12 {
        return Err(ctx.err(
            a,
            "the axis has zero length: give a non-zero direction, e.g. xyz=\"0 0 1\"",
        ));
    }
    Ok((v / n, Some(ctx.line(a))))
}

fn parse_limit(ctx: &Ctx, node: Node) -> Result<Option<UrdfLimit>> {
    let Some(l) = ctx.child(node, "limit")? else {
        return Ok(None);
    };
    let velocity = ctx.req_number(l, "velocity", "the maximal velocity, in rad/s or m/s")?;
    let effort = ctx.req_number(l, "effort", "the maximal effort, in N m or N")?;
    Ok(Some(UrdfLimit {
        line: ctx.line(l),
        lower: ctx.opt_number(l, "lower", 0.0)?,
        upper: ctx.opt_number(l, "upper", 0.0)?,
        velocity: ctx.nonnegative(l, "velocity", velocity)?,
        effort: ctx.nonnegative(l, "effort", effort)?,
    }))
}

fn parse_joint(ctx: &Ctx, node: Node) -> Result<UrdfJoint> {
    let name = ctx.name(node, "the joint")?;
    let kind = parse_joint_kind(ctx, node)?;
    let (parent, parent_line) = joint_link(ctx, node, "parent")?;
    let (child, child_line) = joint_link(ctx, node, "child")?;
    let (axis, axis_line) = joint_axis(ctx, node, kind)?;
    let damping_friction = match ctx.child(node, "dynamics")? {
        None => None,
        Some(d) => Some((
            ctx.opt_number(d, "damping", 0.0)?,
            ctx.opt_number(d, "friction", 0.0)?,
        )),
    };
    let mimic = match ctx.child(node, "mimic")? {
        None => None,
        Some(m) => Some(Mimic {
            joint: ctx
                .attr(m, "joint", "the name of the joint it copies")?
                .to_string(),
            multiplier: ctx.opt_number(m, "multiplier", 1.0)?,
            offset: ctx.opt_number(m, "offset", 0.0)?,
        }),
    };
    Ok(UrdfJoint {
        name,
        line: ctx.line(node),
        kind,
        parent,
        parent_line,
        child,
        child_line,
        origin: ctx.origin(node)?,
        axis,
        axis_line,
        limit: parse_limit(ctx, node)?,
        damping_friction,
        mimic,
    })
}

//! From the parsed robot to a [`Model`]: tree checks (one root, no cycle, one parent per link),
//! depth-first traversal, fixed-joint merging, limits, frames and geometry.

use std::collections::HashMap;
use std::path::PathBuf;

use super::geometry::MeshResolver;
use super::parse::{JointKind, UrdfGeometry, UrdfJoint, UrdfLink, UrdfRobot};
use super::{Geometry, GeometryObject, Root, Shape, UrdfError};
use crate::model::{Axis, FrameKind, JointId, JointType, Model, ModelBuilder};
use crate::spatial::{Inertia, Se3, Vec3};
use crate::ModelError;

type Result<T> = std::result::Result<T, UrdfError>;

fn error(file: &str, line: u32, element: &str, reason: impl Into<String>) -> UrdfError {
    UrdfError {
        file: file.to_string(),
        line: Some(line),
        element: element.to_string(),
        reason: reason.into(),
    }
}

/// The checked tree: the root link and each link's child joints in document order.
struct Tree {
    root: usize,
    child_joints: Vec<Vec<usize>>,
    /// Parent and child link of each joint.
    joint_links: Vec<(usize, usize)>,
}

/// Checks names and topology: unique names, known links, one parent per link, one root, no cycle.
fn check_tree(robot: &UrdfRobot, file: &str) -> Result<Tree> {
    if robot.links.is_empty() {
        return Err(error(
            file,
            robot.line,
            "robot",
            "the robot has no <link>: a URDF needs at least one link",
        ));
    }
    let mut link_index = HashMap::new();
    for (i, l) in robot.links.iter().enumerate() {
        if let Some(prev) = link_index.insert(l.name.clone(), i) {
            let first = robot.links[prev].line;
            return Err(error(file, l.line, "link", format!(
                "duplicate link name '{}' (first defined on line {first}): link names must be unique", l.name
            )));
        }
    }
    let mut joint_lines: HashMap<&str, u32> = HashMap::new();
    let mut parent_of: Vec<Option<usize>> = vec![None; robot.links.len()];
    let mut child_joints = vec![Vec::new(); robot.links.len()];
    let mut joint_links = Vec::with_capacity(robot.joints.len());
    for (k, j) in robot.joints.iter().enumerate() {
        if let Some(first) = joint_lines.insert(&j.name, j.line) {
            return Err(error(file, j.line, "joint", format!(
                "duplicate joint name '{}' (first defined on line {first}): joint names must be unique", j.name
            )));
        }
        let p = find_link(&link_index, file, j, &j.parent, j.parent_line, "parent")?;
        let c = find_link(&link_index, file, j, &j.child, j.child_line, "child")?;
        if let Some(prev) = parent_of[c] {
            let prev = &robot.joints[prev];
            return Err(error(file, j.line, "joint", format!(
                "link '{}' is the child of both joint '{}' (line {}) and joint '{}': a link has at most one parent joint (a URDF describes a tree)",
                j.child, prev.name, prev.line, j.name
            )));
        }
        parent_of[c] = Some(k);
        child_joints[p].push(k);
        joint_links.push((p, c));
    }
    let roots: Vec<usize> = (0..robot.links.len())
        .filter(|&i| parent_of[i].is_none())
        .collect();
    let root = match roots[..] {
        [] => return Err(cycle_error(robot, &parent_of, &joint_links, file, 0)),
        [r] => r,
        [a, b, ..] => {
            let names: Vec<String> = roots
                .iter()
                .map(|&i| format!("'{}' (line {})", robot.links[i].name, robot.links[i].line))
                .collect();
            let (la, lb) = (&robot.links[a], &robot.links[b]);
            return Err(error(file, lb.line, "link", format!(
                "several root links (links that are no joint's child): {}; a URDF must be a single tree: attach '{}' to the tree with a joint (e.g. a fixed joint with parent '{}')",
                names.join(", "), lb.name, la.name
            )));
        }
    };
    // every non-root link has a parent: a link unreachable from the root is on (or below) a cycle
    let mut reached = vec![false; robot.links.len()];
    let mut stack = vec![root];
    while let Some(l) = stack.pop() {
        if std::mem::replace(&mut reached[l], true) {
            continue;
        }
        stack.extend(child_joints[l].iter().map(|&k| joint_links[k].1));
    }
    if let Some(lost) = reached.iter().position(|r| !r) {
        return Err(cycle_error(robot, &parent_of, &joint_links, file, lost));
    }
    Ok(Tree {
        root,
        child_joints,
        joint_links,
    })
}

fn find_link(
    index: &HashMap<String, usize>,
    file: &str,
    j: &UrdfJoint,
    link: &str,
    line: u32,
    tag: &str,
) -> Result<usize> {
    index.get(link).copied().ok_or_else(|| {
        error(file, line, tag, format!(
            "joint '{}': {tag} link '{link}' is not defined: add <link name=\"{link}\"/> or correct the name",
            j.name
        ))
    })
}

/// Follows parent joints from `start` until a link repeats and reports that cycle.
fn cycle_error(
    robot: &UrdfRobot,
    parent_of: &[Option<usize>],
    joint_links: &[(usize, usize)],
    file: &str,
    start: usize,
) -> UrdfError {
    let mut path: Vec<usize> = Vec::new(); // links visited, upwards
    let mut link = start;
    while !path.contains(&link) {
        path.push(link);
        let Some(k) = parent_of[link] else { break };
        link = joint_links[k].0;
    }
    let first = path.iter().position(|&l| l == link).unwrap_or(0);
    let joints: Vec<&UrdfJoint> = path[first..]
        .iter()
        .filter_map(|&l| parent_of[l].map(|k| &robot.joints[k]))
        .collect();
    let names: Vec<String> = joints
        .iter()
        .rev()
        .map(|j| format!("'{}' ({} -> {})", j.name, j.parent, j.child))
        .collect();
    let line = joints.iter().map(|j| j.line).min().unwrap_or(robot.line);
    error(file, line, "joint", format!(
        "the joints {} form a cycle: a URDF must be a tree (exactly one root link, every other link the child of one joint); remove or re-parent one of them",
        names.join(", ")
    ))
}

/// Snaps a unit axis within 1e-12 of ±x, ±y or ±z to it: Pinocchio's `isApprox` test for +x,
/// +y, +z, extended to the negative axes so that exporters' `cos(π/2)` residues (icub's
/// `0 -1 6.12323e-17`) take the closed forms of [`Axis::signed_basis`] instead of Rodrigues'
/// formula (the axis moves by at most 1e-12 rad).
fn snap_axis(v: Vec3) -> Axis {
    [Vec3::x(), Vec3::y(), Vec3::z(), -Vec3::x(), -Vec3::y(), -Vec3::z()]
        .into_iter()
        .find(|e| (v - e).norm() <= 1e-12)
        .map_or(Axis::from_unit(v), Axis::from_unit)
}

/// Where a link sits: the joint that moves it and its placement in that joint's frame.
#[derive(Clone, Copy)]
struct LinkPlace {
    joint: JointId,
    placement: Se3,
}

/// The traversal state.
struct Loader<'a> {
    robot: &'a UrdfRobot,
    file: &'a str,
    tree: Tree,
    builder: ModelBuilder,
    places: Vec<Option<LinkPlace>>,
    geometry: Geometry,
    mimics: Vec<String>,
    /// Merged body inertia of each joint (index 0, the universe, stays zero).
    inertias: Vec<Inertia>,
    /// The link each joint moves (index 0 unused).
    body_links: Vec<usize>,
    /// The links merged into each joint's body (index 0: the links fixed to the world).
    merged_links: Vec<Vec<usize>>,
}

/// Builds the model and geometry of a parsed robot.
pub(super) fn build(
    robot: &UrdfRobot,
    file: &str,
    root: Root,
    resolver: &mut MeshResolver,
) -> Result<(Model, Geometry)> {
    let tree = check_tree(robot, file)?;
    let mut loader = Loader {
        robot,
        file,
        builder: ModelBuilder::new(&robot.name),
        places: vec![None; robot.links.len()],
        geometry: Geometry {
            warnings: robot.warnings.clone(),
            ..Geometry::default()
        },
        mimics: Vec::new(),
        inertias: vec![Inertia::zero()],
        body_links: vec![0],
        merged_links: vec![vec![]],
        tree,
    };
    loader.add_root(root)?;
    loader.traverse()?;
    loader.finish(resolver)
}

impl<'a> Loader<'a> {
    fn link(&self, i: usize) -> &'a UrdfLink {
        &self.robot.links[i]
    }

    fn model_error(&self, line: u32, element: &str, e: ModelError) -> UrdfError {
        error(self.file, line, element, e.to_string())
    }

    /// The root link: moved by a free flyer, or fixed to the universe.
    fn add_root(&mut self, root: Root) -> Result<()> {
        let r = self.tree.root;
        match root {
            Root::FreeFlyer => {
                if let Some(j) = self.robot.joints.iter().find(|j| j.name == "root_joint") {
                    return Err(error(self.file, j.line, "joint", "the name 'root_joint' is reserved for the free-flyer joint added by Root::FreeFlyer: rename this joint"));
                }
                let j = self
                    .builder
                    .add_joint(
                        JointId::UNIVERSE,
                        "root_joint",
                        JointType::FreeFlyer,
                        Se3::identity(),
                    )
                    .map_err(|e| self.model_error(self.robot.line, "robot", e))?;
                self.attach_moving_link(j, r)
            }
            Root::Fixed => self.attach_fixed_link(
                LinkPlace {
                    joint: JointId::UNIVERSE,
                    placement: Se3::identity(),
                },
                r,
            ),
        }
    }

    /// Depth-first over the joints, siblings in document order.
    fn traverse(&mut self) -> Result<()> {
        let mut stack: Vec<usize> = self.tree.child_joints[self.tree.root]
            .iter()
            .rev()
            .copied()
            .collect();
        while let Some(k) = stack.pop() {
            let joint = &self.robot.joints[k];
            let (p, c) = self.tree.joint_links[k];
            let Some(parent) = self.places[p] else {
                return Err(error(
                    self.file,
                    joint.line,
                    "joint",
                    "internal error: parent link not placed",
                ));
            };
            let placement = parent.placement.compose(&joint.origin);
            if joint.kind == JointKind::Fixed {
                self.builder
                    .add_frame(&joint.name, parent.joint, placement, FrameKind::FixedJoint)
                    .map_err(|e| self.model_error(joint.line, "joint", e))?;
                self.attach_fixed_link(
                    LinkPlace {
                        joint: parent.joint,
                        placement,
                    },
                    c,
                )?;
            } else {
                let j = self.add_moving_joint(joint, parent.joint, placement)?;
                self.attach_moving_link(j, c)?;
            }
            stack.extend(self.tree.child_joints[c].iter().rev());
        }
        Ok(())
    }

    /// A link moved by its own joint `j`: it names the joint's body, frame at identity.
    fn attach_moving_link(&mut self, j: JointId, link: usize) -> Result<()> {
        let l = self.link(link);
        let inertia = self.link_inertia(link);
        if self.inertias.len() <= j.0 {
            self.inertias.resize(j.0 + 1, Inertia::zero());
            self.body_links.resize(j.0 + 1, link);
            self.merged_links.resize(j.0 + 1, vec![]);
        }
        self.inertias[j.0] = self.inertias[j.0].combined(&inertia);
        self.body_links[j.0] = link;
        self.merged_links[j.0].push(link);
        self.builder
            .add_frame(&l.name, j, Se3::identity(), FrameKind::Body)
            .map_err(|e| self.model_error(l.line, "link", e))?;
        self.builder
            .set_body_name(j, &l.name)
            .map_err(|e| self.model_error(l.line, "link", e))?;
        self.places[link] = Some(LinkPlace {
            joint: j,
            placement: Se3::identity(),
        });
        Ok(())
    }

    /// A link merged into the body of `place.joint` (through fixed joints): its inertia is added
    /// there (dropped on the universe) and it stays a body frame.
    fn attach_fixed_link(&mut self, place: LinkPlace, link: usize) -> Result<()> {
        let l = self.link(link);
        let inertia = self.link_inertia(link).transformed(&place.placement);
        if place.joint != JointId::UNIVERSE {
            self.inertias[place.joint.0] = self.inertias[place.joint.0].combined(&inertia);
        }
        self.merged_links[place.joint.0].push(link);
        self.builder
            .add_frame(&l.name, place.joint, place.placement, FrameKind::Body)
            .map_err(|e| self.model_error(l.line, "link", e))?;
        self.places[link] = Some(place);
        Ok(())
    }

    /// A link's inertia in its own frame (zero without `<inertial>`; mass ≥ 0 and finite
    /// numbers are checked when parsing). Whether it is physical is checked on the merged body
    /// ([`Self::add_inertias`]).
    fn link_inertia(&self, link: usize) -> Inertia {
        self.link(link)
            .inertial
            .as_ref()
            .map_or(Inertia::zero(), |i| i.inertia)
    }

    /// `"link 'a' (line 12: principal moments ...)"` for each link of `links` whose own
    /// inertia is not physical.
    fn unphysical_links(&self, links: &[usize]) -> Vec<String> {
        links
            .iter()
            .filter_map(|&k| {
                let l = self.link(k);
                let i = l.inertial.as_ref()?;
                let defect = inertia_defect(&i.inertia)?;
                Some(format!("link '{}' (line {}: {defect})", l.name, i.line))
            })
            .collect()
    }

    /// Gives each joint its merged body inertia. Like Pinocchio, a link whose own inertia is
    /// not physical (CAD rounding, dummy values) is accepted when the body it is merged into is
    /// physical, with a warning; a merged body that is not physical (a rotational inertia with
    /// a negative principal moment, or moments violating the triangle inequality) is replaced
    /// by the nearest physical inertia ([`nearest_physical`]), with a warning saying how much
    /// changed. Links fixed to the world carry no inertia into the model: a warning only.
    fn add_inertias(&mut self) -> Result<()> {
        let fixed_to_world = self.unphysical_links(&self.merged_links[0]);
        if !fixed_to_world.is_empty() {
            self.geometry.warnings.push(format!(
                "{}: {}: inertia not physical, unused (fixed to the world)",
                self.file,
                fixed_to_world.join(", ")
            ));
        }
        for j in 1..self.inertias.len() {
            let body = self.link(self.body_links[j]).name.clone();
            let mut inertia = self.inertias[j];
            let links = self.unphysical_links(&self.merged_links[j]);
            let merged = match self.merged_links[j].len() {
                1 => String::new(),
                n => format!(" merged with the {} link(s) fixed to it", n - 1),
            };
            if let Some(defect) = inertia_defect(&inertia) {
                let repaired = nearest_physical(&inertia);
                let change = (repaired.inertia_com - inertia.inertia_com).amax();
                let e = repaired.inertia_com.symmetric_eigenvalues();
                let (line, _) = self.body_position(&body);
                self.geometry.warnings.push(format!(
                    "{}:{line}: the inertia of link '{body}'{merged} is not physical ({defect}{}); replaced by the nearest physical inertia (second moments of mass clamped to ≥ 0): principal moments {:.3e}, {:.3e}, {:.3e}, entries changed by up to {change:.3e} kg m², mass and centre of mass unchanged",
                    self.file,
                    if links.is_empty() || self.merged_links[j].len() == 1 { String::new() } else { format!("; from {}", links.join(", ")) },
                    e[0], e[1], e[2]
                ));
                inertia = repaired;
            } else if !links.is_empty() {
                self.geometry.warnings.push(format!(
                    "{}: {}: inertia not physical; the body of link '{body}'{merged} is physical: loaded as written (as Pinocchio does)",
                    self.file,
                    links.join(", ")
                ));
            }
            if let Err(e) = self.builder.add_inertia(JointId(j), &body, inertia) {
                let (line, element) = self.body_position(&body);
                let reason = match e {
                    ModelError::BadInertia { reason, .. } => format!(
                        "the inertia of link '{body}'{merged}: {reason}; fix their <inertial> elements"
                    ),
                    e => e.to_string(),
                };
                return Err(error(self.file, line, element, reason));
            }
        }
        Ok(())
    }

    /// Line and element to blame for a body: the joint whose child it is, else the link.
    fn body_position(&self, body: &str) -> (u32, &'static str) {
        if let Some(j) = self.robot.joints.iter().find(|j| j.child == body) {
            return (j.line, "joint");
        }
        self.robot
            .links
            .iter()
            .find(|l| l.name == body)
            .map_or((self.robot.line, "robot"), |l| (l.line, "link"))
    }

    fn joint_type(&self, joint: &UrdfJoint) -> Result<JointType> {
        let axis = snap_axis(joint.axis);
        Ok(match joint.kind {
            JointKind::Revolute => JointType::Revolute { axis },
            JointKind::Continuous => JointType::RevoluteUnbounded { axis },
            JointKind::Prismatic => JointType::Prismatic { axis },
            JointKind::Floating => JointType::FreeFlyer,
            JointKind::Planar if axis == Axis::Z => JointType::Planar,
            JointKind::Planar => {
                let (line, element) = joint
                    .axis_line
                    .map_or((joint.line, "joint"), |l| (l, "axis"));
                let a = joint.axis;
                return Err(error(self.file, line, element, format!(
                    "planar joint '{}' has normal ({}, {}, {}): only planar joints normal to +z are supported; use <axis xyz=\"0 0 1\"/> and rotate the joint's <origin> so the plane is its xy plane",
                    joint.name, a.x, a.y, a.z
                )));
            }
            JointKind::Fixed => {
                return Err(error(
                    self.file,
                    joint.line,
                    "joint",
                    "internal error: fixed joints are merged, not added",
                ))
            }
        })
    }

    /// Adds a moving joint with its limits, damping/friction and mimic relation.
    fn add_moving_joint(
        &mut self,
        joint: &UrdfJoint,
        parent: JointId,
        placement: Se3,
    ) -> Result<JointId> {
        let kind = self.joint_type(joint)?;
        let j = self
            .builder
            .add_joint(parent, &joint.name, kind, placement)
            .map_err(|e| self.model_error(joint.line, "joint", e))?;
        let one_dof = matches!(
            joint.kind,
            JointKind::Revolute | JointKind::Continuous | JointKind::Prismatic
        );
        match (&joint.limit, one_dof) {
            (Some(limit), true) => {
                let file = self.file;
                let lerr = |e: ModelError| error(file, limit.line, "limit", e.to_string());
                if joint.kind != JointKind::Continuous {
                    self.builder.set_position_limits(j, &[limit.lower], &[limit.upper]).map_err(|e| match e {
                        ModelError::Invalid(_) => error(file, limit.line, "limit", format!(
                            "joint '{}': lower limit {} is above upper limit {}: swap them", joint.name, limit.lower, limit.upper
                        )),
                        e => lerr(e),
                    })?;
                }
                self.builder.set_velocity_effort_limits(j, &[limit.velocity], &[limit.effort]).map_err(lerr)?;
            }
            (None, true) if joint.kind != JointKind::Continuous => self.geometry.warnings.push(format!(
                "{}:{}: joint '{}' has no <limit> (urdfdom requires one for revolute and prismatic joints): loaded without limits",
                self.file, joint.line, joint.name
            )),
            _ => {}
        }
        if let (Some((damping, friction)), true) = (joint.damping_friction, one_dof) {
            self.builder
                .set_damping_friction(j, &[damping], &[friction])
                .map_err(|e| self.model_error(joint.line, "dynamics", e))?;
        }
        if let Some(m) = &joint.mimic {
            if !self.robot.joints.iter().any(|o| o.name == m.joint) {
                self.geometry.warnings.push(format!(
                    "{}:{}: joint '{}' mimics '{}', which is not a joint of this robot",
                    self.file, joint.line, joint.name, m.joint
                ));
            }
            self.builder
                .set_mimic(j, m.clone())
                .map_err(|e| self.model_error(joint.line, "mimic", e))?;
            self.mimics.push(joint.name.clone());
        }
        Ok(j)
    }

    /// Builds the model, then the geometry objects (placed in their moving joints' frames).
    fn finish(mut self, resolver: &mut MeshResolver) -> Result<(Model, Geometry)> {
        self.add_inertias()?;
        let (model, massless) = std::mem::replace(&mut self.builder, ModelBuilder::new(""))
            .build_listing_massless_dofs()
            .map_err(|e| self.build_error(e))?;
        self.check_finite(&model)?;
        if !massless.is_empty() {
            let mut joints: Vec<String> = Vec::new();
            let mut last = None;
            for &k in &massless {
                let j = model.dof_joint[k];
                if last == Some(j) {
                    continue; // a joint's dofs are named once
                }
                last = Some(j);
                let name = &model.joint_names[j];
                let line = self
                    .robot
                    .joints
                    .iter()
                    .find(|o| &o.name == name)
                    .map_or(self.robot.line, |o| o.line);
                joints.push(format!("'{name}' (line {line})"));
            }
            self.geometry.warnings.push(format!(
                "{}: joint(s) {} move no mass or inertia (or only repeat another joint's motion): the mass matrix is singular, so kinematics and inverse dynamics work but forward dynamics and simulation do not (the simulator refuses the model); lock them (type=\"fixed\"), give the links they move an <inertial>, or add armature to them",
                self.file,
                joints.join(", ")
            ));
        }
        if !self.mimics.is_empty() {
            self.geometry.warnings.push(format!(
                "mimic joints are loaded as independent degrees of freedom (as Pinocchio's default parser): {}",
                self.mimics.join(", ")
            ));
        }
        let mut missing: Vec<(String, Vec<PathBuf>)> = Vec::new();
        let mut meshes = 0;
        for (i, link) in self.robot.links.iter().enumerate() {
            let Some(place) = self.places[i] else {
                continue;
            };
            for (visual, list) in [(true, &link.visuals), (false, &link.collisions)] {
                for (k, g) in list.iter().enumerate() {
                    let mut obj = geometry_object(link, place, k, g);
                    if let Some(found) = resolver.resolve(&mut obj.shape) {
                        meshes += 1;
                        if let (
                            false,
                            Shape::Mesh {
                                filename, tried, ..
                            },
                        ) = (found, &obj.shape)
                        {
                            missing.push((filename.clone(), tried.clone()));
                        }
                    }
                    if visual {
                        self.geometry.visuals.push(obj)
                    } else {
                        self.geometry.collisions.push(obj)
                    }
                }
            }
        }
        self.geometry
            .warnings
            .extend(resolver.missing_warning(&missing, meshes));
        Ok((model, self.geometry))
    }

    /// Every number of the model is finite (limits may be infinite): numbers that parse but
    /// overflow once combined (a mass of 1e300 placed 1e10 m away) are refused here.
    fn check_finite(&self, model: &Model) -> Result<()> {
        let se3_finite = |x: &Se3| x.rotation.iter().chain(x.translation.iter()).all(|v| v.is_finite());
        for j in 1..model.njoints {
            let i = &model.inertias[j];
            let o = &model.origin_inertias[j];
            let inertia_finite = i.mass.is_finite()
                && i.com.iter().chain(i.inertia_com.iter()).all(|v| v.is_finite())
                && o.to_matrix().iter().all(|v| v.is_finite());
            if !inertia_finite || !se3_finite(&model.joint_placements[j]) {
                let body = &model.body_names[j];
                let (line, element) = self.body_position(body);
                return Err(error(self.file, line, element, format!(
                    "the {} of link '{body}' (with the links fixed to it) overflows: numbers this large (masses, lengths, inertias) have no finite mass matrix; use SI units (kg, m, kg m²)",
                    if inertia_finite { "placement" } else { "inertia" }
                )));
            }
        }
        let values = [&model.lower_position_limit, &model.upper_position_limit, &model.velocity_limit, &model.effort_limit];
        if values.iter().any(|v| v.iter().any(|x| x.is_nan()))
            || model.damping.iter().chain(&model.friction).any(|x| !x.is_finite())
        {
            return Err(error(self.file, self.robot.line, "robot", "a joint limit, damping or friction is not a number"));
        }
        for f in &model.frames {
            if !se3_finite(&f.placement) {
                let (line, element) = self.body_position(&f.name);
                return Err(error(self.file, line, element, format!(
                    "the placement of frame '{}' overflows: lengths this large have no finite placement; use metres",
                    f.name
                )));
            }
        }
        Ok(())
    }

    /// Maps an error of [`ModelBuilder::build`] (a joint moving no mass) to the joint concerned.
    fn build_error(&self, e: ModelError) -> UrdfError {
        let (line, element) = match &e {
            ModelError::BadInertia { body, .. } => self.body_position(body),
            _ => (self.robot.line, "robot"),
        };
        self.model_error(line, element, e)
    }
}

fn geometry_object(
    link: &UrdfLink,
    place: LinkPlace,
    k: usize,
    g: &UrdfGeometry,
) -> GeometryObject {
    GeometryObject {
        name: format!("{}_{k}", g.name.as_deref().unwrap_or(&link.name)),
        link: link.name.clone(),
        parent_joint: place.joint,
        placement: place.placement.compose(&g.origin),
        shape: g.shape.clone(),
        material_rgba: g.rgba,
    }
}

/// What is not physical about a rigid body's rotational inertia (about its centre of mass), or
/// `None`: a negative principal moment, or moments violating the triangle inequality
/// (`λ_i ≤ λ_j + λ_k`, which implies `λ ≥ 0`: the second moments of mass, `½ tr I − λ_i`, are
/// then ≥ 0). The tolerance is relative, with an absolute floor for numerically zero inertias.
pub(crate) fn inertia_defect(i: &Inertia) -> Option<String> {
    let a = &i.inertia_com;
    let e = a.symmetric_eigenvalues();
    let tol = 1e-12 * a.amax() + 1e-15;
    let (x, y, z) = (e[0], e[1], e[2]);
    if e.iter().any(|&v| v < -tol) {
        Some(format!(
            "not positive semi-definite, principal moments {x:.3e}, {y:.3e}, {z:.3e}"
        ))
    } else if x + y < z - tol || y + z < x - tol || x + z < y - tol {
        Some(format!(
            "principal moments {x:.3e}, {y:.3e}, {z:.3e} violate the triangle inequality"
        ))
    } else {
        None
    }
}

/// The physical inertia nearest to `i`: same mass and centre of mass, and the rotational
/// inertia whose second moments of mass `Σ = ½ tr(I) 1 − I` are those of `i` with negative
/// eigenvalues set to 0 (the projection onto physical bodies in Σ's Frobenius norm: a body is
/// physical iff Σ ⪰ 0, which holds iff the principal moments are ≥ 0 and satisfy the triangle
/// inequality). `I = tr(Σ) 1 − Σ` maps back.
pub(crate) fn nearest_physical(i: &Inertia) -> Inertia {
    use crate::spatial::Mat3;
    let a = i.inertia_com;
    let sigma = Mat3::identity() * (0.5 * a.trace()) - a;
    let eig = nalgebra::SymmetricEigen::new(sigma);
    let clamped = eig.eigenvalues.map(|v| v.max(0.0));
    let r = eig.eigenvectors;
    let sigma = r * Mat3::from_diagonal(&clamped) * r.transpose();
    let sigma = (sigma + sigma.transpose()) * 0.5;
    let inertia = Mat3::identity() * sigma.trace() - sigma;
    Inertia::new(i.mass, i.com, inertia)
}

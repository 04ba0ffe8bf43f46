//! URDF loader, reproducing the semantics of Pinocchio's URDF parser (urdfdom + `pinocchio::urdf`).
//!
//! * The tree is rooted at the only link that is no joint's child. Joints are visited depth first,
//!   siblings in document order (Pinocchio orders them by name: match joints by name).
//! * `revolute`, `continuous`, `prismatic`, `floating` and (z-normal) `planar` joints become
//!   [`JointType`](crate::model::JointType)s; `fixed` joints are merged: the child link's inertia is
//!   added to the nearest moving ancestor's body and the fixed joint and the link stay available as
//!   frames ([`FrameKind::FixedJoint`](crate::model::FrameKind), `FrameKind::Body`).
//! * Joint placements are the `<origin>` of the joint composed with the fixed joints above it, up
//!   to the moving parent joint; rotations are built from `rpy` exactly as urdfdom and Pinocchio do
//!   (through a quaternion).
//! * With [`Root::FreeFlyer`] a free-flyer joint `"root_joint"` moves the root link; with
//!   [`Root::Fixed`] the root link (and everything fixed to it) is the universe.
//! * Mimic joints are recorded ([`Model::mimic`]) but are independent degrees of freedom for now.
//!
//! * What Pinocchio loads, karakuri loads (68 of the 69 URDFs of example-robot-data 6.0.0;
//!   `ur3.urdf`, without a robot name, is refused by both), with warnings in
//!   [`Geometry::warnings`] (returned by [`load_with`] and [`parse_str`]): a link whose inertia
//!   is not physical (a negative principal moment, or moments violating the triangle
//!   inequality) is kept as written when the body it is merged into is physical; a merged body
//!   that is not physical is replaced by the nearest physical inertia (second moments of mass
//!   clamped to ≥ 0, mass and centre of mass kept) and the warning says by how much; joints
//!   whose forward dynamics is undefined (they move no mass, or repeat another joint's motion:
//!   a singular mass matrix) are named, with the ways on. Such a model serves kinematics and
//!   inverse dynamics; [`ModelBuilder::build`](crate::ModelBuilder::build), which builds the
//!   simulator's world, refuses it.
//!
//! Every error is an [`UrdfError`] naming the file, the line, the element and what to fix; the
//! loader never panics on bad input. Hostile input is bounded: entity declarations (`<!ENTITY`,
//! which expand without bound) are refused, lengths, masses and inertias must lie within ±1e15
//! (SI units) and not be subnormal, and the cost of loading grows as links × depth (a
//! 5000-link chain loads in about half a second).
//!
//! ```
//! use karakuri::io::urdf::{self, LoadOptions, Root};
//! let xml = r#"<robot name="pendulum">
//!   <link name="base"/>
//!   <link name="rod"><inertial><mass value="1"/><origin xyz="0 0 -0.5"/>
//!     <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.01"/></inertial></link>
//!   <joint name="hinge" type="continuous"><parent link="base"/><child link="rod"/><axis xyz="0 1 0"/></joint>
//! </robot>"#;
//! let (model, _geometry) = urdf::parse_str(xml, "pendulum.urdf", &LoadOptions::default()).unwrap();
//! assert_eq!((model.nq, model.nv), (1, 1));
//! ```

mod build;
mod geometry;
mod parse;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::model::{JointId, Model};
use crate::spatial::{Se3, Vec3};

/// How the root link is attached to the world.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Root {
    /// The root link is the universe's body (a fixed-base robot).
    #[default]
    Fixed,
    /// A free-flyer joint named `"root_joint"` moves the root link (a floating-base robot).
    FreeFlyer,
}

/// Options of [`load_with`] and [`parse_str`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// How the root link is attached.
    pub root: Root,
    /// Directories searched for `package://` mesh files (before `ROS_PACKAGE_PATH`): for
    /// `package://pkg/rest`, each directory `D` is tried as `D/pkg/rest`, and also as `D/rest`
    /// when `D` is itself named `pkg`. After them and `ROS_PACKAGE_PATH`, the URDF file's
    /// directory and its ancestors are searched, nearest first, for a directory named `pkg`
    /// (the ancestor itself or a child of it): a URDF inside its package loads its meshes
    /// with no option set.
    pub package_dirs: Vec<PathBuf>,
}

/// Geometry read from the URDF: visual and collision shapes (meshes are located, not loaded).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Geometry {
    /// `<visual>` elements, in document order.
    pub visuals: Vec<GeometryObject>,
    /// `<collision>` elements, in document order.
    pub collisions: Vec<GeometryObject>,
    /// Non-fatal remarks: inertias not physical (kept or repaired), joints moving no mass,
    /// mimic joints loaded as independent degrees of freedom, mesh files not found, unsupported
    /// elements ignored.
    pub warnings: Vec<String>,
}

/// One visual or collision shape.
#[derive(Clone, Debug, PartialEq)]
pub struct GeometryObject {
    /// `<name>_<k>`, `<name>` being the element's `name` attribute or else its link's name, `k`
    /// counting the link's visuals (or collisions) from 0.
    pub name: String,
    /// The link it belongs to.
    pub link: String,
    /// The joint that moves it (the link's moving ancestor; 0 for links fixed to the world).
    pub parent_joint: JointId,
    /// Its placement in the frame of `parent_joint` (through merged fixed joints).
    pub placement: Se3,
    /// The shape.
    pub shape: Shape,
    /// The colour of its `<material>` (inline or by reference to a robot-level material).
    pub material_rgba: Option<[f64; 4]>,
}

/// A geometric shape, in its own frame.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// A box centred at the origin.
    Box {
        /// Side lengths along x, y, z.
        size: Vec3,
    },
    /// A cylinder along z, centred at the origin.
    Cylinder {
        /// Radius.
        radius: f64,
        /// Length along z.
        length: f64,
    },
    /// A sphere centred at the origin.
    Sphere {
        /// Radius.
        radius: f64,
    },
    /// A capsule along z (non-standard `<capsule>` element): a cylinder with hemispherical caps.
    Capsule {
        /// Radius.
        radius: f64,
        /// Length of the cylindrical part along z.
        length: f64,
    },
    /// A mesh file (not loaded).
    Mesh {
        /// The `filename` attribute, as written.
        filename: String,
        /// The first candidate path that exists, if any.
        resolved: Option<PathBuf>,
        /// Every candidate path tried, in order.
        tried: Vec<PathBuf>,
        /// Scale factors along x, y, z.
        scale: Vec3,
    },
}

/// A URDF loading error: where it is and what to do about it.
///
/// Displayed as `"{file}:{line}: <{element}>: {reason}"` (without `:{line}` when the position is
/// unknown, without `<{element}>: ` when no element is concerned, e.g. an unreadable file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrdfError {
    /// The file (or the source name given to [`parse_str`]).
    pub file: String,
    /// The 1-based line of the offending element, if known.
    pub line: Option<u32>,
    /// The tag of the offending element (e.g. `joint`, `origin`, `inertia`).
    pub element: String,
    /// What is wrong and how to fix it.
    pub reason: String,
}

impl fmt::Display for UrdfError {
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

impl std::error::Error for UrdfError {}

/// Reads and loads a URDF file; geometry is discarded (see [`load_with`]).
pub fn load(path: impl AsRef<Path>, root: Root) -> Result<Model, UrdfError> {
    let opts = LoadOptions {
        root,
        ..LoadOptions::default()
    };
    load_with(path, &opts).map(|(model, _)| model)
}

/// Reads and loads a URDF file with its geometry; relative mesh paths are resolved against the
/// file's directory.
pub fn load_with(
    path: impl AsRef<Path>,
    opts: &LoadOptions,
) -> Result<(Model, Geometry), UrdfError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let xml = std::fs::read_to_string(path).map_err(|e| UrdfError {
        file: name.clone(),
        line: None,
        element: String::new(),
        reason: format!("cannot read the URDF file: {e}"),
    })?;
    parse_str(&xml, &name, opts)
}

/// Loads a URDF from a string. `source_name` names it in errors; if it is a path, its directory
/// is the base of relative mesh paths.
pub fn parse_str(
    xml: &str,
    source_name: &str,
    opts: &LoadOptions,
) -> Result<(Model, Geometry), UrdfError> {
    let robot = parse::parse_robot(xml, source_name)?;
    let base_dir = Path::new(source_name)
        .parent()
        .filter(|d| !d.as_os_str().is_empty());
    let mut resolver = geometry::MeshResolver::new(base_dir, &opts.package_dirs);
    build::build(&robot, source_name, opts.root, &mut resolver)
}

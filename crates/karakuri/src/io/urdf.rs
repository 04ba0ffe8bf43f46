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
mod types;

use std::path::Path;

use crate::model::Model;

pub use types::{Geometry, GeometryObject, LoadOptions, Root, Shape, UrdfError};
pub(crate) use build::{inertia_defect, nearest_physical};

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

//! The URDF loader's types: how the root is attached ([`Root`]), the options
//! ([`LoadOptions`]), the collision and visual geometry it returns ([`Geometry`],
//! [`GeometryObject`], [`Shape`]) and its error ([`UrdfError`]); below the parser, the mesh
//! resolver and the model builder, which all read them.

use std::path::PathBuf;

use crate::model::JointId;
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

/// Options of [`load_with`](super::load_with) and [`parse_str`](super::parse_str).
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

/// A URDF loading error: where it is and what to do about it (the XML loaders' one error type).
pub type UrdfError = crate::io::XmlFileError;

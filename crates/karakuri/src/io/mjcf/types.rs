//! The simulation side of an MJCF model as plain typed data ([`MjcfWorld`]): MuJoCo's
//! compiled values (defaults applied, sizes and frames as `mjModel` holds them, angles in
//! radians), indices being MuJoCo's ids (body 0 the world; joints, geoms, sites in MuJoCo's
//! order). Nothing here is simulated: a simulator maps it onto its own world.

use crate::model::{FrameKind, JointId, Model};
use super::hfield::HeightGrid;
use crate::spatial::{Se3, Vec3};

/// An MJCF model: the dynamics [`Model`] and what a simulator needs beside it.
#[derive(Clone, Debug)]
pub struct MjcfWorld {
    /// The kinematic tree, as [`super::load`] gives it.
    pub model: Model,
    /// Loader warnings (massless dofs, sensors or attributes read but not simulated, ...).
    pub warnings: Vec<String>,
    /// Body names by MuJoCo body id (`world` first; unnamed ones `body<i>`).
    pub body_names: Vec<String>,
    /// Every geom, in MuJoCo's order (world geoms first).
    pub geoms: Vec<Geom>,
    /// Every site: (name, MuJoCo body id, frame in the body's frame), in MuJoCo's order.
    pub sites: Vec<(String, usize, Se3)>,
    /// Every joint's passive and limit properties, in MuJoCo's joint order (the model's).
    pub joints: Vec<JointProps>,
    /// Fixed tendons (linear combinations of joint positions).
    pub tendons: Vec<FixedTendon>,
    /// Spatial tendons through sites (straight segments; wrapping refused).
    pub spatial_tendons: Vec<SpatialTendon>,
    /// Actuators in MuJoCo's order.
    pub actuators: Vec<Actuator>,
    /// Sensors in MuJoCo's order (unsupported kinds left out with a warning).
    pub sensors: Vec<Sensor>,
    /// `<equality>` constraints.
    pub equalities: Vec<Equality>,
    /// `<contact><pair>`: explicit geom pairs.
    pub contact_pairs: Vec<ContactPair>,
    /// `<contact><exclude>`: body pairs (MuJoCo ids) that never collide.
    pub contact_excludes: Vec<(usize, usize)>,
    /// `<option>`.
    pub option: SimOption,
    /// `<keyframe>`s, complete (qpos0, zero velocity and control where not written).
    pub keyframes: Vec<Keyframe>,
    /// MuJoCo's qpos0 (each joint's `ref`, identity quaternions, free bodies' written poses):
    /// the start when there is no keyframe.
    pub qpos0: Vec<f64>,
}

impl MjcfWorld {
    /// The joint that moves MuJoCo body `body` and the body's frame in that joint's frame
    /// (the world: the universe, identity).
    pub fn body_placement(&self, body: usize) -> (JointId, Se3) {
        if body == 0 {
            return (JointId::UNIVERSE, Se3::identity());
        }
        let name = &self.body_names[body];
        let f = self
            .model
            .frames
            .iter()
            .find(|f| f.kind == FrameKind::Body && &f.name == name)
            .expect("every MuJoCo body but the world has a Body frame");
        (f.parent_joint, f.placement)
    }
    /// Geom `geom`'s joint and its frame in that joint's frame.
    pub fn geom_placement(&self, geom: usize) -> (JointId, Se3) {
        let g = &self.geoms[geom];
        let (j, x) = self.body_placement(g.body);
        (j, x.compose(&g.frame))
    }
}

/// A geom's shape; sizes as MuJoCo's `geom_size` (half sizes, radii).
#[derive(Clone, Debug, PartialEq)]
pub enum GeomShape {
    /// The z = 0 plane of the geom's frame, normal +z (sizes: half extents for drawing).
    Plane,
    /// `size[0]`: radius.
    Sphere,
    /// `size[0]`: radius, `size[1]`: half length of the segment along z.
    Capsule,
    /// `size[0]`: radius, `size[1]`: half height along z.
    Cylinder,
    /// `size`: half extents.
    Box,
    /// `size`: semi-axes.
    Ellipsoid,
    /// A mesh: its file and scale; collides as its convex hull. The frame is the mesh file's
    /// own (MuJoCo re-centres meshes on their inertia frame; a simulator need not).
    Mesh {
        /// The mesh asset's name.
        name: String,
        /// The file, resolved against `meshdir` and the model's directory.
        file: std::path::PathBuf,
        /// The asset's `scale`.
        scale: Vec3,
    },
    /// A height field: `extents` are MuJoCo's hfield `size` `(x, y, z_top, z_bottom)`; the
    /// surface is `grid` (module `hfield`'s layout) scaled by them, or the z = 0 plane of the
    /// geom's frame when `grid` is `None` (no data, or all equal: a box under z = 0).
    HeightField {
        /// The asset's name.
        name: String,
        /// MuJoCo's hfield `size`.
        extents: [f64; 4],
        /// The normalised elevations (MuJoCo's `hfield_data`); `None`: flat.
        grid: Option<std::sync::Arc<HeightGrid>>,
    },
}

/// A geom with MuJoCo's contact parameters.
#[derive(Clone, Debug)]
pub struct Geom {
    /// Its name, if written.
    pub name: Option<String>,
    /// Its MuJoCo body id.
    pub body: usize,
    /// The shape.
    pub shape: GeomShape,
    /// MuJoCo's `geom_size` (unused entries 0).
    pub size: [f64; 3],
    /// Its frame in its body's frame (`fromto` resolved).
    pub frame: Se3,
    /// `friction`: sliding, torsional, rolling.
    pub friction: [f64; 3],
    /// `contype` bits.
    pub contype: u32,
    /// `conaffinity` bits.
    pub conaffinity: u32,
    /// `condim` (1, 3, 4 or 6).
    pub condim: u8,
    /// `priority`.
    pub priority: i32,
    /// `solref` (time constant, damping ratio; or -stiffness, -damping when negative).
    pub solref: [f64; 2],
    /// `solimp`.
    pub solimp: [f64; 5],
    /// `solmix`.
    pub solmix: f64,
    /// `margin` and `gap`.
    pub margin: f64,
    /// `gap`.
    pub gap: f64,
    /// `group`.
    pub group: i32,
    /// Where it is written (`file:line`), for messages.
    pub at: String,
}

/// A joint's passive and limit properties (MuJoCo's units: radians for hinges).
#[derive(Clone, Debug)]
pub struct JointProps {
    /// The joint's name in the model.
    pub name: String,
    /// `damping` (per dof).
    pub damping: f64,
    /// `stiffness`: a spring towards `springref`.
    pub stiffness: f64,
    /// `springref` (hinge, slide).
    pub springref: f64,
    /// `frictionloss`.
    pub frictionloss: f64,
    /// `armature` (already in the model's mass matrix).
    pub armature: f64,
    /// `range` when limited (hinge, slide: qpos bounds; ball: `(0, max angle)`).
    pub range: Option<(f64, f64)>,
    /// `solreflimit`.
    pub solref_limit: [f64; 2],
    /// `solimplimit`.
    pub solimp_limit: [f64; 5],
    /// `margin` of the limit.
    pub margin: f64,
    /// `actuatorfrcrange` when `actuatorfrclimited`.
    pub actuator_force_range: Option<(f64, f64)>,
}

/// A fixed tendon: length = Σ coef · qpos(joint).
#[derive(Clone, Debug)]
pub struct FixedTendon {
    /// Its name (`tendon<i>` when unnamed).
    pub name: String,
    /// (MuJoCo joint id, coefficient).
    pub joints: Vec<(usize, f64)>,
    /// `range` when limited.
    pub range: Option<(f64, f64)>,
    /// `stiffness`, `springlength` (first value), `damping`, `frictionloss`.
    pub stiffness: f64,
    /// `springlength`.
    pub springlength: f64,
    /// `damping`.
    pub damping: f64,
    /// `frictionloss`.
    pub frictionloss: f64,
}

/// A spatial tendon of straight segments between sites: length = Σ |site_{i+1} − site_i|.
#[derive(Clone, Debug)]
pub struct SpatialTendon {
    /// Its name (`tendon<i>` when unnamed, `i` its MuJoCo tendon id).
    pub name: String,
    /// The sites it passes through, in order (MuJoCo site ids; at least two).
    pub sites: Vec<usize>,
    /// `range` when limited.
    pub range: Option<(f64, f64)>,
    /// `stiffness`.
    pub stiffness: f64,
    /// `damping`.
    pub damping: f64,
    /// `frictionloss`.
    pub frictionloss: f64,
}

/// What an actuator pulls on.
#[derive(Clone, Debug, PartialEq)]
pub enum Transmission {
    /// A joint (MuJoCo joint id).
    Joint(usize),
    /// A fixed tendon (index in [`MjcfWorld::tendons`]).
    Tendon(usize),
    /// A site (MuJoCo site id): a wrench `gear` in the site's frame (or `refsite`'s).
    Site {
        /// The site.
        site: usize,
        /// `refsite`, if written.
        refsite: Option<usize>,
    },
}

/// MuJoCo's gain and bias: force = gain · ctrl + bias with
/// gain = gainprm\[0\] (+ gainprm\[1\]·length + gainprm\[2\]·velocity when affine) and
/// bias = biasprm\[0\] + biasprm\[1\]·length + biasprm\[2\]·velocity (0 when `none`).
#[derive(Clone, Debug, PartialEq)]
pub struct Actuator {
    /// Its name (`actuator<i>` when unnamed).
    pub name: String,
    /// The element it was written as (`motor`, `position`, `velocity`, `general`, ...).
    pub kind: String,
    /// What it drives.
    pub transmission: Transmission,
    /// `dyntype` and its time constant: `None` for MuJoCo's `none` (force from ctrl directly).
    pub dynamics: Option<ActuatorDynamics>,
    /// `gear` (6 numbers; a joint or tendon uses the first).
    pub gear: [f64; 6],
    /// `gaintype` affine (else fixed).
    pub gain_affine: bool,
    /// `gainprm` (first 3 used).
    pub gainprm: [f64; 3],
    /// `biastype` affine (else none).
    pub bias_affine: bool,
    /// `biasprm` (first 3 used).
    pub biasprm: [f64; 3],
    /// `ctrlrange` when control is limited.
    pub ctrlrange: Option<(f64, f64)>,
    /// `forcerange` when force is limited.
    pub forcerange: Option<(f64, f64)>,
    /// `actrange` when the activation is limited (`actlimited`, or `autolimits`).
    pub actrange: Option<(f64, f64)>,
    /// `actearly`: the force takes the activation at the step's end.
    pub actearly: bool,
}

/// An actuator's activation dynamics (`dyntype`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ActuatorDynamics {
    /// `filter` (explicit Euler) or `filterexact`: act' = (ctrl - act) / tau.
    Filter {
        /// `dynprm[0]`.
        tau: f64,
        /// `filterexact`.
        exact: bool,
    },
    /// `integrator`: act' = ctrl.
    Integrator,
}

/// A sensor's kind and the object it reads.
#[derive(Clone, Debug, PartialEq)]
pub enum SensorKind {
    /// Linear acceleration at a site, in its frame (gravity included, as an IMU).
    Accelerometer(usize),
    /// Angular velocity at a site, in its frame.
    Gyro(usize),
    /// Linear velocity at a site, in its frame.
    Velocimeter(usize),
    /// Force between a site's body and its parent, in the site's frame.
    Force(usize),
    /// Torque between a site's body and its parent, in the site's frame.
    Torque(usize),
    /// Normal contact force summed in a site's volume.
    Touch(usize),
    /// A joint's position.
    JointPos(usize),
    /// A joint's velocity.
    JointVel(usize),
    /// An actuator's force.
    ActuatorFrc(usize),
    /// A frame quantity: `which` one of framepos, framequat, framelinvel, frameangvel;
    /// `object` a body, site or geom (`objtype`), relative to `reference` if given.
    Frame {
        /// `framepos`, `framequat`, `framelinvel` or `frameangvel`.
        which: String,
        /// `body`, `xbody`, `site` or `geom`, and its MuJoCo id.
        object: (String, usize),
        /// The reference frame's (objtype, id), if any.
        reference: Option<(String, usize)>,
    },
}

/// A sensor.
#[derive(Clone, Debug, PartialEq)]
pub struct Sensor {
    /// Its name (`sensor<i>` when unnamed).
    pub name: String,
    /// What it measures.
    pub kind: SensorKind,
    /// `noise` (standard deviation).
    pub noise: f64,
    /// `cutoff` (0: none).
    pub cutoff: f64,
}

/// An `<equality>` constraint.
#[derive(Clone, Debug, PartialEq)]
pub enum EqualityKind {
    /// `connect`: `anchor` (in body1's frame) of body1 and body2 coincide.
    Connect {
        /// MuJoCo body ids.
        body1: usize,
        /// Body 2 (0: the world).
        body2: usize,
        /// The point, in body1's frame.
        anchor: Vec3,
    },
    /// `weld`: body2's frame stays at `relpose` in body1's (`None`: as at qpos0).
    Weld {
        /// Body 1.
        body1: usize,
        /// Body 2 (0: the world).
        body2: usize,
        /// Body2's frame in body1's, if written (MuJoCo's `relpose`).
        relpose: Option<Se3>,
        /// `torquescale`.
        torquescale: f64,
    },
    /// `joint`: q1 = y0 + a1 (q2 - q2_0) + a2 (..)² + ... (`joint2` absent: q1 = polycoef\[0\]).
    Joint {
        /// MuJoCo joint ids.
        joint1: usize,
        /// Joint 2, if any.
        joint2: Option<usize>,
        /// `polycoef`.
        polycoef: [f64; 5],
    },
    /// `tendon` (fixed tendons only): as `Joint` with the tendons' lengths (indices in
    /// [`MjcfWorld::tendons`]).
    Tendon {
        /// Tendon 1.
        tendon1: usize,
        /// Tendon 2, if any.
        tendon2: Option<usize>,
        /// `polycoef`.
        polycoef: [f64; 5],
    },
}

/// An equality constraint with its activity and softness.
#[derive(Clone, Debug, PartialEq)]
pub struct Equality {
    /// Its name, if written.
    pub name: Option<String>,
    /// What it holds.
    pub kind: EqualityKind,
    /// `active`.
    pub active: bool,
    /// `solref`.
    pub solref: [f64; 2],
    /// `solimp`.
    pub solimp: [f64; 5],
}

/// A `<contact><pair>`.
#[derive(Clone, Debug, PartialEq)]
pub struct ContactPair {
    /// The geoms (MuJoCo ids).
    pub geoms: (usize, usize),
    /// `condim`.
    pub condim: u8,
    /// `friction`: sliding (2), torsional, rolling (2).
    pub friction: [f64; 5],
    /// `solref`.
    pub solref: [f64; 2],
    /// `solimp`.
    pub solimp: [f64; 5],
    /// `margin`.
    pub margin: f64,
    /// `gap`.
    pub gap: f64,
}

/// `<option>` integrators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Integrator {
    /// Semi-implicit Euler (MuJoCo's default).
    Euler,
    /// Runge-Kutta 4.
    Rk4,
    /// Implicit in velocity.
    Implicit,
    /// Implicit in velocity, fast variant.
    ImplicitFast,
}

/// `<option>`.
#[derive(Clone, Debug, PartialEq)]
pub struct SimOption {
    /// `timestep` (0.002).
    pub timestep: f64,
    /// `gravity` (zero when `<flag gravity="disable">`).
    pub gravity: Vec3,
    /// `integrator`.
    pub integrator: Integrator,
    /// `cone` elliptic (else pyramidal, MuJoCo's default).
    pub elliptic_cone: bool,
    /// `impratio`.
    pub impratio: f64,
    /// `<flag contact="disable">`.
    pub contact_disabled: bool,
    /// `<flag filterparent="disable">`: a body and its parent may collide.
    pub filterparent_disabled: bool,
}

/// A `<key>`, completed as MuJoCo does (qpos0, zeros).
#[derive(Clone, Debug, PartialEq)]
pub struct Keyframe {
    /// Its name (`key<i>` when unnamed).
    pub name: String,
    /// `time`.
    pub time: f64,
    /// MuJoCo's qpos (nq, quaternions `[w x y z]`; see [`super::from_mujoco_qpos`]).
    pub qpos: Vec<f64>,
    /// MuJoCo's qvel (nv; see [`super::from_mujoco_qvel`]).
    pub qvel: Vec<f64>,
    /// `ctrl` (one per actuator).
    pub ctrl: Vec<f64>,
}

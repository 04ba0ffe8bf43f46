//! The contact model: contact modes and parameters, per-pair overrides, and their file layout
//! (`mode` with `stiffness` and `damping` beside it for `penalty`: [`ContactFile`], [`PairFile`]).

use serde::{Deserialize, Serialize};

/// How a pair of shapes in contact is handled (in files: `mode`, with `stiffness` and `damping`
/// beside it for `penalty`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ContactMode {
    /// No contact at all (the shapes pass through each other).
    None,
    /// Constraint-based (velocity-level LCP), Springhead's model: the default.
    Lcp,
    /// Spring-damper normal force with regularised Coulomb friction.
    Penalty {
        /// Normal stiffness (N/m).
        stiffness: f64,
        /// Normal damping (N·s/m).
        damping: f64,
    },
}

/// `contact`: Springhead's contact model in physical units.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ContactFile", into = "ContactFile")]
pub struct ContactParams {
    /// γ: fraction of the penetration beyond the tolerance removed per step.
    pub error_correction_rate: f64,
    /// d_tol: penetration left uncorrected (m).
    pub penetration_tolerance: f64,
    /// V_th: approach speed below which restitution is zero (m/s).
    pub restitution_threshold_velocity: f64,
    /// V_f: slip speed below which static friction applies (m/s).
    pub friction_threshold_velocity: f64,
    /// Bodies never collide with their parent or children.
    pub exclude_parent_child: bool,
    /// Contacts are detected this far before the shapes touch (m); such contacts only forbid
    /// closing the remaining gap within the step (speculative contacts).
    pub prediction_distance: f64,
    /// The fastest a contact's penetration correction may push its bodies apart (m/s), as
    /// PhysX's `maxDepenetrationVelocity`: a body starting deep inside another rises out at
    /// this speed instead of being launched by `error_correction_rate · depth / dt`.
    pub max_depenetration_speed: f64,
    /// Mode of every pair not listed in `contact_pairs`.
    pub mode: ContactMode,
    /// Free text kept for the reader.
    pub solver_hint: Option<String>,
}

impl Default for ContactParams {
    fn default() -> Self {
        ContactParams {
            error_correction_rate: 0.2,
            penetration_tolerance: 0.001,
            restitution_threshold_velocity: 0.1,
            friction_threshold_velocity: 0.01,
            exclude_parent_child: true,
            prediction_distance: 0.01,
            max_depenetration_speed: 0.2,
            mode: ContactMode::Lcp,
            solver_hint: None,
        }
    }
}

/// Per-pair contact settings (in files: `{bodies, mode, stiffness, damping}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "PairFile", into = "PairFile")]
pub struct PairSpec {
    /// The two bodies.
    pub bodies: [String; 2],
    /// Their contact mode.
    pub mode: ContactMode,
}

/// `mode` in files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModeKind {
    /// [`ContactMode::None`].
    None,
    /// [`ContactMode::Lcp`].
    #[default]
    Lcp,
    /// [`ContactMode::Penalty`].
    Penalty,
}

fn mode_of(kind: ModeKind, stiffness: Option<f64>, damping: Option<f64>) -> Result<ContactMode, String> {
    match kind {
        ModeKind::Penalty => Ok(ContactMode::Penalty {
            stiffness: stiffness.ok_or("`stiffness`: missing (mode penalty needs it, N/m)")?,
            damping: damping.unwrap_or(0.0),
        }),
        _ if stiffness.is_some() => Err("`stiffness`: only mode penalty has a stiffness".into()),
        _ if damping.is_some() => Err("`damping`: only mode penalty has a damping".into()),
        ModeKind::None => Ok(ContactMode::None),
        ModeKind::Lcp => Ok(ContactMode::Lcp),
    }
}

fn mode_fields(m: ContactMode) -> (ModeKind, Option<f64>, Option<f64>) {
    match m {
        ContactMode::None => (ModeKind::None, None, None),
        ContactMode::Lcp => (ModeKind::Lcp, None, None),
        ContactMode::Penalty { stiffness, damping } => (ModeKind::Penalty, Some(stiffness), Some(damping)),
    }
}

/// `contact` as written.
#[derive(Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContactFile {
    error_correction_rate: f64,
    penetration_tolerance: f64,
    restitution_threshold_velocity: f64,
    friction_threshold_velocity: f64,
    exclude_parent_child: bool,
    prediction_distance: f64,
    max_depenetration_speed: f64,
    mode: ModeKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    stiffness: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    damping: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    solver_hint: Option<String>,
}

impl Default for ContactFile {
    fn default() -> Self {
        ContactParams::default().into()
    }
}

impl From<ContactParams> for ContactFile {
    fn from(c: ContactParams) -> Self {
        let (mode, stiffness, damping) = mode_fields(c.mode);
        ContactFile {
            error_correction_rate: c.error_correction_rate,
            penetration_tolerance: c.penetration_tolerance,
            restitution_threshold_velocity: c.restitution_threshold_velocity,
            friction_threshold_velocity: c.friction_threshold_velocity,
            exclude_parent_child: c.exclude_parent_child,
            prediction_distance: c.prediction_distance,
            max_depenetration_speed: c.max_depenetration_speed,
            mode,
            stiffness,
            damping,
            solver_hint: c.solver_hint,
        }
    }
}

impl TryFrom<ContactFile> for ContactParams {
    type Error = String;
    fn try_from(c: ContactFile) -> Result<Self, String> {
        Ok(ContactParams {
            error_correction_rate: c.error_correction_rate,
            penetration_tolerance: c.penetration_tolerance,
            restitution_threshold_velocity: c.restitution_threshold_velocity,
            friction_threshold_velocity: c.friction_threshold_velocity,
            exclude_parent_child: c.exclude_parent_child,
            prediction_distance: c.prediction_distance,
            max_depenetration_speed: c.max_depenetration_speed,
            mode: mode_of(c.mode, c.stiffness, c.damping)?,
            solver_hint: c.solver_hint,
        })
    }
}

/// A `contact_pairs` entry as written.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairFile {
    bodies: [String; 2],
    mode: ModeKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stiffness: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    damping: Option<f64>,
}

impl From<PairSpec> for PairFile {
    fn from(p: PairSpec) -> Self {
        let (mode, stiffness, damping) = mode_fields(p.mode);
        PairFile { bodies: p.bodies, mode, stiffness, damping }
    }
}

impl TryFrom<PairFile> for PairSpec {
    type Error = String;
    fn try_from(p: PairFile) -> Result<Self, String> {
        Ok(PairSpec { mode: mode_of(p.mode, p.stiffness, p.damping)?, bodies: p.bodies })
    }
}

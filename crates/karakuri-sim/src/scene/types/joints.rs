//! The joint a free body hangs on, and its file layout (`type: free | revolute | prismatic`,
//! `q0`/`qd0` a pose and twist or numbers: [`JointFile`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::basics::{Pose, Twist};
use super::actuators::ActuatorSpec;

/// One joint of a body (in files: `type: free | revolute | prismatic`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "JointFile", into = "JointFile")]
pub enum JointSpec {
    /// Six degrees of freedom; the initial state in world axes.
    Free {
        /// Name.
        name: String,
        /// Initial world pose of the body frame.
        q0: Pose,
        /// Initial world velocity.
        qd0: Twist,
    },
    /// A hinge (`prismatic: false`) or slider about/along `axis` through `anchor`, child frame.
    Hinge {
        /// Name.
        name: String,
        /// `true` for a slider.
        prismatic: bool,
        /// Unit axis, child frame.
        axis: [f64; 3],
        /// Anchor point, child frame.
        anchor: [f64; 3],
        /// Initial position.
        q0: f64,
        /// Initial velocity.
        qd0: f64,
        /// Position limits.
        limits: Option<[f64; 2]>,
        /// Viscous damping (N·m·s/rad or N·s/m).
        damping: f64,
        /// Spring stiffness (N·m/rad or N/m).
        stiffness: f64,
        /// Spring rest position.
        spring_reference: f64,
        /// Armature (rotor inertia) added to the mass matrix diagonal.
        armature: f64,
        /// The joint's actuator, if it has one.
        actuator: Option<ActuatorSpec>,
        /// Coulomb friction (N·m or N): the joint sticks while the other torques on it stay
        /// within it.
        friction: f64,
    },
}

impl JointSpec {
    /// The joint's name.
    pub fn name(&self) -> &str {
        match self {
            JointSpec::Free { name, .. } | JointSpec::Hinge { name, .. } => name,
        }
    }
}

/// Joint `type`s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JointKind {
    /// [`JointSpec::Free`].
    Free,
    /// [`JointSpec::Hinge`], rotating.
    Revolute,
    /// [`JointSpec::Hinge`], sliding.
    Prismatic,
}

/// A joint as written (a missing `name` is filled by validation: `<body>_j<index>`).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointFile {
    #[serde(rename = "type")]
    kind: JointKind,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    q0: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    qd0: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    axis: Option<[f64; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    anchor: Option<[f64; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    limits: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    damping: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stiffness: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    spring_reference: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    armature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    actuator: Option<ActuatorSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    friction: Option<f64>,
}

fn number(v: &Option<Value>, key: &str) -> Result<f64, String> {
    match v {
        None => Ok(0.0),
        Some(x) => x.as_f64().ok_or_else(|| format!("`{key}`: expected a number, found {}", crate::scene::short(x))),
    }
}

fn typed<T: for<'de> Deserialize<'de> + Default>(v: Option<Value>, key: &str) -> Result<T, String> {
    let Some(x) = v else { return Ok(T::default()) };
    serde_path_to_error::deserialize(&x).map_err(|e| match e.path().to_string().as_str() {
        "." => format!("`{key}`: {}", e.inner()),
        inner => format!("`{key}.{inner}`: {}", e.inner()),
    })
}

impl TryFrom<JointFile> for JointSpec {
    type Error = String;
    fn try_from(j: JointFile) -> Result<Self, String> {
        if j.kind == JointKind::Free {
            let hinge_keys = [
                ("axis", j.axis.is_some()),
                ("anchor", j.anchor.is_some()),
                ("limits", j.limits.is_some()),
                ("damping", j.damping.is_some()),
                ("stiffness", j.stiffness.is_some()),
                ("spring_reference", j.spring_reference.is_some()),
                ("armature", j.armature.is_some()),
                ("actuator", j.actuator.is_some()),
                ("friction", j.friction.is_some()),
            ];
            if let Some((k, _)) = hinge_keys.iter().find(|(_, p)| *p) {
                return Err(format!("`{k}`: unknown key for a free joint (expected one of: name, type, q0, qd0)"));
            }
            return Ok(JointSpec::Free { name: j.name, q0: typed::<Pose>(j.q0, "q0")?, qd0: typed::<Twist>(j.qd0, "qd0")? });
        }
        Ok(JointSpec::Hinge {
            prismatic: j.kind == JointKind::Prismatic,
            axis: j.axis.ok_or("`axis`: missing (the unit axis in the child frame)")?,
            anchor: j.anchor.unwrap_or_default(),
            q0: number(&j.q0, "q0")?,
            qd0: number(&j.qd0, "qd0")?,
            limits: j.limits,
            damping: j.damping.unwrap_or(0.0),
            stiffness: j.stiffness.unwrap_or(0.0),
            spring_reference: j.spring_reference.unwrap_or(0.0),
            armature: j.armature.unwrap_or(0.0),
            actuator: j.actuator,
            friction: j.friction.unwrap_or(0.0),
            name: j.name,
        })
    }
}

impl From<JointSpec> for JointFile {
    fn from(j: JointSpec) -> Self {
        match j {
            JointSpec::Free { name, q0, qd0 } => JointFile {
                kind: JointKind::Free,
                name,
                q0: serde_json::to_value(q0).ok(),
                qd0: serde_json::to_value(qd0).ok(),
                axis: None,
                anchor: None,
                limits: None,
                damping: None,
                stiffness: None,
                spring_reference: None,
                armature: None,
                actuator: None,
                friction: None,
            },
            JointSpec::Hinge { name, prismatic, axis, anchor, q0, qd0, limits, damping, stiffness, spring_reference, armature, actuator, friction } => {
                JointFile {
                    kind: if prismatic { JointKind::Prismatic } else { JointKind::Revolute },
                    name,
                    q0: Some(q0.into()),
                    qd0: Some(qd0.into()),
                    axis: Some(axis),
                    anchor: Some(anchor),
                    limits,
                    damping: Some(damping),
                    stiffness: Some(stiffness),
                    spring_reference: Some(spring_reference),
                    armature: Some(armature),
                    actuator,
                    friction: (friction != 0.0).then_some(friction),
                }
            }
        }
    }
}

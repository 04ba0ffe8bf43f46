//! [`Layout`]: the names and widths of a world's joint, sensor and track arrays, read once from
//! the engine's [`Description`], so every name is resolved to an index in one place (the
//! world's methods, controllers) and every table built from them (the CLI's CSV headers,
//! Python's observation names) agrees.

use crate::engine::{Description, JointInfo};
use crate::scene::SensorKind;
use crate::SimError;

/// A sensor's place in the flat sensor vector (every reading's components, in sensor order).
#[derive(Clone, Debug, PartialEq)]
pub struct SensorSlot {
    /// The sensor's name.
    pub name: String,
    /// What it measures.
    pub kind: SensorKind,
    /// Index of its first component in the flat sensor vector.
    pub offset: usize,
    /// Its number of components ([`SensorKind::width`]).
    pub width: usize,
}

/// A body whose whole pose is state (a robot's floating base, a free scene body): its place in
/// the world's bodies ([`crate::World::states`]), for observations.
#[derive(Clone, Debug, PartialEq)]
pub struct FreeBodySlot {
    /// The robot's name for a floating base, else the body's name.
    pub name: String,
    /// Index into the world's bodies.
    pub body: usize,
}

/// The world's arrays by name: the one-dof joints (the order of `write_joint_states`, q and v
/// index `k` each) with their limits and actuators, the actuated ones, the sensors with their
/// flat offsets and widths, and the track surfaces.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    /// Names of the one-dof joints.
    pub joints: Vec<String>,
    /// Each one-dof joint's limits and actuator (same order).
    pub joint_infos: Vec<JointInfo>,
    /// Indices (into `joints`) of the joints with an actuator, in joint order.
    pub actuated: Vec<usize>,
    /// The joints with more than one degree of freedom (name, dofs): for errors.
    pub other_joints: Vec<(String, usize)>,
    /// The sensors, in the order of the readings.
    pub sensors: Vec<SensorSlot>,
    /// The track surfaces by name, in the order of their speeds.
    pub tracks: Vec<String>,
    /// The bodies joined to the world by a free joint (free scene bodies, robots' floating
    /// bases), in body order: those whose pose and velocity observations carry.
    pub free_bodies: Vec<FreeBodySlot>,
}

impl Layout {
    /// Reads an engine's description (its joint, actuator, sensor and track infos).
    pub fn of(d: &Description) -> Layout {
        let infos = &d.joint_infos;
        let mut offset = 0;
        let sensors = d
            .sensors
            .iter()
            .map(|s| {
                let width = s.kind.width();
                offset += width;
                SensorSlot { name: s.name.clone(), kind: s.kind, offset: offset - width, width }
            })
            .collect();
        Layout {
            joints: d.joints.clone(),
            joint_infos: infos.clone(),
            actuated: (0..infos.len()).filter(|&k| infos[k].actuator.is_some()).collect(),
            other_joints: d.other_joints.clone(),
            sensors,
            tracks: d.tracks.clone(),
            free_bodies: free_bodies(d),
        }
    }

    /// Index of a one-dof joint by name.
    pub fn joint(&self, name: &str) -> Option<usize> {
        self.joints.iter().position(|j| j == name)
    }

    /// Index of a one-dof joint by name, or the error naming it: [`SimError::NotOneDof`] for a
    /// joint with another number of degrees of freedom, else [`SimError::UnknownJoint`].
    pub fn one_dof(&self, name: &str) -> Result<usize, SimError> {
        if let Some(k) = self.joint(name) {
            return Ok(k);
        }
        Err(match self.other_joints.iter().find(|(n, _)| n == name) {
            Some((_, dofs)) => SimError::NotOneDof { joint: name.to_string(), dofs: *dofs },
            None => SimError::UnknownJoint { joint: name.to_string() },
        })
    }

    /// Index of a track surface by name.
    pub fn track(&self, name: &str) -> Option<usize> {
        self.tracks.iter().position(|t| t == name)
    }

    /// Index of a sensor by name.
    pub fn sensor(&self, name: &str) -> Option<usize> {
        self.sensors.iter().position(|s| s.name == name)
    }

    /// The sensors' names, in order.
    pub fn sensor_names(&self) -> Vec<String> {
        self.sensors.iter().map(|s| s.name.clone()).collect()
    }

    /// Length of the flat sensor vector (the sum of the widths).
    pub fn sensor_values(&self) -> usize {
        self.sensors.last().map_or(0, |s| s.offset + s.width)
    }

    /// Every sensor component in flat order, as (sensor name, component name: `x` … or
    /// `fx` …).
    pub fn sensor_components(&self) -> impl Iterator<Item = (&str, &'static str)> + '_ {
        self.sensors.iter().flat_map(|s| s.kind.component_names().iter().map(move |c| (s.name.as_str(), *c)))
    }
}

/// The bodies joined to the world by a free joint, in body order, a robot's floating base
/// named by its robot.
fn free_bodies(d: &Description) -> Vec<FreeBodySlot> {
    let robot_of = |b: usize| d.robots.iter().find(|r| r.body.get(1) == Some(&b)).map(|r| r.name.clone());
    let free = d.bodies.iter().enumerate().filter(|(_, info)| info.free);
    free.map(|(b, info)| FreeBodySlot { name: robot_of(b).unwrap_or_else(|| info.name.clone()), body: b }).collect()
}

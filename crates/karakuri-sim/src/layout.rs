//! [`Layout`]: the names and widths of a world's joint and sensor arrays, resolved once from
//! the engine's infos, so every table built from them (the CLI's CSV headers, Python's
//! observation names) agrees.

use crate::engine::Engine;
use crate::scene::SensorKind;

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

/// The world's arrays by name: the one-dof joints (the order of `write_joint_states`, q and v
/// index `k` each), the actuated ones, and the sensors with their flat offsets and widths.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    /// Names of the one-dof joints.
    pub joints: Vec<String>,
    /// Indices (into `joints`) of the joints with an actuator, in joint order.
    pub actuated: Vec<usize>,
    /// The sensors, in the order of the readings.
    pub sensors: Vec<SensorSlot>,
}

impl Layout {
    /// Reads `engine`'s joint, actuator and sensor infos.
    pub fn of(engine: &dyn Engine) -> Layout {
        let infos = engine.joint_infos();
        let mut offset = 0;
        let sensors = engine
            .sensors()
            .iter()
            .map(|s| {
                let width = s.kind.width();
                offset += width;
                SensorSlot { name: s.name.clone(), kind: s.kind, offset: offset - width, width }
            })
            .collect();
        Layout {
            joints: engine.one_dof_joints().to_vec(),
            actuated: (0..infos.len()).filter(|&k| infos[k].actuator.is_some()).collect(),
            sensors,
        }
    }

    /// Index of a one-dof joint by name.
    pub fn joint(&self, name: &str) -> Option<usize> {
        self.joints.iter().position(|j| j == name)
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

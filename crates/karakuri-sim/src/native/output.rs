//! What a step reports ([`StepOutput`]): the results of the last step that the world and the
//! controllers read between steps. Separate from the workspace (scratch within a step) and from
//! the run's counters (`SimState::diagnostics`); a checkpoint saves it whole.

use serde::{Deserialize, Serialize};

use super::build::SimModel;
use crate::engine::{ContactInfo, StageTimes};
use crate::solver::SolveStats;

/// The last step's results, written by the stages that produce them.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StepOutput {
    /// Each sensor's reading after the last step `(sensors)`: `[x, y, z, 0, 0, 0]` for
    /// accelerometers and gyros, `[fx, fy, fz, tx, ty, tz]` for force sensors, sensor axes
    /// (the sensor_readings and sensor_noise stages).
    pub readings: Vec<[f64; 6]>,
    /// Each actuator's torque (force) applied over the last step `(actuators)` (the
    /// actuator_report stage).
    pub act_tau: Vec<f64>,
    /// The contacts of the last step with their mean forces `(contacts)`, the sleeping
    /// islands' kept contacts after them (the contact_forces stage).
    #[serde(with = "contact_records")]
    pub contacts: Vec<ContactInfo>,
    /// Statistics of the last constraint solve (the constraint stage).
    #[serde(default, with = "solve_stats")]
    pub last_solve: SolveStats,
    /// Wall time of each stage of the last step (zeros unless timed; never saved: a
    /// restored world reports zeros until its next timed step).
    #[serde(skip)]
    pub times: StageTimes,
}

impl StepOutput {
    /// The outputs of a world before its first step: zero readings and torques, no contacts.
    pub fn new(m: &SimModel) -> StepOutput {
        StepOutput {
            readings: vec![[0.0; 6]; m.sensors.len()],
            act_tau: vec![0.0; m.actuators.len()],
            ..StepOutput::default()
        }
    }
}

/// `#[serde(with = "contact_records")]`: contacts as plain numbers, each `[[body_a, body_b],
/// point, normal, depth, force]` (the checkpoint layout since checkpoints began).
mod contact_records {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::engine::ContactInfo;

    /// A contact as plain numbers: bodies, point, normal, depth, force.
    type Record = ([usize; 2], [f64; 3], [f64; 3], f64, [f64; 3]);

    /// Writes the contacts as records.
    pub fn serialize<S: Serializer>(contacts: &[ContactInfo], s: S) -> Result<S::Ok, S::Error> {
        let records: Vec<Record> = contacts
            .iter()
            .map(|c| ([c.body_a, c.body_b], c.point.into(), c.normal.into(), c.depth, c.force.into()))
            .collect();
        records.serialize(s)
    }

    /// Reads records into contacts.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ContactInfo>, D::Error> {
        let records = Vec::<Record>::deserialize(d)?;
        Ok(records
            .into_iter()
            .map(|(b, p, n, depth, f)| ContactInfo {
                body_a: b[0],
                body_b: b[1],
                point: p.into(),
                normal: n.into(),
                depth,
                force: f.into(),
            })
            .collect())
    }
}

/// `#[serde(with = "solve_stats")]`: a solve's statistics as `[iterations, residual, direct]`.
mod solve_stats {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::solver::SolveStats;

    /// Writes the statistics as a triple.
    pub fn serialize<S: Serializer>(st: &SolveStats, s: S) -> Result<S::Ok, S::Error> {
        (st.iterations, st.residual, st.direct).serialize(s)
    }

    /// Reads a triple into statistics.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SolveStats, D::Error> {
        let (iterations, residual, direct) = <(usize, f64, bool)>::deserialize(d)?;
        Ok(SolveStats { iterations, residual, direct, ..SolveStats::default() })
    }
}

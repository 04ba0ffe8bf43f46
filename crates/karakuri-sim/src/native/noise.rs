//! The sensor-noise stage: Gaussian noise and bias on the readings (`sensors[].noise`).

use super::build::SimModel;
use super::output::StepOutput;
use super::state::SimState;
use super::work::StepData;
use crate::SimError;

/// Sensor noise, after the readings: each component of a noisy sensor's reading becomes
/// `exact + bias + std · N(0, 1)`, the normal numbers drawn from the sensor's stream in
/// `s.sensor_rng` (component order; a component with `std = 0` draws nothing), so a seed gives
/// the same readings on every run and a restored state continues the same sequence. Sensors
/// without noise are left exact (a world without, `m.plan.noise` off, skips the stage). Reads
/// `m.sensors`; writes `out.readings`, `s.sensor_rng`.
#[inline]
pub fn sensor_noise(m: &SimModel, s: &mut SimState, _w: &mut StepData, out: &mut StepOutput) -> Result<(), SimError> {
    if !m.plan.noise {
        return Ok(());
    }
    for (i, sn) in m.sensors.iter().enumerate() {
        let Some(n) = sn.noise else { continue };
        let rng = &mut s.sensor_rng[i];
        for (k, x) in out.readings[i].iter_mut().enumerate() {
            if n.std[k] != 0.0 {
                *x += n.bias[k] + n.std[k] * rng.gaussian();
            } else if n.bias[k] != 0.0 {
                *x += n.bias[k];
            }
        }
    }
    Ok(())
}

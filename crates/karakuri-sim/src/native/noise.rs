//! The sensor-noise stage: Gaussian noise and bias on the readings (`sensors[].noise`).

use super::build::SimModel;
use super::state::{SimState, StepData};

/// Sensor noise, after the readings: each component of a noisy sensor's reading becomes
/// `exact + bias + std · N(0, 1)`, the normal numbers drawn from the sensor's stream in
/// `s.sensor_rng` (component order; a component with `std = 0` draws nothing), so a seed gives
/// the same readings on every run and a restored state continues the same sequence. Sensors
/// without noise are left exact. Reads `m.sensors`; writes `w.readings`, `s.sensor_rng`.
pub fn sensor_noise(m: &SimModel, s: &mut SimState, w: &mut StepData) {
    for (i, sn) in m.sensors.iter().enumerate() {
        let Some(n) = sn.noise else { continue };
        let rng = &mut s.sensor_rng[i];
        for (k, x) in w.readings[i].iter_mut().enumerate() {
            if n.std[k] != 0.0 {
                *x += n.bias[k] + n.std[k] * rng.gaussian();
            } else if n.bias[k] != 0.0 {
                *x += n.bias[k];
            }
        }
    }
}

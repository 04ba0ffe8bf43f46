//! The sensors' stages: the contact forces the step reported, and the sensor readings
//! differenced over the step (accelerometers, gyros, force sensors).

use karakuri::spatial::{Force, Motion, Se3, Vec3};

use super::build::SimModel;
use super::output::StepOutput;
use super::sleep;
use super::state::SimState;
use super::work::StepData;
use crate::engine::ContactInfo;
use crate::scene::SensorKind;
use crate::SimError;

/// Contact forces: each contact with the mean force it carried over the step (penalty force
/// plus `Σ dirs λ / dt`), then the sleeping islands' kept contacts (see
/// [`sleep::report_contacts`]). Reads `w.raw`, `w.contact_rows`, `w.solution.lambda`; writes
/// `out.contacts`. A world whose shapes never touch (`m.plan.contacts` off) skips it.
#[inline]
pub fn contact_forces(m: &SimModel, s: &mut SimState, w: &mut StepData, out: &mut StepOutput) -> Result<(), SimError> {
    if m.plan.contacts {
        contacts_of_the_step(m, w, out);
    }
    sleep::report_contacts(m, s, w, out);
    Ok(())
}

/// The step's contacts with their forces into `out.contacts`.
fn contacts_of_the_step(m: &SimModel, w: &StepData, out: &mut StepOutput) {
    out.contacts.clear();
    for cr in &w.contact_rows {
        let c = &w.raw[cr.raw];
        let mut f = cr.penalty_force;
        for k in 0..cr.nrows {
            f += cr.dirs[k] * (w.solution.lambda[cr.row + k] / m.dt);
        }
        out.contacts.push(ContactInfo {
            body_a: m.collider.shapes[c.shape_a].body,
            body_b: m.collider.shapes[c.shape_b].body,
            point: c.point,
            normal: c.normal,
            depth: c.depth,
            force: f,
        });
    }
}

/// The world velocity of the body-fixed point `p` (joint frame) of a joint placed at `x` moving
/// with `v` (joint frame).
fn point_velocity(x: &Se3, v: &Motion, p: &Vec3) -> Vec3 {
    let vw = x.act_motion(v);
    vw.linear + vw.angular.cross(&x.transform_point(p))
}

/// The spatial momentum (world axes, about the world origin) of the bodies of `subtree`.
fn subtree_momentum(m: &SimModel, o_m_i: &[Se3], vel: &[Motion], subtree: &[bool]) -> Force {
    let mut h = Force::zero();
    for (k, _) in subtree.iter().enumerate().filter(|(_, &inside)| inside) {
        let hk = o_m_i[k].act_force(&m.model.inertias[k].mul_motion(&vel[k]));
        h.linear += hk.linear;
        h.angular += hk.angular;
    }
    h
}

/// Sensor start: what the readings difference over the step, from the kinematics of the
/// step's start state: each accelerometer's point velocity and each force sensor's child-side
/// momentum. Reads `w.data` (placements, velocities), `m.sensors`; writes `w.sensor_start`.
/// A world without sensors (`m.plan.sensors` off) skips it.
#[inline]
pub fn sensor_start(m: &SimModel, _s: &mut SimState, w: &mut StepData, _out: &mut StepOutput) -> Result<(), SimError> {
    if !m.plan.sensors {
        return Ok(());
    }
    let (o_m_i, vel) = (w.data.joint_placements()?, w.data.joint_velocities()?);
    for (i, sn) in m.sensors.iter().enumerate() {
        w.sensor_start[i] = match sn.kind {
            SensorKind::Accelerometer => {
                let j = sn.joint;
                Force {
                    linear: point_velocity(&o_m_i[j], &vel[j], &sn.placement.translation),
                    angular: Vec3::zeros(),
                }
            }
            SensorKind::RateGyro => Force::zero(),
            SensorKind::Force => subtree_momentum(m, o_m_i, vel, &sn.subtree),
        };
    }
    Ok(())
}

/// Sensor readings, after the kinematics and contact-force stages, from the step's velocity
/// change (so contact and constraint impulses are in them):
/// * accelerometer: `Rᵀ ((v⁺_p − v_p) / dt − g)`, `v_p` the world velocity of the sensor's
///   body-fixed point at the step's start and end, `R` the sensor's world rotation;
/// * rate gyro: the body's angular velocity in sensor axes;
/// * force: Newton–Euler on the child side: the wrench through the joint is the child side's
///   momentum change over the step minus gravity on it, the contact forces on it
///   (`out.contacts`) and the forces of the loop closures joining it to the rest of the world
///   (each loop row's `wrench · impulse / dt`, the step's solve and SHAKE's corrections; a
///   loop with both bodies on the child side is internal), moved to the sensor origin and
///   expressed in sensor axes.
///
/// Reads `w.data`, `w.sensor_start`, `out.contacts`, `w.loop_wrench`, `w.loop_impulse`,
/// `m.sensors`, `m.loops`; writes `out.readings`. A world without sensors skips it.
#[inline]
pub fn sensor_readings(m: &SimModel, _s: &mut SimState, w: &mut StepData, out: &mut StepOutput) -> Result<(), SimError> {
    if !m.plan.sensors {
        return Ok(());
    }
    let (o_m_i, vel) = (w.data.joint_placements()?, w.data.joint_velocities()?);
    let g = m.model.gravity_vector();
    for (i, sn) in m.sensors.iter().enumerate() {
        let x = o_m_i[sn.joint].compose(&sn.placement);
        let rt = x.rotation.transpose();
        out.readings[i] = match sn.kind {
            SensorKind::Accelerometer => {
                let j = sn.joint;
                let v1 = point_velocity(&o_m_i[j], &vel[j], &sn.placement.translation);
                let a = rt * ((v1 - w.sensor_start[i].linear) / m.dt - g);
                [a.x, a.y, a.z, 0.0, 0.0, 0.0]
            }
            SensorKind::RateGyro => {
                let om = sn.placement.rotation.transpose() * vel[sn.joint].angular;
                [om.x, om.y, om.z, 0.0, 0.0, 0.0]
            }
            SensorKind::Force => {
                let h1 = subtree_momentum(m, o_m_i, vel, &sn.subtree);
                let mut f = (h1.linear - w.sensor_start[i].linear) / m.dt;
                let mut n = (h1.angular - w.sensor_start[i].angular) / m.dt;
                for (k, _) in sn.subtree.iter().enumerate().filter(|(_, &inside)| inside) {
                    let body = &m.model.inertias[k];
                    let weight = body.mass * g;
                    let c = o_m_i[k].transform_point(&body.com);
                    f -= weight;
                    n -= c.cross(&weight);
                }
                for c in &out.contacts {
                    let on_b = sn.subtree[m.bodies[c.body_b].joint];
                    let on_a = sn.subtree[m.bodies[c.body_a].joint];
                    let fc = match (on_a, on_b) {
                        (false, true) => c.force,
                        (true, false) => -c.force,
                        _ => continue,
                    };
                    f -= fc;
                    n -= c.point.cross(&fc);
                }
                let mut r = 0;
                for l in &m.loops {
                    let (on_a, on_b) = (sn.subtree[l.ja], sn.subtree[l.jb]);
                    let rows = r..r + l.rows();
                    r = rows.end;
                    if on_a == on_b {
                        continue;
                    }
                    for k in rows {
                        let [on_body_b, on_body_a] = w.loop_wrench[k];
                        let unit = if on_b { on_body_b } else { on_body_a };
                        let lambda = w.loop_impulse[k] / m.dt;
                        f -= unit.linear * lambda;
                        n -= unit.angular * lambda;
                    }
                }
                // moment about the sensor origin, then sensor axes
                let n = n - x.translation.cross(&f);
                let (f, n) = (rt * f, rt * n);
                [f.x, f.y, f.z, n.x, n.y, n.z]
            }
        };
    }
    Ok(())
}


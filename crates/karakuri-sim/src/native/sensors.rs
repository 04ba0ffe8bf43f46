//! The sensors' stages: the contact forces the step reported, and the sensor readings
//! differenced over the step (accelerometers, gyros, force sensors).

use karakuri::spatial::{quat_to_xyzw, Force, Motion, Se3, Vec3};

use super::build::SimModel;
use super::parts::SensorSets;
use super::output::StepOutput;
use super::sleep;
use super::state::SimState;
use super::work::{SensorCarry, StepData};
use crate::engine::ContactInfo;
use crate::compile::Sensor;
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

impl SensorSets {
    /// The twins ([`twin`]) and the child sides of `sensors`.
    pub fn new(sensors: &[Sensor]) -> SensorSets {
        let twins: Vec<Option<usize>> = (0..sensors.len()).map(|i| twin(sensors, i)).collect();
        let subtrees: Vec<Vec<usize>> = sensors
            .iter()
            .map(|sn| sn.subtree.iter().enumerate().filter(|(_, &inside)| inside).map(|(k, _)| k).collect())
            .collect();
        let n = sensors.iter().map(|sn| sn.subtree.len()).max().unwrap_or(0);
        let bodies = (0..n)
            .filter(|&k| (0..sensors.len()).any(|i| twins[i].is_none() && sensors[i].subtree.get(k) == Some(&true)))
            .collect();
        SensorSets { twins, subtrees, bodies }
    }

    /// The room [`StepData::sensor_bodies`] needs: one entry a joint up to the last one read.
    pub fn joints(&self) -> usize {
        self.bodies.last().map_or(0, |&k| k + 1)
    }
}

/// Each body of `m.sensor_sets.bodies`: its spatial momentum (world axes, about the world
/// origin) into `.0`, and with `weight`, the moment about the world origin of its weight (its
/// world centre of mass crossed with `mass g`) into `.1`.
fn body_momenta(m: &SimModel, (o_m_i, vel): (&[Se3], &[Motion]), weight: bool, out: &mut [(Force, Vec3)]) {
    let g = m.model.gravity_vector();
    for &k in &m.sensor_sets.bodies {
        let body = &m.model.inertias[k];
        out[k].0 = o_m_i[k].act_force(&body.mul_motion(&vel[k]));
        if weight {
            out[k].1 = o_m_i[k].transform_point(&body.com).cross(&(body.mass * g));
        }
    }
}

/// The spatial momentum (world axes, about the world origin) of the bodies `subtree` (the
/// momenta of [`body_momenta`], summed in the subtree's order).
fn subtree_momentum(subtree: &[usize], momenta: &[(Force, Vec3)]) -> Force {
    let mut h = Force::zero();
    for &k in subtree {
        let hk = &momenta[k].0;
        h.linear += hk.linear;
        h.angular += hk.angular;
    }
    h
}

/// Sensor start: what the readings difference over the step, from the kinematics of the
/// step's start state: each accelerometer's point velocity and each force sensor's child-side
/// momentum. The last step's readings read them at the state they ended in ([`SensorCarry`]):
/// when the step starts from that state, bit for bit, they are taken as they are (the same
/// operations on the same kinematics). Reads `w.data` (placements, velocities), `m.sensors`,
/// `s.q`, `s.v`, `w.sensor_next`; writes `w.sensor_start`. A world without sensors
/// (`m.plan.sensors` off) skips it.
#[inline]
pub fn sensor_start(m: &SimModel, s: &mut SimState, w: &mut StepData, _out: &mut StepOutput) -> Result<(), SimError> {
    if !m.plan.sensors {
        return Ok(());
    }
    if w.sensor_next.take(s) {
        std::mem::swap(&mut w.sensor_start, &mut w.sensor_next.start);
        return Ok(());
    }
    let (o_m_i, vel) = (w.data.joint_placements()?, w.data.joint_velocities()?);
    body_momenta(m, (o_m_i, vel), false, &mut w.sensor_bodies);
    for (i, sn) in m.sensors.iter().enumerate() {
        w.sensor_start[i] = match sn.kind {
            SensorKind::Accelerometer => {
                let j = sn.joint;
                moving_point(point_velocity(&o_m_i[j], &vel[j], &sn.placement.translation))
            }
            // a force and a torque sensor on one subtree (MJCF's pairs at one site): its
            // momentum once, the same bits
            k if k.is_wrench() => match m.sensor_sets.twins[i] {
                Some(t) => w.sensor_start[t],
                None => subtree_momentum(&m.sensor_sets.subtrees[i], &w.sensor_bodies),
            },
            _ => Force::zero(),
        };
    }
    Ok(())
}

/// An accelerometer's start quantity: its point's velocity `v` in `.linear`.
fn moving_point(v: Vec3) -> Force {
    Force {
        linear: v,
        angular: Vec3::zeros(),
    }
}

impl SensorCarry {
    /// Whether the quantities held were read at the state `s`, bit for bit (then the caller
    /// takes them); either way they are not held after.
    fn take(&mut self, s: &SimState) -> bool {
        let same = |bits: &[u64], x: &[f64]| bits.len() == x.len() && bits.iter().zip(x).all(|(b, x)| *b == x.to_bits());
        let taken = self.valid && same(&self.q, s.q.as_slice()) && same(&self.v, s.v.as_slice());
        self.valid = false;
        taken
    }

    /// Marks the quantities written as read at the state `s`.
    fn hold(&mut self, s: &SimState) {
        let record = |bits: &mut Vec<u64>, x: &[f64]| {
            bits.clear();
            bits.extend(x.iter().map(|x| x.to_bits()));
        };
        record(&mut self.q, s.q.as_slice());
        record(&mut self.v, s.v.as_slice());
        self.valid = true;
    }
}

/// An earlier force, force3 or torque sensor than `i` (itself one) on the same subtree at the
/// same placement, bit for bit: its wrench and momenta are `i`'s (the same operations on the
/// same numbers). The first such, or None.
fn twin(sensors: &[Sensor], i: usize) -> Option<usize> {
    let sn = &sensors[i];
    if !sn.kind.is_wrench() {
        return None;
    }
    let bits = |x: &Se3| (x.rotation.map(f64::to_bits), x.translation.map(f64::to_bits));
    sensors[..i].iter().position(|t| {
        t.kind.is_wrench() && t.joint == sn.joint && bits(&t.placement) == bits(&sn.placement) && t.subtree == sn.subtree
    })
}

/// Sensor readings, after the kinematics and contact-force stages, from the step's velocity
/// change (so contact and constraint impulses are in them) and the step's end state:
/// * accelerometer: `Rᵀ ((v⁺_p − v_p) / dt − g)`, `v_p` the world velocity of the sensor's
///   body-fixed point at the step's start and end, `R` the sensor's world rotation;
/// * rate gyro: the body's angular velocity in sensor axes; velocimeter: the point's velocity
///   in sensor axes;
/// * force (force3, torque: its halves): see [`wrench_reading`];
/// * joint position and velocity: `q`, `v` of the joint; actuator force: the actuator's
///   applied torque (`out.act_tau`) times the sensor's gain; touch: `Σ |f · n|` over the
///   step's contacts on the sensor's joint;
/// * frame sensors: the sensor frame's world position, quaternion (`x, y, z, w`, `w ≥ 0`),
///   its origin's velocity and the body's angular velocity, world axes.
///
/// With them, the next step's start quantities at the step's end state (see [`sensor_start`]).
/// Reads `s.q`, `s.v`, `w.data`, `w.sensor_start`, `out.contacts`, `out.act_tau`,
/// `w.loop_wrench`, `w.loop_impulse`, `m.sensors`, `m.loops`; writes `out.readings`,
/// `w.sensor_next`, `w.touch`. A world without sensors skips it.
#[inline]
pub fn sensor_readings(m: &SimModel, s: &mut SimState, w: &mut StepData, out: &mut StepOutput) -> Result<(), SimError> {
    if !m.plan.sensors {
        return Ok(());
    }
    let (o_m_i, vel) = (w.data.joint_placements()?, w.data.joint_velocities()?);
    let g = m.model.gravity_vector();
    body_momenta(m, (o_m_i, vel), true, &mut w.sensor_bodies);
    if !w.touch.is_empty() {
        touch_sums(m, &out.contacts, &mut w.touch);
    }
    // the wrenches of the force sensors read so far this step (a twin's is taken, not
    // recomputed: [`twin`]); room for eight, the rest computed afresh
    let mut wrenches = [(usize::MAX, Vec3::zeros(), Vec3::zeros()); 8];
    let mut kept = 0;
    for (i, sn) in m.sensors.iter().enumerate() {
        let j = sn.joint;
        // the sensor frame's world placement, made only by the kinds that read it (a joint's
        // or an actuator's reading has no frame: 24 of barkour's 27 sensors)
        let frame = || o_m_i[j].compose(&sn.placement);
        let three = |v: Vec3| [v.x, v.y, v.z, 0.0, 0.0, 0.0];
        let one = |v: f64| [v, 0.0, 0.0, 0.0, 0.0, 0.0];
        // (the other kinds' start quantities are zero in both buffers, never written)
        out.readings[i] = match sn.kind {
            SensorKind::Accelerometer => {
                let v1 = point_velocity(&o_m_i[j], &vel[j], &sn.placement.translation);
                w.sensor_next.start[i] = moving_point(v1);
                three(frame().rotation.transpose() * ((v1 - w.sensor_start[i].linear) / m.dt - g))
            }
            SensorKind::RateGyro => three(sn.placement.rotation.transpose() * vel[j].angular),
            SensorKind::Velocimeter => three(frame().rotation.transpose() * point_velocity(&o_m_i[j], &vel[j], &sn.placement.translation)),
            SensorKind::Force | SensorKind::Force3 | SensorKind::Torque => {
                let known = m.sensor_sets.twins[i].and_then(|t| wrenches[..kept].iter().find(|k| k.0 == t));
                let (f, n) = match known {
                    Some(&(t, f, n)) => {
                        w.sensor_next.start[i] = w.sensor_next.start[t];
                        (f, n)
                    }
                    None => {
                        let (f, n, h1) = wrench_reading(m, w, out, i, &frame());
                        w.sensor_next.start[i] = h1;
                        (f, n)
                    }
                };
                if known.is_none() && kept < wrenches.len() {
                    wrenches[kept] = (i, f, n);
                    kept += 1;
                }
                match sn.kind {
                    SensorKind::Force => [f.x, f.y, f.z, n.x, n.y, n.z],
                    SensorKind::Force3 => three(f),
                    _ => three(n),
                }
            }
            SensorKind::JointPosition => one(s.q[m.model.idx_q[j]]),
            SensorKind::JointVelocity => one(s.v[m.model.idx_v[j]]),
            SensorKind::ActuatorForce => one(out.act_tau[sn.index] * sn.gain),
            SensorKind::Touch => one(if j == 0 { 0.0 } else { w.touch[j] }),
            SensorKind::FramePosition => three(frame().translation),
            SensorKind::FrameQuaternion => {
                let q = quat_to_xyzw(&frame().rotation);
                [q[0], q[1], q[2], q[3], 0.0, 0.0]
            }
            SensorKind::FrameLinearVelocity => three(point_velocity(&o_m_i[j], &vel[j], &sn.placement.translation)),
            SensorKind::FrameAngularVelocity => three(o_m_i[j].rotation * vel[j].angular),
        };
    }
    w.sensor_next.hold(s);
    Ok(())
}

/// Each joint's touch into `sums` `(njoints)`: the sum of the normal forces `|f · n|` of the
/// step's contacts on a body it moves, in the contacts' order from the empty sum (a contact
/// between two bodies of one joint counted once): for each joint the additions, in order, of
/// `Σ` over its contacts alone, in one pass over the contacts however many sensors read them.
fn touch_sums(m: &SimModel, contacts: &[ContactInfo], sums: &mut [f64]) {
    sums.fill(std::iter::empty::<f64>().sum());
    for c in contacts {
        let (ja, jb) = (m.bodies[c.body_a].joint, m.bodies[c.body_b].joint);
        let f = c.force.dot(&c.normal).abs();
        sums[ja] += f;
        if jb != ja {
            sums[jb] += f;
        }
    }
}

/// A wrench sensor's reading (force, torque; sensor axes, about the sensor origin at `x`):
/// Newton–Euler on the child side: the wrench through the joint is the child side's momentum
/// change over the step minus gravity on it, the contact forces on it (`out.contacts`) and the
/// forces of the loop closures joining it to the rest of the world (each loop row's
/// `wrench · impulse / dt`, the step's solve and SHAKE's corrections; a loop with both bodies
/// on the child side is internal). Third, the child side's momentum at the step's end (the
/// next step's start quantity).
fn wrench_reading(m: &SimModel, w: &StepData, out: &StepOutput, i: usize, x: &Se3) -> (Vec3, Vec3, Force) {
    let sn = &m.sensors[i];
    let g = m.model.gravity_vector();
    let subtree = &m.sensor_sets.subtrees[i];
    let h1 = subtree_momentum(subtree, &w.sensor_bodies);
    let mut f = (h1.linear - w.sensor_start[i].linear) / m.dt;
    let mut n = (h1.angular - w.sensor_start[i].angular) / m.dt;
    for &k in subtree {
        f -= m.model.inertias[k].mass * g;
        n -= w.sensor_bodies[k].1;
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
    let rt = x.rotation.transpose();
    (rt * f, rt * n, h1)
}

#[cfg(test)]
mod tests {
    use super::super::NativeEngine;
    use super::*;
    use crate::engine::Engine;
    use crate::scene::Scene;

    /// The start quantities' bits.
    fn bits(f: &[Force]) -> Vec<[u64; 6]> {
        f.iter()
            .map(|x| {
                let (l, a) = (x.linear.map(f64::to_bits), x.angular.map(f64::to_bits));
                [l.x, l.y, l.z, a.x, a.y, a.z]
            })
            .collect()
    }

    /// The sensor-start stage's quantities on `e`, carried or not, then read afresh from its
    /// kinematics (the carry is spent by the first call).
    fn started_and_fresh(e: &mut NativeEngine) -> (Vec<[u64; 6]>, Vec<[u64; 6]>) {
        let model = std::sync::Arc::clone(&e.model);
        sensor_start(&model, &mut e.state, &mut e.work, &mut e.out).unwrap();
        let started = bits(&e.work.sensor_start);
        assert!(!e.work.sensor_next.valid);
        sensor_start(&model, &mut e.state, &mut e.work, &mut e.out).unwrap();
        (started, bits(&e.work.sensor_start))
    }

    #[test]
    fn the_carried_start_quantities_are_the_ones_read_afresh_and_a_changed_state_reads_afresh() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/scenes/mjcf_constraints.xml");
        let mut e = NativeEngine::new(&Scene::from_file(path).unwrap()).unwrap();
        for _ in 0..20 {
            e.step().unwrap();
        }
        // the state the readings ended at: carried, the same bits
        assert!(e.work.sensor_next.valid);
        let (carried, fresh) = started_and_fresh(&mut e);
        assert_eq!(carried, fresh);
        assert!(fresh.iter().flatten().any(|&b| b != 0), "some start quantity is read");
        // a state set between steps (new kinematics): read afresh, not carried
        e.step().unwrap();
        let dq: Vec<f64> = (0..e.model.one_dof.len()).map(|k| 0.5 + 0.1 * k as f64).collect();
        e.set_joint_states(None, Some(&dq)).unwrap();
        assert!(e.work.sensor_next.valid);
        let (started, fresh) = started_and_fresh(&mut e);
        assert_eq!(started, fresh);
    }

    #[test]
    fn each_joints_touch_is_the_sum_over_its_contacts_alone() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/scenes/mjcf_constraints.xml");
        let e = NativeEngine::new(&Scene::from_file(path).unwrap()).unwrap();
        let m = &e.model;
        let n = m.bodies.len();
        let contact = |a: usize, b: usize, f: f64| ContactInfo {
            body_a: a % n,
            body_b: b % n,
            point: Vec3::zeros(),
            normal: Vec3::new(0.6, 0.0, -0.8),
            depth: 0.0,
            force: Vec3::new(f, 0.3 * f, -f),
        };
        let contacts: Vec<ContactInfo> = (0..4 * n).map(|k| contact(k, 3 * k + 1, 0.1 + k as f64 / 7.0)).collect();
        let mut sums = vec![f64::NAN; m.model.njoints];
        touch_sums(m, &contacts, &mut sums);
        for (j, sum) in sums.iter().enumerate() {
            let on = |b: usize| m.bodies[b].joint == j;
            let alone: f64 = contacts.iter().filter(|c| on(c.body_a) || on(c.body_b)).map(|c| c.force.dot(&c.normal).abs()).sum();
            assert_eq!(sum.to_bits(), alone.to_bits(), "joint {j}");
        }
    }
}

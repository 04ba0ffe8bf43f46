//! What a run did ([`Summary`], [`Tracking`]) and the sums kept while it runs ([`RunStats`]).

use karakuri_sim::{Diagnostics, JointState, World};

/// What a run did.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Scene name.
    pub scene: String,
    /// Steps taken.
    pub steps: u64,
    /// Simulated time (s).
    pub simulated_time: f64,
    /// Wall time of the steps (s).
    pub wall_time: f64,
    /// Steps per wall-clock second.
    pub steps_per_second: f64,
    /// Mean wall time per step (µs).
    pub us_per_step: f64,
    /// `--cpu-time`: CPU time per step of the steps alone (µs), each segment's least over the
    /// timed runs ([`super::time_steps`]); `None`: not timed.
    pub cpu_us_per_step: Option<f64>,
    /// Contacts in the last step.
    pub contacts_final: usize,
    /// Largest number of contacts in a step.
    pub contacts_max: usize,
    /// Mean number of contacts per step.
    pub contacts_mean: f64,
    /// Mechanical energy (kinetic + gravitational) at the start and at the end (J). Impacts,
    /// friction and damping dissipate it; actuation adds to it.
    pub energy: (f64, f64),
    /// `(E_end - E_start) / max(|E_start|, 1 J)`.
    pub energy_change: f64,
    /// Numerical trouble met (unconverged solves, bodies faster than their size per step);
    /// also printed as warnings when the run ends.
    pub diagnostics: Diagnostics,
    /// How closely the position servos followed their targets (`None`: the scene has none).
    pub tracking: Option<Tracking>,
    /// Sleeping bodies `(at the end, most in a step, bodies)` (`None`: the engine does not
    /// report them).
    pub sleeping: Option<(usize, usize, usize)>,
}

/// The position servos' tracking error `target(t) − q(t)` after every step of a run, over
/// every joint with a position actuator.
#[derive(Clone, Debug, PartialEq)]
pub struct Tracking {
    /// Joints with a position servo.
    pub joints: usize,
    /// Root mean square over joints and steps (rad or m).
    pub rms: f64,
    /// Largest |error| (rad or m), its joint and the time (s).
    pub max: (f64, String, f64),
}

/// Sums the tracking error step by step (buffers sized once).
struct TrackingSum {
    targets: Vec<Option<f64>>,
    states: Vec<JointState>,
    sum_sq: f64,
    count: u64,
    max: (f64, usize, f64),
}

impl TrackingSum {
    fn new(world: &World) -> TrackingSum {
        let n = world.one_dof_joints().len();
        TrackingSum {
            targets: vec![None; n],
            states: vec![JointState::default(); n],
            sum_sq: 0.0,
            count: 0,
            max: (0.0, 0, 0.0),
        }
    }

    fn add(&mut self, world: &World) {
        world.write_position_targets(&mut self.targets);
        world.write_joint_states(&mut self.states);
        for (k, (t, s)) in self.targets.iter().zip(&self.states).enumerate() {
            if let Some(t) = t {
                let e = t - s.q;
                self.sum_sq += e * e;
                self.count += 1;
                if e.abs() > self.max.0 {
                    self.max = (e.abs(), k, world.time());
                }
            }
        }
    }

    fn result(&self, world: &World) -> Option<Tracking> {
        let joints = self.targets.iter().filter(|t| t.is_some()).count();
        (self.count > 0).then(|| Tracking {
            joints,
            rms: (self.sum_sq / self.count as f64).sqrt(),
            max: (self.max.0, world.one_dof_joints()[self.max.1].clone(), self.max.2),
        })
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "scene            {}", self.scene)?;
        writeln!(
            f,
            "steps            {} ({:.3} s simulated)",
            self.steps, self.simulated_time
        )?;
        writeln!(
            f,
            "speed            {:.0} steps/s ({:.2} µs/step, {:.1}x real time)",
            self.steps_per_second,
            self.us_per_step,
            if self.wall_time > 0.0 {
                self.simulated_time / self.wall_time
            } else {
                f64::INFINITY
            }
        )?;
        if let Some(us) = self.cpu_us_per_step {
            writeln!(f, "cpu time         {us:.3} µs/step (thread CPU time of the steps alone, each 100 steps' least over the --cpu-time runs)")?;
        }
        writeln!(
            f,
            "contacts         {} at the end, {} max, {:.2} mean",
            self.contacts_final, self.contacts_max, self.contacts_mean
        )?;
        let (e0, e1) = self.energy;
        let what = if e1 < e0 {
            "dissipated (impacts, friction, damping)"
        } else if e1 > e0 {
            "gained (actuation, contact correction, integration)"
        } else {
            "conserved"
        };
        write!(
            f,
            "energy           {e0:.6} J -> {e1:.6} J ({:+.3e} J, {:+.2} %: {what})",
            e1 - e0,
            100.0 * self.energy_change
        )?;
        let d = &self.diagnostics;
        if let Some((r, _)) = d.worst_residual {
            write!(
                f,
                "\nsolver           {} step(s) ended above engine.tolerance (worst residual {r:.3e} m/s), {} of them enough to sink contacts",
                d.unconverged_steps, d.sinking_steps
            )?;
        }
        if d.fast_steps > 0 {
            write!(f, "\nfast bodies      {} step(s) moved a body more than its size", d.fast_steps)?;
        }
        if let Some(t) = &self.tracking {
            write!(
                f,
                "\ntracking error   {} position servo(s), target − q after each step: RMS {:.4}, max {:.4} ({} at t = {:.3} s; rad, m for sliders)",
                t.joints, t.rms, t.max.0, t.max.1, t.max.2
            )?;
        }
        if let Some((end, max, n)) = self.sleeping {
            write!(f, "\nsleeping         {end} of {n} bodies at the end, {max} at most")?;
        }
        Ok(())
    }
}


/// The sums a run keeps while it steps: wall time, contacts (largest, total), servo tracking
/// and the most bodies asleep at once.
pub(super) struct RunStats {
    tracking: TrackingSum,
    contacts_max: usize,
    contacts_sum: usize,
    sleeping_max: Option<usize>,
    wall: f64,
}

impl RunStats {
    pub(super) fn new(world: &World) -> RunStats {
        RunStats {
            tracking: TrackingSum::new(world),
            contacts_max: 0,
            contacts_sum: 0,
            sleeping_max: world.sleeping_bodies().ok(),
            wall: 0.0,
        }
    }

    /// Adds the step just taken (in `ns` nanoseconds of wall time).
    pub(super) fn add(&mut self, world: &World, ns: u128) {
        self.wall += ns as f64 * 1e-9;
        let nc = world.contacts().len();
        self.contacts_max = self.contacts_max.max(nc);
        self.contacts_sum += nc;
        self.tracking.add(world);
        if let (Some(m), Ok(s)) = (self.sleeping_max.as_mut(), world.sleeping_bodies()) {
            *m = (*m).max(s);
        }
    }

    /// The run's summary: `n` steps taken, the mechanical energy at the start and the end.
    pub(super) fn summary(&self, world: &World, scene: String, n: u64, (e0, e1): (f64, f64), diagnostics: Diagnostics) -> Summary {
        let wall = self.wall;
        Summary {
            scene,
            steps: n,
            simulated_time: world.time(),
            wall_time: wall,
            steps_per_second: if wall > 0.0 { n as f64 / wall } else { 0.0 },
            us_per_step: if n > 0 { wall * 1e6 / n as f64 } else { 0.0 },
            cpu_us_per_step: None,
            contacts_final: world.contacts().len(),
            contacts_max: self.contacts_max,
            contacts_mean: if n > 0 { self.contacts_sum as f64 / n as f64 } else { 0.0 },
            energy: (e0, e1),
            energy_change: (e1 - e0) / e0.abs().max(1.0),
            diagnostics,
            tracking: self.tracking.result(world),
            sleeping: self.sleeping_max.zip(world.sleeping_bodies().ok()).map(|(max, end)| (end, max, world.bodies().len())),
        }
    }
}

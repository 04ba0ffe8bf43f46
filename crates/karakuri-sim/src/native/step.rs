//! The step: a fixed list of stage functions, each `(model, state, work, out)` — the world's
//! [`SimModel`] (read only), its [`SimState`], the step's workspace [`StepData`] and the
//! step's results [`StepOutput`] — called in this order, every step:
//!
//! ```text
//! start              w.q_start, w.v_start ◄ s.q, s.v; sleep: islands an action wakes
//! actuator_commands  each actuator's command at t + dt ► w.servo_diag, w.act_base, w.act_gain
//! sensor_start       w.sensor_next (at the same state) or w.data ► w.sensor_start (point velocities,
//!                    child-side momenta)
//! joint_forces       springs, dampers, registered forces at (t, q, v) ► w.tau, w.force_diag
//! position           LᵀDL of qH = M + diag ► w.qh; Jacobian columns ► w.s_world;
//!                    collision ► w.raw (sleeping shapes frozen, islands a contact reaches woken)
//! rk4                (RK4 worlds: m.plan.rk4) the whole step, in sub-steps ► s.q, s.v; w.rk4.taken
//! actuation          τ += τ_user + actuator torques + Jᵀ f of the pushes ► w.tau
//! acceleration       q̈ = qH⁻¹ (τ − h) ► w.qacc
//! impacts            elastic contacts approaching now, pass by pass ► s.v
//! free_velocity      v + dt q̈ ► w.v_free (sleeping trees 0)
//! constraint         contact / loop / limit / servo / friction rows, solve ► s.v, out.last_solve
//! actuator_report    each actuator's applied torque ► out.act_tau
//! split_impulse      pseudo-velocity of penetrating contacts ► w.split
//! integrate          SHAKE, loop prediction, q ⊕ dt (v⁺ + v_p) ► s.q (sleeping trees held)
//! check_state        s.steps, s.time; the NaN / runaway guard (a failure restores and stops)
//! kinematics         compute_all_terms at (q, v) ► w.data; islands that fall asleep ► s.sleep
//! contact_forces     Σ dirs λ / dt ► out.contacts (and the sleeping islands' kept contacts)
//! sensor_readings    the step's differences ► out.readings; the next start quantities ► w.sensor_next
//! sensor_noise       bias + std · N(0, 1) ► out.readings, s.sensor_rng
//! watch              unconverged solves, bodies faster than their size ► s.diagnostics
//! ```
//!
//! A stage the world has nothing for (the stage plan `m.plan`, decided at load) or the step has
//! nothing for (`w.rk4.taken`: the Euler stages in an RK4 step, and the rk4 stage in an Euler
//! step) returns at once: the list never changes. Each stage is timed into the field of
//! [`StageTimes`] of its name when the timing is on ([`crate::Engine::time_stages`]); the clock
//! is not read otherwise.

use std::time::{Duration, Instant};

use super::build::SimModel;
use super::output::StepOutput;
use super::state::SimState;
use super::work::StepData;
use super::{actuators, impact, joint_forces, noise, rk4, sensors, stages};
use crate::engine::StageTimes;
use crate::SimError;

/// The stage clock of a timed step: each lap writes the time since the last one.
struct Laps(Option<Instant>);

impl Laps {
    fn start(on: bool) -> Laps {
        Laps(on.then(Instant::now))
    }

    #[inline]
    fn lap(&mut self, d: &mut Duration) {
        if let Some(clock) = &mut self.0 {
            let now = Instant::now();
            *d = now - *clock;
            *clock = now;
        }
    }
}

/// Writes [`STAGES`] and [`step`] from one list, so that the names, the calls and the timers
/// cannot differ.
macro_rules! the_step {
    ($($module:ident::$stage:ident),* $(,)?) => {
        /// The stages' names in the order [`step`] calls them (each its function's and its
        /// timer's name).
        pub const STAGES: &[&str] = &[$(stringify!($stage)),*];

        /// One step: every stage of [`STAGES`] in order; `timing` times each into
        /// `out.times` (left as it is when off: the engine zeroes it when the timing is
        /// turned off). An error stops the step where it arose (the check_state stage
        /// restores the state it started from first).
        pub fn step(
            m: &SimModel,
            s: &mut SimState,
            w: &mut StepData,
            out: &mut StepOutput,
            timing: bool,
        ) -> Result<(), SimError> {
            if !timing {
                $($module::$stage(m, s, w, out)?;)*
                return Ok(());
            }
            let mut t = StageTimes::default();
            let mut laps = Laps::start(true);
            $(
                $module::$stage(m, s, w, out)?;
                laps.lap(&mut t.$stage);
            )*
            out.times = t;
            Ok(())
        }
    };
}

the_step!(
    stages::start,
    actuators::actuator_commands,
    sensors::sensor_start,
    joint_forces::joint_forces,
    stages::position,
    rk4::rk4,
    stages::actuation,
    stages::acceleration,
    impact::impacts,
    stages::free_velocity,
    stages::constraint,
    actuators::actuator_report,
    stages::split_impulse,
    stages::integrate,
    stages::check_state,
    stages::kinematics,
    sensors::contact_forces,
    sensors::sensor_readings,
    noise::sensor_noise,
    stages::watch,
);

#[cfg(test)]
mod tests {
    use super::*;

    /// The stage names of the module documentation's list, in order.
    fn documented() -> Vec<String> {
        let src = include_str!("step.rs");
        let text = src.split("//! ```text\n").nth(1).unwrap().split("//! ```\n").next().unwrap();
        text.lines()
            .filter_map(|l| l.strip_prefix("//! "))
            .filter(|l| !l.starts_with(' '))
            .map(|l| l.split_whitespace().next().unwrap().to_string())
            .collect()
    }

    #[test]
    fn the_documented_order_is_the_order_the_step_runs() {
        assert_eq!(documented(), STAGES);
    }

    /// The stage names of docs/ARCHITECTURE.md's data-flow list (the text block after the
    /// heading "The step's data flow"), in order.
    fn mapped() -> Vec<String> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/ARCHITECTURE.md");
        let doc = std::fs::read_to_string(path).expect("docs/ARCHITECTURE.md");
        let section = doc.split("## The step's data flow").nth(1).expect("the data-flow section");
        let text = section.split("```text\n").nth(1).unwrap().split("```").next().unwrap();
        text.lines()
            .filter(|l| !l.is_empty() && !l.starts_with(' '))
            .map(|l| l.split_whitespace().next().unwrap().to_string())
            .collect()
    }

    #[test]
    fn the_architecture_map_lists_the_stages_in_the_order_the_step_runs() {
        assert_eq!(mapped(), STAGES);
    }

    #[test]
    fn every_stage_has_its_timer_and_every_timer_its_stage() {
        assert_eq!(StageTimes::NAMES, STAGES);
    }
}

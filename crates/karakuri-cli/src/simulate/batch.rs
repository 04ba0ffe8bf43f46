//! `karakuri simulate --worlds N --seed S`: N perturbed copies of the scene on all cores.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use anyhow::{bail, Result};

use super::{load_scene, warn, SimulateArgs};

/// The many-worlds run of `karakuri simulate --worlds N --seed S`: N copies of the scene, world
/// `i` with the initial state of [`karakuri_sim::batch::perturb`]`(scene, S, i)` (world 0 is
/// the scene itself), stepped in parallel on all cores ([`karakuri_sim::Batch`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchArgs {
    /// Number of worlds (at least 1).
    pub worlds: usize,
    /// Seed of the perturbations.
    pub seed: u64,
}

/// What a many-worlds run did.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchSummary {
    /// Scene name.
    pub scene: String,
    /// Worlds.
    pub worlds: usize,
    /// Seed of the perturbations.
    pub seed: u64,
    /// Threads of the pool that stepped them.
    pub threads: usize,
    /// Steps of each world.
    pub steps: u64,
    /// Simulated time of each world (s).
    pub simulated_time: f64,
    /// Wall time of the steps (s).
    pub wall_time: f64,
    /// CPU time of the process (every thread) over the steps (s).
    pub cpu_time: f64,
    /// World steps (all worlds) per wall-clock second.
    pub steps_per_second: f64,
    /// The system's 1-minute load average at the end (a shared machine slows every figure).
    pub load_average: Option<f64>,
    /// Contacts in the last step, summed over the worlds.
    pub contacts_final: usize,
    /// World 0's mechanical energy at the start and at the end (J).
    pub energy: (f64, f64),
    /// Smallest and largest end energy over the worlds (J): how far the perturbations spread.
    pub energy_range: (f64, f64),
}

impl std::fmt::Display for BatchSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let total = self.steps * self.worlds as u64;
        writeln!(f, "scene            {}", self.scene)?;
        writeln!(
            f,
            "worlds           {} (seed {}, world 0 unperturbed) on {} threads",
            self.worlds, self.seed, self.threads
        )?;
        writeln!(
            f,
            "steps            {} per world ({:.3} s simulated), {} in all",
            self.steps, self.simulated_time, total
        )?;
        writeln!(
            f,
            "speed            {:.0} steps/s in all ({:.2} µs wall, {:.2} µs CPU per world step; CPU/wall {:.2})",
            self.steps_per_second,
            self.wall_time * 1e6 / total.max(1) as f64,
            self.cpu_time * 1e6 / total.max(1) as f64,
            if self.wall_time > 0.0 { self.cpu_time / self.wall_time } else { 0.0 }
        )?;
        match self.load_average {
            Some(l) => writeln!(f, "load average     {l:.2} (1 min, at the end)")?,
            None => writeln!(f, "load average     unknown")?,
        }
        writeln!(f, "contacts         {} at the end, all worlds", self.contacts_final)?;
        let (e0, e1) = self.energy;
        write!(
            f,
            "energy           world 0: {e0:.6} J -> {e1:.6} J; at the end over the worlds {:.6} .. {:.6} J",
            self.energy_range.0, self.energy_range.1
        )
    }
}

/// Loads the scene (or the demo), builds `batch.worlds` perturbed worlds and steps them all for
/// the duration. The CSV outputs of [`SimulateArgs`] (`out`, `steps`) are refused: they are
/// one world's trajectory, and a batch has many. `progress` receives the fraction done (all
/// worlds' steps) about ten times a second while the worlds run without meeting.
pub fn simulate_batch(args: &SimulateArgs, batch: &BatchArgs, progress: &mut dyn FnMut(f64)) -> Result<BatchSummary> {
    if batch.worlds == 0 {
        bail!("--worlds must be at least 1");
    }
    for (flag, given) in [
        ("--out", args.out.is_some()),
        ("--steps", args.steps.is_some()),
        ("--checkpoint", args.checkpoint.is_some()),
        ("--resume", args.resume.is_some()),
    ] {
        if given {
            bail!("{flag} is one world's file (a CSV or a checkpoint) and cannot go with --worlds (run without --worlds for it)");
        }
    }
    let (scene, n) = load_scene(args)?;
    let name = scene.name.clone();
    let mut worlds = karakuri_sim::Batch::perturbed(&scene, batch.worlds, batch.seed)?;
    for w in worlds.worlds()[0].warnings() {
        warn(w);
    }
    let e0 = worlds.worlds()[0].energy();
    let (wall0, cpu0) = (Instant::now(), process_cpu_seconds());
    // the worlds run to the end without meeting; this thread shows their summed count
    let done = AtomicU64::new(0);
    let all = n * batch.worlds as u64;
    let main = std::thread::current();
    std::thread::scope(|scope| {
        let run = scope.spawn(|| {
            let result = worlds.run_steps_counted(n, &done);
            main.unpark();
            result
        });
        while !run.is_finished() {
            progress(done.load(Ordering::Relaxed) as f64 / all as f64);
            std::thread::park_timeout(std::time::Duration::from_millis(100));
        }
        run.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })?;
    progress(1.0);
    let (wall, cpu) = (wall0.elapsed().as_secs_f64(), process_cpu_seconds() - cpu0);
    let ends: Vec<f64> = worlds.worlds().iter().map(|w| w.energy()).collect();
    let total = n as f64 * batch.worlds as f64;
    Ok(BatchSummary {
        scene: name,
        worlds: batch.worlds,
        seed: batch.seed,
        threads: karakuri_sim::batch::threads(),
        steps: n,
        simulated_time: worlds.worlds()[0].time(),
        wall_time: wall,
        cpu_time: cpu,
        steps_per_second: if wall > 0.0 { total / wall } else { 0.0 },
        load_average: load_average(),
        contacts_final: worlds.worlds().iter().map(|w| w.contacts().len()).sum(),
        energy: (e0, ends[0]),
        energy_range: (ends.iter().copied().fold(f64::INFINITY, f64::min), ends.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
    })
}

/// `karakuri simulate --worlds N [--seed S]`: [`simulate_batch`] with a progress bar, then the
/// summary. A replay page (`html`) is one world's and is refused.
pub fn run_batch(args: &SimulateArgs, batch: &BatchArgs, html: Option<&Path>) -> Result<std::process::ExitCode> {
    if html.is_some() {
        bail!("--html records one world's replay and cannot go with --worlds (run without --worlds for it)");
    }
    let bar = indicatif::ProgressBar::new(1000);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {percent}% (eta {eta})")
            .expect("valid template"),
    );
    let started = Instant::now();
    let summary = simulate_batch(args, batch, &mut |fraction| {
        if started.elapsed().as_secs_f64() > 0.5 {
            bar.set_position((fraction * 1000.0) as u64);
        }
    });
    bar.finish_and_clear();
    println!("{}", summary?);
    Ok(std::process::ExitCode::SUCCESS)
}

/// CPU time of the whole process (every thread), in seconds.
#[allow(unsafe_code)] // clock_gettime is the only way to read the process CPU clock
fn process_cpu_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec; CLOCK_PROCESS_CPUTIME_ID is supported on Linux
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The 1-minute load average from `/proc/loadavg` (Linux); `None` elsewhere.
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

//! `karakuri simulate`: [`simulate`] with [`SimulateArgs`] runs a scene (or the bundled demo),
//! writes the trajectory and step CSV files, reports progress and returns a [`Summary`];
//! [`simulate_batch`] with [`BatchArgs`] runs N perturbed copies of it in parallel
//! (`--worlds N --seed S`) and returns a [`BatchSummary`].

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use karakuri::spatial::quat_to_xyzw;
use karakuri_sim::scene::{EngineKind, Scene, SensorKind, MIN_DT};
use karakuri_sim::world::step_count;
use karakuri_sim::{Diagnostics, JointState, Snapshot, World};

/// The bundled demo scene (a Solo-12 quadruped that stands up under PD control among boxes and
/// takes a sideways push), `scenes/demo.yaml`; its robot is `builtin:solo12.urdf`, inside the
/// binary too.
pub const DEMO_SCENE: &str = include_str!("../scenes/demo.yaml");

/// Arguments of `karakuri simulate`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SimulateArgs {
    /// Scene file (JSON or YAML); `None` runs the bundled demo.
    pub scene: Option<PathBuf>,
    /// Simulated time (s); default: the scene's `world.duration`.
    pub duration: Option<f64>,
    /// Time step (s); default: the scene's `world.dt`.
    pub dt: Option<f64>,
    /// Trajectory CSV: `step,t,body,px,py,pz,qx,qy,qz,qw,vx,vy,vz,wx,wy,wz`, one row per moving
    /// body per step, the initial state as step 0.
    pub out: Option<PathBuf>,
    /// Step CSV: `step,t,contacts,wall_ns,sweeps,residual` (the constraint solve's sweeps and
    /// final residual, m/s).
    pub steps: Option<PathBuf>,
    /// Sensor CSV: `time`, then `NAME.x,NAME.y,NAME.z` per accelerometer or gyro and
    /// `NAME.fx,NAME.fy,NAME.fz,NAME.tx,NAME.ty,NAME.tz` per force sensor (sensor axes), one
    /// row per step, after the step.
    pub sensors: Option<PathBuf>,
    /// Joint CSV: `time`, then `JOINT.q,JOINT.dq,JOINT.tau` per one-dof joint (`tau`: the
    /// user's torque plus its actuator's applied one), one row per step, after the step.
    pub joints: Option<PathBuf>,
    /// Checkpoint file written at `checkpoint_at` ([`karakuri_sim::Snapshot`], JSON).
    pub checkpoint: Option<PathBuf>,
    /// When to write `checkpoint` (s, rounded to a step; within the run).
    pub checkpoint_at: Option<f64>,
    /// Checkpoint file to continue from (same scene and `--dt`): the run goes on from its time
    /// to the end of the duration, its rows numbered by the world's steps.
    pub resume: Option<PathBuf>,
    /// The engine (`--engine`), replacing the scene's `engine.type`; `None`: the scene's.
    pub engine: Option<EngineKind>,
}

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

/// Loads the scene (or the demo), runs it and writes the CSV files. `progress` receives the
/// fraction done (0..=1) about a hundred times.
pub fn simulate(args: &SimulateArgs, progress: &mut dyn FnMut(f64)) -> Result<Summary> {
    simulate_observed(args, progress, &mut |_, _| {})
}

/// [`simulate`], showing the world to `observe` at the start and after every step (the flag:
/// this is the run's last call), e.g. to record a replay page.
pub fn simulate_observed(
    args: &SimulateArgs,
    progress: &mut dyn FnMut(f64),
    observe: &mut dyn FnMut(&World, bool),
) -> Result<Summary> {
    let (scene, n) = load_scene(args)?;
    let name = scene.name.clone();
    let mut world = World::new(scene)?;
    for w in world.warnings() {
        warn(w);
    }
    if let Some(path) = &args.resume {
        let snap = Snapshot::read(path)?;
        world.restore(&snap).with_context(|| format!("--resume {}", path.display()))?;
    }
    // the run takes the steps k0 + 1 ..= n (k0 = 0 unless resumed)
    let k0 = world.steps();
    if k0 >= n {
        bail!(
            "--resume: the checkpoint is at t = {} s, not before the run's end at {} s (give a longer --duration)",
            world.time(),
            n as f64 * world.dt()
        );
    }
    let checkpoint_step = checkpoint_step(args, world.dt(), k0, n)?;
    let mut traj = args
        .out
        .as_ref()
        .map(|p| CsvOut::create(p, "step,t,body,px,py,pz,qx,qy,qz,qw,vx,vy,vz,wx,wy,wz"))
        .transpose()?;
    let mut steps_out = args
        .steps
        .as_ref()
        .map(|p| CsvOut::create(p, "step,t,contacts,wall_ns,sweeps,residual"))
        .transpose()?;
    let mut sensors_out = args
        .sensors
        .as_ref()
        .map(|p| CsvOut::create(p, &sensor_header(&world)))
        .transpose()?;
    let mut joints_out = args
        .joints
        .as_ref()
        .map(|p| CsvOut::create(p, &joint_header(&world)))
        .transpose()?;
    let mut joint_states = vec![JointState::default(); world.one_dof_joints().len()];
    let mut row = String::new();
    let moving: Vec<usize> = (0..world.bodies().len())
        .filter(|&i| !world.bodies()[i].is_static)
        .collect();
    let e0 = world.energy();
    observe(&world, false);
    if let Some(t) = traj.as_mut() {
        write_rows(t, &world, &moving, k0)?;
    }
    if let Some(s) = steps_out.as_mut() {
        s.line(format_args!("{k0},{},{},0,0,0", world.time(), world.contacts().len()))?;
    }
    let write_checkpoint = |world: &World| -> Result<()> {
        let path = args.checkpoint.as_ref().expect("a checkpoint step comes with its file");
        world.snapshot()?.write(path)?;
        Ok(())
    };
    if checkpoint_step == Some(k0) {
        write_checkpoint(&world)?;
    }
    let mut tracking = TrackingSum::new(&world);
    let (mut cmax, mut csum) = (0usize, 0usize);
    let mut sleep_max = world.sleeping_bodies().ok();
    let mut wall = 0.0f64;
    let every = ((n - k0) / 100).max(1);
    for k in k0 + 1..=n {
        let t0 = Instant::now();
        world.step()?;
        let ns = t0.elapsed().as_nanos();
        wall += ns as f64 * 1e-9;
        let nc = world.contacts().len();
        cmax = cmax.max(nc);
        csum += nc;
        tracking.add(&world);
        if let (Some(m), Ok(s)) = (sleep_max.as_mut(), world.sleeping_bodies()) {
            *m = (*m).max(s);
        }
        observe(&world, k == n);
        if let Some(t) = traj.as_mut() {
            write_rows(t, &world, &moving, k)?;
        }
        if let Some(s) = steps_out.as_mut() {
            let solve = world.last_solve();
            s.line(format_args!("{k},{},{nc},{ns},{},{:e}", world.time(), solve.iterations, solve.residual))?;
        }
        if let Some(s) = sensors_out.as_mut() {
            sensor_row(&mut row, &world);
            s.line(format_args!("{row}"))?;
        }
        if let Some(j) = joints_out.as_mut() {
            world.write_joint_states(&mut joint_states);
            row.clear();
            let _ = write!(row, "{}", world.time());
            for s in &joint_states {
                let _ = write!(row, ",{},{},{}", s.q, s.dq, s.tau);
            }
            j.line(format_args!("{row}"))?;
        }
        if checkpoint_step == Some(k) {
            write_checkpoint(&world)?;
        }
        if (k - k0) % every == 0 {
            progress((k - k0) as f64 / (n - k0) as f64);
        }
    }
    if let Some(t) = traj {
        t.finish()?;
    }
    for out in [steps_out, sensors_out, joints_out].into_iter().flatten() {
        out.finish()?;
    }
    progress(1.0);
    let diagnostics = world.diagnostics();
    for w in diagnostics.warnings(world.bodies()) {
        warn(&w);
    }
    let e1 = world.energy();
    if !(e0.is_finite() && e1.is_finite()) {
        // the step's guard keeps states finite; an energy that is not says the model is wrong
        bail!("the mechanical energy is not finite ({e0} J -> {e1} J): the scene's masses or speeds are out of range");
    }
    let n = n - k0;
    Ok(Summary {
        scene: name,
        steps: n,
        simulated_time: world.time(),
        wall_time: wall,
        steps_per_second: if wall > 0.0 { n as f64 / wall } else { 0.0 },
        us_per_step: if n > 0 { wall * 1e6 / n as f64 } else { 0.0 },
        contacts_final: world.contacts().len(),
        contacts_max: cmax,
        contacts_mean: if n > 0 { csum as f64 / n as f64 } else { 0.0 },
        energy: (e0, e1),
        energy_change: (e1 - e0) / e0.abs().max(1.0),
        diagnostics,
        tracking: tracking.result(&world),
        sleeping: sleep_max.zip(world.sleeping_bodies().ok()).map(|(max, end)| (end, max, world.bodies().len())),
    })
}

/// The step after which `--checkpoint` is written (`None`: no checkpoint): `--checkpoint-at`
/// rounded to a step, within the run's steps `k0..=n`.
fn checkpoint_step(args: &SimulateArgs, dt: f64, k0: u64, n: u64) -> Result<Option<u64>> {
    match (&args.checkpoint, args.checkpoint_at) {
        (None, None) => Ok(None),
        (Some(_), None) => bail!("--checkpoint FILE needs --checkpoint-at T (the time to write it at, s)"),
        (None, Some(_)) => bail!("--checkpoint-at T needs --checkpoint FILE (where to write it)"),
        (Some(_), Some(t)) => {
            let k = step_count(t, dt).context("--checkpoint-at")?;
            if k < k0 || k > n {
                bail!(
                    "--checkpoint-at {t} s is outside the run ({} s to {} s)",
                    k0 as f64 * dt,
                    n as f64 * dt
                );
            }
            Ok(Some(k))
        }
    }
}

/// The scene of `args` (or the demo) with its `--dt`, and the steps of its `--duration`.
fn load_scene(args: &SimulateArgs) -> Result<(Scene, u64)> {
    let mut scene = match &args.scene {
        Some(p) => Scene::from_file(p)?,
        None => demo_scene()?,
    };
    if let Some(dt) = args.dt {
        if !(dt >= MIN_DT && dt.is_finite()) {
            bail!("--dt must be a number of seconds from {MIN_DT:e} on (got {dt:e})");
        }
        scene.world.dt = dt;
    }
    if let Some(engine) = args.engine {
        scene.engine.kind = engine;
    }
    let duration = args.duration.unwrap_or(scene.world.duration);
    let dt = scene.world.dt;
    let n = step_count(duration, dt).context("--duration")?;
    if n == 0 {
        bail!("--duration {duration} s is shorter than half a time step (dt = {dt} s): nothing to simulate");
    }
    Ok((scene, n))
}

/// The bundled demo scene; it refers to no file (its robot is `builtin:solo12.urdf`), so a
/// copied binary runs it from anywhere.
pub fn demo_scene() -> Result<Scene> {
    Ok(Scene::from_str(DEMO_SCENE, "demo.yaml")?)
}

struct CsvOut {
    path: PathBuf,
    w: std::io::BufWriter<std::fs::File>,
    buf: String,
}

impl CsvOut {
    fn create(path: &Path, header: &str) -> Result<CsvOut> {
        let f = std::fs::File::create(path).with_context(|| format!("{}: cannot create", path.display()))?;
        let mut out = CsvOut {
            path: path.to_path_buf(),
            w: std::io::BufWriter::new(f),
            buf: String::new(),
        };
        out.line(format_args!("{header}"))?;
        Ok(out)
    }
    fn line(&mut self, args: std::fmt::Arguments) -> Result<()> {
        self.buf.clear();
        let _ = self.buf.write_fmt(args);
        self.buf.push('\n');
        self.w.write_all(self.buf.as_bytes()).with_context(|| self.path.display().to_string())
    }
    fn finish(mut self) -> Result<()> {
        self.w.flush().with_context(|| self.path.display().to_string())
    }
}

fn write_rows(out: &mut CsvOut, world: &World, moving: &[usize], step: u64) -> Result<()> {
    let t = world.time();
    for &i in moving {
        let s = &world.states()[i];
        let q = quat_to_xyzw(&s.pose.rotation);
        let p = s.pose.translation;
        out.line(format_args!(
            "{step},{t},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            world.bodies()[i].name,
            p.x,
            p.y,
            p.z,
            q[0],
            q[1],
            q[2],
            q[3],
            s.linear.x,
            s.linear.y,
            s.linear.z,
            s.angular.x,
            s.angular.y,
            s.angular.z
        ))?;
    }
    Ok(())
}

/// The sensor CSV's header: `time`, then each sensor's components.
fn sensor_header(world: &World) -> String {
    let mut h = String::from("time");
    for s in world.sensors() {
        let parts: &[&str] = match s.kind {
            SensorKind::Force => &["fx", "fy", "fz", "tx", "ty", "tz"],
            _ => &["x", "y", "z"],
        };
        for p in parts {
            let _ = write!(h, ",{}.{p}", s.name);
        }
    }
    h
}

/// One row of the sensor CSV into `row`.
fn sensor_row(row: &mut String, world: &World) {
    row.clear();
    let _ = write!(row, "{}", world.time());
    for (s, r) in world.sensors().iter().zip(world.readings()) {
        let n = if s.kind == SensorKind::Force { 6 } else { 3 };
        for x in &r[..n] {
            let _ = write!(row, ",{x}");
        }
    }
}

/// The joint CSV's header: `time`, then `JOINT.q,JOINT.dq,JOINT.tau` per one-dof joint.
fn joint_header(world: &World) -> String {
    let mut h = String::from("time");
    for name in world.one_dof_joints() {
        let _ = write!(h, ",{name}.q,{name}.dq,{name}.tau");
    }
    h
}

/// A warning for the user of `karakuri simulate`, on stderr.
fn warn(w: &str) {
    eprintln!("warning: {w}");
}

/// `karakuri simulate`: runs with a progress bar on stderr (drawn only on a terminal and only
/// for runs longer than a moment), prints the summary and, with `html`, writes the replay page
/// ([`crate::viewer`]).
pub fn run(args: &SimulateArgs, html: Option<&Path>) -> Result<std::process::ExitCode> {
    let bar = indicatif::ProgressBar::new(1000);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {percent}% (eta {eta})")
            .expect("valid template"),
    );
    let started = Instant::now();
    let mut recorder = html.map(crate::viewer::Recorder::for_page).transpose()?;
    let summary = simulate_observed(
        args,
        &mut |fraction| {
            if started.elapsed().as_secs_f64() > 0.5 {
                bar.set_position((fraction * 1000.0) as u64);
            }
        },
        &mut |world, last| recorder.iter_mut().for_each(|r| r.observe(world, last)),
    );
    bar.finish_and_clear();
    let summary = summary?;
    println!("{summary}");
    if let (Some(path), Some(recorder)) = (html, recorder) {
        let data = recorder.into_page_data(&summary.to_string());
        let bytes = crate::viewer::write_page(path, &data)?;
        crate::viewer::print_written(path, bytes, &data);
    }
    Ok(std::process::ExitCode::SUCCESS)
}

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

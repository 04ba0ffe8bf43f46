//! `karakuri simulate`: [`simulate`] with [`SimulateArgs`] runs a scene (or the bundled demo),
//! writes the trajectory and step CSV files, reports progress and returns a [`Summary`];
//! [`simulate_batch`] with [`BatchArgs`] runs N perturbed copies of it in parallel
//! (`--worlds N --seed S`) and returns a [`BatchSummary`]; [`run_live`] runs it watched from a
//! browser (`--live`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use karakuri_sim::scene::{EngineKind, Scene, MIN_DT};
use karakuri_sim::world::step_count;
use karakuri_sim::{Snapshot, World};

mod batch;
mod demo_assets;
mod live;
mod outputs;
mod summary;

pub use batch::{run_batch, simulate_batch, BatchArgs, BatchSummary};
pub use live::run_live;
pub use summary::{Summary, Tracking};
use outputs::RunOutputs;
use summary::RunStats;

/// The bundled demo scene (a Solo-12 quadruped that stands up under PD control among boxes and
/// takes a sideways push), `scenes/demo.yaml`; its robot is `builtin:solo12.urdf`, inside the
/// binary too.
pub const DEMO_SCENE: &str = include_str!("../../scenes/demo.yaml");

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
    /// Step CSV: `step,t,contacts,wall_ns,sweeps,residual,converged,signorini,coulomb,
    /// dissipation,depth` (the constraint solve's sweeps and final residual, m/s; 1 when the
    /// residual met `engine.tolerance`; ContactBench's contact measures, `solver/measures.rs`;
    /// the deepest penetration among the step's contacts, m, 0 without contacts).
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
    /// The MJCF `<key>` every MJCF robot starts from (`--keyframe`), replacing the scene's
    /// `robots[].keyframe`; `None`: the scene's (else each file's first keyframe).
    pub keyframe: Option<String>,
    /// `--cpu-time R`: before the run, time its steps alone `R` times ([`time_steps`]) and
    /// report the least in [`Summary::cpu_us_per_step`]; `None` (or 0): not timed.
    pub cpu_time: Option<u32>,
}

/// Steps of the untimed warm-up before `--cpu-time`'s timed runs (fewer if the run is
/// shorter): as `scripts/mujoco_steps.py` warms MuJoCo up before its timing.
pub const WARMUP_STEPS: u64 = 200;

/// Steps timed together by `--cpu-time` (a segment; the last may be shorter): as
/// `scripts/mujoco_steps.py` times MuJoCo's.
pub const SEGMENT_STEPS: u64 = 100;

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
    let (mut world, name, k0, n) = start_world(args)?;
    let cpu = match args.cpu_time {
        Some(repeats) if repeats > 0 => Some(time_steps(&mut world, n - k0, repeats)?),
        _ => None,
    };
    let checkpoint_step = checkpoint_step(args, world.dt(), k0, n)?;
    let mut outputs =
        RunOutputs::create(args.out.as_deref(), args.steps.as_deref(), args.sensors.as_deref(), args.joints.as_deref(), &world)?;
    let e0 = world.energy();
    observe(&world, false);
    outputs.write_start(&world, k0)?;
    let write_checkpoint = |world: &World| -> Result<()> {
        let path = args.checkpoint.as_ref().expect("a checkpoint step comes with its file");
        world.snapshot()?.write(path)?;
        Ok(())
    };
    if checkpoint_step == Some(k0) {
        write_checkpoint(&world)?;
    }
    let mut stats = RunStats::new(&world);
    let every = ((n - k0) / 100).max(1);
    for k in k0 + 1..=n {
        let t0 = Instant::now();
        world.step()?;
        let ns = t0.elapsed().as_nanos();
        stats.add(&world, ns);
        observe(&world, k == n);
        outputs.write_step(&world, k, ns)?;
        if checkpoint_step == Some(k) {
            write_checkpoint(&world)?;
        }
        if (k - k0) % every == 0 {
            progress((k - k0) as f64 / (n - k0) as f64);
        }
    }
    outputs.finish()?;
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
    let mut summary = stats.summary(&world, name, n - k0, (e0, e1), diagnostics);
    summary.cpu_us_per_step = cpu;
    Ok(summary)
}

/// `--cpu-time`: the CPU time of `steps` steps of `world` from its present state, in µs per
/// step. The steps are run `repeats` times, each time from the world's state restored (a
/// [`Snapshot`]: the steps are bit for bit the same every time), and timed in segments of
/// [`SEGMENT_STEPS`] by this thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`), read before a
/// segment's first [`World::step`] and after its last, nothing else in between: no loading, no
/// CSV, no progress, no per-step clock. Each segment's least time over the runs is kept (other
/// processes only ever add to a segment), and the sum of these over all steps is the figure.
/// Before the first run, an untimed warm-up of `min(steps, WARMUP_STEPS)` steps (buffers sized,
/// caches filled). The world is left at the state it had.
pub fn time_steps(world: &mut World, steps: u64, repeats: u32) -> Result<f64> {
    let start = world.snapshot().context("--cpu-time restores the world between its runs")?;
    for _ in 0..steps.min(WARMUP_STEPS) {
        world.step()?;
    }
    let mut best = vec![f64::INFINITY; steps.div_ceil(SEGMENT_STEPS) as usize];
    for _ in 0..repeats {
        world.restore(&start)?;
        let mut done = 0;
        for b in best.iter_mut() {
            let m = SEGMENT_STEPS.min(steps - done);
            let t0 = crate::bench::thread_cpu_seconds();
            for _ in 0..m {
                world.step()?;
            }
            let t1 = crate::bench::thread_cpu_seconds();
            *b = b.min(t1 - t0);
            done += m;
        }
    }
    world.restore(&start)?;
    Ok(best.iter().sum::<f64>() * 1e6 / steps as f64)
}

/// The run's world: the scene of `args` loaded (its warnings printed), restored from
/// `--resume` if given; with its name, the step it starts after (`k0`, 0 unless resumed) and
/// the last step `n`.
fn start_world(args: &SimulateArgs) -> Result<(World, String, u64, u64)> {
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
    Ok((world, name, k0, n))
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
    if let Some(key) = &args.keyframe {
        let mut mjcf = scene.robots.iter_mut().filter(|r| r.mjcf.is_some()).peekable();
        if mjcf.peek().is_none() {
            bail!("--keyframe {key}: the scene has no MJCF robot");
        }
        mjcf.for_each(|r| r.keyframe = Some(key.clone()));
    }
    let duration = args.duration.unwrap_or(scene.world.duration);
    let dt = scene.world.dt;
    let n = step_count(duration, dt).context("--duration")?;
    if n == 0 {
        bail!("--duration {duration} s is shorter than half a time step (dt = {dt} s): nothing to simulate");
    }
    Ok((scene, n))
}

/// The bundled demo scene; it refers to no file (its robot is `builtin:solo12.urdf`, its meshes
/// inside the binary too: [`demo_assets`]), so a copied binary runs it from anywhere.
pub fn demo_scene() -> Result<Scene> {
    let mut scene = Scene::from_str(DEMO_SCENE, "demo.yaml")?;
    if let Some(dir) = demo_assets::package_dir() {
        scene.robots[0].package_dirs.push(dir.display().to_string());
    }
    Ok(scene)
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


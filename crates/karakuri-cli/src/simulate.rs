//! `karakuri simulate`: [`simulate`] with [`SimulateArgs`] runs a scene (or the bundled demo),
//! writes the trajectory and step CSV files, reports progress and returns a [`Summary`].

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use karakuri::spatial::quat_to_xyzw;
use karakuri_sim::scene::{Scene, MIN_DT};
use karakuri_sim::world::step_count;
use karakuri_sim::{Diagnostics, World};

/// The bundled demo scene (a Solo-12 quadruped dropped among boxes), `scenes/demo.yaml`; its
/// robot is `builtin:solo12.urdf`, inside the binary too.
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
    /// Step CSV: `step,t,contacts,wall_ns`.
    pub steps: Option<PathBuf>,
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
    let duration = args.duration.unwrap_or(scene.world.duration);
    let dt = scene.world.dt;
    let n = step_count(duration, dt).context("--duration")?;
    if n == 0 {
        bail!("--duration {duration} s is shorter than half a time step (dt = {dt} s): nothing to simulate");
    }
    let name = scene.name.clone();
    let mut world = World::new(scene)?;
    for w in world.warnings() {
        warn(w);
    }
    let mut traj = args
        .out
        .as_ref()
        .map(|p| CsvOut::create(p, "step,t,body,px,py,pz,qx,qy,qz,qw,vx,vy,vz,wx,wy,wz"))
        .transpose()?;
    let mut steps_out = args
        .steps
        .as_ref()
        .map(|p| CsvOut::create(p, "step,t,contacts,wall_ns"))
        .transpose()?;
    let moving: Vec<usize> = (0..world.bodies().len())
        .filter(|&i| !world.bodies()[i].is_static)
        .collect();
    let e0 = world.energy();
    observe(&world, n == 0);
    if let Some(t) = traj.as_mut() {
        write_rows(t, &world, &moving, 0)?;
    }
    if let Some(s) = steps_out.as_mut() {
        s.line(format_args!("0,0,{},0", world.contacts().len()))?;
    }
    let (mut cmax, mut csum) = (0usize, 0usize);
    let mut wall = 0.0f64;
    let every = (n / 100).max(1);
    for k in 1..=n {
        let t0 = Instant::now();
        world.step()?;
        let ns = t0.elapsed().as_nanos();
        wall += ns as f64 * 1e-9;
        let nc = world.contacts().len();
        cmax = cmax.max(nc);
        csum += nc;
        observe(&world, k == n);
        if let Some(t) = traj.as_mut() {
            write_rows(t, &world, &moving, k)?;
        }
        if let Some(s) = steps_out.as_mut() {
            s.line(format_args!("{k},{},{nc},{ns}", world.time()))?;
        }
        if k % every == 0 {
            progress(k as f64 / n as f64);
        }
    }
    if let Some(t) = traj {
        t.finish()?;
    }
    if let Some(s) = steps_out {
        s.finish()?;
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
    })
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

//! The `karakuri` command: inspect models, verify them against Pinocchio exports, benchmark,
//! simulate.

use karakuri_cli::{bench, inspect, simulate, verify, viewer};
use karakuri_sim::scene::EngineKind;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "karakuri", version, about = "Rigid-body dynamics and simulation")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print a model's tree (URDF or MJCF): joints with their q/v indices, bodies and masses.
    Inspect {
        /// URDF file, MJCF (`.xml`, `.mjcf`) or Choreonoid `.body`.
        model: PathBuf,
        /// Add a free-flyer root joint (floating base).
        #[arg(long)]
        floating: bool,
    },
    /// Recompute every quantity of a Pinocchio reference file and compare.
    Verify {
        /// URDF file.
        model: PathBuf,
        /// Reference JSON (format karakuri-pinocchio-reference/1).
        reference: PathBuf,
        /// Only these keys of the reference samples, comma-separated (e.g. `rnea,M,aba`).
        #[arg(long, value_delimiter = ',')]
        only: Option<Vec<String>>,
    },
    /// Run a scene (JSON or YAML); without one, a bundled demo: a quadruped stands up and takes a push.
    Simulate {
        /// Scene file.
        scene: Option<PathBuf>,
        /// Simulated time in seconds (default: the scene's).
        #[arg(long)]
        duration: Option<f64>,
        /// Time step in seconds (default: the scene's).
        #[arg(long)]
        dt: Option<f64>,
        /// Trajectory CSV: step,t,body,px,py,pz,qx,qy,qz,qw,vx,vy,vz,wx,wy,wz (world frame).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Per-step CSV: step,t,contacts,wall_ns,sweeps,residual,converged,signorini,coulomb,dissipation,depth (the constraint solve's: sweeps, final residual, 1 when it met engine.tolerance, ContactBench's contact measures; the deepest contact's penetration, m)
        #[arg(long)]
        steps: Option<PathBuf>,
        /// Sensor CSV: time, then NAME.COMPONENT per reading component: x,y,z (accelerometers,
        /// gyros, velocities, positions), fx..tz (force sensors), x,y,z,w (quaternions), q, v,
        /// tau, fn (joint, actuator, touch sensors), one row per step.
        #[arg(long)]
        sensors: Option<PathBuf>,
        /// Joint CSV: time, then JOINT.q,JOINT.dq,JOINT.tau for every 1-dof joint, one row per step.
        #[arg(long)]
        joints: Option<PathBuf>,
        /// Replay page: one HTML file (3-D view, time slider, plots) to open in a browser.
        #[arg(long)]
        html: Option<PathBuf>,
        /// Run N copies of the scene in parallel on all cores (world 0 as written, the others
        /// with free bodies and floating bases moved by up to ±1 mm and hinges by up to
        /// ±1 mrad) and report the total steps/s; not with --out, --steps or --html.
        #[arg(long, value_name = "N")]
        worlds: Option<usize>,
        /// Seed of the --worlds perturbations (default 0).
        #[arg(long, value_name = "S", requires = "worlds")]
        seed: Option<u64>,
        /// Write the world's full state (a JSON checkpoint) at --checkpoint-at T to FILE.
        #[arg(long, value_name = "FILE", requires = "checkpoint_at")]
        checkpoint: Option<PathBuf>,
        /// When to write --checkpoint (s, rounded to a step).
        #[arg(long, value_name = "T", requires = "checkpoint")]
        checkpoint_at: Option<f64>,
        /// Continue from a checkpoint of the same scene (and --dt) to the run's end; the rows
        /// after its time are those of the uninterrupted run.
        #[arg(long, value_name = "FILE")]
        resume: Option<PathBuf>,
        /// The engine stepping the world, replacing the scene's `engine.type`: `native`, or
        /// `rapier` (a build with `--features rapier`).
        #[arg(long, value_parser = parse_engine)]
        engine: Option<EngineKind>,
        /// Start every MJCF robot from this `<key>` (by name) instead of the file's first
        /// keyframe (its qpos, qvel and ctrl).
        #[arg(long, value_name = "NAME")]
        keyframe: Option<String>,
        /// Also time the steps alone and print `cpu time` (µs/step): the run's steps R times
        /// from its start state restored each time, after an untimed warm-up of up to 200
        /// steps, this thread's CPU time around each 100 steps only (no loading, CSV writing or
        /// per-step bookkeeping), each 100's least time over the R runs, summed; then the run
        /// goes on as without it, its rows unchanged.
        #[arg(long, value_name = "R", conflicts_with = "worlds")]
        cpu_time: Option<u32>,
        /// Watch the run live in a browser: a local server (127.0.0.1) serves the viewer page,
        /// fed by a WebSocket; from the page: pause, step, reset, real time or as fast as
        /// possible, ctrl+drag a body with a spring, a slider per actuator, live plots. Runs
        /// until Ctrl-C (or --duration when given); the page's address is printed.
        #[arg(long, conflicts_with_all = ["html", "worlds", "out", "steps", "sensors", "joints", "checkpoint", "cpu_time"])]
        live: bool,
        /// The live viewer's port (0: any free port).
        #[arg(long, value_name = "P", requires = "live", default_value_t = 0)]
        port: u16,
        /// The live viewer's address (default 127.0.0.1); one not on loopback needs
        /// --live-allow-remote.
        #[arg(long, value_name = "ADDR", requires = "live")]
        host: Option<std::net::IpAddr>,
        /// Let the live viewer listen on a non-loopback address (it has no authentication:
        /// anyone who reaches the port can steer the simulation).
        #[arg(long, requires = "live")]
        live_allow_remote: bool,
    },
    /// Write a page showing a URDF or MJCF model with a slider per joint (opens from disk in a browser).
    View {
        /// URDF file, or MJCF (`.xml`, `.mjcf`).
        model: PathBuf,
        /// Add a free-flyer root joint (floating base).
        #[arg(long)]
        floating: bool,
        /// The HTML file to write.
        #[arg(long)]
        html: PathBuf,
        /// A directory `package://NAME/...` mesh paths are looked up in (as `DIR/NAME/...`, and
        /// `package:///rest` as `DIR/rest`); repeat for several, searched in order before
        /// ROS_PACKAGE_PATH and the URDF's own ancestors.
        #[arg(long = "package-dir", value_name = "DIR")]
        package_dir: Vec<PathBuf>,
    },
    /// Time every algorithm on a model (ns per call, thread CPU time, median over ~5 ms batches).
    Bench {
        /// URDF file.
        model: PathBuf,
        /// Add a free-flyer root joint (floating base).
        #[arg(long)]
        floating: bool,
        /// CPU seconds per algorithm (at least 21 batches).
        #[arg(long, default_value_t = 0.5)]
        time: f64,
        /// Only these algorithms, comma-separated (e.g. `rnea,aba`).
        #[arg(long, value_delimiter = ',')]
        only: Option<Vec<String>>,
        /// Joints carrying a 3-D point contact for the constrained-dynamics timings (`cd_*`).
        #[arg(long, value_delimiter = ',')]
        contacts: Vec<String>,
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
    },
}

/// `--engine`: `native` or `rapier`.
fn parse_engine(s: &str) -> Result<EngineKind, String> {
    match s {
        "native" => Ok(EngineKind::Native),
        "rapier" => Ok(EngineKind::Rapier),
        _ => Err(format!("unknown engine '{s}' (native or rapier)")),
    }
}

/// Restores the default SIGPIPE action, so `karakuri inspect … | head` ends quietly instead of
/// panicking on a closed pipe (Rust ignores SIGPIPE by default).
#[allow(unsafe_code)] // one libc call at start-up, before any thread exists
fn reset_sigpipe() {
    // SAFETY: setting a signal disposition to its default has no preconditions
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    reset_sigpipe();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Inspect { model, floating } => inspect::run(&model, floating),
        Command::Verify { model, reference, only } => verify::run(&model, &reference, only.as_deref()),
        Command::Simulate { scene, duration, dt, out, steps, sensors, joints, html, worlds, seed, checkpoint, checkpoint_at, resume, engine, keyframe, cpu_time, live, port, host, live_allow_remote } => {
            let args = simulate::SimulateArgs { scene, duration, dt, out, steps, sensors, joints, checkpoint, checkpoint_at, resume, engine, keyframe, cpu_time };
            if live {
                let mut options = karakuri_viewer::live::ServerOptions { port, allow_remote: live_allow_remote, ..Default::default() };
                if let Some(host) = host {
                    options.host = host;
                }
                simulate::run_live(&args, &options)
            } else if let Some(worlds) = worlds {
                let batch = simulate::BatchArgs { worlds, seed: seed.unwrap_or(0) };
                simulate::run_batch(&args, &batch, html.as_deref())
            } else {
                simulate::run(&args, html.as_deref())
            }
        }
        Command::View { model, floating, html, package_dir } => viewer::view(&model, floating, &package_dir, &html),
        Command::Bench { model, floating, time, only, contacts, json } => {
            bench::run(&model, floating, time, only.as_deref(), &contacts, json)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

//! The CSV files of a run (`--out`, `--steps`, `--sensors`, `--joints`): their headers and
//! rows, opened, written each step and finished together ([`RunOutputs`]).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use karakuri::spatial::quat_to_xyzw;
use karakuri_sim::{JointState, World};

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

/// The sensor CSV's header: `time`, then each sensor's components ([`World::layout`]).
/// The deepest penetration among the world's contacts (m; 0 without contacts or with gaps only).
fn deepest(world: &World) -> f64 {
    world.contacts().iter().fold(0.0, |d, c| d.max(c.depth))
}

fn sensor_header(world: &World) -> String {
    let mut h = String::from("time");
    for (sensor, component) in world.layout().sensor_components() {
        let _ = write!(h, ",{sensor}.{component}");
    }
    h
}

/// One row of the sensor CSV into `row`.
fn sensor_row(row: &mut String, world: &World) {
    row.clear();
    let _ = write!(row, "{}", world.time());
    for (s, r) in world.layout().sensors.iter().zip(world.readings()) {
        for x in &r[..s.width] {
            let _ = write!(row, ",{x}");
        }
    }
}

/// The joint CSV's header: `time`, then `JOINT.q,JOINT.dq,JOINT.tau` per one-dof joint.
fn joint_header(world: &World) -> String {
    let mut h = String::from("time");
    for name in &world.layout().joints {
        let _ = write!(h, ",{name}.q,{name}.dq,{name}.tau");
    }
    h
}


/// The CSV files a run writes (each optional), with their row buffers: the trajectory of the
/// moving bodies (`--out`), one line a step (`--steps`), the sensor readings (`--sensors`) and
/// the one-dof joints' q, dq, τ (`--joints`).
pub(super) struct RunOutputs {
    traj: Option<CsvOut>,
    steps: Option<CsvOut>,
    sensors: Option<CsvOut>,
    joints: Option<CsvOut>,
    joint_states: Vec<JointState>,
    row: String,
    moving: Vec<usize>,
}

impl RunOutputs {
    /// Creates the files given (their headers written) for `world`.
    pub(super) fn create(
        out: Option<&Path>,
        steps: Option<&Path>,
        sensors: Option<&Path>,
        joints: Option<&Path>,
        world: &World,
    ) -> Result<RunOutputs> {
        Ok(RunOutputs {
            traj: out.map(|p| CsvOut::create(p, "step,t,body,px,py,pz,qx,qy,qz,qw,vx,vy,vz,wx,wy,wz")).transpose()?,
            steps: steps.map(|p| CsvOut::create(p, "step,t,contacts,wall_ns,sweeps,residual,converged,signorini,coulomb,dissipation,depth")).transpose()?,
            sensors: sensors.map(|p| CsvOut::create(p, &sensor_header(world))).transpose()?,
            joints: joints.map(|p| CsvOut::create(p, &joint_header(world))).transpose()?,
            joint_states: vec![JointState::default(); world.one_dof_joints().len()],
            row: String::new(),
            moving: (0..world.bodies().len()).filter(|&i| !world.bodies()[i].is_static).collect(),
        })
    }

    /// The rows of the starting state (step `k0`): the trajectory and the step line.
    pub(super) fn write_start(&mut self, world: &World, k0: u64) -> Result<()> {
        if let Some(t) = self.traj.as_mut() {
            write_rows(t, world, &self.moving, k0)?;
        }
        if let Some(s) = self.steps.as_mut() {
            s.line(format_args!("{k0},{},{},0,0,0,1,0,0,0,{:e}", world.time(), world.contacts().len(), deepest(world)))?;
        }
        Ok(())
    }

    /// The rows of step `k`, which took `ns` nanoseconds.
    pub(super) fn write_step(&mut self, world: &World, k: u64, ns: u128) -> Result<()> {
        let nc = world.contacts().len();
        let row = &mut self.row;
        if let Some(t) = self.traj.as_mut() {
            write_rows(t, world, &self.moving, k)?;
        }
        if let Some(s) = self.steps.as_mut() {
            let solve = world.last_solve();
            let converged = u8::from(solve.residual <= world.scene().engine.tolerance);
            s.line(format_args!(
                "{k},{},{nc},{ns},{},{:e},{converged},{:e},{:e},{:e},{:e}",
                world.time(),
                solve.iterations,
                solve.residual,
                solve.signorini,
                solve.coulomb,
                solve.dissipation,
                deepest(world)
            ))?;
        }
        if let Some(s) = self.sensors.as_mut() {
            sensor_row(row, world);
            s.line(format_args!("{row}"))?;
        }
        if let Some(j) = self.joints.as_mut() {
            world.write_joint_states(&mut self.joint_states);
            row.clear();
            let _ = write!(row, "{}", world.time());
            for s in &self.joint_states {
                let _ = write!(row, ",{},{},{}", s.q, s.dq, s.tau);
            }
            j.line(format_args!("{row}"))?;
        }
        Ok(())
    }

    /// Flushes and closes every file.
    pub(super) fn finish(self) -> Result<()> {
        if let Some(t) = self.traj {
            t.finish()?;
        }
        for out in [self.steps, self.sensors, self.joints].into_iter().flatten() {
            out.finish()?;
        }
        Ok(())
    }
}

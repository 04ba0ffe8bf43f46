//! [`LiveSession`]: a [`LiveServer`] and the state of its page's controls, applied to a `World`
//! through its public API; the run loop stays the caller's (the CLI's, or the Python user's).

use std::time::{Duration, Instant};

use anyhow::Result;
use karakuri::spatial::Vec3;
use karakuri_sim::scene::ActuatorMode;
use karakuri_sim::{JointState, Snapshot, World};
use serde_json::{json, Value};

use super::command::Command;
use super::server::{LiveServer, ServerOptions};
use crate::Recorder;

/// The mouse spring's natural frequency (Hz) on the mass it pulls (critically damped).
pub const SPRING_HZ: f64 = 2.0;
/// Its force is capped at this many times the pulled mass (m/s²).
const SPRING_MAX_ACCEL: f64 = 100.0;
/// Frames per wall-clock second sent to the pages, at most.
const FPS: f64 = 60.0;
/// Contacts per frame, at most (the first ones).
const MAX_CONTACTS: usize = 256;
/// Sensor values per frame, at most (the first sensors').
const MAX_SENSOR_VALUES: usize = 24;

/// What the caller's loop should do next ([`LiveSession::poll`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Step (running).
    Run,
    /// Step once (paused, the page asked for one step).
    Step,
    /// Do not step (paused): poll again a moment later.
    Wait,
}

/// The grabbed point and where the mouse pulls it.
#[derive(Clone, Copy, Debug)]
struct Drag {
    body: usize,
    local: Vec3,
    target: Vec3,
}

/// The live viewer of one world (see the module docs of [`crate::live`]).
pub struct LiveSession {
    server: LiveServer,
    start: Result<Snapshot, String>,
    /// The page paused the run.
    pub paused: bool,
    /// Simulated time paced to the wall clock (else as fast as possible).
    pub realtime: bool,
    steps_asked: u32,
    drag: Option<Drag>,
    /// Per body: the mass the mouse spring pulls (its robot's, else its own).
    pulled_mass: Vec<f64>,
    moving: Vec<usize>,
    commands: Vec<Command>,
    joints: Vec<JointState>,
    targets: Vec<Option<f64>>,
    last_frame: Option<Instant>,
    /// (wall clock, simulated time) the real-time pacing counts from.
    anchor: Option<(Instant, f64)>,
    rate: (Instant, u64, f64),
    note: String,
}

impl LiveSession {
    /// Starts the server for `world`: its page shows the world's bodies as they are now, titled
    /// `title`, and the world's state now is what the page's reset returns to.
    pub fn start(world: &World, options: &ServerOptions, title: &str) -> Result<LiveSession> {
        let page = crate::page::render(&format!("{title} · karakuri live"), &page_data(world, title));
        let server = LiveServer::start(options, page)?;
        let bodies = world.bodies();
        let robot = |name: &str| name.split_once('/').map(|(r, _)| r.to_string());
        let pulled_mass = bodies
            .iter()
            .map(|b| match robot(&b.name) {
                Some(r) => bodies
                    .iter()
                    .filter(|o| !o.is_static && robot(&o.name).as_deref() == Some(r.as_str()))
                    .map(|o| o.mass)
                    .sum(),
                None => b.mass,
            })
            .collect();
        let n = world.one_dof_joints().len();
        Ok(LiveSession {
            server,
            start: world.snapshot().map_err(|e| e.to_string()),
            paused: false,
            realtime: true,
            steps_asked: 0,
            drag: None,
            pulled_mass,
            moving: (0..bodies.len()).filter(|&i| !bodies[i].is_static).collect(),
            commands: Vec::new(),
            joints: vec![JointState::default(); n],
            targets: vec![None; n],
            last_frame: None,
            anchor: None,
            rate: (Instant::now(), world.steps(), 0.0),
            note: String::new(),
        })
    }

    /// The server (its address, the pages attached).
    pub fn server(&self) -> &LiveServer {
        &self.server
    }

    /// Applies the pages' commands to `world` (targets; reset restores the start) and says
    /// whether to step.
    pub fn poll(&mut self, world: &mut World) -> Action {
        self.server.take_commands(&mut self.commands);
        for c in std::mem::take(&mut self.commands) {
            match c {
                Command::Pause => self.paused = true,
                Command::Play => {
                    self.paused = false;
                    self.anchor = None;
                }
                Command::Step => {
                    self.paused = true;
                    self.steps_asked += 1;
                }
                Command::Reset => self.reset(world),
                Command::RealTime(on) => {
                    self.realtime = on;
                    self.anchor = None;
                }
                Command::Drag { body, local, target } => {
                    if body < world.bodies().len() && !world.bodies()[body].is_static {
                        self.drag = Some(Drag { body, local: local.into(), target: target.into() });
                    }
                }
                Command::Release => self.drag = None,
                Command::Target { joint, value } => {
                    if let Err(e) = world.set_one_dof_target(joint, value) {
                        self.note = e.to_string();
                    }
                }
            }
        }
        if self.steps_asked > 0 {
            self.steps_asked -= 1;
            Action::Step
        } else if self.paused {
            self.anchor = None;
            Action::Wait
        } else {
            Action::Run
        }
    }

    fn reset(&mut self, world: &mut World) {
        self.drag = None;
        self.anchor = None;
        match &self.start {
            Ok(snap) => {
                if let Err(e) = world.restore(snap) {
                    self.note = format!("reset failed: {e}");
                }
            }
            Err(e) => self.note = format!("reset is not available: the world cannot be saved ({e})"),
        }
        self.last_frame = None;
    }

    /// A step failed (`why`; the world kept the state it started from): the run pauses and the
    /// pages show why.
    pub fn fail(&mut self, why: &str) {
        self.paused = true;
        self.drag = None;
        self.note = why.to_string();
    }

    /// The mouse spring's push on the grabbed body for the next step (call right before
    /// `world.step()`): `F = m (ω² (target − p) − 2ω ṗ)` at the grabbed point `p`, `m` the mass
    /// it pulls, `ω = 2π SPRING_HZ`, through `World::apply_wrench` for one step.
    pub fn push_spring(&mut self, world: &mut World) {
        let Some(d) = self.drag else { return };
        let state = world.states()[d.body];
        let o = state.pose.translation;
        let p = state.pose.transform_point(&d.local);
        let v = state.linear + state.angular.cross(&(p - o));
        let m = self.pulled_mass[d.body].max(1e-3);
        let w = std::f64::consts::TAU * SPRING_HZ;
        let mut f = m * (w * w * (d.target - p) - 2.0 * w * v);
        if f.norm() > m * SPRING_MAX_ACCEL {
            f *= m * SPRING_MAX_ACCEL / f.norm();
        }
        let name = world.bodies()[d.body].name.clone();
        let torque = (p - o).cross(&f);
        if let Err(e) = world.apply_wrench(&name, f, torque, world.dt()) {
            self.note = e.to_string();
            self.drag = None;
        }
    }

    /// In real time, waits until the wall clock catches up with `world`'s time (at most 50 ms
    /// per call, so commands keep coming through).
    pub fn pace(&mut self, world: &World) {
        if !self.realtime {
            return;
        }
        let now = Instant::now();
        let (wall, t0) = *self.anchor.get_or_insert((now, world.time()));
        let ahead = (world.time() - t0) - now.duration_since(wall).as_secs_f64();
        if ahead > 0.25 {
            self.anchor = Some((now, world.time()));
        } else if ahead > 0.0 {
            std::thread::sleep(Duration::from_secs_f64(ahead.min(0.05)));
        }
    }

    /// Sends `world`'s state to the pages: at most [`FPS`] times a wall-clock second unless
    /// `now` (a step while paused, the run's end).
    pub fn publish(&mut self, world: &World, now: bool) {
        let t = Instant::now();
        if !now && self.last_frame.is_some_and(|l| t.duration_since(l).as_secs_f64() < 1.0 / FPS) {
            return;
        }
        self.last_frame = Some(t);
        let dt_wall = t.duration_since(self.rate.0).as_secs_f64();
        if dt_wall > 0.5 {
            self.rate = (t, world.steps(), world.steps().saturating_sub(self.rate.1) as f64 / dt_wall);
        }
        let frame = self.frame(world);
        self.server.publish(frame.to_string());
    }

    fn frame(&mut self, world: &World) -> Value {
        let r6 = |x: f64| (x * 1e6).round() / 1e6;
        let states = world.states();
        let poses: Vec<f64> = self
            .moving
            .iter()
            .flat_map(|&i| {
                let p = states[i].pose.translation;
                let q = karakuri::spatial::quat_to_xyzw(&states[i].pose.rotation);
                [p.x, p.y, p.z, q[0], q[1], q[2], q[3]].map(r6)
            })
            .collect();
        let contacts: Vec<f64> = world
            .contacts()
            .iter()
            .take(MAX_CONTACTS)
            .flat_map(|c| [c.point.x, c.point.y, c.point.z, c.force.x, c.force.y, c.force.z].map(r6))
            .collect();
        world.write_joint_states(&mut self.joints);
        world.write_position_targets(&mut self.targets);
        let sensors: Vec<f64> = world
            .layout()
            .sensors
            .iter()
            .zip(world.readings())
            .flat_map(|(s, r)| r[..s.width].iter().copied())
            .take(MAX_SENSOR_VALUES)
            .map(r6)
            .collect();
        json!({
            "t": world.time(),
            "steps": world.steps(),
            "paused": self.paused,
            "realtime": self.realtime,
            "rate": self.rate.2.round(),
            "pages": self.server.pages(),
            "note": self.note,
            "drag": self.drag.map(|d| d.body),
            "p": poses,
            "e": r6(world.energy()),
            "nc": world.contacts().len(),
            "c": contacts,
            "q": self.joints.iter().map(|j| r6(j.q)).collect::<Vec<_>>(),
            "tg": self.targets,
            "s": sensors,
        })
    }
}

/// The page's data: the replay page's bodies, shapes and meshes at the world's state now, kind
/// `live`, with the sliders (one per actuated one-dof joint: its range and mode) and the plot
/// series (joints, sensors) the frames fill.
fn page_data(world: &World, title: &str) -> Value {
    let mut rec = Recorder::new();
    rec.observe(world, true);
    let mut data = rec.into_page_data("live: the simulation runs in the karakuri process");
    data["kind"] = json!("live");
    data["title"] = json!(title);
    data["plots"] = json!([]);
    let names = world.one_dof_joints();
    let sliders: Vec<Value> = world
        .joint_infos()
        .iter()
        .enumerate()
        .filter_map(|(k, info)| {
            let a = info.actuator?;
            let cap = |limit: f64, fallback: f64| if limit.is_finite() { limit } else { fallback };
            let (mode, lo, hi) = match a.mode {
                ActuatorMode::Position => {
                    let [lo, hi] = info.limits.unwrap_or([-std::f64::consts::PI, std::f64::consts::PI]);
                    ("position", lo, hi)
                }
                ActuatorMode::Velocity => ("speed", -cap(a.velocity_limit, 10.0), cap(a.velocity_limit, 10.0)),
                ActuatorMode::Torque => ("torque", -cap(a.effort_limit, 100.0), cap(a.effort_limit, 100.0)),
                // the scene's trajectory drives it: no slider
                ActuatorMode::Prescribed => return None,
            };
            Some(json!({"joint": k, "name": names[k], "mode": mode, "lo": lo, "hi": hi}))
        })
        .collect();
    let mut sensor_labels = Vec::new();
    for s in &world.layout().sensors {
        for c in 0..s.width {
            sensor_labels.push(format!("{}[{c}]", s.name));
        }
    }
    sensor_labels.truncate(MAX_SENSOR_VALUES);
    let moving: Vec<usize> = (0..world.bodies().len()).filter(|&i| !world.bodies()[i].is_static).collect();
    data["live"] = json!({
        "moving": moving,
        "joints": names,
        "sliders": sliders,
        "sensors": sensor_labels,
        "spring_hz": SPRING_HZ,
    });
    data
}

//! [`Recorder`]: what a replay page shows, taken from a running [`World`] through its public
//! API (body states, contacts, energy) at display rate.
//!
//! * Frames: every `stride`-th step, `stride` the fewest steps spanning at least 1/60 s, and the
//!   last step. Positions are stored as 16-bit integers over each body's range of motion
//!   (a 10 m fall: 0.15 mm steps), orientations as 16-bit quaternion components (~3e-5 rad);
//!   the page interpolates between frames.
//! * Contacts: point and force of each contact (float32) at the frames, thinned to every k-th
//!   frame when they would exceed [`CONTACT_BYTES`] before compression (a long pile of 100
//!   bodies). Every long array is deflated in the page ([`super::page::pack`]).
//! * Plots at the frames: mechanical energy, number of contacts, and the position of every
//!   1-dof joint (URDF joints, single-hinge scene bodies), recovered from the body states.

use karakuri::model::JointType;
use karakuri::spatial::{log3, Se3, Vec3};
use karakuri_sim::scene::{JointSpec, RobotSpec};
use karakuri_sim::{RobotInfo, World};
use serde_json::{json, Value};

use super::looks::{palette, pose7, scene_shape, MeshTable, RobotLooks, STATIC_GREY};
use super::page::{f32s, i16s, u32s};

/// Largest display rate (frames per simulated second).
pub const MAX_FPS: f64 = 60.0;
/// Contact data above this many bytes is thinned to every k-th frame.
pub const CONTACT_BYTES: usize = 8_000_000;

/// A 1-dof joint whose position is recovered from the poses of its two bodies:
/// `X = base⁻¹ · pose(parent)⁻¹ · pose(body)` is the joint's motion (with the anchor moved
/// around it for scene hinges), its angle `log(R)·axis` or its slide `p·axis`.
struct JointProbe {
    name: String,
    body: usize,
    parent: Option<usize>,
    base: Se3,
    axis: Vec3,
    prismatic: bool,
}

impl JointProbe {
    fn position(&self, world: &World, previous: Option<f64>) -> f64 {
        let states = world.states();
        let rel = match self.parent {
            Some(p) => states[p].pose.inv_compose(&states[self.body].pose),
            None => states[self.body].pose,
        };
        let x = self.base.inv_compose(&rel);
        if self.prismatic {
            return x.translation.dot(&self.axis);
        }
        let q = log3(&x.rotation).dot(&self.axis);
        // continuous joints: the turn nearest the previous frame's angle
        match previous {
            Some(prev) => q + (std::f64::consts::TAU * ((prev - q) / std::f64::consts::TAU).round()),
            None => q,
        }
    }
}

/// Records a run for its replay page; feed it every step with [`Recorder::observe`].
#[derive(Default)]
pub struct Recorder {
    started: bool,
    stride: u64,
    /// Per world body: name, moves, shapes, initial pose.
    bodies: Vec<Value>,
    moving: Vec<usize>,
    meshes: MeshTable,
    probes: Vec<JointProbe>,
    times: Vec<f64>,
    /// Per frame and moving body.
    positions: Vec<[f64; 3]>,
    orientations: Vec<[f64; 4]>,
    energy: Vec<f64>,
    contact_count: Vec<u32>,
    /// Per frame, the index of its first contact in `contacts`.
    contact_start: Vec<u32>,
    /// (point, force) per contact.
    contacts: Vec<([f32; 3], [f32; 3])>,
    /// Per frame and probe.
    joint_q: Vec<f64>,
    scene_name: String,
    scene_title: String,
    dt: f64,
}

impl Recorder {
    /// A recorder; it learns the world at its first [`Recorder::observe`].
    pub fn new() -> Recorder {
        Recorder::default()
    }

    /// A recorder for a page to be written at `path`, checked writable now (not after the run).
    pub fn for_page(path: &std::path::Path) -> anyhow::Result<Recorder> {
        std::fs::write(path, "").map_err(|e| anyhow::anyhow!("{}: cannot write the page: {e}", path.display()))?;
        Ok(Recorder::new())
    }

    /// Called with the world at the start and after every step; `last` on the run's last call.
    pub fn observe(&mut self, world: &World, last: bool) {
        if !self.started {
            self.start(world);
        }
        if world.steps().is_multiple_of(self.stride) || last {
            if self.times.last() == Some(&world.time()) {
                return;
            }
            self.frame(world);
        }
    }

    fn start(&mut self, world: &World) {
        self.started = true;
        let scene = world.scene();
        self.dt = world.engine().dt();
        self.stride = ((1.0 / (MAX_FPS * self.dt)) - 1e-9).ceil().max(1.0) as u64;
        self.scene_name = scene.name.clone();
        self.scene_title = scene
            .extra
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let mut shapes: Vec<Vec<Value>> = vec![Vec::new(); world.bodies().len()];
        let mut free = 0;
        for b in &scene.bodies {
            let Some(i) = world.body_index(&b.name) else { continue };
            let color = if b.is_static() {
                STATIC_GREY
            } else {
                free += 1;
                palette(free - 1)
            };
            shapes[i].extend(
                b.shapes
                    .iter()
                    .filter_map(|s| scene_shape(s, color, "visual", &mut self.meshes)),
            );
            if let [JointSpec::Hinge {
                name,
                prismatic,
                axis,
                anchor,
                ..
            }] = b.joints.as_slice()
            {
                let pip = super::looks::se3(&b.pose_in_parent);
                let a = Vec3::from(*anchor);
                self.probes.push(JointProbe {
                    name: name.clone(),
                    body: i,
                    parent: (b.parent != "world").then(|| world.body_index(&b.parent)).flatten(),
                    base: if *prismatic {
                        pip
                    } else {
                        pip.compose(&Se3::from_translation(a))
                    },
                    axis: Vec3::from(*axis),
                    prismatic: *prismatic,
                });
            }
        }
        for (r, compiled) in scene.robots.iter().zip(world.robots()) {
            self.robot(r, compiled, &mut shapes);
        }
        let states = world.states();
        for (i, b) in world.bodies().iter().enumerate() {
            if !b.is_static {
                self.moving.push(i);
            }
            self.bodies.push(json!({
                "name": b.name,
                "moving": !b.is_static,
                "pose": pose7(&states[i].pose),
                "shapes": std::mem::take(&mut shapes[i]),
            }));
        }
    }

    /// Shapes and joint probes of a scene robot, from the world's compiled robot (its own model
    /// and URDF geometry as the engine loaded them: no file is read again).
    fn robot(&mut self, r: &RobotSpec, compiled: &RobotInfo, shapes: &mut [Vec<Value>]) {
        let model = &compiled.model;
        let looks = RobotLooks {
            label: format!("robot '{}'", r.name),
            model,
            geometry: &compiled.geometry,
            extra: &r.shapes,
            collision: if r.collide {
                r.collision
            } else {
                karakuri_sim::scene::RobotCollision::None
            },
        };
        let per_joint = looks.shapes(&mut self.meshes);
        let body_of = |j: usize| compiled.body.get(j).copied();
        for (j, s) in per_joint.into_iter().enumerate() {
            if let Some(i) = body_of(j) {
                shapes[i].extend(s);
            }
        }
        for j in 1..model.njoints {
            let (axis, prismatic) = match model.joint_types[j] {
                JointType::Revolute { axis } | JointType::RevoluteUnbounded { axis } => (axis.vector(), false),
                JointType::Prismatic { axis } => (axis.vector(), true),
                _ => continue,
            };
            let (Some(body), Some(parent)) = (body_of(j), body_of(model.parents[j])) else {
                continue;
            };
            self.probes.push(JointProbe {
                name: format!("{}/{}", r.name, model.joint_names[j]),
                body,
                parent: Some(parent),
                base: model.joint_placements[j],
                axis,
                prismatic,
            });
        }
    }

    fn frame(&mut self, world: &World) {
        let states = world.states();
        self.times.push(world.time());
        for &i in &self.moving {
            let pose = &states[i].pose;
            let p = pose.translation;
            self.positions.push([p.x, p.y, p.z]);
            let mut q = karakuri::spatial::quat_to_xyzw(&pose.rotation);
            // the sign nearest the previous frame's, so the page interpolates the short way
            if let Some(prev) = self
                .orientations
                .len()
                .checked_sub(self.moving.len())
                .map(|k| self.orientations[k])
            {
                if (0..4).map(|c| q[c] * prev[c]).sum::<f64>() < 0.0 {
                    q = q.map(|x| -x);
                }
            }
            self.orientations.push(q);
        }
        self.energy.push(world.energy());
        let contacts = world.contacts();
        self.contact_count.push(contacts.len() as u32);
        self.contact_start.push(self.contacts.len() as u32);
        for c in contacts {
            self.contacts
                .push((c.point.map(|x| x as f32).into(), c.force.map(|x| x as f32).into()));
        }
        let n = self.probes.len();
        for k in 0..n {
            let prev = self.joint_q.len().checked_sub(n).map(|i| self.joint_q[i]);
            let q = self.probes[k].position(world, prev);
            self.joint_q.push(q);
        }
    }

    /// The page's data (see `assets/viewer/viewer.js`), with `summary` shown as the run's info.
    pub fn into_page_data(mut self, summary: &str) -> Value {
        let nf = self.times.len();
        let m = self.moving.len();
        // positions over each body's range, 16 bits
        let mut lo = vec![[f64::INFINITY; 3]; m];
        let mut hi = vec![[f64::NEG_INFINITY; 3]; m];
        for f in 0..nf {
            for b in 0..m {
                for c in 0..3 {
                    let x = self.positions[f * m + b][c];
                    lo[b][c] = lo[b][c].min(x);
                    hi[b][c] = hi[b][c].max(x);
                }
            }
        }
        let step: Vec<[f64; 3]> = (0..m)
            .map(|b| std::array::from_fn(|c| ((hi[b][c] - lo[b][c]) / 65534.0).max(1e-12)))
            .collect();
        let p16 = (0..nf * m).flat_map(|k| {
            let b = k % m;
            let p = self.positions[k];
            let (lo, step) = (lo[b], step[b]);
            (0..3).map(move |c| (((p[c] - lo[c]) / step[c]).round() - 32767.0) as i16)
        });
        let positions = i16s(p16.collect::<Vec<_>>());
        let q16 = self
            .orientations
            .iter()
            .flat_map(|q| q.map(|x| (x * 32767.0).round().clamp(-32767.0, 32767.0) as i16));
        let orientations = i16s(q16.collect::<Vec<_>>());
        // contacts, thinned to fit
        let total = self.contacts.len() * 24;
        let every = total.div_ceil(CONTACT_BYTES).max(1);
        let mut start = Vec::new();
        let (mut cp, mut cf) = (Vec::new(), Vec::new());
        for f in (0..nf).step_by(every) {
            start.push(cp.len() as u32 / 3);
            let end = self
                .contact_start
                .get(f + 1)
                .map_or(self.contacts.len(), |&e| e as usize);
            for (p, force) in &self.contacts[self.contact_start[f] as usize..end] {
                cp.extend_from_slice(p);
                cf.extend_from_slice(force);
            }
        }
        start.push(cp.len() as u32 / 3);
        let fmax = cf
            .chunks(3)
            .map(|f| (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt())
            .fold(0.0f32, f32::max);
        let mut plots = vec![
            json!({"title": "Mechanical energy", "unit": "J",
                   "series": [{"label": "energy (J)", "v": f32s(self.energy.iter().map(|&x| x as f32))}]}),
            json!({"title": "Contacts", "unit": "",
                   "series": [{"label": "contacts", "v": f32s(self.contact_count.iter().map(|&x| x as f32))}]}),
        ];
        let np = self.probes.len();
        if np > 0 {
            let series: Vec<Value> = (0..np)
                .map(|k| {
                    let unit = if self.probes[k].prismatic { "m" } else { "rad" };
                    json!({"label": format!("{} ({unit})", self.probes[k].name),
                           "v": f32s((0..nf).map(|f| self.joint_q[f * np + k] as f32))})
                })
                .collect();
            plots.push(json!({"title": "Joint positions", "unit": "rad / m", "series": series}));
        }
        self.meshes.notes.sort();
        self.meshes.notes.dedup();
        json!({
            "kind": "replay",
            "title": if self.scene_title.is_empty() { self.scene_name.clone() } else { self.scene_title.clone() },
            "scene": self.scene_name,
            "summary": summary,
            "dt": self.dt,
            "stride": self.stride,
            "bodies": self.bodies,
            "meshes": self.meshes.meshes,
            "notes": self.meshes.notes,
            "frames": {
                "n": nf,
                "t": f32s(self.times.iter().map(|&t| t as f32)),
                "bodies": self.moving,
                "lo": lo.iter().flatten().collect::<Vec<_>>(),
                "step": step.iter().flatten().collect::<Vec<_>>(),
                "p": positions,
                "q": orientations,
            },
            "contacts": {
                "every": every,
                "start": u32s(start),
                "p": f32s(cp),
                "f": f32s(cf),
                "fmax": fmax,
            },
            "plots": plots,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use karakuri_sim::Scene;

    fn f32s_of(v: &Value) -> Vec<f32> {
        super::super::page::tests::unpack(v.as_str().unwrap())
            .chunks(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect()
    }
    fn i16s_of(v: &Value) -> Vec<i16> {
        super::super::page::tests::unpack(v.as_str().unwrap())
            .chunks(2)
            .map(|b| i16::from_le_bytes(b.try_into().unwrap()))
            .collect()
    }
    fn scene(name: &str) -> Scene {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/scenes")
            .join(name);
        Scene::from_file(p).unwrap()
    }

    /// Runs `scene` for `steps` steps through a recorder; the page data and the true poses of
    /// the moving bodies at each step.
    fn record(scene: Scene, steps: u64) -> (Value, Vec<(f64, Vec<Se3>)>) {
        let mut world = World::new(scene).unwrap();
        let mut rec = Recorder::new();
        let moving: Vec<usize> = (0..world.bodies().len())
            .filter(|&i| !world.bodies()[i].is_static)
            .collect();
        let mut truth = vec![(0.0, moving.iter().map(|&i| world.states()[i].pose).collect())];
        rec.observe(&world, false);
        for k in 1..=steps {
            world.step().unwrap();
            rec.observe(&world, k == steps);
            truth.push((world.time(), moving.iter().map(|&i| world.states()[i].pose).collect()));
        }
        (rec.into_page_data(""), truth)
    }

    #[test]
    fn frames_decode_to_the_world_poses_within_the_quantisation() {
        let (data, truth) = record(scene("02_bounce.json"), 1000);
        let f = &data["frames"];
        let times = f32s_of(&f["t"]);
        let (p, q) = (i16s_of(&f["p"]), i16s_of(&f["q"]));
        let m = f["bodies"].as_array().unwrap().len();
        let lo: Vec<f64> = f["lo"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        let step: Vec<f64> = f["step"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        // display rate: at most 60 frames per simulated second, at least one per 1/60 s + a step
        let dt = data["dt"].as_f64().unwrap();
        let stride = data["stride"].as_u64().unwrap() as f64;
        assert!(stride * dt >= 1.0 / 60.0 - 1e-12 && (stride - 1.0) * dt < 1.0 / 60.0);
        assert_eq!(
            times.len(),
            (1000.0 / stride).floor() as usize + 1 + usize::from(1000 % stride as u64 != 0)
        );
        assert_eq!(*times.last().unwrap(), 1.0f32, "the last step is a frame");
        for (k, &t) in times.iter().enumerate() {
            let (_, poses) = truth
                .iter()
                .find(|(tt, _)| (*tt as f32) == t)
                .expect("a frame at a step");
            for b in 0..m {
                let x = &poses[b];
                for c in 0..3 {
                    let decoded = lo[3 * b + c] + (f64::from(p[(k * m + b) * 3 + c]) + 32767.0) * step[3 * b + c];
                    let err = (decoded - x.translation[c]).abs();
                    assert!(
                        err <= 0.5 * step[3 * b + c] + 1e-12,
                        "frame {k} body {b}: {decoded} vs {}",
                        x.translation[c]
                    );
                }
                let qt = karakuri::spatial::quat_to_xyzw(&x.rotation);
                let qd: Vec<f64> = (0..4).map(|c| f64::from(q[(k * m + b) * 4 + c]) / 32767.0).collect();
                let sign = if (0..4).map(|c| qd[c] * qt[c]).sum::<f64>() < 0.0 {
                    -1.0
                } else {
                    1.0
                };
                for c in 0..4 {
                    assert!(
                        (sign * qd[c] - qt[c]).abs() <= 0.5 / 32767.0 + 1e-9,
                        "frame {k} body {b}: {qd:?} vs {qt:?}"
                    );
                }
            }
        }
        // a 2 m drop: positions to better than 0.1 mm
        assert!(step.iter().all(|&s| s < 1e-4), "{step:?}");
    }

    #[test]
    fn joint_positions_from_body_poses_start_at_the_scene_q0() {
        let plot_q0 = |data: &Value, name: &str| -> f64 {
            let joints = data["plots"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["title"] == "Joint positions")
                .unwrap();
            let s = joints["series"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["label"].as_str().unwrap().starts_with(name));
            f64::from(f32s_of(&s.unwrap_or_else(|| panic!("no series {name}"))["v"])[0])
        };
        let (data, _) = record(scene("06_double_pendulum.json"), 3);
        assert!((plot_q0(&data, "j00 ") - std::f64::consts::FRAC_PI_2).abs() < 1e-6);
        assert!(plot_q0(&data, "j01 ").abs() < 1e-6);
        // a URDF robot with prescribed q0 (the bundled demo)
        let (data, _) = record(Scene::from_str(include_str!("../../karakuri-cli/scenes/demo.yaml"), "demo.yaml").unwrap(), 3);
        for (joint, q0) in [
            ("FL_HFE", 1.5),
            ("FL_KFE", -3.0),
            ("HR_HFE", -1.5),
            ("HR_KFE", 3.0),
            ("FR_HAA", 0.0),
        ] {
            let q = plot_q0(&data, &format!("solo/{joint} "));
            assert!((q - q0).abs() < 1e-6, "{joint}: {q} vs {q0}");
        }
    }
}

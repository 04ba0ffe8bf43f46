//! The validation scenes of `../shared/validation/scenes` (copied to `tests/scenes`), each
//! checked against its `expected` values with the metric of `scenelib.py`, ported to Rust
//! following each check's description.

mod common;
use common::scene_path;

use std::collections::BTreeMap;

use karakuri::spatial::{Mat3, Vec3};
use karakuri_sim::{Scene, World};

/// Per step and body: centre of mass, rotation, centre-of-mass velocity, angular velocity (world).
struct Traj {
    scene: Scene,
    dt: f64,
    t: Vec<f64>,
    com: Vec<Vec<Vec3>>,
    origin: Vec<Vec<Vec3>>,
    rot: Vec<Vec<Mat3>>,
    vel: Vec<Vec<Vec3>>,
    omega: Vec<Vec<Vec3>>,
}

impl Traj {
    fn idx(&self, name: &str) -> usize {
        self.scene.body_index(name).unwrap()
    }
    fn point(&self, k: usize, b: usize, local: &[f64; 3]) -> Vec3 {
        self.origin[k][b] + self.rot[k][b] * Vec3::from(*local)
    }
    /// Kinetic + gravitational energy per step (of the given bodies, or all moving ones).
    fn energy(&self, only: Option<&[usize]>) -> Vec<f64> {
        let g = Vec3::from(self.scene.world.gravity);
        (0..self.t.len())
            .map(|k| {
                let mut e = 0.0;
                for (i, b) in self.scene.bodies.iter().enumerate() {
                    if b.is_static() || b.mass == 0.0 || only.is_some_and(|o| !o.contains(&i)) {
                        continue;
                    }
                    let inertia = Mat3::from_fn(|r, c| b.inertia[r][c]);
                    let wl = self.rot[k][i].transpose() * self.omega[k][i];
                    e += 0.5 * b.mass * self.vel[k][i].norm_squared() + 0.5 * wl.dot(&(inertia * wl))
                        - b.mass * self.com[k][i].dot(&g);
                }
                e
            })
            .collect()
    }
}

fn run(file: &str) -> Traj {
    let scene = Scene::from_file(scene_path(file)).unwrap();
    let dt = scene.world.dt;
    let n = (scene.world.duration / dt).round() as usize;
    let mut world = World::new(scene.clone()).unwrap();
    let nb = scene.bodies.len();
    let mut tr = Traj {
        scene,
        dt,
        t: vec![],
        com: vec![],
        origin: vec![],
        rot: vec![],
        vel: vec![],
        omega: vec![],
    };
    for k in 0..=n {
        if k > 0 {
            world.step().unwrap();
        }
        tr.t.push(world.time());
        let (mut com, mut origin, mut rot, mut vel, mut omega) = (vec![], vec![], vec![], vec![], vec![]);
        for i in 0..nb {
            let s = world.states()[i];
            let rc = s.pose.rotation * Vec3::from(tr.scene.bodies[i].com);
            com.push(s.pose.translation + rc);
            origin.push(s.pose.translation);
            rot.push(s.pose.rotation);
            vel.push(s.linear + s.angular.cross(&rc));
            omega.push(s.angular);
        }
        tr.com.push(com);
        tr.origin.push(origin);
        tr.rot.push(rot);
        tr.vel.push(vel);
        tr.omega.push(omega);
    }
    tr
}

fn tilt_deg(r: &Mat3) -> f64 {
    r[(2, 2)].clamp(-1.0, 1.0).acos().to_degrees()
}

fn first(mask: impl Iterator<Item = bool>) -> Option<usize> {
    mask.enumerate().find(|(_, m)| *m).map(|(i, _)| i)
}

fn unwrap(a: &[f64]) -> Vec<f64> {
    let mut out = vec![a[0]];
    for k in 1..a.len() {
        let mut d = a[k] - a[k - 1];
        while d > std::f64::consts::PI {
            d -= 2.0 * std::f64::consts::PI;
        }
        while d < -std::f64::consts::PI {
            d += 2.0 * std::f64::consts::PI;
        }
        out.push(out[k - 1] + d);
    }
    out
}

fn planar_angle(tr: &Traj, b: usize) -> Vec<f64> {
    unwrap(
        &tr.rot
            .iter()
            .map(|r| r[b][(0, 2)].atan2(r[b][(0, 0)]))
            .collect::<Vec<_>>(),
    )
}

/// Compares the metric values with the scene's `expected` entries.
fn check(tr: &Traj, values: BTreeMap<String, f64>) {
    let expected = tr.scene.extra["expected"].as_array().unwrap();
    let mut failures = vec![];
    for e in expected {
        let id = e["id"].as_str().unwrap();
        let (Some(a), Some(tol)) = (e["analytic"].as_f64(), e["tolerance"].as_f64()) else {
            continue;
        };
        let v = *values
            .get(id)
            .unwrap_or_else(|| panic!("{}: no metric '{id}'", tr.scene.name));
        println!("{:24} {id:24} {v:12.6} {a:12.6} ± {tol}", tr.scene.name);
        if (v - a).abs().is_nan() || (v - a).abs() > tol {
            failures.push(format!("{id} = {v} (expected {a} ± {tol})"));
        }
    }
    assert!(failures.is_empty(), "{}: {}", tr.scene.name, failures.join("; "));
}

fn vals(v: &[(&str, f64)]) -> BTreeMap<String, f64> {
    v.iter().map(|(k, x)| (k.to_string(), *x)).collect()
}

#[test]
fn scene_01_free_fall() {
    let tr = run("01_free_fall.json");
    let b = tr.idx("ball");
    let JointLike { angular: w0 } = free_qd0(&tr.scene, b);
    let last = tr.t.len() - 1;
    let omega_change = tr.omega.iter().map(|o| (o[b] - w0).norm()).fold(0.0, f64::max);
    check(
        &tr,
        vals(&[
            ("z_at_T", tr.origin[last][b].z),
            ("vz_at_T", tr.vel[last][b].z),
            ("x_at_T", tr.origin[last][b].x),
            ("omega_change", omega_change),
        ]),
    );
}

struct JointLike {
    angular: Vec3,
}

fn free_qd0(scene: &Scene, b: usize) -> JointLike {
    match &scene.bodies[b].joints[0] {
        karakuri_sim::scene::JointSpec::Free { qd0, .. } => JointLike {
            angular: Vec3::from(qd0.angular),
        },
        _ => panic!("not free"),
    }
}

#[test]
fn scene_02_bounce() {
    let tr = run("02_bounce.json");
    let b = tr.idx("ball");
    let r = match tr.scene.bodies[b].shapes[0].geometry {
        karakuri_sim::scene::Geometry::Sphere { radius } => radius,
        _ => unreachable!(),
    };
    let z: Vec<f64> = tr.com.iter().map(|c| c[b].z - r).collect();
    let vz: Vec<f64> = tr.vel.iter().map(|v| v[b].z).collect();
    let apex: Vec<usize> = (0..vz.len() - 1)
        .filter(|&k| vz[k] > 0.0 && vz[k + 1] <= 0.0 && z[k] > 1e-3)
        .collect();
    let g = tr.scene.world.gravity[2].abs();
    let t_imp = first((0..vz.len() - 1).map(|k| vz[k + 1] - vz[k] > 0.5 * g * tr.dt)).unwrap();
    let v_in = -vz[..=t_imp].iter().cloned().fold(f64::INFINITY, f64::min);
    let v_out = vz[t_imp..apex[0] + 1].iter().cloned().fold(0.0, f64::max);
    check(
        &tr,
        vals(&[
            ("apex_1", z[apex[0]]),
            ("apex_2", z[apex[1]]),
            ("apex_3", z[apex[2]]),
            ("t_first_contact", tr.t[t_imp]),
            ("e_first_impact", v_out / v_in),
        ]),
    );
}

#[test]
fn scene_03_slide() {
    let tr = run("03_slide.json");
    let b = tr.idx("box");
    let k = first(tr.vel.iter().map(|v| v[b].x.abs() < 1e-2)).unwrap();
    let tilt = tr.rot.iter().map(|r| tilt_deg(&r[b])).fold(0.0, f64::max);
    let last = tr.t.len() - 1;
    check(
        &tr,
        vals(&[
            ("stop_distance", tr.origin[last][b].x - tr.origin[0][b].x),
            ("stop_time", tr.t[k]),
            ("max_tilt_deg", tilt),
        ]),
    );
}

fn incline(file: &str) {
    let tr = run(file);
    let b = tr.idx("box");
    let th = tr.scene.extra["parameters"]["incline_deg"]
        .as_f64()
        .unwrap()
        .to_radians();
    let down = Vec3::new(th.cos(), 0.0, -th.sin());
    let s: Vec<f64> = tr.origin.iter().map(|o| (o[b] - tr.origin[0][b]).dot(&down)).collect();
    let v: Vec<f64> = tr.vel.iter().map(|x| x[b].dot(&down)).collect();
    // least-squares slope of v(t) over t >= 0.1
    let pts: Vec<(f64, f64)> =
        tr.t.iter()
            .zip(&v)
            .filter(|(t, _)| **t >= 0.1)
            .map(|(t, v)| (*t, *v))
            .collect();
    let n = pts.len() as f64;
    let (st, sv) = pts.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1));
    let (mt, mv) = (st / n, sv / n);
    let (num, den) = pts.iter().fold((0.0, 0.0), |a, p| {
        (a.0 + (p.0 - mt) * (p.1 - mv), a.1 + (p.0 - mt) * (p.0 - mt))
    });
    check(
        &tr,
        vals(&[("displacement_at_T", *s.last().unwrap()), ("acceleration", num / den)]),
    );
}

#[test]
fn scene_04a_incline_stick() {
    incline("04a_incline_stick.json");
}

#[test]
fn scene_04b_incline_slide() {
    incline("04b_incline_slide.json");
}

#[test]
fn scene_05a_stack5() {
    let tr = run("05a_stack5.json");
    let boxes: Vec<usize> = (0..tr.scene.bodies.len())
        .filter(|&i| tr.scene.bodies[i].name.starts_with("box"))
        .collect();
    let (mut drift, mut tilt): (f64, f64) = (0.0, 0.0);
    for &b in &boxes {
        for k in 0..tr.t.len() {
            let d = tr.origin[k][b] - tr.origin[0][b];
            drift = drift.max((d.x * d.x + d.y * d.y).sqrt());
            tilt = tilt.max(tilt_deg(&tr.rot[k][b]));
        }
    }
    let top = *boxes.last().unwrap();
    let settle = tr.origin[0][top].z - tr.origin.last().unwrap()[top].z;
    check(
        &tr,
        vals(&[
            ("max_horizontal_drift", drift),
            ("top_settle", settle),
            ("max_tilt_deg", tilt),
        ]),
    );
}

#[test]
fn scene_06_double_pendulum() {
    let tr = run("06_double_pendulum.json");
    let e = tr.energy(None);
    let scale = tr.scene.extra["parameters"]["energy_scale"].as_f64().unwrap();
    let mut v = vec![(
        "energy_drift_max".to_string(),
        e.iter().map(|x| (x - e[0]).abs()).fold(0.0, f64::max) / scale,
    )];
    let links: Vec<usize> = (0..tr.scene.bodies.len())
        .filter(|&i| !tr.scene.bodies[i].is_static())
        .collect();
    let phi: Vec<Vec<f64>> = links.iter().map(|&b| planar_angle(&tr, b)).collect();
    for s in tr.scene.extra["reference_solution"]["samples"].as_array().unwrap() {
        let t = s["t"].as_f64().unwrap();
        let k = (t / tr.dt).round() as usize;
        let q_ref: Vec<f64> = s["q"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        let mut prev = 0.0;
        let mut err: f64 = 0.0;
        for (i, p) in phi.iter().enumerate() {
            err = err.max((q_ref[i] - (p[k] - prev)).abs());
            prev = p[k];
        }
        v.push((format!("q_error_t{t}"), err));
    }
    check(&tr, v.into_iter().collect());
}

#[test]
fn scene_08_fourbar() {
    let tr = run("08_fourbar.json");
    let lc = &tr.scene.loop_constraints[0];
    let (a, b) = (tr.idx(&lc.body_a), tr.idx(&lc.body_b));
    let err = (0..tr.t.len())
        .map(|k| (tr.point(k, a, &lc.anchor_a) - tr.point(k, b, &lc.anchor_b)).norm())
        .fold(0.0, f64::max);
    let e = tr.energy(None);
    let scale = tr.scene.extra["parameters"]["energy_scale"].as_f64().unwrap();
    let phi = planar_angle(&tr, tr.idx("crank"));
    let turned: Vec<f64> = phi.iter().map(|p| (p - phi[0]).abs()).collect();
    let two_pi = 2.0 * std::f64::consts::PI;
    let k = first(turned.iter().map(|x| *x >= two_pi)).unwrap();
    let f = (two_pi - turned[k - 1]) / (turned[k] - turned[k - 1]);
    let period = tr.t[k - 1] + f * (tr.t[k] - tr.t[k - 1]);
    check(
        &tr,
        vals(&[
            ("loop_error_max", err),
            (
                "energy_drift_max",
                e.iter().map(|x| (x - e[0]).abs()).fold(0.0, f64::max) / scale,
            ),
            ("first_revolution_time", period),
        ]),
    );
}

#[test]
fn scene_09b_newton_cradle_gap() {
    let tr = run("09b_newton_cradle_gap.json");
    let balls: Vec<usize> = (0..tr.scene.bodies.len())
        .filter(|&i| tr.scene.bodies[i].name.starts_with("ball"))
        .collect();
    let p = &tr.scene.extra["parameters"];
    let (t_star, len) = (
        p["impact_time"].as_f64().unwrap(),
        p["pendulum_length"].as_f64().unwrap(),
    );
    let kb = ((t_star - 0.005) / tr.dt).round() as usize;
    let ka = ((t_star + p["after_window"].as_f64().unwrap()) / tr.dt).round() as usize;
    let k2 = ((t_star + p["swing_window"].as_f64().unwrap()) / tr.dt).round() as usize;
    let vx = |k: usize, b: usize| tr.vel[k][b].x;
    let v_in = vx(kb, balls[0]);
    let last = *balls.last().unwrap();
    let v_last = (kb..=ka).map(|k| vx(k, last)).fold(f64::NEG_INFINITY, f64::max);
    let other = balls[..balls.len() - 1]
        .iter()
        .map(|&b| vx(ka, b).abs())
        .fold(0.0, f64::max);
    let e = tr.energy(Some(&balls));
    let g = Vec3::from(tr.scene.world.gravity);
    let e_rest: f64 = balls
        .iter()
        .map(|&b| {
            let body = &tr.scene.bodies[b];
            let p0 = Vec3::from(body.initial_world_pose.unwrap().position);
            -body.mass * (p0 - Vec3::new(0.0, 0.0, len)).dot(&g)
        })
        .sum();
    let c0 = tr.com[0][last];
    let (px, pz) = (c0.x, c0.z + len);
    let swing = (kb..k2)
        .map(|k| (tr.com[k][last].x - px).atan2(pz - tr.com[k][last].z).to_degrees())
        .fold(f64::NEG_INFINITY, f64::max);
    check(
        &tr,
        vals(&[
            ("v_last_max_over_v_in", v_last / v_in),
            ("max_other_over_v_in", other / v_in.abs()),
            ("energy_ratio", (e[ka] - e_rest) / (e[kb] - e_rest)),
            ("last_swing_deg", swing),
        ]),
    );
}

/// Issue 13, item 1: a clone of this repository alone passes its tests, so every validation
/// scene is in `tests/scenes`, and (when `../shared` is beside the clone) the same bytes.
#[test]
fn repository_carries_every_validation_scene_its_tests_need() {
    let here = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/scenes"));
    for name in [
        "01_free_fall.json",
        "02_bounce.json",
        "03_slide.json",
        "04a_incline_stick.json",
        "04b_incline_slide.json",
        "05a_stack5.json",
        "06_double_pendulum.json",
        "08_fourbar.json",
        "09b_newton_cradle_gap.json",
        "11_pile_mixed.json",
    ] {
        let ours = std::fs::read(here.join(name)).unwrap_or_else(|e| panic!("tests/scenes/{name}: {e}"));
        let shared = scene_path(name);
        if shared.starts_with(&here) {
            continue;
        }
        assert!(ours == std::fs::read(&shared).unwrap(), "tests/scenes/{name} differs from {}", shared.display());
    }
    let shared = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/validation/scenes"));
    if let Ok(dir) = std::fs::read_dir(&shared) {
        for e in dir.flatten() {
            assert!(here.join(e.file_name()).is_file(), "{:?} is not in tests/scenes", e.file_name());
        }
    }
}

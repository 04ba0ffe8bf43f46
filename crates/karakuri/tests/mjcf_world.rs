//! `mjcf::load_world` against MuJoCo 4.0.0's compiled `mjModel` arrays: for every model of
//! `tests/data/mjcf` with a `.sim.json` (written by `scripts/mjcf_reference.py`), the geoms
//! (type, body, size, frame, friction, contype, conaffinity, condim, priority, solref, solimp,
//! margin, gap; world poses at qpos0 through `geom_placement`), the joints' limits, stiffness, springref, damping, frictionloss and limit
//! softness, the actuators (transmission, dynamics, gain, bias, gear, ctrl and force ranges),
//! the sensors kept, the equality constraints, contact pairs and excludes, the options and the
//! keyframes agree (1e-12). Models refused by design are listed with the reason expected.
//! `cargo test -p karakuri --test mjcf_world -- --nocapture` prints one line per model.

use std::path::{Path, PathBuf};

use karakuri::io::mjcf::{self, EqualityKind, GeomShape, Integrator, MjcfWorld, SensorKind, Transmission};
use nalgebra::{Quaternion, UnitQuaternion};
use serde_json::Value;

const TOL: f64 = 1e-12;

/// Models `load_world` refuses, with a piece of the expected message.
const REFUSED: &[(&str, &str)] = &[];

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/mjcf")
}

fn references() -> Vec<PathBuf> {
    let mut out = vec![];
    for dir in std::fs::read_dir(data_dir()).unwrap().flatten().filter(|d| d.path().is_dir()) {
        for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
            if f.path().to_string_lossy().ends_with(".sim.json") {
                out.push(f.path());
            }
        }
    }
    out.sort();
    out
}

fn nums(v: &Value) -> Vec<f64> {
    fn flat(v: &Value, out: &mut Vec<f64>) {
        match v {
            Value::Array(a) => a.iter().for_each(|x| flat(x, out)),
            x => out.push(x.as_f64().unwrap()),
        }
    }
    let mut out = vec![];
    flat(v, &mut out);
    out
}

fn rows(v: &Value) -> Vec<Vec<f64>> {
    v.as_array().unwrap().iter().map(nums).collect()
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
}

fn close(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths {a:?} vs {b:?}");
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= TOL * (1.0 + y.abs()), "{what}: karakuri {a:?}, MuJoCo {b:?}");
    }
}

fn geom_type(s: &GeomShape) -> &'static str {
    match s {
        GeomShape::Plane => "mjGEOM_PLANE",
        GeomShape::Sphere => "mjGEOM_SPHERE",
        GeomShape::Capsule => "mjGEOM_CAPSULE",
        GeomShape::Cylinder => "mjGEOM_CYLINDER",
        GeomShape::Box => "mjGEOM_BOX",
        GeomShape::Ellipsoid => "mjGEOM_ELLIPSOID",
        GeomShape::Mesh { .. } => "mjGEOM_MESH",
        GeomShape::HeightField { .. } => "mjGEOM_HFIELD",
    }
}

fn check_geoms(w: &MjcfWorld, r: &Value, src: &str) {
    let types = strs(&r["geom_type"]);
    assert_eq!(w.geoms.len(), types.len(), "{src}: geom count");
    let (size, pos, quat) = (rows(&r["geom_size"]), rows(&r["geom_pos"]), rows(&r["geom_quat"]));
    for (i, g) in w.geoms.iter().enumerate() {
        let what = |k: &str| format!("{src}: geom {i} ({}) {k}", g.at);
        assert_eq!(geom_type(&g.shape), types[i], "{}", what("type"));
        assert_eq!(g.body as f64, nums(&r["geom_bodyid"])[i], "{}", what("body"));
        if !matches!(g.shape, GeomShape::Mesh { .. } | GeomShape::HeightField { .. }) {
            // MuJoCo re-centres meshes (pos, quat, size from the mesh); not compared
            close(&g.size, &size[i], &what("size"));
            close(g.frame.translation.as_slice(), &pos[i], &what("pos"));
            let q = UnitQuaternion::from_quaternion(Quaternion::new(quat[i][0], quat[i][1], quat[i][2], quat[i][3]));
            let m = q.to_rotation_matrix().into_inner();
            close(g.frame.rotation.as_slice(), m.as_slice(), &what("rotation"));
        }
        close(&g.friction, &rows(&r["geom_friction"])[i], &what("friction"));
        close(&[g.contype as f64, g.conaffinity as f64, g.condim as f64, g.priority as f64], &[nums(&r["geom_contype"])[i], nums(&r["geom_conaffinity"])[i], nums(&r["geom_condim"])[i], nums(&r["geom_priority"])[i]], &what("contype, conaffinity, condim, priority"));
        close(&g.solref, &rows(&r["geom_solref"])[i], &what("solref"));
        close(&g.solimp, &rows(&r["geom_solimp"])[i], &what("solimp"));
        close(&[g.margin, g.gap], &[nums(&r["geom_margin"])[i], nums(&r["geom_gap"])[i]], &what("margin, gap"));
    }
}

/// Every geom where MuJoCo puts it at qpos0, through `geom_placement` and karakuri's forward
/// kinematics (meshes and height fields but their frames: MuJoCo re-centres meshes).
fn check_geom_poses(w: &MjcfWorld, r: &Value, src: &str) {
    let q = mjcf::from_mujoco_qpos(&w.model, &w.qpos0).unwrap();
    let mut data = karakuri::Data::new(&w.model);
    karakuri::algorithms::forward_kinematics(&w.model, &mut data, &q);
    let placements = data.joint_placements().unwrap().to_vec();
    let (xpos, xmat) = (rows(&r["geom_xpos"]), rows(&r["geom_xmat"]));
    for (i, g) in w.geoms.iter().enumerate() {
        if matches!(g.shape, GeomShape::Mesh { .. } | GeomShape::HeightField { .. }) {
            continue;
        }
        let (j, x) = w.geom_placement(i);
        let o = placements[j.0].compose(&x);
        let what = format!("{src}: geom {i} ({}) world pose at qpos0", g.at);
        close(o.translation.as_slice(), &xpos[i], &what);
        close(o.rotation.transpose().as_slice(), &xmat[i], &what);
    }
}

fn check_joints(w: &MjcfWorld, r: &Value, src: &str) {
    let limited = nums(&r["jnt_limited"]);
    assert_eq!(w.joints.len(), limited.len(), "{src}: joint count");
    let (range, dofadr, qposadr) = (rows(&r["jnt_range"]), nums(&r["jnt_dofadr"]), nums(&r["jnt_qposadr"]));
    for (j, p) in w.joints.iter().enumerate() {
        let what = |k: &str| format!("{src}: joint {} {k}", p.name);
        assert_eq!(p.range.is_some(), limited[j] == 1.0, "{}", what("limited"));
        if let Some((lo, hi)) = p.range {
            close(&[lo, hi], &range[j], &what("range"));
        }
        let (d, q) = (dofadr[j] as usize, qposadr[j] as usize);
        close(&[p.stiffness], &[nums(&r["jnt_stiffness"])[j]], &what("stiffness"));
        close(&[p.damping, p.frictionloss], &[nums(&r["dof_damping"])[d], nums(&r["dof_frictionloss"])[d]], &what("damping, frictionloss"));
        let width = qposadr.get(j + 1).map_or(w.model.nq, |n| *n as usize) - q;
        if width == 1 {
            close(&[p.springref], &[nums(&r["qpos_spring"])[q]], &what("springref"));
        }
        close(&p.solref_limit, &rows(&r["jnt_solref"])[j], &what("solreflimit"));
        close(&p.solimp_limit, &rows(&r["jnt_solimp"])[j], &what("solimplimit"));
    }
}

fn check_actuators(w: &MjcfWorld, r: &Value, src: &str) {
    let trn = strs(&r["actuator_trntype"]);
    assert_eq!(w.actuators.len(), trn.len(), "{src}: actuator count");
    for (i, a) in w.actuators.iter().enumerate() {
        let what = |k: &str| format!("{src}: actuator {} {k}", a.name);
        let (t, id) = match a.transmission {
            Transmission::Joint(j) => ("mjTRN_JOINT", j),
            Transmission::Tendon(t) => ("mjTRN_TENDON", t),
            Transmission::Site { site, .. } => ("mjTRN_SITE", site),
        };
        assert_eq!((t, id as f64), (trn[i].as_str(), nums(&r["actuator_trnid"])[i]), "{}", what("transmission"));
        let dyn_type = match a.dynamics {
            None => "mjDYN_NONE",
            Some(mjcf::ActuatorDynamics::Integrator) => "mjDYN_INTEGRATOR",
            Some(mjcf::ActuatorDynamics::Filter { exact: false, .. }) => "mjDYN_FILTER",
            Some(mjcf::ActuatorDynamics::Filter { exact: true, .. }) => "mjDYN_FILTEREXACT",
        };
        assert_eq!(dyn_type, strs(&r["actuator_dyntype"])[i], "{}", what("dyntype"));
        if let Some(mjcf::ActuatorDynamics::Filter { tau, .. }) = a.dynamics {
            close(&[tau], &[nums(&r["actuator_dynprm"])[i]], &what("dynprm"));
        }
        assert_eq!(if a.gain_affine { "mjGAIN_AFFINE" } else { "mjGAIN_FIXED" }, strs(&r["actuator_gaintype"])[i], "{}", what("gaintype"));
        assert_eq!(if a.bias_affine { "mjBIAS_AFFINE" } else { "mjBIAS_NONE" }, strs(&r["actuator_biastype"])[i], "{}", what("biastype"));
        close(&a.gainprm, &rows(&r["actuator_gainprm"])[i], &what("gainprm"));
        close(&a.biasprm, &rows(&r["actuator_biasprm"])[i], &what("biasprm"));
        close(&a.gear, &rows(&r["actuator_gear"])[i], &what("gear"));
        assert_eq!(a.ctrlrange.is_some(), nums(&r["actuator_ctrllimited"])[i] == 1.0, "{}", what("ctrllimited"));
        if let Some((lo, hi)) = a.ctrlrange {
            close(&[lo, hi], &rows(&r["actuator_ctrlrange"])[i], &what("ctrlrange"));
        }
        assert_eq!(a.forcerange.is_some(), nums(&r["actuator_forcelimited"])[i] == 1.0, "{}", what("forcelimited"));
        if let Some((lo, hi)) = a.forcerange {
            close(&[lo, hi], &rows(&r["actuator_forcerange"])[i], &what("forcerange"));
        }
    }
}

fn sensor_type(k: &SensorKind) -> (String, usize) {
    let (t, id) = match k {
        SensorKind::Accelerometer(s) => ("ACCELEROMETER", *s),
        SensorKind::Gyro(s) => ("GYRO", *s),
        SensorKind::Velocimeter(s) => ("VELOCIMETER", *s),
        SensorKind::Force(s) => ("FORCE", *s),
        SensorKind::Torque(s) => ("TORQUE", *s),
        SensorKind::Touch(s) => ("TOUCH", *s),
        SensorKind::JointPos(j) => ("JOINTPOS", *j),
        SensorKind::JointVel(j) => ("JOINTVEL", *j),
        SensorKind::ActuatorFrc(a) => ("ACTUATORFRC", *a),
        SensorKind::Frame { which, object, .. } => return (format!("mjSENS_{}", which.to_uppercase()), object.1),
    };
    (format!("mjSENS_{t}"), id)
}

fn check_rest(w: &MjcfWorld, r: &Value, src: &str) {
    let kept: Vec<(String, usize)> = strs(&r["sensor_type"])
        .into_iter()
        .zip(nums(&r["sensor_objid"]))
        .filter(|(t, _)| w.sensors.iter().any(|s| &sensor_type(&s.kind).0 == t))
        .map(|(t, id)| (t, id as usize))
        .collect();
    let ours: Vec<(String, usize)> = w.sensors.iter().map(|s| sensor_type(&s.kind)).collect();
    assert_eq!(ours, kept, "{src}: sensors");
    let eq: Vec<(String, f64, f64)> = w
        .equalities
        .iter()
        .map(|e| match &e.kind {
            EqualityKind::Connect { body1, body2, .. } => ("mjEQ_CONNECT".into(), *body1 as f64, *body2 as f64),
            EqualityKind::Weld { body1, body2, .. } => ("mjEQ_WELD".into(), *body1 as f64, *body2 as f64),
            EqualityKind::Joint { joint1, joint2, .. } => ("mjEQ_JOINT".into(), *joint1 as f64, joint2.map_or(-1.0, |j| j as f64)),
            EqualityKind::Tendon { tendon1, tendon2, .. } => ("mjEQ_TENDON".into(), *tendon1 as f64, tendon2.map_or(-1.0, |j| j as f64)),
        })
        .collect();
    let theirs: Vec<(String, f64, f64)> = strs(&r["eq_type"]).into_iter().zip(nums(&r["eq_obj1id"])).zip(nums(&r["eq_obj2id"])).map(|((t, a), b)| (t, a, b)).collect();
    assert_eq!(eq, theirs, "{src}: equality constraints");
    // MuJoCo orders a pair's geoms and sorts the pairs: compared as sorted lists
    let mut pairs: Vec<Vec<f64>> = w
        .contact_pairs
        .iter()
        .map(|p| [vec![p.geoms.0.min(p.geoms.1) as f64, p.geoms.0.max(p.geoms.1) as f64, p.condim as f64], p.friction.to_vec()].concat())
        .collect();
    let mut theirs: Vec<Vec<f64>> = (0..nums(&r["pair_geom1"]).len())
        .map(|i| {
            let (a, b) = (nums(&r["pair_geom1"])[i], nums(&r["pair_geom2"])[i]);
            [vec![a.min(b), a.max(b), nums(&r["pair_condim"])[i]], rows(&r["pair_friction"])[i].clone()].concat()
        })
        .collect();
    pairs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    theirs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    close(&pairs.concat(), &theirs.concat(), &format!("{src}: contact pairs (geoms, condim, friction)"));
    // MuJoCo sorts the signatures (body1 << 16) + body2
    let mut excl: Vec<f64> = w.contact_excludes.iter().map(|(a, b)| ((a << 16) + b) as f64).collect();
    excl.sort_by(f64::total_cmp);
    assert_eq!(excl, nums(&r["exclude_signature"]), "{src}: excludes");
    assert_eq!((w.tendons.len() + w.spatial_tendons.len()) as f64, r["ntendon"].as_f64().unwrap(), "{src}: tendons");
    let o = &w.option;
    close(&[o.timestep, o.impratio], &[r["opt_timestep"].as_f64().unwrap(), r["opt_impratio"].as_f64().unwrap()], &format!("{src}: timestep, impratio"));
    close(o.gravity.as_slice(), &nums(&r["opt_gravity"]), &format!("{src}: gravity"));
    let integrator = match o.integrator {
        Integrator::Euler => "mjINT_EULER",
        Integrator::Rk4 => "mjINT_RK4",
        Integrator::Implicit => "mjINT_IMPLICIT",
        Integrator::ImplicitFast => "mjINT_IMPLICITFAST",
    };
    assert_eq!(integrator, r["opt_integrator"].as_str().unwrap(), "{src}: integrator");
    assert_eq!(if o.elliptic_cone { "mjCONE_ELLIPTIC" } else { "mjCONE_PYRAMIDAL" }, r["opt_cone"].as_str().unwrap(), "{src}: cone");
    let keys = rows(&r["key_qpos"]);
    assert_eq!(w.keyframes.len(), keys.len(), "{src}: keyframes");
    for (k, key) in w.keyframes.iter().enumerate() {
        close(&key.qpos, &keys[k], &format!("{src}: key {} qpos", key.name));
        close(&key.qvel, &rows(&r["key_qvel"])[k], &format!("{src}: key {} qvel", key.name));
        close(&key.ctrl, &rows(&r["key_ctrl"])[k], &format!("{src}: key {} ctrl", key.name));
    }
}

#[test]
fn simulation_sections_equal_mujoco() {
    let refs = references();
    assert!(refs.len() >= 30, "references missing: run scripts/mjcf_reference.py --sim-only");
    for path in refs {
        let r: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let src = r["source"].as_str().unwrap();
        let xml = data_dir().join(src);
        let stem = src.trim_end_matches(".xml");
        match (mjcf::load_world(&xml), REFUSED.iter().find(|(m, _)| *m == stem)) {
            (Err(e), Some((_, why))) => {
                assert!(e.to_string().contains(why), "{src}: refused for another reason: {e}");
                println!("{src}: refused as expected: {e}");
            }
            (Err(e), None) => panic!("{src}: {e}"),
            (Ok(_), Some(_)) => panic!("{src}: loaded, expected a refusal"),
            (Ok(w), None) => {
                check_geoms(&w, &r, src);
                check_geom_poses(&w, &r, src);
                check_joints(&w, &r, src);
                check_actuators(&w, &r, src);
                check_rest(&w, &r, src);
                println!(
                    "{src}: {} geoms, {} joints, {} actuators, {} sensors, {} equalities, {} pairs, {} keys equal MuJoCo's ({} warnings)",
                    w.geoms.len(),
                    w.joints.len(),
                    w.actuators.len(),
                    w.sensors.len(),
                    w.equalities.len(),
                    w.contact_pairs.len(),
                    w.keyframes.len(),
                    w.warnings.len()
                );
            }
        }
    }
}

/// Unsupported simulation features are refused by element and line, saying what to do.
#[test]
fn unsupported_features_are_refused_with_a_way_out() {
    let body = r#"<worldbody><body name="b"><joint name="j"/><geom size="0.1"/><site name="s"/></body></worldbody>"#;
    let cases = [
        (format!("<mujoco>{body}\n<actuator><muscle joint=\"j\"/></actuator></mujoco>"), 2, "muscle", "use <general> or <motor>"),
        (format!("<mujoco>{body}\n<tendon><spatial><site site=\"s\"/></spatial></tendon></mujoco>"), 2, "spatial", "<fixed> tendon"),
        (format!("<mujoco>{body}\n<tendon><spatial><site site=\"s\"/>\n<geom geom=\"g\"/></spatial></tendon></mujoco>"), 3, "geom", "straight segments"),
        (format!("<mujoco>{body}\n<actuator><cylinder joint=\"j\"/></actuator></mujoco>"), 2, "cylinder", "use <motor>"),
        ("<mujoco><worldbody>\n<geom type=\"sdf\"/></worldbody></mujoco>".to_string(), 2, "geom", "by a mesh"),
        (format!("<mujoco>{body}\n<sensor><jointpos joint=\"nope\"/></sensor></mujoco>"), 2, "jointpos", "no joint named 'nope'"),
        (format!("<mujoco>{body}\n<equality><connect site1=\"s\" site2=\"s\"/></equality></mujoco>"), 2, "connect", "give body1"),
        (format!("<mujoco>{body}\n<actuator><position joint=\"j\" dampratio=\"1\"/></actuator></mujoco>"), 2, "position", "give kv"),
        (format!("<mujoco>{body}\n<actuator><general joint=\"j\" dyntype=\"muscle\"/></actuator></mujoco>"), 2, "general", "not supported"),
    ];
    for (xml, line, element, hint) in cases {
        let e = mjcf::parse_world_str(&xml, "t.xml").expect_err(&xml);
        assert_eq!((e.line, e.element.as_str()), (Some(line), element), "{e}");
        assert!(e.reason.contains(hint), "{e}");
    }
    // sensors not simulated are left out with a warning naming them
    let w = mjcf::parse_world_str(&format!("<mujoco>{body}<sensor><subtreecom body=\"b\"/><jointpos joint=\"j\"/></sensor></mujoco>"), "t.xml").unwrap();
    assert_eq!(w.sensors.len(), 1);
    assert!(w.warnings.iter().any(|m| m.contains("<subtreecom>")), "{:?}", w.warnings);
}

//! The `constrained` and `impulse` sections of the Pinocchio reference files
//! (`tests/data/*.json`): 3-D and 6-D contacts, every method.

use karakuri::constraints::{ConstraintSet, Method};
use karakuri::io::urdf;
use karakuri::spatial::{Se3, Vec3};
use karakuri::{Data, Model};
use nalgebra::DVector;
use serde_json::Value;

const ROBOTS: [&str; 6] = ["ur5", "panda", "kinova_continuous", "solo12", "anymal", "talos_reduced"];
const METHODS: [Method; 4] = [Method::Direct, Method::RangeSpaceSparse, Method::NullSpace, Method::Kokkevis];

fn data_dir() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data").to_string()
}

fn vec_of(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

/// Index maps from the file's (Pinocchio) order to ours.
struct Maps {
    /// (our idx_q, file idx_q_plain, nq)
    q: Vec<(usize, usize, usize)>,
    /// (our idx_v, file idx_v, nv)
    v: Vec<(usize, usize, usize)>,
}

impl Maps {
    fn new(model: &Model, json: &Value) -> Self {
        let mut m = Maps { q: vec![], v: vec![] };
        for j in json["model"]["joints"].as_array().unwrap() {
            let name = j["name"].as_str().unwrap();
            let id = model.joint_id(name).unwrap_or_else(|| panic!("joint {name} missing")).0;
            let u = |k: &str| j[k].as_u64().unwrap() as usize;
            assert_eq!(model.nqs[id], u("nq_plain"));
            m.q.push((model.idx_q[id], u("idx_q_plain"), u("nq_plain")));
            m.v.push((model.idx_v[id], u("idx_v"), u("nv")));
        }
        m
    }
    fn q(&self, model: &Model, plain: &[f64]) -> DVector<f64> {
        let mut q = DVector::zeros(model.nq);
        for &(ours, theirs, n) in &self.q {
            q.rows_mut(ours, n).copy_from_slice(&plain[theirs..theirs + n]);
        }
        q
    }
    fn v_in(&self, nv: usize, file: &[f64]) -> DVector<f64> {
        let mut v = DVector::zeros(nv);
        for &(ours, theirs, n) in &self.v {
            v.rows_mut(ours, n).copy_from_slice(&file[theirs..theirs + n]);
        }
        v
    }
    fn v_out(&self, ours_v: &DVector<f64>) -> Vec<f64> {
        let mut out = vec![0.0; ours_v.len()];
        for &(ours, theirs, n) in &self.v {
            out[theirs..theirs + n].copy_from_slice(&ours_v.as_slice()[ours..ours + n]);
        }
        out
    }
}

fn rel_err(ours: &[f64], theirs: &[f64]) -> f64 {
    assert_eq!(ours.len(), theirs.len());
    let scale = theirs.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    ours.iter().zip(theirs).fold(0.0f64, |m, (a, b)| m.max((a - b).abs())) / scale
}

fn contact_set(model: &Model, contacts: &Value) -> ConstraintSet {
    let mut cs = ConstraintSet::new();
    for c in contacts.as_array().unwrap() {
        let name = c["joint"].as_str().unwrap();
        let j = model.joint_id(name).unwrap();
        match c["kind"].as_str().unwrap() {
            "3d" => cs.add_point_contact_3d(j, Vec3::zeros(), Some(name)),
            "6d" => cs.add_frame_contact_6d(j, Se3::identity(), Some(name)),
            k => panic!("unknown contact kind {k}"),
        };
    }
    cs.bind(model).unwrap();
    cs
}

#[test]
fn constrained_and_impulse_sections_match_pinocchio() {
    let mut worst = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for robot in ROBOTS {
        let text = std::fs::read_to_string(format!("{}/{robot}.json", data_dir())).unwrap();
        let json: Value = serde_json::from_str(&text).unwrap();
        let root = match json["source"]["root_joint"].as_str().unwrap() {
            "free_flyer" => urdf::Root::FreeFlyer,
            _ => urdf::Root::Fixed,
        };
        let model = urdf::load(format!("{}/{robot}.urdf", data_dir()), root).unwrap();
        let mut data = Data::new(&model);
        let maps = Maps::new(&model, &json);
        for (s, sample) in json["samples"].as_array().unwrap().iter().enumerate() {
            let q = maps.q(&model, &vec_of(&sample["q_plain"]));
            let v = maps.v_in(model.nv, &vec_of(&sample["v"]));
            let tau = maps.v_in(model.nv, &vec_of(&sample["tau"]));
            for set in sample["constrained"].as_array().unwrap() {
                let mut cs = contact_set(&model, &set["contacts"]);
                let want_qdd = vec_of(&set["qdd"]);
                let want_lambda = vec_of(&set["lambda"]);
                for method in METHODS {
                    cs.forward_dynamics(&model, &mut data, &q, &v, &tau, method).unwrap();
                    assert!(!cs.report.fallback, "{robot}: {method:?} fell back");
                    let e_qdd = rel_err(&maps.v_out(&cs.qdd), &want_qdd);
                    let e_l = rel_err(cs.lambda.as_slice(), &want_lambda);
                    worst.0 = worst.0.max(e_qdd);
                    worst.1 = worst.1.max(e_l);
                    assert!(
                        e_qdd < 1e-7 && e_l < 1e-7,
                        "{robot} sample {s} {:?} {method:?}: qdd rel err {e_qdd:e}, lambda {e_l:e}",
                        set["contacts"]
                    );
                }
            }
            for set in sample["impulse"].as_array().unwrap() {
                let mut cs = contact_set(&model, &set["contacts"]);
                let want_v = vec_of(&set["v_plus"]);
                let want_l = vec_of(&set["Lambda"]);
                for method in METHODS {
                    cs.compute_impulses(&model, &mut data, &q, &v, method).unwrap();
                    let e_v = rel_err(&maps.v_out(&cs.v_plus), &want_v);
                    let e_l = rel_err(cs.impulses.as_slice(), &want_l);
                    worst.2 = worst.2.max(e_v);
                    worst.3 = worst.3.max(e_l);
                    assert!(e_v < 1e-7 && e_l < 1e-7, "{robot} sample {s} impulse {method:?}: v+ {e_v:e}, Lambda {e_l:e}");
                }
            }
        }
    }
    eprintln!(
        "max rel err vs Pinocchio: qdd {:.2e}, lambda {:.2e}, v_plus {:.2e}, Lambda {:.2e}",
        worst.0, worst.1, worst.2, worst.3
    );
}

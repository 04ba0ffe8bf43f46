//! A fixed number of single-state `aba_derivatives` or `cd_contacts3d` calls, for callgrind
//! (instructions per call without a timed loop's varying call count):
//!
//!     cargo run --release -p karakuri --example deriv_profile -- ROBOT.urdf [--floating] [--algo aba_derivatives|cd_contacts3d] [--contacts a,b] [--calls N]
//!
//! Prints a hash of the bits of every result (∂q̈/∂q, ∂q̈/∂v, M⁻¹; q̈ and λ), to check that a
//! change keeps them.

use karakuri::algorithms::{self as alg, SplitMix64};
use karakuri::constraints::{ConstraintSet, Method};
use karakuri::io::urdf;
use karakuri::spatial::Vec3;
use karakuri::Data;
use nalgebra::DVector;
use std::hint::black_box;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = &args[1];
    let flag = |f: &str| args.iter().position(|a| a == f).map(|i| args[i + 1].clone());
    let floating = args.iter().any(|a| a == "--floating");
    let algo = flag("--algo").unwrap_or_else(|| "aba_derivatives".into());
    let calls: usize = flag("--calls").map_or(1000, |s| s.parse().unwrap());
    let root = if floating { urdf::Root::FreeFlyer } else { urdf::Root::Fixed };
    let (model, _) = urdf::load_with(std::path::Path::new(path), &urdf::LoadOptions { root, ..Default::default() }).unwrap();
    let mut rng = SplitMix64::new(0);
    let states: Vec<(DVector<f64>, DVector<f64>, DVector<f64>)> = (0..64)
        .map(|_| (alg::random_configuration(&model, &mut rng), rng.vector(model.nv), rng.vector(model.nv)))
        .collect();
    let mut data = Data::new(&model);
    // FNV-1a over the results' bits
    let mut hash = 0xcbf29ce484222325u64;
    let mut mix = |xs: &[f64]| {
        for x in xs {
            hash = (hash ^ x.to_bits()).wrapping_mul(0x100000001b3);
        }
    };
    match algo.as_str() {
        "aba_derivatives" => {
            let mut ws = alg::DerivativesWorkspace::new(&model);
            for c in 0..calls {
                let (q, v, t) = &states[c % states.len()];
                alg::aba_derivatives(&model, &mut data, &mut ws, q, v, t);
                black_box(&ws.dqdd_dq);
                mix(ws.dqdd_dq.as_slice());
                mix(ws.dqdd_dv.as_slice());
                mix(data.mass_matrix_inverse().expect("fresh M⁻¹").as_slice());
            }
        }
        "cd_contacts3d" => {
            let mut cs = ConstraintSet::new();
            for name in flag("--contacts").expect("--contacts").split(',') {
                let j = model.joint_id(name).expect("contact joint");
                cs.add_point_contact_3d(j, Vec3::zeros(), Some(name));
            }
            cs.bind(&model).unwrap();
            for c in 0..calls {
                let (q, v, t) = &states[c % states.len()];
                black_box(cs.forward_dynamics(&model, &mut data, q, v, t, Method::RangeSpaceSparse).ok());
                mix(cs.qdd.as_slice());
                mix(cs.lambda.as_slice());
            }
        }
        a => panic!("unknown --algo {a}"),
    }
    println!("{algo}: {calls} calls, result bits hash {hash:016x}");
}

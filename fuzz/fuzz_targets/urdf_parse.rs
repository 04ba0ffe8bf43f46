//! `io::urdf::parse_str` on arbitrary text, with both roots: it must return (no panic, no
//! hang: run with `-timeout=5`), and a loaded model must hold finite numbers only.
#![no_main]

use karakuri::io::urdf::{self, LoadOptions, Root};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(xml) = std::str::from_utf8(data) else { return };
    for root in [Root::Fixed, Root::FreeFlyer] {
        let opts = LoadOptions { root, ..LoadOptions::default() };
        let Ok((model, geometry)) = urdf::parse_str(xml, "fuzz.urdf", &opts) else { continue };
        for j in 0..model.njoints {
            let (i, x) = (&model.inertias[j], &model.joint_placements[j]);
            assert!(i.mass.is_finite() && i.com.iter().chain(i.inertia_com.iter()).all(|v| v.is_finite()));
            assert!(x.rotation.iter().chain(x.translation.iter()).all(|v| v.is_finite()));
            assert!(model.origin_inertias[j].to_matrix().iter().all(|v| v.is_finite()));
        }
        assert!(model.frames.iter().all(|f| f.placement.translation.iter().all(|v| v.is_finite())));
        assert!(!model.lower_position_limit.iter().chain(&model.upper_position_limit).any(|v| v.is_nan()));
        assert!(model.damping.iter().chain(&model.friction).all(|v| v.is_finite()));
        for g in geometry.visuals.iter().chain(&geometry.collisions) {
            assert!(g.placement.translation.iter().all(|v| v.is_finite()));
        }
    }
});

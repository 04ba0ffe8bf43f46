//! A batched call on one, two or three threads allocates nothing after the first (a counting global
//! allocator): the workspace holds every buffer, whatever the number of states.
#![allow(unsafe_code)] // implementing GlobalAlloc is unsafe by definition (counting/mod.rs)

mod counting;

use karakuri::algorithms::{random_configuration, SplitMix64};
use karakuri::batch::{self, BatchWorkspace};
use karakuri::io::urdf::{self, Root};

/// The only test in this binary, so no other thread allocates while it counts.
#[test]
fn batched_calls_allocate_nothing_after_the_first() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/talos_reduced.urdf");
    let model = urdf::load(path, Root::FreeFlyer).unwrap();
    let (nv, n, big) = (model.nv, 9, 100);
    let mut rng = SplitMix64::new(7);
    let mut q = vec![];
    for _ in 0..big {
        q.extend(random_configuration(&model, &mut rng).iter());
    }
    let (v, a) = (rng.vector(big * nv), rng.vector(big * nv));
    let (v, a) = (v.as_slice(), a.as_slice());
    let mut ws = BatchWorkspace::new(&model, 1);
    let mut fk = vec![0.0; big * model.njoints * 16];
    let (mut t, mut m, mut j) = (vec![0.0; big * nv], vec![0.0; big * nv * nv], vec![0.0; big * 6 * nv]);
    let (mut d1, mut d2) = (vec![0.0; big * nv * nv], vec![0.0; big * nv * nv]);
    let mut run = |ws: &mut BatchWorkspace, k: usize| {
        let (q, v, a) = (&q[..k * model.nq], &v[..k * nv], &a[..k * nv]);
        let (t, m, j) = (&mut t[..k * nv], &mut m[..k * nv * nv], &mut j[..k * 6 * nv]);
        let (d1, d2) = (&mut d1[..k * nv * nv], &mut d2[..k * nv * nv]);
        batch::forward_kinematics(&model, ws, q, &mut fk[..k * model.njoints * 16]).unwrap();
        batch::rnea(&model, ws, q, v, a, t).unwrap();
        batch::nonlinear_effects(&model, ws, q, v, t).unwrap();
        batch::gravity_torques(&model, ws, q, t).unwrap();
        batch::crba(&model, ws, q, m).unwrap();
        batch::aba(&model, ws, q, v, a, t).unwrap();
        batch::mass_matrix_inverse(&model, ws, q, m).unwrap();
        batch::joint_jacobians(&model, ws, q, j).unwrap();
        batch::rnea_derivatives(&model, ws, q, v, a, d1, d2, m).unwrap();
        batch::aba_derivatives(&model, ws, q, v, a, d1, d2, m).unwrap();
    };
    run(&mut ws, n);
    let before = counting::allocations();
    for k in [n, 1, 4, 5] {
        run(&mut ws, k);
    }
    let after = counting::allocations();
    assert_eq!(after - before, 0, "batched calls allocated {} times", after - before);
    // on two and three threads (the workers spawned with the workspace, kept between calls):
    // 100 states, so that every call hands chunks to the workers
    for threads in [2, 3] {
        let mut ws = BatchWorkspace::new(&model, threads);
        run(&mut ws, big);
        let before = counting::allocations();
        for k in [big, 64, 9, big] {
            run(&mut ws, k);
        }
        let after = counting::allocations();
        assert_eq!(after - before, 0, "batched calls on {threads} threads allocated {} times", after - before);
    }
}

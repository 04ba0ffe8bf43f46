//! Random kinematic trees for identity tests.
#![allow(dead_code)]

use karakuri::algorithms::SplitMix64;
use karakuri::model::{Axis, JointId, JointType, ModelBuilder};
use karakuri::spatial::{exp3, Inertia, Mat3, Se3, Vec3};
use karakuri::Model;

fn random_unit(rng: &mut SplitMix64) -> Vec3 {
    loop {
        let v = Vec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0));
        if v.norm() > 0.2 {
            return v.normalize();
        }
    }
}

fn random_inertia(rng: &mut SplitMix64) -> Inertia {
    let mass = rng.range(0.2, 3.0);
    let com = Vec3::new(rng.range(-0.2, 0.2), rng.range(-0.2, 0.2), rng.range(-0.2, 0.2));
    let d = Vec3::new(rng.range(0.01, 0.1), rng.range(0.01, 0.1), rng.range(0.01, 0.1));
    // principal moments of a box-like body satisfy the triangle inequality
    let principal = Mat3::from_diagonal(&Vec3::new(d.y + d.z, d.x + d.z, d.x + d.y));
    let r = exp3(&(random_unit(rng) * rng.range(0.0, 3.0)));
    Inertia::new(mass, com, r * principal * r.transpose())
}

/// A random tree of `n` joints (plus a free-flyer root when `floating`) mixing every joint kind.
pub fn random_tree(seed: u64, n: usize, floating: bool) -> Model {
    let mut rng = SplitMix64::new(seed);
    let mut b = ModelBuilder::new(&format!("random_{seed}"));
    let mut ids = vec![JointId::UNIVERSE];
    if floating {
        let j = b.add_joint(JointId::UNIVERSE, "root_joint", JointType::FreeFlyer, Se3::identity()).unwrap();
        b.add_body(j, "base", random_inertia(&mut rng)).unwrap();
        ids = vec![j];
    }
    for k in 0..n {
        let parent = ids[(rng.next_u64() % ids.len() as u64) as usize];
        let kind = match rng.next_u64() % 9 {
            0 => JointType::Revolute { axis: Axis::X },
            1 => JointType::Revolute { axis: Axis::Y },
            2 => JointType::Revolute { axis: Axis::Z },
            3 => JointType::Revolute { axis: Axis::Unaligned(random_unit(&mut rng)) },
            4 => JointType::RevoluteUnbounded { axis: Axis::Unaligned(random_unit(&mut rng)) },
            5 => JointType::Prismatic { axis: Axis::Z },
            6 => JointType::Prismatic { axis: Axis::Unaligned(random_unit(&mut rng)) },
            7 => JointType::Spherical,
            _ => JointType::Planar,
        };
        let placement = Se3::new(
            exp3(&(random_unit(&mut rng) * rng.range(0.0, 3.0))),
            Vec3::new(rng.range(-0.5, 0.5), rng.range(-0.5, 0.5), rng.range(-0.5, 0.5)),
        );
        let j = b.add_joint(parent, &format!("j{k}"), kind, placement).unwrap();
        b.add_body(j, &format!("b{k}"), random_inertia(&mut rng)).unwrap();
        ids.push(j);
    }
    b.build().unwrap()
}

/// Random (q, v, a) for a model.
pub fn random_state(model: &Model, seed: u64) -> (nalgebra::DVector<f64>, nalgebra::DVector<f64>, nalgebra::DVector<f64>) {
    let mut rng = SplitMix64::new(seed);
    let q = karakuri::algorithms::random_configuration(model, &mut rng);
    (q, rng.vector(model.nv), rng.vector(model.nv))
}

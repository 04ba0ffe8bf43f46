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

/// A random tree of `n` joints (plus a free-flyer root when `floating`) mixing every joint kind,
/// numbered in creation order (parents precede children, subtrees interleaved).
pub fn random_tree(seed: u64, n: usize, floating: bool) -> Model {
    build_tree(seed, n, floating, false)
}

/// The same random tree numbered depth-first, as URDF models are: every subtree is a
/// contiguous range of joints and dofs (the layout the fast paths of CRBA and M⁻¹ exploit).
pub fn random_tree_depth_first(seed: u64, n: usize, floating: bool) -> Model {
    build_tree(seed, n, floating, true)
}

struct JointSpec {
    parent: Option<usize>,
    kind: JointType,
    placement: Se3,
    inertia: Inertia,
}

fn build_tree(seed: u64, n: usize, floating: bool, depth_first: bool) -> Model {
    let mut rng = SplitMix64::new(seed);
    let mut specs: Vec<JointSpec> = vec![];
    if floating {
        let inertia = random_inertia(&mut rng);
        specs.push(JointSpec { parent: None, kind: JointType::FreeFlyer, placement: Se3::identity(), inertia });
    }
    for _ in 0..n {
        // parent: the universe (None) or an earlier joint
        let choices = specs.len() + usize::from(!floating);
        let pick = (rng.next_u64() % choices as u64) as usize;
        let parent = if floating { Some(pick) } else { pick.checked_sub(1) };
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
        let inertia = random_inertia(&mut rng);
        specs.push(JointSpec { parent, kind, placement, inertia });
    }
    // order in which joints are added: creation order, or depth-first from the roots
    let order: Vec<usize> = if depth_first {
        let mut order = vec![];
        let mut stack: Vec<usize> = (0..specs.len()).filter(|&k| specs[k].parent.is_none()).rev().collect();
        while let Some(k) = stack.pop() {
            order.push(k);
            stack.extend((0..specs.len()).filter(|&c| specs[c].parent == Some(k)).rev());
        }
        order
    } else {
        (0..specs.len()).collect()
    };
    let mut b = ModelBuilder::new(&format!("random_{seed}{}", if depth_first { "_dfs" } else { "" }));
    let mut ids = vec![JointId::UNIVERSE; specs.len()];
    for &k in &order {
        let s = &specs[k];
        let parent = s.parent.map_or(JointId::UNIVERSE, |p| ids[p]);
        let name = if floating && k == 0 { "root_joint".to_string() } else { format!("j{k}") };
        let j = b.add_joint(parent, &name, s.kind, s.placement).unwrap();
        b.add_body(j, &format!("b{k}"), s.inertia).unwrap();
        ids[k] = j;
    }
    b.build().unwrap()
}

/// Random (q, v, a) for a model.
pub fn random_state(model: &Model, seed: u64) -> (nalgebra::DVector<f64>, nalgebra::DVector<f64>, nalgebra::DVector<f64>) {
    let mut rng = SplitMix64::new(seed);
    let q = karakuri::algorithms::random_configuration(model, &mut rng);
    (q, rng.vector(model.nv), rng.vector(model.nv))
}

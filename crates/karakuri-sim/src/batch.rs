//! Many independent worlds in one process: [`Batch`] steps N [`World`]s on all cores (rayon's
//! global pool, or the pool the call runs in), and [`perturb`] makes the N copies of a scene
//! differ by a small seeded perturbation of their initial state.
//!
//! **Determinism.** The worlds share nothing mutable: each owns its model, state and workspace,
//! and a step reads and writes only its own world, so a world's trajectory is bit-identical
//! whether it is stepped alone, in a batch of 1, or in a batch of N on any number of threads
//! (tested below). Each rayon task runs one world for all the steps asked for, so the threads
//! meet once per [`Batch::run_steps`] call, not once per step.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::native::NativeEngine;
use crate::rng::SplitMix64;
use crate::scene::{EngineKind, JointSpec, RobotRoot, Scene};
use crate::{SimError, World};

/// How many steps a world of [`Batch::run_steps_counted`] takes between two additions to the
/// shared count (one atomic add per 64 steps: nothing next to a step).
pub const COUNT_EVERY: u64 = 64;

/// N independent worlds stepped in parallel.
///
/// ```no_run
/// let scene = karakuri_sim::Scene::from_file("scene.yaml")?;
/// let mut batch = karakuri_sim::Batch::perturbed(&scene, 8, 42)?;
/// batch.run_steps(1000)?;
/// for w in batch.worlds() {
///     println!("{:?}", w.states()[1].pose.translation);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Batch {
    worlds: Vec<World>,
}

/// A world of a batch failed (e.g. diverged); the other worlds took their steps.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[error("world {world}: {error}")]
pub struct BatchError {
    /// Index of the world (the lowest one, when several failed in the same call).
    pub world: usize,
    /// Its error.
    pub error: SimError,
}

impl Batch {
    /// A batch of these worlds (world `i` is `worlds[i]`).
    pub fn new(worlds: Vec<World>) -> Batch {
        Batch { worlds }
    }

    /// `n` worlds of `scene`, world `i` with the initial state of [`perturb`]`(scene, seed, i)`
    /// (world 0 is the scene itself). The worlds are built in parallel.
    pub fn perturbed(scene: &Scene, n: usize, seed: u64) -> Result<Batch, SimError> {
        let worlds = (0..n)
            .into_par_iter()
            .map(|i| {
                let mut s = scene.clone();
                perturb(&mut s, seed, i);
                World::new(s)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Batch { worlds })
    }

    /// `n` identical worlds of `scene` (no perturbation: they differ only by what is done to
    /// each between steps, e.g. their actions). With the native engine they share one model,
    /// built once (a step never writes it; what is registered on one world, such as joint
    /// forces, stays that world's); other engines build one each.
    pub fn copies(scene: &Scene, n: usize) -> Result<Batch, SimError> {
        if scene.engine.kind != EngineKind::Native {
            return (0..n).map(|_| World::new(scene.clone())).collect::<Result<_, _>>().map(Batch::new);
        }
        let first = NativeEngine::new(scene)?;
        let model = first.shared_model();
        let mut worlds = vec![World::with_engine(scene.clone(), Box::new(first))?];
        for _ in 1..n {
            let engine = NativeEngine::from_model(model.clone())?;
            worlds.push(World::with_engine(scene.clone(), Box::new(engine))?);
        }
        worlds.truncate(n);
        Ok(Batch { worlds })
    }

    /// Number of worlds.
    pub fn len(&self) -> usize {
        self.worlds.len()
    }

    /// No worlds.
    pub fn is_empty(&self) -> bool {
        self.worlds.is_empty()
    }

    /// The worlds.
    pub fn worlds(&self) -> &[World] {
        &self.worlds
    }

    /// The worlds, to change (joint torques) between calls to [`Batch::run_steps`].
    pub fn worlds_mut(&mut self) -> &mut [World] {
        &mut self.worlds
    }

    /// The worlds, giving up the batch.
    pub fn into_worlds(self) -> Vec<World> {
        self.worlds
    }

    /// Advances every world by `steps` time steps, in parallel (one task per world). A world
    /// that fails stops there; the others take all their steps; the error is the failing
    /// world of lowest index. Allocates nothing beyond what the worlds' steps do (none).
    pub fn run_steps(&mut self, steps: u64) -> Result<(), BatchError> {
        self.run_steps_counted(steps, &AtomicU64::new(0))
    }

    /// [`Batch::run_steps`], adding the world steps taken to `done` as they go (every
    /// [`COUNT_EVERY`] steps of a world and at its end), so that another thread can show
    /// progress while the worlds run without meeting.
    pub fn run_steps_counted(&mut self, steps: u64, done: &AtomicU64) -> Result<(), BatchError> {
        let first_error = self
            .worlds
            .par_iter_mut()
            .enumerate()
            .map(|(i, w)| {
                let mut counted = 0;
                for k in 0..steps {
                    if let Err(error) = w.step() {
                        done.fetch_add(k - counted, Ordering::Relaxed);
                        return Some(BatchError { world: i, error });
                    }
                    if (k + 1) % COUNT_EVERY == 0 {
                        done.fetch_add(k + 1 - counted, Ordering::Relaxed);
                        counted = k + 1;
                    }
                }
                done.fetch_add(steps - counted, Ordering::Relaxed);
                None
            })
            .reduce(
                || None,
                |a, b| match (a, b) {
                    (Some(a), Some(b)) => Some(if a.world < b.world { a } else { b }),
                    (a, b) => a.or(b),
                },
            );
        first_error.map_or(Ok(()), Err)
    }

    /// Advances every world by one time step ([`Batch::run_steps`]`(1)`; for many steps,
    /// `run_steps(n)` meets the threads once instead of `n` times).
    pub fn step(&mut self) -> Result<(), BatchError> {
        self.run_steps(1)
    }
}

/// Threads a batch stepped from here runs on: those of the rayon pool the caller is in, else
/// of the global pool (one per core; `RAYON_NUM_THREADS` sets it).
pub fn threads() -> usize {
    rayon::current_num_threads()
}

/// Largest perturbation of a position coordinate (m) or of a 1-dof joint position (rad or m).
pub const PERTURBATION: f64 = 1e-3;

/// Perturbs the initial state of `scene` as world `world` of a batch seeded by `seed`:
/// every free body's initial position and every floating robot base's position moves by up to
/// ±[`PERTURBATION`] (1 mm) per axis, and every hinge or slider's `q0` by up to ±1 mrad (±1 mm),
/// uniformly, from a SplitMix64 stream seeded by `(seed, world)` and drawn in scene order.
/// World 0 is left as it is. Orientations, velocities and robot joint positions are not
/// perturbed (a robot's `q0` is also the rest position of its `joint_stiffness` springs, so
/// moving it would change the model, not only the state). Bodies resting in contact may start
/// up to 2 mm into each other, which the contact correction removes within a few steps.
pub fn perturb(scene: &mut Scene, seed: u64, world: usize) {
    if world == 0 {
        return;
    }
    let mut rng = SplitMix64::new(seed, world as u64);
    for body in &mut scene.bodies {
        for joint in &mut body.joints {
            match joint {
                JointSpec::Free { q0, .. } => {
                    for p in &mut q0.position {
                        *p += PERTURBATION * rng.symmetric();
                    }
                }
                JointSpec::Hinge { q0, .. } => *q0 += PERTURBATION * rng.symmetric(),
            }
        }
        // the redundant cross-check pose no longer holds
        body.initial_world_pose = None;
    }
    for robot in &mut scene.robots {
        if robot.root == RobotRoot::Floating {
            for p in &mut robot.pose.position {
                *p += PERTURBATION * rng.symmetric();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scene(name: &str) -> Scene {
        let shared = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/validation/scenes/");
        let local = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/scenes/");
        let p = std::path::Path::new(shared).join(name);
        Scene::from_file(if p.exists() { p } else { std::path::Path::new(local).join(name) }).unwrap()
    }

    /// Every coordinate of every body state, as bits.
    fn bits(w: &World) -> Vec<u64> {
        let mut out = vec![w.time().to_bits()];
        for s in w.states() {
                        for x in s.pose.translation.iter().chain(s.pose.rotation.iter()).chain(s.linear.iter()).chain(s.angular.iter()) {
                out.push(x.to_bits());
            }
        }
        out
    }

    // The compile-time proof: this does not build unless `World` (and so `Batch`) is `Send`.
    const _: fn() = || {
        fn send<T: Send>() {}
        send::<World>();
        send::<Batch>();
    };

    #[test]
    fn copies_share_one_model_and_step_as_worlds_built_alone() {
        const STEPS: u64 = 200;
        for name in ["05a_stack5.json", "08_fourbar.json"] {
            let s = scene(name);
            let mut alone = World::new(s.clone()).unwrap();
            for _ in 0..STEPS {
                alone.step().unwrap();
            }
            let mut batch = Batch::copies(&s, 3).unwrap();
            batch.run_steps(STEPS).unwrap();
            for w in batch.worlds() {
                assert_eq!(bits(w), bits(&alone), "{name}");
            }
        }
        // a model shared by engines on several threads
        fn send_sync<T: Send + Sync>() {}
        send_sync::<crate::SimModel>();
    }

    #[test]
    fn world_and_batch_are_send() {
        fn send<T: Send>() {}
        send::<World>();
        send::<Batch>();
    }

    #[test]
    fn a_world_is_bit_identical_alone_in_a_batch_of_one_and_of_n_on_any_thread_count() {
        const N: usize = 4;
        const STEPS: u64 = 150;
        for name in ["05a_stack5.json", "06_double_pendulum.json"] {
            let base = scene(name);
            // each world alone, on this thread
            let alone: Vec<Vec<u64>> = (0..N)
                .map(|i| {
                    let mut s = base.clone();
                    perturb(&mut s, 7, i);
                    let mut w = World::new(s).unwrap();
                    for _ in 0..STEPS {
                        w.step().unwrap();
                    }
                    bits(&w)
                })
                .collect();
            // the perturbation is real: the worlds differ; world 0 is the scene itself
            for i in 1..N {
                assert_ne!(alone[i], alone[0], "{name}: world {i} equals world 0");
            }
            let mut plain = World::new(base.clone()).unwrap();
            for _ in 0..STEPS {
                plain.step().unwrap();
            }
            assert_eq!(bits(&plain), alone[0], "{name}: world 0 is not the unperturbed scene");
            // each world in a batch of one
            for (i, expected) in alone.iter().enumerate() {
                let mut s = base.clone();
                perturb(&mut s, 7, i);
                let mut b = Batch::new(vec![World::new(s).unwrap()]);
                b.run_steps(STEPS).unwrap();
                assert_eq!(&bits(&b.worlds()[0]), expected, "{name}: world {i} in a batch of 1");
            }
            // all in a batch of N on 1, 2 and 3 threads, in one call and step by step
            for threads in [1, 2, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let mut b = Batch::perturbed(&base, N, 7).unwrap();
                pool.install(|| b.run_steps(STEPS)).unwrap();
                let mut c = Batch::perturbed(&base, N, 7).unwrap();
                pool.install(|| (0..STEPS).try_for_each(|_| c.step())).unwrap();
                for i in 0..N {
                    assert_eq!(bits(&b.worlds()[i]), alone[i], "{name}: world {i}, {threads} threads");
                    assert_eq!(bits(&c.worlds()[i]), alone[i], "{name}: world {i}, {threads} threads, step by step");
                }
            }
        }
    }

    #[test]
    fn the_perturbation_is_small_seeded_and_leaves_world_0_alone() {
        let base = scene("05a_stack5.json");
        let mut s0 = base.clone();
        perturb(&mut s0, 3, 0);
        assert_eq!(s0, base);
        let mut a = base.clone();
        let mut b = base.clone();
        let mut c = base.clone();
        perturb(&mut a, 3, 1);
        perturb(&mut b, 3, 1);
        perturb(&mut c, 4, 1);
        assert_eq!(a, b, "same seed and world, same scene");
        assert_ne!(a, c, "another seed, another scene");
        let mut moved = 0;
        for (pb, pa) in base.bodies.iter().zip(&a.bodies) {
            for (jb, ja) in pb.joints.iter().zip(&pa.joints) {
                if let (JointSpec::Free { q0: qb, .. }, JointSpec::Free { q0: qa, .. }) = (jb, ja) {
                    for k in 0..3 {
                        let d = (qa.position[k] - qb.position[k]).abs();
                        assert!(d <= PERTURBATION, "moved by {d} m");
                        moved += (d > 0.0) as usize;
                    }
                    assert_eq!(qa.orientation, qb.orientation);
                }
            }
        }
        assert!(moved >= 12, "only {moved} coordinates moved");
    }

    #[test]
    fn a_failing_world_is_named_and_the_others_take_their_steps() {
        let base = scene("02_bounce.json");
        let mut bad = base.clone();
        // falling at just under its max_speed, gravity trips the divergence guard within 2 steps
        bad.engine.max_speed = 1.0;
        for b in &mut bad.bodies {
            for j in &mut b.joints {
                if let JointSpec::Free { qd0, .. } = j {
                    qd0.linear = [0.0, 0.0, -0.99];
                }
            }
        }
        let mut batch = Batch::new(vec![
            World::new(base.clone()).unwrap(),
            World::new(bad).unwrap(),
            World::new(base).unwrap(),
        ]);
        let e = batch.run_steps(10).unwrap_err();
        assert_eq!(e.world, 1, "{e}");
        assert!(e.to_string().starts_with("world 1: diverged"), "{e}");
        assert_eq!(batch.worlds()[0].steps(), 10);
        assert_eq!(batch.worlds()[2].steps(), 10);
    }
}

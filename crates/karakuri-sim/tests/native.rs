//! The native engine's parts: M stays the mass matrix (implicit damping and springs live in
//! qH), joints by name through the world, and named errors.

use karakuri::algorithms;
use karakuri::Data;
use karakuri_sim::{Engine, NativeEngine, Scene, SimError, World};

const ARM: &str = r#"
name: arm
world: {gravity: [0, 0, -9.81], dt: 0.001}
bodies:
  - name: link
    mass: 2.0
    com: [0.3, 0, 0]
    inertia: [[0.01, 0, 0], [0, 0.02, 0], [0, 0, 0.02]]
    pose_in_parent: {position: [0, 0, 1]}
    joints: [{type: revolute, name: shoulder, axis: [0, 1, 0], q0: 0.4, damping: 3.0, stiffness: 5.0, armature: 0.05}]
  - name: ball
    mass: 1.0
    inertia: [[0.004, 0, 0], [0, 0.004, 0], [0, 0, 0.004]]
    joints: [{type: free, name: ball_free, q0: {position: [3, 0, 2]}}]
"#;

fn arm() -> Scene {
    Scene::from_str(ARM, "arm.yaml").unwrap()
}

/// With armature, damping and stiffness, the workspace's mass matrix is CRBA's M(q) of the
/// state, bit for bit, and qH (factorised at the step's configuration) is that
/// configuration's M plus exactly the implicit diagonal.
#[test]
fn the_mass_matrix_stays_the_mass_matrix() {
    let mut e = NativeEngine::new(&arm()).unwrap();
    let q0 = e.state().q.clone();
    e.step().unwrap();
    let model = e.model();
    let mut data = Data::new(model);
    let m1 = algorithms::mass_matrix(model, &mut data, &e.state().q).clone();
    assert_eq!(e.work().data.mass_matrix().unwrap(), &m1);
    let m0 = algorithms::mass_matrix(model, &mut data, &q0).clone();
    let k = model.idx_v[model.joint_id("shoulder").unwrap().0];
    let dt = e.dt();
    // column k of qH through its factors
    let mut col = vec![0.0; model.nv];
    col[k] = 1.0;
    e.work().qh.mul(&mut col);
    for (r, x) in col.iter().enumerate() {
        let extra = x - m0[(r, k)];
        let want = if r == k { 0.05 + dt * 3.0 + dt * dt * 5.0 } else { 0.0 };
        assert!((extra - want).abs() < 1e-12, "qH[{r}, {k}] - M = {extra}");
    }
}

/// Positions, velocities and torques of joints by name through the world; the torque acts.
#[test]
fn joints_by_name_through_the_world() {
    let mut free = World::new(arm()).unwrap();
    let mut pushed = World::new(arm()).unwrap();
    assert_eq!(pushed.joint_position("shoulder").unwrap(), 0.4);
    assert_eq!(pushed.joint_velocity("shoulder").unwrap(), 0.0);
    pushed.set_joint_torque("shoulder", 20.0).unwrap();
    assert_eq!(pushed.joint_torque("shoulder").unwrap(), 20.0);
    free.run(0.1).unwrap();
    pushed.run(0.1).unwrap();
    // about +y, a positive torque turns the arm's x axis towards -z: q grows
    assert!(
        pushed.joint_velocity("shoulder").unwrap() > free.joint_velocity("shoulder").unwrap() + 0.1
    );
    assert!(pushed.joint_position("shoulder").unwrap() > free.joint_position("shoulder").unwrap());
}

#[test]
fn joints_by_name_errors_are_named() {
    let mut w = World::new(arm()).unwrap();
    assert_eq!(
        w.set_joint_torque("elbow", 1.0),
        Err(SimError::UnknownJoint {
            joint: "elbow".into()
        })
    );
    assert_eq!(
        w.joint_position("ball_free"),
        Err(SimError::NotOneDof {
            joint: "ball_free".into(),
            dofs: 6
        })
    );
    // an unknown engine is refused when the scene is read (tests/world.rs: unknown_engine_is_an_error)
}

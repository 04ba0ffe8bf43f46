//! What rapier cannot express in a compiled scene: the first such thing is an error naming the
//! scene key and the feature (never silently ignored); native-only settings that differ from
//! their defaults are remarks.

use karakuri::model::JointType;

use crate::compile::CompiledWorld;
use crate::scene::{ActuatorMode, ContactMode, ContactParams, EngineParams, Integrator, LoopKind, Scene, SensorKind};
use crate::SimError;

/// The refusal of a scene key: "the rapier engine cannot express {reason}".
fn refuse(scene: &Scene, path: &str, reason: String) -> SimError {
    SimError::Scene {
        file: scene.source.as_ref().map_or("scene".to_string(), |p| p.display().to_string()),
        path: path.into(),
        reason: format!("the rapier engine cannot express {reason} (use engine.type: native)"),
    }
}

/// The first thing of the scene rapier cannot express as an error; else its remarks.
pub(super) fn check(scene: &Scene, w: &CompiledWorld) -> Result<Vec<String>, SimError> {
    settings(scene, w)?;
    elements(scene, w)?;
    joints(scene, w)?;
    Ok(remarks(scene, w))
}

/// The scene's settings: RK4, penalty contacts, separate static and dynamic friction.
fn settings(scene: &Scene, w: &CompiledWorld) -> Result<(), SimError> {
    if w.engine.integrator == Integrator::Rk4 {
        let reason = "RK4: it integrates with its own substepped semi-implicit Euler";
        return Err(refuse(scene, "engine.integrator", reason.into()));
    }
    if let ContactMode::Penalty { .. } = w.contact.mode {
        let reason = "penalty contacts (a spring-damper in N/m, N·s/m): its contacts are constraints with its own softness";
        return Err(refuse(scene, "contact.mode", reason.into()));
    }
    for (i, p) in scene.contact_pairs.iter().enumerate() {
        if let ContactMode::Penalty { .. } = p.mode {
            let reason = "penalty contacts (a spring-damper in N/m, N·s/m)";
            return Err(refuse(scene, &format!("contact_pairs[{i}].mode"), reason.into()));
        }
    }
    let named = scene.materials.iter().map(|(n, m)| (format!("materials.{n}"), m));
    let materials = named.chain(std::iter::once(("default_material".to_string(), &scene.default_material)));
    for (path, m) in materials {
        if m.static_friction != m.dynamic_friction {
            let reason = format!(
                "separate static and dynamic friction ({} and {}): it has one Coulomb coefficient",
                m.static_friction, m.dynamic_friction
            );
            return Err(refuse(scene, &path, reason));
        }
    }
    Ok(())
}

/// The world's elements: force sensors, and what is not mapped onto rapier yet (sensor noise,
/// tracks, perturbations, prescribed actuators, joint friction, piston and weld loops).
fn elements(scene: &Scene, w: &CompiledWorld) -> Result<(), SimError> {
    if let Some(i) = w.sensors.iter().position(|s| s.kind.is_wrench()) {
        let reason = "force sensors: its multibodies do not report joint wrenches";
        return Err(refuse(scene, &format!("sensors[{i}]"), reason.into()));
    }
    if let Some(i) = w.sensors.iter().position(|s| !matches!(s.kind, SensorKind::Accelerometer | SensorKind::RateGyro)) {
        let reason = format!("{:?} sensors (not mapped yet: accelerometers and rate gyros are)", w.sensors[i].kind);
        return Err(refuse(scene, &format!("sensors[{i}]"), reason));
    }
    if let Some(i) = w.sensors.iter().position(|s| s.noise.is_some()) {
        return Err(refuse(scene, &format!("sensors[{i}].noise"), "sensor noise (not mapped yet)".into()));
    }
    if let Some(t) = w.tracks.first() {
        let at = match &t.owner {
            crate::compile::TrackOwner::Body(bi) => format!("bodies[{bi}].track"),
            crate::compile::TrackOwner::Link { robot, .. } => format!("robots[{robot}].tracks ({})", t.name),
        };
        return Err(refuse(scene, &at, "track surfaces (not mapped yet)".into()));
    }
    if !w.perturbations.is_empty() {
        return Err(refuse(scene, "perturbations", "external wrenches (not mapped yet)".into()));
    }
    if w.actuators.iter().any(|a| a.mode == ActuatorMode::Prescribed) {
        return Err(refuse(scene, "actuators", "prescribed actuators (not mapped yet)".into()));
    }
    if w.actuators.iter().any(|a| a.bias != 0.0) {
        return Err(refuse(scene, "robots", "an MJCF velocity or general actuator's constant force (not mapped yet)".into()));
    }
    if !w.frictions.is_empty() {
        return Err(refuse(scene, "bodies / robots", "Coulomb joint friction (not mapped yet)".into()));
    }
    if let Some(a) = w.actuator_forces.first() {
        return Err(refuse(scene, "robots", format!("MJCF actuators carried as joint forces such as '{}' (tendon transmissions, activation dynamics: not mapped yet)", a.name)));
    }
    if let Some(t) = w.spatial_tendons.first() {
        return Err(refuse(scene, "robots", format!("spatial tendons such as '{}' (not mapped yet)", t.name)));
    }
    if let Some(r) = w.linear_rows.first() {
        return Err(refuse(scene, "robots", format!("linear joint rows such as '{}' (MJCF joint and tendon equalities, tendon ranges: not mapped yet)", r.name)));
    }
    for (i, l) in w.loops.iter().enumerate() {
        if matches!(l.kind, LoopKind::Piston | LoopKind::Weld) {
            let reason = format!("{:?} extra joints (not mapped yet)", l.kind).to_lowercase();
            return Err(refuse(scene, &format!("loop_constraints[{i}].type"), reason));
        }
    }
    Ok(())
}

/// The world model's joints: hinges, sliders and free roots only, no mimic joints.
fn joints(scene: &Scene, w: &CompiledWorld) -> Result<(), SimError> {
    let m = &w.model;
    for j in 1..m.njoints {
        let name = &m.joint_names[j];
        match m.joint_types[j] {
            JointType::Revolute { .. } | JointType::RevoluteUnbounded { .. } | JointType::Prismatic { .. } => {}
            JointType::FreeFlyer if m.parents[j] == 0 => {}
            t => {
                let reason = format!("joint '{name}' ({}): it takes hinges, sliders and free roots", t.short_name());
                return Err(refuse(scene, "bodies", reason));
            }
        }
        if m.mimic[j].is_some() {
            return Err(refuse(scene, "robots", format!("mimic joint '{name}'")));
        }
    }
    Ok(())
}

/// Remarks: native-only engine settings and Springhead's contact parameters set to other than
/// their defaults, and velocity servos' unreported torque.
fn remarks(scene: &Scene, w: &CompiledWorld) -> Vec<String> {
    let mut warnings = vec![];
    let (e, d) = (&scene.engine, EngineParams::default());
    let native_only = changed(&[
        ("solver", e.solver != d.solver),
        ("max_iterations", e.max_iterations != d.max_iterations),
        ("tolerance", e.tolerance != d.tolerance),
        ("warm_start", e.warm_start != d.warm_start),
        ("direct_max_rows", e.direct_max_rows != d.direct_max_rows),
        ("loop_correction_rate", e.loop_correction_rate != d.loop_correction_rate),
        ("loop_projection", e.loop_projection != d.loop_projection),
    ]);
    if !native_only.is_empty() {
        warnings.push(format!(
            "engine.{} set but used by the native engine only (rapier runs its own solver settings)",
            native_only.join(", engine.")
        ));
    }
    let (c, dc) = (&scene.contact, ContactParams::default());
    let springhead = changed(&[
        ("error_correction_rate", c.error_correction_rate != dc.error_correction_rate),
        ("penetration_tolerance", c.penetration_tolerance != dc.penetration_tolerance),
        ("restitution_threshold_velocity", c.restitution_threshold_velocity != dc.restitution_threshold_velocity),
        ("friction_threshold_velocity", c.friction_threshold_velocity != dc.friction_threshold_velocity),
    ]);
    if !springhead.is_empty() {
        warnings.push(format!(
            "contact.{} set but rapier has no equivalent of Springhead's parameter(s): its contacts use its own softness",
            springhead.join(", contact.")
        ));
    }
    if w.actuators.iter().any(|a| a.mode == ActuatorMode::Velocity) {
        warnings.push(
            "velocity-mode actuators: rapier does not report a multibody motor's force, so --joints tau holds the user torque only for them"
                .into(),
        );
    }
    warnings
}

/// The keys whose flag is set.
fn changed<'a>(keys: &[(&'a str, bool)]) -> Vec<&'a str> {
    keys.iter().filter_map(|&(k, differs)| differs.then_some(k)).collect()
}

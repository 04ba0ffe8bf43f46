//! Semantic checks of a typed scene: ranges and units, unit quaternions and axes (normalised in
//! place when within 1e-6 of unit), names unique and references resolved, parents before
//! children, shapes allowed on their bodies. Each error names the path inside the file.
//!
//! Reads and writes: the [`Scene`] (normalises quaternions and axes, fills default joint and loop
//! names); nothing else.

use super::{scene_error, ControllerSpec, PerComponent, MAX_EXTENT, MAX_GRAVITY, ActuatorSpec, BodySpec, ContactMode, Geometry, JointSpec, LoopKind, Material, Pose, Scene, ShapeSpec, Target, MIN_DT};
use crate::SimError;

type Check = Result<(), SimError>;

/// The masses a body may have besides 0 (kg): below, subnormal and tiny masses make the mass
/// matrix singular in double precision; above, the solver's absolute tolerances (m/s) no
/// longer bound the contact impulses (a 10¹² kg box fell through the floor).
pub const MASS_RANGE: (f64, f64) = (1e-6, 1e6);

/// The magnitudes an inertia entry may have besides 0 (kg·m²): a 1e-6 kg body of 1 mm has
/// 1e-12; a 1e6 kg body of 30 m has 1e8.
pub const INERTIA_RANGE: (f64, f64) = (1e-12, 1e9);

/// Checks the scene and fills the defaults that depend on context (joint names
/// `<body>_j<index>`, loop names `loop<index>`).
pub fn validate(scene: &mut Scene, file: &str) -> Check {
    let v = Validator { file };
    v.world(&scene.world)?;
    v.contact(&scene.contact)?;
    v.engine(scene)?;
    for (name, m) in &scene.materials {
        v.material(&format!("materials.{name}"), m)?;
    }
    v.material("default_material", &scene.default_material)?;
    let materials: Vec<String> = scene.materials.iter().map(|(k, _)| k.clone()).collect();
    for bi in 0..scene.bodies.len() {
        let (earlier, rest) = scene.bodies.split_at_mut(bi);
        v.body(&format!("bodies[{bi}]"), &mut rest[0], earlier, &materials)?;
    }
    for (ri, r) in scene.robots.iter_mut().enumerate() {
        let at = format!("robots[{ri}]");
        if usize::from(!r.urdf.is_empty()) + usize::from(r.mjcf.is_some()) + usize::from(r.body.is_some()) != 1 {
            return Err(v.err(&at, "give exactly one of `urdf` (a URDF file), `mjcf` (an MJCF file) and `body` (a Choreonoid .body file)"));
        }
        if r.keyframe.is_some() && r.mjcf.is_none() {
            return Err(v.err(&format!("{at}.keyframe"), "a keyframe names an MJCF `<key>`: only an `mjcf` robot has one"));
        }
        v.pose(&format!("{at}.pose"), &mut r.pose)?;
        v.material_ref(&format!("{at}.material"), r.material.as_deref(), &materials)?;
        v.nonneg(&format!("{at}.joint_stiffness"), r.joint_stiffness)?;
        v.nonneg(&format!("{at}.joint_damping"), r.joint_damping)?;
        for (si, (_, s)) in r.shapes.iter_mut().enumerate() {
            v.shape(&format!("{at}.shapes[{si}]"), s, &materials)?;
        }
        for (ai, a) in r.actuators.iter().enumerate() {
            v.actuator(&format!("{at}.actuators[{ai}]"), &a.actuator())?;
        }
    }
    let known = |name: &str, s: &Scene| {
        s.bodies.iter().any(|b| b.name == name) || s.robots.iter().any(|r| name.starts_with(&format!("{}/", r.name)))
    };
    for li in 0..scene.loop_constraints.len() {
        let at = format!("loop_constraints[{li}]");
        let l = &scene.loop_constraints[li];
        for (key, name) in [("body_a", &l.body_a), ("body_b", &l.body_b)] {
            // robot links are resolved against the URDF when the world is built
            if name != "world" && !known(name, scene) {
                return Err(v.err(&format!("{at}.{key}"), format!("unknown body '{name}' (a scene body, `robot/link` or `world`)")));
            }
        }
        if l.body_a == l.body_b {
            return Err(v.err(&format!("{at}.body_b"), format!("joins body '{}' to itself", l.body_b)));
        }
        let l = &mut scene.loop_constraints[li];
        if l.name.is_empty() {
            l.name = format!("loop{li}");
        }
        if matches!(l.kind, LoopKind::Revolute | LoopKind::Piston) {
            if l.axis_a.iter().all(|&x| x == 0.0) {
                return Err(v.err(&format!("{at}.axis_a"), "the axis is zero; give the joint's axis as a unit vector in body_a's frame"));
            }
            v.unit(&format!("{at}.axis_a"), &mut l.axis_a)?;
        }
    }
    let pairs = scene.collision_exclude_pairs.iter().enumerate().map(|(i, p)| (format!("collision_exclude_pairs[{i}]"), p));
    let modes = scene.contact_pairs.iter().enumerate().map(|(i, p)| (format!("contact_pairs[{i}].bodies"), &p.bodies));
    for (at, pair) in pairs.chain(modes) {
        for (k, name) in pair.iter().enumerate() {
            if !known(name, scene) {
                return Err(v.err(&format!("{at}[{k}]"), format!("unknown body '{name}'")));
            }
        }
    }
    for (i, p) in scene.contact_pairs.iter().enumerate() {
        v.mode(&format!("contact_pairs[{i}]"), p.mode)?;
    }
    for i in 0..scene.sensors.len() {
        v.sensor(i, scene)?;
    }
    for i in 0..scene.perturbations.len() {
        v.perturbation(i, scene)?;
    }
    for (i, c) in scene.controllers.iter().enumerate() {
        v.controller(&format!("controllers[{i}]"), c, scene.world.dt)?;
    }
    for (bi, b) in scene.bodies.iter_mut().enumerate() {
        if let Some(t) = &mut b.track {
            let at = format!("bodies[{bi}].track");
            v.track(&at, Some(&mut t.axis), t.speed, t.lateral_friction)?;
        }
    }
    for (ri, r) in scene.robots.iter_mut().enumerate() {
        for k in 0..r.tracks.len() {
            let at = format!("robots[{ri}].tracks[{k}]");
            let t = &mut r.tracks[k];
            v.track(&at, t.axis.as_mut(), t.speed, t.lateral_friction)?;
            if r.tracks[..k].iter().any(|o| o.link == r.tracks[k].link) {
                return Err(v.err(&format!("{at}.link"), format!("link '{}' has two tracks", r.tracks[k].link)));
            }
        }
    }
    Ok(())
}

/// The file's checks of a setting changed while running (`World::set_*`): `what` is the
/// setting (`gravity`, `contact`, `material`, `mode`), the error [`SimError::Input`] naming
/// the key and the reason.
pub fn check_setting(what: &str, contact: Option<&super::ContactParams>, material: Option<&Material>, mode: Option<ContactMode>, gravity: Option<[f64; 3]>) -> Check {
    let v = Validator { file: "" };
    let r = (|| {
        if let Some(g) = gravity {
            v.world(&super::WorldParams { gravity: g, ..Default::default() })?;
        }
        if let Some(c) = contact {
            v.contact(c)?;
        }
        if let Some(m) = material {
            v.material(what, m)?;
        }
        if let Some(m) = mode {
            v.mode(what, m)?;
        }
        Ok(())
    })();
    r.map_err(|e| match e {
        SimError::Scene { path, reason, .. } => SimError::Input(format!("{what}: {path}: {reason}")),
        e => e,
    })
}

struct Validator<'a> {
    file: &'a str,
}

impl Validator<'_> {
    /// A track's axis (made unit), speed and lateral friction.
    fn track(&self, at: &str, axis: Option<&mut [f64; 3]>, speed: f64, lateral: Option<f64>) -> Result<(), SimError> {
        if let Some(axis) = axis {
            if axis.iter().all(|&x| x == 0.0) {
                return Err(self.err(&format!("{at}.axis"), "the axis is zero; give the axis the surface turns about as a unit vector in the body's axes"));
            }
            self.unit(&format!("{at}.axis"), axis)?;
        }
        if !speed.is_finite() {
            return Err(self.err(&format!("{at}.speed"), format!("must be a finite number (found {speed})")));
        }
        if let Some(mu) = lateral.filter(|mu| !(mu.is_finite() && *mu > 0.0)) {
            return Err(self.err(&format!("{at}.lateral_friction"), format!("must be a finite number above 0 (found {mu})")));
        }
        Ok(())
    }

    fn err(&self, path: &str, reason: impl Into<String>) -> SimError {
        scene_error(self.file, path, reason)
    }

    fn nonneg(&self, path: &str, x: f64) -> Check {
        if !(x >= 0.0 && x.is_finite()) {
            return Err(self.err(path, format!("must be a non-negative number (found {x})")));
        }
        Ok(())
    }

    /// A size (m): positive and at most `MAX_EXTENT`.
    fn size(&self, path: &str, x: f64) -> Check {
        self.positive(path, x)?;
        self.within_extent(path, x)
    }

    /// A coordinate or length (m) of at most `MAX_EXTENT` in magnitude: beyond it, f64 keeps
    /// too few digits for contacts (and energies overflow).
    fn within_extent(&self, path: &str, x: f64) -> Check {
        if x.is_nan() || x.abs() > MAX_EXTENT {
            return Err(self.err(path, format!("must be within ±{MAX_EXTENT:e} m (found {x:e}); the scene's lengths are in metres")));
        }
        Ok(())
    }

    fn positive(&self, path: &str, x: f64) -> Check {
        if !(x > 0.0 && x.is_finite()) {
            return Err(self.err(path, format!("must be a positive number (found {x})")));
        }
        Ok(())
    }

    fn world(&self, w: &super::WorldParams) -> Check {
        let g = w.gravity.iter().map(|x| x * x).sum::<f64>().sqrt();
        if g.is_nan() || g > MAX_GRAVITY {
            return Err(self.err("world.gravity", format!("its norm must be at most {MAX_GRAVITY:e} m/s² (found {g:e})")));
        }
        self.positive("world.dt", w.dt)?;
        if w.dt < MIN_DT {
            return Err(self.err("world.dt", format!("must be at least {MIN_DT:e} s (found {:e})", w.dt)));
        }
        self.nonneg("world.duration", w.duration)?;
        step_count(w.duration, w.dt).map_err(|e| self.err("world.duration", e.to_string()))?;
        Ok(())
    }

    fn contact(&self, c: &super::ContactParams) -> Check {
        self.nonneg("contact.error_correction_rate", c.error_correction_rate)?;
        if c.error_correction_rate > 1.0 {
            return Err(self.err("contact.error_correction_rate", "must be within [0, 1]"));
        }
        self.nonneg("contact.penetration_tolerance", c.penetration_tolerance)?;
        self.nonneg("contact.restitution_threshold_velocity", c.restitution_threshold_velocity)?;
        self.nonneg("contact.friction_threshold_velocity", c.friction_threshold_velocity)?;
        self.nonneg("contact.prediction_distance", c.prediction_distance)?;
        self.positive("contact.max_depenetration_speed", c.max_depenetration_speed)?;
        self.mode("contact", c.mode)
    }

    fn mode(&self, at: &str, m: ContactMode) -> Check {
        if let ContactMode::Penalty { stiffness, damping } = m {
            self.positive(&format!("{at}.stiffness"), stiffness)?;
            self.nonneg(&format!("{at}.damping"), damping)?;
        }
        Ok(())
    }

    fn engine(&self, s: &Scene) -> Check {
        let e = &s.engine;
        if e.max_iterations == 0 {
            return Err(self.err("engine.max_iterations", "must be at least 1 (with 0 the solver applies no contact or joint constraint and everything falls through)"));
        }
        if e.max_iterations > 100_000 {
            let reason = format!("{} iterations per step would stall the run; at most 100000", e.max_iterations);
            return Err(self.err("engine.max_iterations", reason));
        }
        self.positive("engine.tolerance", e.tolerance)?;
        self.nonneg("engine.loop_correction_rate", e.loop_correction_rate)?;
        if e.loop_correction_rate > 1.0 {
            return Err(self.err("engine.loop_correction_rate", format!("must be within [0, 1] (found {})", e.loop_correction_rate)));
        }
        self.positive("engine.max_speed", e.max_speed)?;
        self.nonneg("engine.loop_tolerance", e.loop_tolerance)?;
        self.positive("engine.sleep.linear", e.sleep.linear)?;
        self.positive("engine.sleep.angular", e.sleep.angular)?;
        self.positive("engine.sleep.time", e.sleep.time)?;
        if e.sleep.time > 1e6 {
            return Err(self.err("engine.sleep.time", format!("{} s is longer than any run; at most 1e6 (turn sleeping off with enabled: false)", e.sleep.time)));
        }
        Ok(())
    }

    fn material(&self, at: &str, m: &Material) -> Check {
        self.nonneg(&format!("{at}.static_friction"), m.static_friction)?;
        self.nonneg(&format!("{at}.dynamic_friction"), m.dynamic_friction)?;
        self.nonneg(&format!("{at}.restitution"), m.restitution)?;
        if m.restitution > 1.0 {
            let e = m.restitution;
            return Err(self.err(&format!("{at}.restitution"), format!("restitution must be within [0, 1] (found {e})")));
        }
        Ok(())
    }

    fn material_ref(&self, at: &str, name: Option<&str>, materials: &[String]) -> Check {
        match name {
            Some(n) if !materials.iter().any(|k| k == n) => {
                let known = if materials.is_empty() { "none".to_string() } else { materials.join(", ") };
                Err(self.err(at, format!("unknown material '{n}' (defined: {known})")))
            }
            _ => Ok(()),
        }
    }

    /// A unit vector within 1e-6, normalised in place.
    fn unit(&self, at: &str, a: &mut [f64; 3]) -> Check {
        let n = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
        if (n - 1.0).abs() > 1e-6 {
            return Err(self.err(at, format!("must be a unit vector (norm {n})")));
        }
        *a = [a[0] / n, a[1] / n, a[2] / n];
        Ok(())
    }

    /// A unit quaternion within 1e-6, normalised in place (an already unit one is kept bit for
    /// bit, so save and reload are exact).
    fn pose(&self, at: &str, p: &mut Pose) -> Check {
        for (i, x) in p.position.iter().enumerate() {
            self.within_extent(&format!("{at}.position[{i}]"), *x)?;
        }
        let q = &mut p.orientation;
        let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
        if (n - 1.0).abs() > 1e-6 {
            return Err(self.err(&format!("{at}.orientation"), format!("quaternion [x, y, z, w] must be unit (norm {n:.9})")));
        }
        if (n * n - 1.0).abs() >= 1e-14 {
            *q = [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
        }
        Ok(())
    }

    fn body(&self, at: &str, b: &mut BodySpec, earlier: &[BodySpec], materials: &[String]) -> Check {
        if b.name == "world" || earlier.iter().any(|e| e.name == b.name) {
            return Err(self.err(&format!("{at}.name"), format!("body name '{}' is already used", b.name)));
        }
        if b.parent != "world" && !earlier.iter().any(|e| e.name == b.parent) {
            let reason = format!("unknown parent '{}' (parents must come before their children)", b.parent);
            return Err(self.err(&format!("{at}.parent"), reason));
        }
        self.pose(&format!("{at}.pose_in_parent"), &mut b.pose_in_parent)?;
        if let Some(p) = &mut b.initial_world_pose {
            self.pose(&format!("{at}.initial_world_pose"), p)?;
        }
        let n = b.joints.len();
        let (body, parent) = (b.name.clone(), b.parent.clone());
        for (k, j) in b.joints.iter_mut().enumerate() {
            self.joint(&format!("{at}.joints[{k}]"), j, &body, &parent, k, n)?;
        }
        let free = b.joints.iter().any(|j| matches!(j, JointSpec::Free { .. }));
        if b.mass < 0.0 {
            return Err(self.err(&format!("{at}.mass"), format!("mass must be non-negative (found {})", b.mass)));
        }
        if b.mass != 0.0 && !(MASS_RANGE.0..=MASS_RANGE.1).contains(&b.mass) {
            let reason = format!(
                "mass {:e} kg is outside [{:e}, {:e}] kg, where the step's tolerances and contact solve hold (rescale the units, or make the body static)",
                b.mass, MASS_RANGE.0, MASS_RANGE.1
            );
            return Err(self.err(&format!("{at}.mass"), reason));
        }
        if free && b.mass <= 0.0 && b.density.is_none() {
            return Err(self.err(&format!("{at}.mass"), "a free body needs a positive mass"));
        }
        let m = &b.inertia;
        for i in 0..3 {
            for j in 0..3 {
                if (m[i][j] - m[j][i]).abs() > 1e-9 * (1.0 + m[i][j].abs()) {
                    return Err(self.err(&format!("{at}.inertia"), "inertia must be symmetric"));
                }
            }
            if m[i][i] < 0.0 {
                return Err(self.err(&format!("{at}.inertia"), "inertia diagonal must be non-negative"));
            }
            for j in 0..3 {
                let x = m[i][j].abs();
                if x != 0.0 && !(INERTIA_RANGE.0..=INERTIA_RANGE.1).contains(&x) {
                    let reason = format!(
                        "inertia entry [{i}][{j}] = {:e} kg·m² is outside [{:e}, {:e}] kg·m² (or 0), where the mass matrix stays well conditioned in double precision",
                        m[i][j], INERTIA_RANGE.0, INERTIA_RANGE.1
                    );
                    return Err(self.err(&format!("{at}.inertia"), reason));
                }
            }
        }
        let is_static = b.is_static();
        for (si, s) in b.shapes.iter_mut().enumerate() {
            let sat = format!("{at}.shapes[{si}]");
            self.shape(&sat, s, materials)?;
            if matches!(s.geometry, Geometry::TriMesh { .. } | Geometry::Plane) && !is_static && s.collide {
                let reason = "planes and triangle meshes are for static bodies only (use a box or a convex mesh)";
                return Err(self.err(&format!("{sat}.type"), reason));
            }
        }
        if let Some(rho) = b.density {
            self.positive(&format!("{at}.density"), rho)?;
            if b.mass != 0.0 || b.com != [0.0; 3] || b.inertia != [[0.0; 3]; 3] {
                return Err(self.err(&format!("{at}.density"), "give either density (mass properties from the shapes) or mass, com and inertia, not both"));
            }
            let m = b.mass_properties().map_err(|e| self.err(&format!("{at}.density"), e))?.mass;
            if !(MASS_RANGE.0..=MASS_RANGE.1).contains(&m) {
                let reason = format!("the shapes' mass {m:e} kg is outside [{:e}, {:e}] kg (is the density in kg/m³?)", MASS_RANGE.0, MASS_RANGE.1);
                return Err(self.err(&format!("{at}.density"), reason));
            }
        }
        Ok(())
    }

    fn joint(&self, at: &str, j: &mut JointSpec, body: &str, parent: &str, k: usize, n: usize) -> Check {
        match j {
            JointSpec::Free { name, q0, .. } => {
                if n > 1 {
                    return Err(self.err(at, "a free joint must be the body's only joint"));
                }
                if parent != "world" {
                    return Err(self.err(at, "a free joint needs parent 'world'"));
                }
                if name.is_empty() {
                    *name = format!("{body}_j{k}");
                }
                self.pose(&format!("{at}.q0"), q0)
            }
            JointSpec::Hinge { name, axis, anchor, q0, limits, damping, stiffness, armature, actuator, friction, .. } => {
                if name.is_empty() {
                    *name = format!("{body}_j{k}");
                }
                // a hinge angle is bounded too: far beyond it sin/cos keep no digits
                self.within_extent(&format!("{at}.q0"), *q0)?;
                for (i, x) in anchor.iter().enumerate() {
                    self.within_extent(&format!("{at}.anchor[{i}]"), *x)?;
                }
                if let Some(a) = actuator {
                    self.actuator(&format!("{at}.actuator"), a)?;
                }
                self.unit(&format!("{at}.axis"), axis)?;
                if let Some(l) = limits {
                    if l[0] > l[1] {
                        return Err(self.err(&format!("{at}.limits"), "lower limit above upper limit"));
                    }
                }
                self.nonneg(&format!("{at}.damping"), *damping)?;
                self.nonneg(&format!("{at}.stiffness"), *stiffness)?;
                self.nonneg(&format!("{at}.friction"), *friction)?;
                self.nonneg(&format!("{at}.armature"), *armature)
            }
        }
    }

    /// A unique name, `body` for accelerometers and gyros (a known body), `joint` for force
    /// sensors (resolved when the world is built), a valid pose.
    fn sensor(&self, i: usize, scene: &mut Scene) -> Check {
        let at = format!("sensors[{i}]");
        let s = &scene.sensors[i];
        if s.name.is_empty() {
            return Err(self.err(&format!("{at}.name"), "must not be empty"));
        }
        if scene.sensors[..i].iter().any(|o| o.name == s.name) {
            return Err(self.err(&format!("{at}.name"), format!("duplicate sensor name '{}'", s.name)));
        }
        let (needs, other) = match s.kind.on_joint() {
            true => ("joint", s.body.is_some()),
            false => ("body", s.joint.is_some()),
        };
        if other {
            let wrong = if needs == "joint" { "body" } else { "joint" };
            return Err(self.err(&format!("{at}.{wrong}"), format!("a {:?} sensor takes `{needs}`, not `{wrong}`", s.kind)));
        }
        match (s.kind, &s.body, &s.joint) {
            (k, _, None) if k.on_joint() => {
                return Err(self.err(&format!("{at}.{needs}"), "missing"));
            }
            (_, None, None) => {
                return Err(self.err(&format!("{at}.{needs}"), "missing"));
            }
            (k, Some(b), _) if !k.on_joint() => {
                let known = scene.bodies.iter().any(|x| &x.name == b)
                    || scene.robots.iter().any(|r| b.starts_with(&format!("{}/", r.name)));
                if !known {
                    return Err(self.err(&format!("{at}.body"), format!("unknown body '{b}'")));
                }
            }
            _ => {}
        }
        if let Some(n) = &s.noise {
            let len = s.kind.width();
            for (key, p, nonneg) in [("std", &n.std, true), ("bias", &n.bias, false)] {
                let path = format!("{at}.noise.{key}");
                let values: &[f64] = match p {
                    PerComponent::All(x) => std::slice::from_ref(x),
                    PerComponent::Each(v) if v.len() == len => v,
                    PerComponent::Each(v) => {
                        let reason = format!("a number or a list of {len} (one per component of a {:?} reading), found {} numbers", s.kind, v.len());
                        return Err(self.err(&path, reason));
                    }
                };
                for &x in values {
                    if !x.is_finite() || (nonneg && x < 0.0) {
                        let what = if nonneg { "finite and non-negative" } else { "finite" };
                        return Err(self.err(&path, format!("must be {what} (found {x})")));
                    }
                }
            }
        }
        self.pose(&format!("{at}.pose"), &mut scene.sensors[i].pose)
    }

    /// A known body, finite force, torque and point, `start ≥ 0`, `duration > 0` (static bodies
    /// and unknown robot links are refused when the world is built).
    fn perturbation(&self, i: usize, scene: &Scene) -> Check {
        let at = format!("perturbations[{i}]");
        let p = &scene.perturbations[i];
        let known = scene.bodies.iter().any(|x| x.name == p.body)
            || scene.robots.iter().any(|r| p.body.starts_with(&format!("{}/", r.name)));
        if !known {
            return Err(self.err(&format!("{at}.body"), format!("unknown body '{}'", p.body)));
        }
        for (key, x) in [("force", p.force), ("torque", p.torque), ("point", p.point)] {
            if !x.iter().all(|c| c.is_finite()) {
                return Err(self.err(&format!("{at}.{key}"), format!("must be finite (found {x:?})")));
            }
        }
        self.nonneg(&format!("{at}.start"), p.start)?;
        self.positive(&format!("{at}.duration"), p.duration)
    }

    /// Gains finite and non-negative, a period that is a whole number of steps, the joints
    /// given one way (joint names are resolved when the world is built).
    fn controller(&self, at: &str, c: &ControllerSpec, dt: f64) -> Check {
        let period = match c {
            ControllerSpec::HoldPosture { robot, joints, kp, kd, period } => {
                for (key, x) in [("kp", kp), ("kd", kd)] {
                    if !(x.is_finite() && *x >= 0.0) {
                        return Err(self.err(&format!("{at}.{key}"), format!("must be finite and non-negative (found {x})")));
                    }
                }
                if robot.is_some() == joints.is_some() {
                    return Err(self.err(at, "give either `robot` (all its 1-dof joints) or `joints` (a list of names)"));
                }
                period
            }
            ControllerSpec::Trajectory { joints, period, .. } => {
                if joints.is_empty() {
                    return Err(self.err(&format!("{at}.joints"), "must name at least one joint (one per column after time)"));
                }
                period
            }
        };
        if let Some(p) = *period {
            let every = (p / dt).round();
            if !(p.is_finite() && every >= 1.0 && (every * dt - p).abs() <= 1e-9 * p.abs().max(dt)) {
                return Err(self.err(&format!("{at}.period"), format!("must be a positive whole number of time steps ({dt} s), found {p}")));
            }
        }
        Ok(())
    }

    /// Gains finite and non-negative, limits positive, the target finite.
    fn actuator(&self, at: &str, a: &ActuatorSpec) -> Check {
        for (key, x) in [("kp", a.kp), ("kd", a.kd)] {
            if !(x.is_finite() && x >= 0.0) {
                return Err(self.err(&format!("{at}.{key}"), format!("must be finite and non-negative (found {x})")));
            }
        }
        for (key, x) in [("effort_limit", a.effort_limit), ("velocity_limit", a.velocity_limit)] {
            if let Some(x) = x {
                if x.is_nan() || x <= 0.0 {
                    return Err(self.err(&format!("{at}.{key}"), format!("must be positive (found {x})")));
                }
            }
        }
        let finite = match &a.target {
            Target::Value(x) => x.is_finite(),
            Target::Sine { sine: s } => [s.amplitude, s.frequency, s.offset, s.phase].iter().all(|x| x.is_finite()),
            Target::Ramp { ramp: r } => {
                if r.duration.is_nan() || r.duration < 0.0 {
                    return Err(self.err(&format!("{at}.target.ramp.duration"), format!("must be non-negative (found {})", r.duration)));
                }
                [r.from, r.to, r.start, r.duration].iter().all(|x| x.is_finite())
            }
            Target::Table { .. } => true, // its numbers are checked when it is read
        };
        if !finite {
            return Err(self.err(&format!("{at}.target"), "must be finite"));
        }
        Ok(())
    }

    fn shape(&self, at: &str, s: &mut ShapeSpec, materials: &[String]) -> Check {
        self.pose(&format!("{at}.pose"), &mut s.pose)?;
        self.material_ref(&format!("{at}.material"), s.material.as_deref(), materials)?;
        match &s.geometry {
            Geometry::Sphere { radius } => self.size(&format!("{at}.radius"), *radius),
            Geometry::Box { half_extents } => {
                for (i, x) in half_extents.iter().enumerate() {
                    self.size(&format!("{at}.half_extents[{i}]"), *x)?;
                }
                Ok(())
            }
            Geometry::Capsule { radius, half_length } => {
                self.size(&format!("{at}.radius"), *radius)?;
                self.nonneg(&format!("{at}.half_length"), *half_length)?;
                self.within_extent(&format!("{at}.half_length"), *half_length)
            }
            Geometry::Cylinder { radius, half_length } | Geometry::Cone { radius, half_length } => {
                self.size(&format!("{at}.radius"), *radius)?;
                self.size(&format!("{at}.half_length"), *half_length)
            }
            Geometry::Plane => Ok(()),
            Geometry::ConvexMesh { file: Some(f), .. } | Geometry::TriMesh { file: Some(f), .. } => {
                // the file itself is read by the geometry step
                if f.scale.contains(&0.0) {
                    return Err(self.err(&format!("{at}.scale"), "scale factors must be non-zero"));
                }
                Ok(())
            }
            Geometry::ConvexMesh { vertices, file: None } => {
                crate::mesh::check_hull_points(vertices).map_err(|e| self.err(&format!("{at}.vertices"), e))
            }
            Geometry::TriMesh { vertices, triangles, file: None } => {
                for (t, tri) in triangles.iter().enumerate() {
                    if tri.iter().any(|&i| i as usize >= vertices.len()) {
                        let reason = format!("triangle indices must be below the vertex count {}", vertices.len());
                        return Err(self.err(&format!("{at}.triangles[{t}]"), reason));
                    }
                }
                Ok(())
            }
        }
    }
}

/// The most steps one run may take (10⁹: hours of wall time at the fastest step rates).
pub const MAX_STEPS: u64 = 1_000_000_000;

/// The steps `duration` seconds take at `dt`, rounded; an error when the duration is not a
/// finite non-negative number or the count exceeds [`MAX_STEPS`] (the count would otherwise
/// saturate and the run never end).
pub fn step_count(duration: f64, dt: f64) -> Result<u64, SimError> {
    if !(duration >= 0.0 && duration.is_finite()) {
        return Err(SimError::Input(format!("the duration must be a non-negative number of seconds (got {duration})")));
    }
    let n = (duration / dt).round();
    if n.is_nan() || n > MAX_STEPS as f64 {
        return Err(SimError::Input(format!(
            "a duration of {duration:e} s at dt = {dt:e} s is {n:.3e} steps, more than the {:e} one run may take \
             (shorten the duration or lengthen the time step)",
            MAX_STEPS as f64
        )));
    }
    Ok(n as u64)
}

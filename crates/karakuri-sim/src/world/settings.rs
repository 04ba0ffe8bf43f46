//! The world's settings changed while running (Springhead's `SetContactMode`,
//! `SetElasticity`; Choreonoid's gravity) and what the last step's motion reads as
//! accelerations (Choreonoid's `ddq`, `dv`, `dw`). Names are resolved and values checked here,
//! then the engine applies the change by index ([`Engine::change`]) and refreshes what it
//! derived from it: the caller never has to.

use karakuri::spatial::Vec3;

use super::World;
use crate::engine::Setting;
use crate::scene::validate::check_setting;
use crate::scene::{ContactMode, ContactParams, Material};
use crate::SimError;

impl World {
    /// Gravity now (m/s², world axes).
    pub fn gravity(&self) -> Vec3 {
        self.gravity
    }

    /// Sets gravity (m/s², world axes) from the next step on; refused (the world unchanged)
    /// when not finite or above the scene file's bound.
    pub fn set_gravity(&mut self, g: Vec3) -> Result<(), SimError> {
        check_setting("gravity", None, None, None, Some([g.x, g.y, g.z]))?;
        self.engine.change(&Setting::Gravity(g))?;
        self.gravity = g;
        Ok(())
    }

    /// The contact parameters now (the scene's `contact` block, then those set while running).
    pub fn contact_params(&self) -> &ContactParams {
        &self.contact
    }

    /// Sets the contact block's numbers (thresholds, `penetration_tolerance`,
    /// `error_correction_rate`, `prediction_distance`, `max_depenetration_speed`) from the next
    /// step on, checked as in a scene file. Its `mode` and `exclude_parent_child` must be the
    /// ones now: modes change through [`World::set_contact_mode`].
    pub fn set_contact_params(&mut self, c: ContactParams) -> Result<(), SimError> {
        check_setting("contact", Some(&c), None, None, None)?;
        if c.mode != self.contact.mode || c.exclude_parent_child != self.contact.exclude_parent_child {
            return Err(SimError::Input(
                "contact: mode and exclude_parent_child are the pair table's: set modes with set_contact_mode (pairs, groups, one body against all)".into(),
            ));
        }
        self.engine.change(&Setting::Contact(c.clone()))?;
        self.contact = c;
        Ok(())
    }

    /// Sets the contact mode of every pair of a body of group `a` with a body of group `b`
    /// from the next step on: `none`, `lcp` (the constraint model) or `penalty` (spring and
    /// damper). A name is a body (`robot/link` for a robot's link), a robot (all its links) or
    /// `*` (every body): `(["box"], ["*"])` is one body against all. Pairs the world never
    /// collides (shapes on one joint, `collision_exclude_pairs`, parent and child, links
    /// overlapping at load) stay off. Returns how many collision shape pairs it reached.
    pub fn set_contact_mode(&mut self, a: &[&str], b: &[&str], mode: ContactMode) -> Result<usize, SimError> {
        check_setting("mode", None, None, Some(mode), None)?;
        let (a, b) = (self.group(a)?, self.group(b)?);
        self.engine.change(&Setting::ContactMode { a, b, mode })
    }

    /// Sets the material (friction, restitution) of every collision shape of the named bodies
    /// (names as in [`World::set_contact_mode`]) from the next step on; a contact takes the
    /// mean of its two shapes' materials.
    pub fn set_material(&mut self, bodies: &[&str], material: Material) -> Result<(), SimError> {
        check_setting("material", None, Some(&material), None, None)?;
        let bodies = self.group(bodies)?;
        self.engine.change(&Setting::Material { bodies, material }).map(|_| ())
    }

    /// Turns robot `robot`'s self-collision (the pairs among its links) off or back on (as
    /// loaded, with the modes set since) from the next step on. Returns how many collision
    /// shape pairs it reached.
    pub fn set_self_collision(&mut self, robot: &str, on: bool) -> Result<usize, SimError> {
        let r = self.robots.iter().find(|r| r.name == robot).ok_or_else(|| {
            let known: Vec<&str> = self.robots.iter().map(|r| r.name.as_str()).collect();
            SimError::Input(format!("set_self_collision: no robot named '{robot}' (robots: {})", known.join(", ")))
        })?;
        let mut bodies = r.body.clone();
        bodies.sort_unstable();
        bodies.dedup();
        self.engine.change(&Setting::SelfCollision { bodies, on })
    }

    /// Body indices of names: a body, a robot's links, or every body (`*`).
    fn group(&self, names: &[&str]) -> Result<Vec<usize>, SimError> {
        let mut out = vec![];
        for &n in names {
            if n == "*" {
                out.extend(0..self.bodies.len());
            } else if let Some(b) = self.body_index(n) {
                out.push(b);
            } else if let Some(r) = self.robots.iter().find(|r| r.name == n) {
                out.extend(&r.body);
            } else {
                return Err(SimError::Input(format!("no body or robot named '{n}' (a name is a body, robot/link, a robot or *)")));
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// Each one-dof joint's acceleration over the last step, `(q̇⁺ − q̇)/dt` (rad/s² or m/s²),
    /// in the order of [`World::one_dof_joints`] (as many as `out` holds). This is the
    /// velocity change the step made, not a separate solve: with the native engine's
    /// semi-implicit step it is the acceleration solved at the step's start state
    /// (Choreonoid's `ddq`), contact impulses included. An error before the first step and
    /// after a restore (no step to difference).
    pub fn write_joint_accelerations(&self, out: &mut [f64]) -> Result<(), SimError> {
        self.require_step()?;
        let dt = self.engine.dt();
        for (k, o) in out.iter_mut().enumerate().take(self.prev_dq.len()) {
            *o = (self.engine.joint_state(k).dq - self.prev_dq[k]) / dt;
        }
        Ok(())
    }

    /// [`World::write_joint_accelerations`] of one joint by name.
    pub fn joint_acceleration(&self, joint: &str) -> Result<f64, SimError> {
        self.require_step()?;
        let k = self.layout.one_dof(joint)?;
        Ok((self.engine.joint_state(k).dq - self.prev_dq[k]) / self.engine.dt())
    }

    /// A body's acceleration over the last step (Choreonoid's `dv`, `dw`): the change of its
    /// frame origin's world velocity and of its angular velocity, divided by `dt` (m/s²,
    /// rad/s², world axes). A free-falling body reads gravity.
    pub fn body_acceleration(&self, body: &str) -> Result<(Vec3, Vec3), SimError> {
        self.require_step()?;
        let b = self.body_index(body).ok_or_else(|| SimError::Input(format!("no body named '{body}'")))?;
        let (now, before, dt) = (&self.states[b], &self.prev_states[b], self.engine.dt());
        Ok(((now.linear - before.linear) / dt, (now.angular - before.angular) / dt))
    }

    fn require_step(&self) -> Result<(), SimError> {
        if self.accel_ready {
            Ok(())
        } else {
            Err(SimError::Input("accelerations: no step taken since the world was built or restored".into()))
        }
    }
}

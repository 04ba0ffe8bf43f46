//! The solver's settings of a scene: the one place the scene's `engine` block becomes the
//! constraint solver's [`Settings`] (the solver, a lower layer, reads no scene type).

use crate::scene::{EngineParams, SolverKind};
use crate::solver::Settings;

/// The settings of the engine's solver: its sweep cap and tolerance, exact solves under
/// `solver: auto` and `newton`, the Newton solve of large robot islands under `solver: newton`.
pub fn solver_settings(e: &EngineParams) -> Settings {
    Settings {
        max_iterations: e.max_iterations,
        tolerance: e.tolerance,
        exact: e.solver != SolverKind::Pgs,
        direct_max_rows: e.direct_max_rows,
        newton: e.solver == SolverKind::Newton,
    }
}

/// The model's parts a runtime setting changes (`NativeEngine::change` hands them over from
/// its own copy of the model).
pub struct Changeable<'a> {
    /// The multibody model (its gravity).
    pub model: &'a mut karakuri::Model,
    /// The pair table and the shapes' materials.
    pub collider: &'a mut crate::collision::Collider,
    /// The contact parameters.
    pub contact: &'a mut crate::scene::ContactParams,
    /// The stage plan (its contact flags follow the pair table and the materials).
    pub plan: &'a mut super::plan::StagePlan,
    /// The world has loop closures (no impact passes).
    pub loops: bool,
}

/// Applies a setting to the model's parts and refreshes what they derive (the pair table,
/// the small world's pair list, the plan's contact flags); returns how many shape pairs a
/// mode or self-collision change reached. The caller refreshes the state's side (kinematic
/// terms, sleeping islands, buffers).
pub fn apply(p: Changeable, setting: &crate::engine::Setting) -> usize {
    use crate::engine::Setting;
    let reached = match setting {
        Setting::Gravity(g) => {
            p.model.gravity = karakuri::spatial::Motion::new(*g, karakuri::spatial::Vec3::zeros());
            0
        }
        Setting::ContactMode { a, b, mode } => p.collider.set_body_modes(a, b, *mode),
        Setting::Material { bodies, material } => {
            p.collider.set_body_material(bodies, *material);
            0
        }
        Setting::Contact(c) => {
            // the pair table keeps the modes: only the numbers change here
            let (mode, exclude) = (p.contact.mode, p.contact.exclude_parent_child);
            *p.contact = c.clone();
            p.contact.mode = mode;
            p.contact.exclude_parent_child = exclude;
            0
        }
        Setting::SelfCollision { bodies, on } => p.collider.set_self_collision(bodies, *on),
    };
    p.plan.refresh_contacts(p.collider, p.loops);
    reached
}

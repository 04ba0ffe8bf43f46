//! `<option>` (timestep, gravity, integrator, cone, impratio, contact flag) and `<keyframe>`
//! (completed as MuJoCo's compiler does: qpos0 where qpos is not written, zeros elsewhere).

use nalgebra::UnitQuaternion;

use super::bodies::{BodySpec, JointKind};
use super::types::{Integrator, Keyframe, SimOption};
use super::xml::{numbers, numbers_vec, Element};
use super::MjcfError;
use crate::spatial::Vec3;

const OPTION_ATTRS: &[&str] = &[
    "timestep", "gravity", "integrator", "cone", "impratio", "wind", "magnetic", "density", "viscosity", "o_margin",
    "o_solref", "o_solimp", "o_friction", "jacobian", "solver", "iterations", "tolerance", "ls_iterations",
    "ls_tolerance", "noslip_iterations", "noslip_tolerance", "ccd_iterations", "ccd_tolerance", "sdf_iterations",
    "sdf_initpoints", "actuatorgroupdisable", "apirate", "sleep_tolerance",
];

/// Every `<option>` applied in order over MuJoCo's defaults.
pub(super) fn option(root: &Element) -> Result<SimOption, MjcfError> {
    let mut o = SimOption {
        timestep: 0.002,
        gravity: Vec3::new(0.0, 0.0, -9.81),
        integrator: Integrator::Euler,
        elliptic_cone: false,
        impratio: 1.0,
        contact_disabled: false,
        filterparent_disabled: false,
    };
    let mut gravity_off = false;
    for e in root.children.iter().filter(|e| e.tag == "option") {
        e.check_attrs(OPTION_ATTRS)?;
        let one = |k: &str, t: &str| numbers::<1>(e, k, t).map(|v| v[0]);
        for (k, v) in &e.attrs {
            match k.as_str() {
                "timestep" => o.timestep = one(k, v)?,
                "gravity" => o.gravity = Vec3::from(numbers::<3>(e, k, v)?),
                "impratio" => o.impratio = one(k, v)?,
                "integrator" => {
                    o.integrator = match v.as_str() {
                        "Euler" => Integrator::Euler,
                        "RK4" => Integrator::Rk4,
                        "implicit" => Integrator::Implicit,
                        "implicitfast" => Integrator::ImplicitFast,
                        _ => return Err(e.error(format!("integrator must be Euler, RK4, implicit or implicitfast, not '{v}'"))),
                    }
                }
                "cone" => {
                    o.elliptic_cone = match v.as_str() {
                        "pyramidal" => false,
                        "elliptic" => true,
                        _ => return Err(e.error(format!("cone must be pyramidal or elliptic, not '{v}'"))),
                    }
                }
                _ => {}
            }
        }
        for f in e.children.iter().filter(|f| f.tag == "flag") {
            gravity_off |= f.attr("gravity") == Some("disable");
            o.contact_disabled |= f.attr("contact") == Some("disable");
            o.filterparent_disabled |= f.attr("filterparent") == Some("disable");
        }
    }
    if o.timestep <= 0.0 {
        return Err(root.error(format!("<option timestep> must be positive, not {}", o.timestep)));
    }
    if gravity_off {
        o.gravity = Vec3::zeros();
    }
    Ok(o)
}

/// MuJoCo's qpos0: each hinge's and slide's `ref`, identity quaternions for balls, a free
/// joint's body's written pose (position, quaternion `[w x y z]`); and where quaternions
/// start in qpos.
pub(super) fn qpos0(bodies: &[BodySpec]) -> (Vec<f64>, Vec<usize>) {
    let mut out = vec![];
    let mut quats = vec![];
    for b in bodies {
        for j in &b.joints {
            match j.kind {
                JointKind::Hinge | JointKind::Slide => out.push(j.reference),
                JointKind::Ball => {
                    quats.push(out.len());
                    out.extend([1.0, 0.0, 0.0, 0.0]);
                }
                JointKind::Free => {
                    quats.push(out.len() + 3);
                    let q = UnitQuaternion::from_matrix(&b.local.rotation);
                    out.extend(b.local.translation.iter());
                    out.extend([q.w, q.i, q.j, q.k]);
                }
            }
        }
    }
    (out, quats)
}

/// The `<key>`s of a `<keyframe>` (`start`: keys already read, for unnamed ones' names).
/// Quaternions (starting at `quats` in qpos) are normalised, as MuJoCo's compiler does.
pub(super) fn keyframes(e: &Element, (qpos0, quats): (&[f64], &[usize]), nv: usize, nu: usize, start: usize) -> Result<Vec<Keyframe>, MjcfError> {
    let mut out = vec![];
    for (i, k) in e.children.iter().enumerate() {
        if k.tag != "key" {
            return Err(k.error(format!("unknown element <{}> in <keyframe>", k.tag)));
        }
        k.check_attrs(&["name", "time", "qpos", "qvel", "act", "ctrl", "mpos", "mquat"])?;
        let vec_or = |attr: &str, n: usize, d: &[f64]| -> Result<Vec<f64>, MjcfError> {
            match k.attr(attr) {
                None => Ok(d.to_vec()),
                Some(t) => {
                    let v = numbers_vec(k, attr, t)?;
                    if v.len() != n {
                        return Err(k.error(format!("'{attr}' needs {n} numbers, found {}", v.len())));
                    }
                    Ok(v)
                }
            }
        };
        if k.attr("act").is_some() {
            return Err(k.error("'act' (actuator activations) is not supported: leave it out"));
        }
        let mut qpos = vec_or("qpos", qpos0.len(), qpos0)?;
        for &a in quats {
            let n = qpos[a..a + 4].iter().map(|x| x * x).sum::<f64>().sqrt();
            if n < 1e-14 {
                // MuJoCo's normalisation makes a zero quaternion the identity (aloha_pot's keyframe)
                qpos[a..a + 4].copy_from_slice(&[1.0, 0.0, 0.0, 0.0]);
                continue;
            }
            qpos[a..a + 4].iter_mut().for_each(|x| *x /= n);
        }
        out.push(Keyframe {
            name: k.attr("name").map(str::to_string).unwrap_or_else(|| format!("key{}", start + i)),
            time: k.attr("time").map(|t| numbers::<1>(k, "time", t).map(|v| v[0])).transpose()?.unwrap_or(0.0),
            qpos,
            qvel: vec_or("qvel", nv, &vec![0.0; nv])?,
            ctrl: vec_or("ctrl", nu, &vec![0.0; nu])?,
        });
    }
    Ok(out)
}

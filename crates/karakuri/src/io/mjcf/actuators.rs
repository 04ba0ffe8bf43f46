//! `<tendon>` (fixed tendons only) and `<actuator>`: the shortcuts compiled to MuJoCo's
//! general actuator as its XML reader does (xml_native_reader.cc `OneActuator`):
//! `motor` gain 1, no bias; `position` gain kp, bias (0, -kp, -kv); `velocity` gain kv, bias
//! (0, 0, -kv); `damper` affine gain (0, 0, -kv); `general` as written (fixed or affine gain,
//! none or affine bias). Defaults: one actuator default per class, shared by the shortcuts.

use super::bodies::limited_range;
use super::defaults::{Compiler, Defaults, Resolved};
use super::types::{Actuator, ActuatorDynamics, FixedTendon, SpatialTendon, Transmission};
use super::names::Names;
use super::xml::{numbers, Element};
use super::MjcfError;

/// The fixed and spatial tendons of a `<tendon>` section (`first`: how many were read before,
/// for unnamed ones' names); a spatial tendon passes through sites only (wrapping around geoms
/// and pulleys are refused).
pub(super) fn tendons(
    e: &Element,
    names: &Names,
    defaults: &Defaults,
    c: &Compiler,
    first: usize,
) -> Result<(Vec<FixedTendon>, Vec<SpatialTendon>), MjcfError> {
    let (mut fixed, mut spatial) = (vec![], vec![]);
    for t in &e.children {
        if t.tag != "fixed" && t.tag != "spatial" {
            return Err(t.error(format!("unknown element <{}> in <tendon>", t.tag)));
        }
        let r = Resolved::new(t, t.attr("class").unwrap_or("main"), defaults)?;
        let name = t.attr("name").map(str::to_string).unwrap_or_else(|| format!("tendon{}", first + fixed.len() + spatial.len()));
        let range = limited_range(t, r.get("limited"), r.get("range"), "range", c)?;
        if t.tag == "spatial" {
            let mut sites = vec![];
            for s in &t.children {
                if s.tag != "site" {
                    return Err(s.error(format!(
                        "<{}> in a spatial tendon is not supported (wrapping around geoms, pulleys): only straight segments between <site>s; or use a <fixed> tendon if it couples joints linearly",
                        s.tag
                    )));
                }
                sites.push(Names::find(s, "site", &names.sites, "site")?);
            }
            if sites.len() < 2 {
                return Err(t.error("a spatial tendon needs at least two <site>s (or use a <fixed> tendon)"));
            }
            let (stiffness, damping, frictionloss) = (r.num("stiffness", 0.0)?, r.num("damping", 0.0)?, r.num("frictionloss", 0.0)?);
            spatial.push(SpatialTendon { name, sites, range, stiffness, damping, frictionloss });
            continue;
        }
        let mut joints = vec![];
        for j in &t.children {
            if j.tag != "joint" {
                return Err(j.error(format!("unknown element <{}> in <fixed>", j.tag)));
            }
            let coef = numbers::<1>(j, "coef", j.attr("coef").unwrap_or("1"))?[0];
            joints.push((Names::find(j, "joint", &names.joints, "joint")?, coef));
        }
        fixed.push(FixedTendon {
            name,
            joints,
            range,
            stiffness: r.num("stiffness", 0.0)?,
            springlength: r.filled("springlength", [-1.0, -1.0])?[0],
            damping: r.num("damping", 0.0)?,
            frictionloss: r.num("frictionloss", 0.0)?,
        });
    }
    Ok((fixed, spatial))
}

/// The actuators of an `<actuator>` section (`first`: how many were read before).
pub(super) fn actuators(e: &Element, names: &Names, defaults: &Defaults, c: &Compiler, first: usize) -> Result<Vec<Actuator>, MjcfError> {
    let mut out = vec![];
    for a in &e.children {
        out.push(actuator(a, names, defaults, c, first + out.len())?);
    }
    Ok(out)
}

fn actuator(a: &Element, names: &Names, defaults: &Defaults, c: &Compiler, index: usize) -> Result<Actuator, MjcfError> {
    match a.tag.as_str() {
        "motor" | "position" | "velocity" | "general" | "damper" => {}
        "muscle" => return Err(a.error("muscle actuators are not supported: use <general> or <motor> on the joint or tendon")),
        "cylinder" | "adhesion" | "intvelocity" | "dcmotor" | "plugin" => {
            return Err(a.error(format!("<{}> actuators are not supported: use <motor>, <position>, <velocity> or <general>", a.tag)))
        }
        other => return Err(a.error(format!("unknown element <{other}> in <actuator>"))),
    }
    let r = Resolved::new(a, a.attr("class").unwrap_or("main"), defaults)?;
    let transmission = transmission(a, &r, names)?;
    let (gain_affine, gainprm, bias_affine, biasprm) = gain_and_bias(a, &r)?;
    let dynamics = match r.get("dyntype").unwrap_or("none") {
        "none" => None,
        "integrator" => Some(ActuatorDynamics::Integrator),
        t @ ("filter" | "filterexact") => {
            Some(ActuatorDynamics::Filter { tau: r.filled("dynprm", [1.0; 3])?[0], exact: t == "filterexact" })
        }
        t => return Err(a.error(format!("dyntype '{t}' is not supported (none, integrator, filter, filterexact)"))),
    };
    let dynamics = match (a.tag.as_str(), r.num("timeconst", 0.0)?) {
        ("position", tau) if tau > 0.0 => Some(ActuatorDynamics::Filter { tau, exact: true }),
        _ => dynamics,
    };
    Ok(Actuator {
        name: a.attr("name").map(str::to_string).unwrap_or_else(|| format!("actuator{index}")),
        kind: a.tag.clone(),
        transmission,
        dynamics,
        gear: r.filled("gear", [1.0, 0.0, 0.0, 0.0, 0.0, 0.0])?,
        gain_affine,
        gainprm,
        bias_affine,
        biasprm,
        ctrlrange: limited_range(a, r.get("ctrllimited"), r.get("ctrlrange"), "ctrlrange", c)?,
        forcerange: limited_range(a, r.get("forcelimited"), r.get("forcerange"), "forcerange", c)?,
        actrange: limited_range(a, r.get("actlimited"), r.get("actrange"), "actrange", c)?,
        actearly: r.get("actearly") == Some("true"),
    })
}

fn transmission(a: &Element, r: &Resolved, names: &Names) -> Result<Transmission, MjcfError> {
    let written: Vec<&str> = ["joint", "tendon", "site", "jointinparent", "body", "cranksite"].into_iter().filter(|k| r.get(k).is_some()).collect();
    match written.as_slice() {
        ["joint"] => Ok(Transmission::Joint(Names::find(a, "joint", &names.joints, "joint")?)),
        ["tendon"] => Ok(Transmission::Tendon(Names::find(a, "tendon", &names.tendons, "fixed tendon")?)),
        ["site"] => Ok(Transmission::Site {
            site: Names::find(a, "site", &names.sites, "site")?,
            refsite: match a.attr("refsite") {
                Some(_) => Some(Names::find(a, "refsite", &names.sites, "site")?),
                None => None,
            },
        }),
        [] => Err(a.error("an actuator needs a joint, tendon or site")),
        [one] => Err(a.error(format!("'{one}' transmissions are not supported: use a joint, fixed tendon or site"))),
        _ => Err(a.error(format!("several transmissions given ({}): write one", written.join(", ")))),
    }
}

/// (gain affine, gainprm, bias affine, biasprm) of a shortcut or a general actuator.
fn gain_and_bias(a: &Element, r: &Resolved) -> Result<(bool, [f64; 3], bool, [f64; 3]), MjcfError> {
    let num = |k: &str, d: f64| r.num(k, d);
    Ok(match a.tag.as_str() {
        "motor" => (false, [1.0, 0.0, 0.0], false, [0.0; 3]),
        "position" => {
            if r.get("dampratio").is_some() {
                return Err(a.error("dampratio is not supported: give kv (the damping gain) instead"));
            }
            let (kp, kv) = (num("kp", 1.0)?, num("kv", 0.0)?);
            (false, [kp, 0.0, 0.0], true, [0.0, -kp, -kv])
        }
        "velocity" => {
            let kv = num("kv", 1.0)?;
            (false, [kv, 0.0, 0.0], true, [0.0, 0.0, -kv])
        }
        "damper" => (true, [0.0, 0.0, -num("kv", 1.0)?], false, [0.0; 3]),
        _ => {
            let affine = |k: &str| match r.get(k).unwrap_or(if k == "gaintype" { "fixed" } else { "none" }) {
                "fixed" | "none" => Ok(false),
                "affine" => Ok(true),
                t => Err(a.error(format!("{k} '{t}' is not supported (fixed/none or affine)"))),
            };
            let g: [f64; 10] = r.filled("gainprm", [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])?;
            let b: [f64; 10] = r.filled("biasprm", [0.0; 10])?;
            (affine("gaintype")?, [g[0], g[1], g[2]], affine("biastype")?, [b[0], b[1], b[2]])
        }
    })
}

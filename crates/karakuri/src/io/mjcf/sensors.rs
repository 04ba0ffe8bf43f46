//! `<sensor>`: the kinds a simulator of rigid bodies reads ([`SensorKind`]); the others
//! (tendon, subtree, rangefinder, user, plugin, ...) are left out with a warning naming them.

use super::types::{Sensor, SensorKind};
use super::names::Names;
use super::xml::{numbers, Element};
use super::MjcfError;

/// The sensors of a `<sensor>` section; unsupported ones are named in `warnings`.
pub(super) fn sensors(e: &Element, names: &Names, warnings: &mut Vec<String>) -> Result<Vec<Sensor>, MjcfError> {
    let mut out = vec![];
    for (i, s) in e.children.iter().enumerate() {
        let site = || Names::find(s, "site", &names.sites, "site");
        let kind = match s.tag.as_str() {
            "accelerometer" => SensorKind::Accelerometer(site()?),
            "gyro" => SensorKind::Gyro(site()?),
            "velocimeter" => SensorKind::Velocimeter(site()?),
            "force" => SensorKind::Force(site()?),
            "torque" => SensorKind::Torque(site()?),
            "touch" => SensorKind::Touch(site()?),
            "jointpos" => SensorKind::JointPos(Names::find(s, "joint", &names.joints, "joint")?),
            "jointvel" => SensorKind::JointVel(Names::find(s, "joint", &names.joints, "joint")?),
            "actuatorfrc" => SensorKind::ActuatorFrc(Names::find(s, "actuator", &names.actuators, "actuator")?),
            "framepos" | "framequat" | "framelinvel" | "frameangvel" => frame_sensor(s, names)?,
            other => {
                let name = s.attr("name").unwrap_or("(unnamed)");
                warnings.push(format!("{}:{}: <{other}> sensor '{name}' is not simulated: left out", s.file, s.line));
                continue;
            }
        };
        let one = |k: &str| s.attr(k).map(|t| numbers::<1>(s, k, t).map(|v| v[0])).transpose();
        out.push(Sensor {
            name: s.attr("name").map(str::to_string).unwrap_or_else(|| format!("sensor{i}")),
            kind,
            noise: one("noise")?.unwrap_or(0.0),
            cutoff: one("cutoff")?.unwrap_or(0.0),
        });
    }
    Ok(out)
}

fn frame_sensor(s: &Element, names: &Names) -> Result<SensorKind, MjcfError> {
    let object = |typ: &str, attr: &str| -> Result<(String, usize), MjcfError> {
        let id = match typ {
            "body" | "xbody" => Names::find(s, attr, &names.bodies, "body")?,
            "site" => Names::find(s, attr, &names.sites, "site")?,
            "geom" => names.geom(s, attr)?,
            t => return Err(s.error(format!("frame sensors read a body, xbody, site or geom, not a '{t}'"))),
        };
        Ok((typ.to_string(), id))
    };
    let typ = s.attr("objtype").ok_or_else(|| s.error("a frame sensor needs 'objtype'"))?;
    let reference = match s.attr("reftype") {
        Some(t) if s.attr("refname").is_some() => Some(object(t, "refname")?),
        _ => None,
    };
    Ok(SensorKind::Frame { which: s.tag.clone(), object: object(typ, "objname")?, reference })
}

//! `<equality>` (connect, weld, joint) and `<contact>` (pair, exclude), defaults applied
//! (`<default><equality>`, `<default><pair>`).

use super::defaults::{Defaults, Resolved};
use super::geoms::{SOLIMP, SOLREF};
use super::orient::quat_wxyz;
use super::types::{ContactPair, Equality, EqualityKind, MjcfWorld};
use super::names::Names;
use super::xml::{numbers, Element};
use super::MjcfError;
use crate::spatial::{Se3, Vec3};

/// The constraints of an `<equality>` section.
pub(super) fn equalities(e: &Element, names: &Names, defaults: &Defaults) -> Result<Vec<Equality>, MjcfError> {
    let mut out = vec![];
    for q in &e.children {
        // MuJoCo keeps one equality default per class, whatever the kind
        let keyed = Element { tag: "equality".into(), ..q.clone() };
        let r = Resolved::new(&keyed, q.attr("class").unwrap_or("main"), defaults)?;
        let body = |a: &str| Names::find(q, a, &names.bodies, "body");
        let body2 = || if q.attr("body2").is_some() { body("body2") } else { Ok(0) };
        let kind = match q.tag.as_str() {
            "connect" => {
                if q.attr("site1").is_some() {
                    return Err(q.error("connect by sites is not supported: give body1, body2 and anchor"));
                }
                let anchor = Vec3::from(numbers::<3>(q, "anchor", r.get("anchor").unwrap_or("0 0 0"))?);
                EqualityKind::Connect { body1: body("body1")?, body2: body2()?, anchor }
            }
            "weld" => {
                if q.attr("site1").is_some() {
                    return Err(q.error("weld by sites is not supported: give body1 and body2"));
                }
                let relpose = match r.get("relpose") {
                    Some(t) => {
                        let p = numbers::<7>(q, "relpose", t)?;
                        let zero = p[3..].iter().all(|x| *x == 0.0);
                        (!zero).then(|| Se3::new(quat_wxyz([p[3], p[4], p[5], p[6]]), Vec3::new(p[0], p[1], p[2])))
                    }
                    None => None,
                };
                EqualityKind::Weld { body1: body("body1")?, body2: body2()?, relpose, torquescale: r.num("torquescale", 1.0)? }
            }
            "joint" => EqualityKind::Joint {
                joint1: Names::find(q, "joint1", &names.joints, "joint")?,
                joint2: match q.attr("joint2") {
                    Some(_) => Some(Names::find(q, "joint2", &names.joints, "joint")?),
                    None => None,
                },
                polycoef: r.filled("polycoef", [0.0, 1.0, 0.0, 0.0, 0.0])?,
            },
            "tendon" => EqualityKind::Tendon {
                tendon1: Names::find(q, "tendon1", &names.tendons, "fixed tendon")?,
                tendon2: match q.attr("tendon2") {
                    Some(_) => Some(Names::find(q, "tendon2", &names.tendons, "fixed tendon")?),
                    None => None,
                },
                polycoef: r.filled("polycoef", [0.0, 1.0, 0.0, 0.0, 0.0])?,
            },
            "flex" | "flexvert" | "flexstrain" => return Err(q.error("flex equality constraints are not supported")),
            other => return Err(q.error(format!("unknown element <{other}> in <equality>"))),
        };
        out.push(Equality {
            name: q.attr("name").map(str::to_string),
            kind,
            active: r.get("active").unwrap_or("true") == "true",
            solref: r.filled("solref", SOLREF)?,
            solimp: r.filled("solimp", SOLIMP)?,
        });
    }
    Ok(out)
}

/// A `<contact>` section's pairs and excludes, added to `world` (geoms must be read).
pub(super) fn contact(e: &Element, names: &Names, defaults: &Defaults, world: &mut MjcfWorld) -> Result<(), MjcfError> {
    for p in &e.children {
        match p.tag.as_str() {
            "exclude" => {
                let b1 = Names::find(p, "body1", &names.bodies, "body")?;
                let b2 = Names::find(p, "body2", &names.bodies, "body")?;
                world.contact_excludes.push((b1, b2));
            }
            "pair" => {
                let r = Resolved::new(p, p.attr("class").unwrap_or("main"), defaults)?;
                let (g1, g2) = (names.geom(p, "geom1")?, names.geom(p, "geom2")?);
                let (a, b) = (&world.geoms[g1], &world.geoms[g2]);
                // unspecified: the geoms' maxima (MuJoCo's mjCPair::Compile)
                let f = [a.friction[0].max(b.friction[0]), a.friction[1].max(b.friction[1]), a.friction[2].max(b.friction[2])];
                let condim = r.num("condim", a.condim.max(b.condim) as f64)?;
                if ![1.0, 3.0, 4.0, 6.0].contains(&condim) {
                    return Err(p.error(format!("condim must be 1, 3, 4 or 6, not {condim}")));
                }
                world.contact_pairs.push(ContactPair {
                    geoms: (g1, g2),
                    condim: condim as u8,
                    // written (here or in a class): over MuJoCo's pair default
                    friction: if r.chain("friction").is_empty() {
                        [f[0], f[0], f[1], f[2], f[2]]
                    } else {
                        r.filled("friction", [1.0, 1.0, 0.005, 0.0001, 0.0001])?
                    },
                    solref: r.filled("solref", SOLREF)?,
                    solimp: r.filled("solimp", SOLIMP)?,
                    margin: r.num("margin", a.margin.max(b.margin))?,
                    gap: r.num("gap", a.gap.max(b.gap))?,
                });
            }
            other => return Err(p.error(format!("unknown element <{other}> in <contact>"))),
        }
    }
    Ok(())
}

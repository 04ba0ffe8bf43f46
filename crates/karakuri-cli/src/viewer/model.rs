//! The model page of `karakuri view`: a URDF's (or an MJCF file's) links, a slider per 1-dof joint (the page does
//! the forward kinematics), link frames and equivalent inertia boxes.

use std::path::{Path, PathBuf};

use karakuri::io::urdf::{self, LoadOptions, Root};
use karakuri::model::{FrameKind, JointType, Model};
use karakuri::spatial::{quat_to_xyzw, Se3};
use serde_json::{json, Value};

use karakuri_viewer::looks::{pose7, MeshTable, RobotLooks};
use karakuri_sim::scene::RobotCollision;

/// The page data of a URDF model (see `assets/viewer/viewer.js`); `package_dirs` are searched
/// first for `package://` meshes.
pub fn page_data(path: &Path, floating: bool, package_dirs: &[PathBuf]) -> anyhow::Result<Value> {
    let opts = LoadOptions {
        root: if floating { Root::FreeFlyer } else { Root::Fixed },
        package_dirs: package_dirs.to_vec(),
    };
    let (model, geometry) = if crate::mjcf::is_mjcf(path) { crate::mjcf::load(path, floating)? } else { urdf::load_with(path, &opts)? };
    let mut meshes = MeshTable::default();
    let looks = RobotLooks {
        label: path.display().to_string(),
        model: &model,
        geometry: &geometry,
        extra: &[],
        collision: RobotCollision::Urdf,
    };
    let shapes = looks.shapes(&mut meshes);
    let joints: Vec<Value> = (0..model.njoints).map(|j| joint(&model, j)).collect();
    let bodies: Vec<Value> = shapes
        .into_iter()
        .enumerate()
        .map(|(j, s)| {
            json!({
                "name": model.body_names[j],
                "joint": j,
                "shapes": s,
                "inertia": inertia_box(&model, j),
            })
        })
        .collect();
    let frames: Vec<Value> = model
        .frames
        .iter()
        .filter(|f| f.kind == FrameKind::Body)
        .map(|f| json!({"name": f.name, "joint": f.parent_joint.0, "pose": pose7(&f.placement)}))
        .collect();
    let mass: f64 = model.inertias.iter().map(|i| i.mass).sum();
    let mut notes = meshes.notes;
    notes.extend(geometry.warnings.iter().cloned());
    notes.sort();
    notes.dedup();
    let name = path
        .file_name()
        .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into());
    Ok(json!({
        "kind": "model",
        "title": format!("{} ({})", model.name, name),
        "summary": format!(
            "{}: {} joints, nq = {}, nv = {}, total mass {:.3} kg, {} base",
            path.display(), model.njoints - 1, model.nq, model.nv, mass,
            if floating { "floating" } else { "fixed" }
        ),
        "joints": joints,
        "bodies": bodies,
        "frames": frames,
        "meshes": meshes.meshes,
        "notes": notes,
    }))
}

/// `{name, parent, type, axis, placement, lo, hi}` of joint `j`; the page moves 1-dof joints.
fn joint(m: &Model, j: usize) -> Value {
    let (kind, axis) = match m.joint_types[j] {
        JointType::Revolute { axis } | JointType::RevoluteUnbounded { axis } => ("revolute", Some(axis.vector())),
        JointType::Prismatic { axis } => ("prismatic", Some(axis.vector())),
        JointType::Universe => ("universe", None),
        JointType::FreeFlyer => ("free", None),
        JointType::Spherical => ("spherical", None),
        JointType::Planar => ("planar", None),
    };
    let (lo, hi) = if m.nqs[j] == 1 {
        let iq = m.idx_q[j];
        let (lo, hi) = (m.lower_position_limit[iq], m.upper_position_limit[iq]);
        let unbounded = matches!(m.joint_types[j], JointType::RevoluteUnbounded { .. });
        let default = if kind == "prismatic" { 0.5 } else { std::f64::consts::PI };
        (
            if lo.is_finite() && !unbounded { lo } else { -default },
            if hi.is_finite() && !unbounded { hi } else { default },
        )
    } else {
        (0.0, 0.0)
    };
    json!({
        "name": m.joint_names[j],
        "parent": if j == 0 { -1 } else { m.parents[j] as i64 },
        "type": kind,
        "axis": axis.map(|a| [a.x, a.y, a.z]),
        "placement": pose7(&m.joint_placements[j]),
        "lo": lo,
        "hi": hi,
    })
}

/// The uniform box with body `j`'s mass and rotational inertia: principal axes `R`, sides
/// `a² = 6 (I₂ + I₃ − I₁) / m` (clamped at 0 for inertias that break the triangle inequality).
fn inertia_box(m: &Model, j: usize) -> Value {
    let i = &m.inertias[j];
    if i.mass <= 0.0 {
        return Value::Null;
    }
    let eig = nalgebra::SymmetricEigen::new(i.inertia_com);
    let mut r = eig.eigenvectors;
    if r.determinant() < 0.0 {
        r.column_mut(2).neg_mut();
    }
    let d = eig.eigenvalues;
    let side = |a: usize, b: usize, c: usize| (6.0 * (d[b] + d[c] - d[a]) / i.mass).max(0.0).sqrt();
    let half = [side(0, 1, 2) / 2.0, side(1, 2, 0) / 2.0, side(2, 0, 1) / 2.0];
    let q = quat_to_xyzw(&r);
    json!({
        "mass": i.mass,
        "half": half,
        "pose": pose7(&Se3::new(karakuri::spatial::quat_from_xyzw(&q), i.com)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uniform_box_gives_back_its_sides() {
        // a 2 kg box of sides 0.2, 0.4, 0.6, rotated: the equivalent box is itself
        let (m, s) = (2.0, [0.2f64, 0.4, 0.6]);
        let diag = karakuri::spatial::Mat3::from_diagonal(&karakuri::spatial::Vec3::new(
            m * (s[1] * s[1] + s[2] * s[2]) / 12.0,
            m * (s[0] * s[0] + s[2] * s[2]) / 12.0,
            m * (s[0] * s[0] + s[1] * s[1]) / 12.0,
        ));
        let r = karakuri::spatial::rotation_about(&karakuri::spatial::Vec3::new(1.0, 2.0, 3.0).normalize(), 0.7);
        let mut b = karakuri::model::ModelBuilder::new("box");
        let jt = JointType::Revolute {
            axis: karakuri::model::Axis::Z,
        };
        let j = b
            .add_joint(karakuri::model::JointId::UNIVERSE, "j", jt, Se3::identity())
            .unwrap();
        b.add_body(
            j,
            "b",
            karakuri::spatial::Inertia::new(m, karakuri::spatial::Vec3::zeros(), r * diag * r.transpose()),
        )
        .unwrap();
        let model = b.build().unwrap();
        let v = inertia_box(&model, 1);
        let mut half: Vec<f64> = v["half"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        half.sort_by(f64::total_cmp);
        for (h, s) in half.iter().zip(s) {
            assert!((h - s / 2.0).abs() < 1e-9, "{half:?}");
        }
    }
}

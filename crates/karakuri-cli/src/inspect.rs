//! `karakuri inspect`: the tree of a model (URDF, or MJCF by its `.xml` / `.mjcf` extension).

use anyhow::Result;
use karakuri::io::urdf::Root;
use std::path::Path;
use std::process::ExitCode;

pub fn run(path: &Path, floating: bool) -> Result<ExitCode> {
    let root = if floating { Root::FreeFlyer } else { Root::Fixed };
    let model = if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("body")) {
        crate::load_body(path)?
    } else if crate::mjcf::is_mjcf(path) {
        crate::mjcf::load(path, floating)?.0
    } else {
        crate::load_urdf(path, root)?
    };
    println!("model {}: nq = {}, nv = {}, joints = {} (+ universe), frames = {}, total mass = {:.6} kg",
        model.name, model.nq, model.nv, model.njoints - 1, model.frames.len(), model.total_mass());
    println!("{:<40} {:<22} {:>5} {:>5} {:>10}  body", "joint", "type", "q", "v", "mass");
    print_subtree(&model, 0, 0);
    Ok(ExitCode::SUCCESS)
}

fn print_subtree(model: &karakuri::Model, joint: usize, depth: usize) {
    for &c in &model.children[joint] {
        let name = format!("{}{}", "  ".repeat(depth), model.joint_names[c]);
        let q = range(model.idx_q[c], model.nqs[c]);
        let v = range(model.idx_v[c], model.nvs[c]);
        println!("{:<40} {:<22} {:>5} {:>5} {:>10.4}  {}", name, model.joint_types[c].short_name(), q, v,
            model.inertias[c].mass, model.body_names[c]);
        print_subtree(model, c, depth + 1);
    }
}

fn range(start: usize, n: usize) -> String {
    if n == 1 { format!("{start}") } else { format!("{}..{}", start, start + n) }
}

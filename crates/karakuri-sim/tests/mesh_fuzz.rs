//! Seeded mutation testing of the mesh reader (`karakuri_sim::mesh::parse`, mesh-loader
//! underneath) and of MuJoCo's mesh mass properties on what it reads: every mesh file of
//! `tests/data/meshes` (STL binary and ASCII, OBJ, COLLADA) is mutated as bytes (bits flipped,
//! spans deleted, repeated or truncated, tokens such as `nan`, `1e999`, `-1`, `<` inserted) and
//! must be read or refused without a panic; what is read has finite vertices and faces that
//! name existing vertices, and its mass properties are an error or finite.
//!
//! mesh-loader 0.1.13's COLLADA reader panics on some broken files (a dangling `#id`, which
//! `mesh::parse` now refuses first; `<p>` indices past their arrays, which it catches): 22 of
//! 152 213 inputs in 30 s reached such a panic, each turned into the file's error.
//!
//! Runs for `KARAKURI_FUZZ_SECS` seconds (default 10) from `KARAKURI_FUZZ_SEED` (default
//! fixed); a failing input is written to `target/mesh-fuzz/` and named in the failure.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use karakuri::algorithms::SplitMix64;
use karakuri::io::mjcf::mesh_inertia::{mesh_mass, MeshInertia};
use karakuri_sim::mesh;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn seeds() -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = vec![];
    let mut dirs = vec![repo_root().join("tests/data/meshes")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let ext = p.extension().and_then(|x| x.to_str()).map(str::to_ascii_lowercase);
            if p.is_dir() {
                dirs.push(p);
            } else if matches!(ext.as_deref(), Some("stl" | "obj" | "dae")) {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn mutate(bytes: &[u8], rng: &mut SplitMix64) -> Vec<u8> {
    let mut b = bytes.to_vec();
    for _ in 0..1 + rng.next_u64() % 4 {
        let n = b.len().max(1);
        let at = rng.next_u64() as usize % n;
        let len = (1 + rng.next_u64() as usize % 64).min(b.len().saturating_sub(at));
        match rng.next_u64() % 6 {
            0 if !b.is_empty() => b[at] ^= 1 << (rng.next_u64() % 8),
            1 => {
                b.drain(at..at + len);
            }
            2 => {
                let span: Vec<u8> = b[at..at + len].to_vec();
                b.splice(at..at, span);
            }
            3 => b.truncate(at),
            4 => {
                const TOKENS: [&[u8]; 9] = [b"nan", b"1e999", b"-1", b"<", b" 4294967295", b"f 0 0 0\n", b"facet", b"\0\0\0\xff", b"</p>"];
                let t = TOKENS[rng.next_u64() as usize % TOKENS.len()];
                b.splice(at.min(b.len())..at.min(b.len()), t.iter().copied());
            }
            _ if b.len() >= 84 => {
                // a binary STL's triangle count
                let k = 80 + rng.next_u64() as usize % 4;
                b[k] = rng.next_u64() as u8;
            }
            _ => {}
        }
    }
    b
}

/// What is wrong with reading `bytes` as `name`, if anything.
fn check(bytes: &[u8], name: &Path) -> Result<(), String> {
    let read = std::panic::catch_unwind(|| mesh::parse(bytes, name)).map_err(|_| "the reader panicked".to_string())?;
    let Ok(m) = read else { return Ok(()) };
    if m.vertices.iter().flatten().any(|x| !x.is_finite()) {
        return Err("a vertex is not finite".into());
    }
    if m.triangles.iter().flatten().any(|&i| i as usize >= m.vertices.len()) {
        return Err("a face names a missing vertex".into());
    }
    for kind in [MeshInertia::Legacy, MeshInertia::Exact, MeshInertia::Shell] {
        let mass = std::panic::catch_unwind(|| mesh_mass(&m.vertices, &m.triangles, None, kind)).map_err(|_| format!("mesh_mass({kind:?}) panicked"))?;
        if let Ok(p) = mass {
            if !(p.volume.is_finite() && p.com.iter().all(|x| x.is_finite()) && p.inertia.iter().all(|x| x.is_finite())) {
                return Err(format!("mesh_mass({kind:?}) is not finite: {p:?}"));
            }
        }
    }
    Ok(())
}

#[test]
fn mutated_mesh_files_are_read_or_refused_cleanly() {
    let secs = env_u64("KARAKURI_FUZZ_SECS", 10);
    let mut rng = SplitMix64::new(env_u64("KARAKURI_FUZZ_SEED", 0x3E5));
    let seeds = seeds();
    assert!(seeds.len() >= 5, "the seed meshes are missing");
    std::panic::set_hook(Box::new(|_| {}));
    let start = Instant::now();
    let (mut runs, mut failures) = (0u64, vec![]);
    while start.elapsed() < Duration::from_secs(secs) || runs < seeds.len() as u64 {
        let (path, bytes) = &seeds[runs as usize % seeds.len()];
        let input = if runs < seeds.len() as u64 { bytes.clone() } else { mutate(bytes, &mut rng) };
        if let Err(why) = check(&input, path) {
            let dir = repo_root().join("target/mesh-fuzz");
            std::fs::create_dir_all(&dir).unwrap();
            let out = dir.join(format!("{runs}-{}", path.file_name().unwrap().to_string_lossy()));
            std::fs::write(&out, &input).unwrap();
            failures.push(format!("{}: {why}", out.display()));
            if failures.len() >= 5 {
                break;
            }
        }
        runs += 1;
    }
    let _ = std::panic::take_hook();
    println!("{runs} inputs");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

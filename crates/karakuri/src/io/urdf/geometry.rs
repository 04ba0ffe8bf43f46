//! Locating mesh files: `package://`, `file://`, absolute and relative paths.
//!
//! `package://NAME/rest` is looked up, in this order (the first file that exists wins):
//! 1. in each given package directory `D` (then each entry of `ROS_PACKAGE_PATH`): `D/NAME/rest`,
//!    and `D/rest` when `D` is itself named `NAME`;
//! 2. in the URDF file's directory and its ancestors, nearest first: an ancestor `A` named
//!    `NAME` gives `A/rest`, a directory `A/NAME` gives `A/NAME/rest` (a URDF inside its own
//!    package, `NAME/urdf/robot.urdf`, or beside it, as ROS and example-robot-data lay them out).
//!
//! `package:///rest` (three slashes: an empty package name, as in example-robot-data's TALOS) is
//! read as Pinocchio reads it: Pinocchio joins each package directory with everything after
//! `package://`, so the rest is a path relative to a package directory, `D/rest` (ROS's
//! resource_retriever refuses the empty name). Then, as above, each ancestor `A` of the URDF's
//! directory gives `A/rest`, nearest first.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::Shape;

/// Resolves mesh file names to candidate paths (never reads the meshes).
pub(super) struct MeshResolver {
    /// Directory of the URDF file, for relative paths.
    base_dir: Option<PathBuf>,
    /// The given package directories, then `ROS_PACKAGE_PATH`'s entries.
    package_dirs: Vec<PathBuf>,
    /// The URDF file's directory (made absolute) and its ancestors, nearest first.
    ancestors: Vec<PathBuf>,
    /// Per package name, the directories named so among `ancestors` or their children, in the
    /// order of `ancestors` (looked up once per name).
    ancestor_packages: BTreeMap<String, Vec<PathBuf>>,
}

impl MeshResolver {
    pub(super) fn new(base_dir: Option<&Path>, package_dirs: &[PathBuf]) -> Self {
        let mut dirs = package_dirs.to_vec();
        if let Some(ros) = std::env::var_os("ROS_PACKAGE_PATH") {
            dirs.extend(std::env::split_paths(&ros).filter(|p| !p.as_os_str().is_empty()));
        }
        let ancestors = base_dir
            .and_then(|d| std::path::absolute(d).ok())
            .map(|d| lexical(&d).ancestors().map(Path::to_path_buf).collect())
            .unwrap_or_default();
        Self {
            base_dir: base_dir.map(Path::to_path_buf),
            package_dirs: dirs,
            ancestors,
            ancestor_packages: BTreeMap::new(),
        }
    }

    /// The directories of package `pkg` found among the URDF's ancestors, nearest first.
    fn packages_in_ancestors(&mut self, pkg: &str) -> &[PathBuf] {
        if pkg.is_empty() {
            return &[];
        }
        let ancestors = &self.ancestors;
        self.ancestor_packages.entry(pkg.to_string()).or_insert_with(|| {
            let mut found = Vec::new();
            for a in ancestors {
                if a.file_name().is_some_and(|n| n == pkg) {
                    found.push(a.clone());
                }
                let child = a.join(pkg);
                if child.is_dir() {
                    found.push(child);
                }
            }
            found
        })
    }

    /// The candidate paths of a mesh file name, in the order they are tried.
    pub(super) fn candidates(&mut self, filename: &str) -> Vec<PathBuf> {
        if let Some(rel) = filename.strip_prefix("package:///") {
            let rel = rel.trim_start_matches('/');
            let mut out: Vec<PathBuf> = self.package_dirs.iter().map(|d| d.join(rel)).collect();
            for a in &self.ancestors {
                let candidate = a.join(rel);
                if !out.contains(&candidate) {
                    out.push(candidate);
                }
            }
            out
        } else if let Some(rest) = filename.strip_prefix("package://") {
            let (pkg, rel) = rest.split_once('/').unwrap_or((rest, ""));
            let mut out = Vec::new();
            for d in &self.package_dirs {
                out.push(d.join(pkg).join(rel));
                if d.file_name().is_some_and(|n| n == pkg) {
                    out.push(d.join(rel));
                }
            }
            for p in self.packages_in_ancestors(pkg) {
                let candidate = p.join(rel);
                if !out.contains(&candidate) {
                    out.push(candidate);
                }
            }
            out
        } else if let Some(path) = filename.strip_prefix("file://") {
            vec![PathBuf::from(path)]
        } else if filename.contains("://") {
            vec![] // other URL schemes (http, model) are not fetched
        } else {
            let p = Path::new(filename);
            match &self.base_dir {
                Some(base) if p.is_relative() => vec![base.join(p)],
                _ => vec![p.to_path_buf()],
            }
        }
    }

    /// Fills `resolved` and `tried` of a mesh and tells whether it was found (`None`: not a mesh).
    pub(super) fn resolve(&mut self, shape: &mut Shape) -> Option<bool> {
        let Shape::Mesh {
            filename,
            resolved,
            tried,
            ..
        } = shape
        else {
            return None;
        };
        *tried = self.candidates(filename);
        *resolved = tried.iter().find(|p| p.is_file()).cloned();
        Some(resolved.is_some())
    }

    /// One warning summarising the meshes not found (`missing`: file name and tried paths): the
    /// first one's paths tried, and for `package://` what was searched and how to fix it.
    pub(super) fn missing_warning(
        &self,
        missing: &[(String, Vec<PathBuf>)],
        total: usize,
    ) -> Option<String> {
        let (filename, tried) = missing.first()?;
        let pkg = filename
            .strip_prefix("package://")
            .map(|rest| rest.split_once('/').map_or(rest, |(p, _)| p));
        let tried = match (tried.is_empty(), pkg) {
            (true, Some(_)) => "no path".to_string(),
            (true, None) => "nothing (only package://, file:// and plain paths are looked up)".to_string(),
            (false, _) => {
                let list = tried.iter().map(|p| p.display().to_string());
                format!("[{}]", list.collect::<Vec<_>>().join(", "))
            }
        };
        let hint = match pkg {
            Some("") => "; 'package:///' names no package: the path after it is looked up in each package \
                         directory and in the URDF's directory and its ancestors; to fix: give the directory \
                         it is relative to as a package directory (package_dirs, `--package-dir`) or in \
                         ROS_PACKAGE_PATH"
                .to_string(),
            Some(pkg) => {
                let none_above = self.ancestor_packages.get(pkg).is_none_or(Vec::is_empty);
                let searched = match self.ancestors.first() {
                    Some(dir) if none_above => format!(
                        "; no directory named '{pkg}' is '{}', one of its ancestors or a child of one",
                        dir.display()
                    ),
                    _ => String::new(),
                };
                format!(
                    "{searched}; to fix: give the directory holding '{pkg}' as a package directory \
                     (package_dirs) or in ROS_PACKAGE_PATH, or keep the URDF inside that package"
                )
            }
            None => String::new(),
        };
        Some(format!(
            "{} of {total} mesh files not found (meshes are not needed for dynamics); first: '{filename}', tried {tried}{hint}",
            missing.len()
        ))
    }
}

/// `path` with its `.` and `..` components folded lexically (`a/b/../c` is `a/c`), so that its
/// ancestors are the directories the path names.
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

//! Locating mesh files: `package://`, `file://`, absolute and relative paths.

use std::path::{Path, PathBuf};

use super::Shape;

/// Resolves mesh file names to candidate paths (never reads the meshes).
pub(super) struct MeshResolver {
    /// Directory of the URDF file, for relative paths.
    base_dir: Option<PathBuf>,
    /// The given package directories, then `ROS_PACKAGE_PATH`'s entries.
    package_dirs: Vec<PathBuf>,
}

impl MeshResolver {
    pub(super) fn new(base_dir: Option<&Path>, package_dirs: &[PathBuf]) -> Self {
        let mut dirs = package_dirs.to_vec();
        if let Some(ros) = std::env::var_os("ROS_PACKAGE_PATH") {
            dirs.extend(std::env::split_paths(&ros).filter(|p| !p.as_os_str().is_empty()));
        }
        Self {
            base_dir: base_dir.map(Path::to_path_buf),
            package_dirs: dirs,
        }
    }

    /// The candidate paths of a mesh file name, in the order they are tried.
    pub(super) fn candidates(&self, filename: &str) -> Vec<PathBuf> {
        if let Some(rest) = filename.strip_prefix("package://") {
            let (pkg, rel) = rest.split_once('/').unwrap_or((rest, ""));
            let mut out = Vec::new();
            for d in &self.package_dirs {
                out.push(d.join(pkg).join(rel));
                if d.file_name().is_some_and(|n| n == pkg) {
                    out.push(d.join(rel));
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
    pub(super) fn resolve(&self, shape: &mut Shape) -> Option<bool> {
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

    /// One warning summarising the meshes not found (`missing`: file name and tried paths).
    pub(super) fn missing_warning(
        &self,
        missing: &[(String, Vec<PathBuf>)],
        total: usize,
    ) -> Option<String> {
        let (filename, tried) = missing.first()?;
        let hint = if filename.starts_with("package://") && self.package_dirs.is_empty() {
            " (no package directory given: pass package_dirs or set ROS_PACKAGE_PATH)"
        } else {
            ""
        };
        let tried = tried
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        Some(format!(
            "{} of {total} mesh files not found{hint}; first: '{filename}', tried [{tried}] (meshes are not needed for dynamics)",
            missing.len()
        ))
    }
}

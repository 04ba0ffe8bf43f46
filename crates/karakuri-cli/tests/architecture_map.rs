//! `docs/ARCHITECTURE.md` against the tree (issue 27): every path the page names exists, every
//! `.rs` file under a crate's `src/` has an entry of its own in a map block, and the page stays a
//! map (at most 400 lines). The page's first section ("How to read the map") defines the syntax
//! parsed here:
//!
//! * a `##` / `###` heading starting with a backticked crate folder (`` `crates/NAME/` ``) opens
//!   that crate's section; any other `##` / `###` heading returns to the repository root;
//! * in a fenced block whose info string is `map`, a line starting without whitespace is an
//!   entry whose first word is a path (a folder when it ends in `/`); indented lines continue
//!   the description;
//! * outside code blocks, a backticked span is a path when it holds only letters, digits and
//!   `_ . - /`, has a name after its first `/`, and its first folder is a root folder
//!   ([`ROOT_FOLDERS`]) or a section folder ([`SECTION_FOLDERS`]); markdown link targets are
//!   paths relative to `docs/`;
//! * a path whose first folder is a root folder is relative to the repository root, any other
//!   to its section.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The page's length limit.
const MAX_LINES: usize = 400;
/// First folders of paths that are always relative to the repository root.
const ROOT_FOLDERS: [&str; 5] = ["crates", "docs", "scripts", "fuzz", ".ci"];
/// First folders of paths relative to the section they are written in.
const SECTION_FOLDERS: [&str; 7] = ["src", "tests", "benches", "examples", "assets", "python", "scenes"];
/// The crates whose `src/` files the map must list one by one.
const CRATES: [&str; 5] = ["karakuri", "karakuri-sim", "karakuri-viewer", "karakuri-cli", "karakuri-py"];

/// A path the page names: relative to the repository root, `/`-separated.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Named {
    path: String,
    /// 1-based line of the page.
    line: usize,
    /// Whether it is the first word of a map entry (only those count as listing a file).
    entry: bool,
}

fn first_folder(path: &str) -> &str {
    path.split('/').next().unwrap_or("")
}

/// Whether a backticked span is a path in the page's syntax.
fn looks_like_path(span: &str) -> bool {
    let chars_ok = !span.is_empty()
        && span.chars().all(|c| c.is_ascii_alphanumeric() || "_.-/".contains(c));
    let Some((first, rest)) = span.split_once('/') else { return false };
    chars_ok
        && !rest.is_empty()
        && (ROOT_FOLDERS.contains(&first) || SECTION_FOLDERS.contains(&first))
}

/// `path` as written in a section whose folder is `base` ("" for the root, else `crates/NAME/`).
fn resolve(base: &str, path: &str) -> String {
    if ROOT_FOLDERS.contains(&first_folder(path)) {
        path.to_string()
    } else {
        format!("{base}{path}")
    }
}

/// A markdown link target relative to `docs/`, normalised; `None` for URLs and anchors.
fn link_path(target: &str) -> Option<String> {
    let target = target.split('#').next().unwrap_or("").trim();
    if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let mut parts: Vec<&str> = vec!["docs"];
    for part in target.split('/') {
        match part {
            "." | "" => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    let mut path = parts.join("/");
    if target.ends_with('/') {
        path.push('/');
    }
    Some(path)
}

/// The section folder a heading opens: `crates/NAME/` when it starts with that in backticks.
fn heading_base(heading: &str) -> String {
    let text = heading.trim_start_matches('#').trim();
    if let Some(rest) = text.strip_prefix('`') {
        if let Some((span, _)) = rest.split_once('`') {
            let parts: Vec<&str> = span.split('/').collect();
            if parts.len() == 3 && parts[0] == "crates" && !parts[1].is_empty() && parts[2].is_empty() {
                return span.to_string();
            }
        }
    }
    String::new()
}

/// Paths named in a line of prose: backticked spans and markdown link targets.
fn prose_paths(line: &str, base: &str, number: usize, out: &mut Vec<Named>) {
    for (k, span) in line.split('`').enumerate() {
        if k % 2 == 1 && looks_like_path(span) {
            out.push(Named { path: resolve(base, span), line: number, entry: false });
        }
    }
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        if let Some(path) = link_path(&rest[..end]) {
            out.push(Named { path, line: number, entry: false });
        }
        rest = &rest[end..];
    }
}

/// Every path the page names, in page order.
fn parse(page: &str) -> Vec<Named> {
    let mut out = Vec::new();
    let mut base = String::new();
    let mut fence: Option<String> = None;
    for (k, line) in page.lines().enumerate() {
        let number = k + 1;
        if let Some(info) = line.trim_start().strip_prefix("```") {
            fence = match fence {
                None => Some(info.trim().to_string()),
                Some(_) => None,
            };
            continue;
        }
        match fence.as_deref() {
            Some("map") => {
                if line.starts_with(char::is_whitespace) {
                    continue;
                }
                if let Some(word) = line.split_whitespace().next() {
                    out.push(Named { path: resolve(&base, word), line: number, entry: true });
                }
            }
            Some(_) => {}
            None => {
                if line.starts_with("## ") || line.starts_with("### ") {
                    base = heading_base(line);
                }
                prose_paths(line, &base, number, &mut out);
            }
        }
    }
    out
}

/// Named paths that do not exist under `root`, as "line N: path".
fn missing(root: &Path, named: &[Named]) -> Vec<String> {
    named
        .iter()
        .filter(|n| {
            let p = root.join(&n.path);
            if n.path.ends_with('/') { !p.is_dir() } else { !p.exists() }
        })
        .map(|n| format!("line {}: {}", n.line, n.path))
        .collect()
}

fn rs_files(dir: &Path, root: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rs_files(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).expect("under root");
            out.push(rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/"));
        }
    }
}

/// `.rs` files under `crates/C/src` (C in `crates`) that no map entry lists, sorted.
fn left_out(root: &Path, crates: &[&str], named: &[Named]) -> Vec<String> {
    let listed: BTreeSet<&str> = named.iter().filter(|n| n.entry).map(|n| n.path.as_str()).collect();
    let mut files = Vec::new();
    for c in crates {
        rs_files(&root.join("crates").join(c).join("src"), root, &mut files);
    }
    files.sort();
    files.into_iter().filter(|f| !listed.contains(f.as_str())).collect()
}

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

#[test]
fn architecture_md_is_a_map_of_the_tree() {
    let root = repository_root();
    let page = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).expect("docs/ARCHITECTURE.md");
    let named = parse(&page);
    let mut problems = Vec::new();
    let lines = page.lines().count();
    if lines > MAX_LINES {
        problems.push(format!("docs/ARCHITECTURE.md has {lines} lines, more than {MAX_LINES}"));
    }
    for m in missing(&root, &named) {
        problems.push(format!("docs/ARCHITECTURE.md names a path that does not exist: {m}"));
    }
    for f in left_out(&root, &CRATES, &named) {
        problems.push(format!("docs/ARCHITECTURE.md's map leaves out {f}"));
    }
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
    // Not vacuous: the map lists every crate's sources, so it has at least that many entries.
    let mut all = Vec::new();
    for c in CRATES {
        rs_files(&root.join("crates").join(c).join("src"), &root, &mut all);
    }
    assert!(all.len() > 50, "found only {} source files", all.len());
    assert!(named.iter().filter(|n| n.entry).count() >= all.len());
}

#[cfg(test)]
mod syntax {
    use super::*;

    const PAGE: &str = "\
# Title
See `docs/X.md`, `native/stages.rs`, `src/`, `crates/`, `a b/c` and [d](decisions/0001-a.md#x), [w](https://e.org/x).

## `crates/a/` — the crate
Prose `src/lib.rs` and `tests/t.rs` and `scripts/s`.

```map
Cargo.toml
src/lib.rs          what it holds
                    src/ignored.rs (a continued description)
src/m/              a folder
```

```text
src/not_a_map.rs
```

### Other things
`tests/t.rs` at the root; [up](../README.md)

```map
docs/Y.md   always from the root
fuzz/f.rs
```
";

    fn paths(named: &[Named], entry: bool) -> Vec<&str> {
        named.iter().filter(|n| n.entry == entry).map(|n| n.path.as_str()).collect()
    }

    #[test]
    fn entries_resolve_against_their_section() {
        let named = parse(PAGE);
        assert_eq!(
            paths(&named, true),
            ["crates/a/Cargo.toml", "crates/a/src/lib.rs", "crates/a/src/m/", "docs/Y.md", "fuzz/f.rs"]
        );
        let lib = named.iter().find(|n| n.path == "crates/a/src/lib.rs" && n.entry).unwrap();
        assert_eq!(lib.line, 9);
    }

    #[test]
    fn prose_paths_and_links() {
        let named = parse(PAGE);
        assert_eq!(
            paths(&named, false),
            [
                "docs/X.md",
                "docs/decisions/0001-a.md",
                "crates/a/",
                "crates/a/src/lib.rs",
                "crates/a/tests/t.rs",
                "scripts/s",
                "tests/t.rs",
                "README.md"
            ]
        );
    }

    #[test]
    fn what_is_not_a_path() {
        for span in ["src/", "crates/", "native/stages.rs", "a b/c", "Model::new", "x/y.rs", "src/*.rs", ""] {
            assert!(!looks_like_path(span), "{span}");
        }
        for span in ["src/lib.rs", "crates/karakuri/", ".ci/run", "tests/data/erd/"] {
            assert!(looks_like_path(span), "{span}");
        }
        assert_eq!(heading_base("## `crates/karakuri-sim/` — the simulator"), "crates/karakuri-sim/");
        assert_eq!(heading_base("## The step (`crates/karakuri-sim/`)"), "");
        assert_eq!(heading_base("### `crates/karakuri-sim/src/` files"), "");
    }

    /// A scratch tree under the system's temporary folder, removed on drop.
    struct Tree(PathBuf);

    impl Tree {
        fn new(name: &str, files: &[&str]) -> Tree {
            let dir = std::env::temp_dir().join(format!("architecture_map_{}_{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            for f in files {
                let p = dir.join(f);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, "").unwrap();
            }
            Tree(dir)
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn missing_paths_and_unlisted_files_are_named() {
        let tree = Tree::new("checks", &["crates/a/src/lib.rs", "crates/a/src/m/x.rs", "crates/a/Cargo.toml", "docs/X.md"]);
        let page = "## `crates/a/`\n```map\nCargo.toml\nsrc/lib.rs\nsrc/m/\nsrc/gone.rs\n```\n`docs/X.md` `docs/Z.md`\n";
        let named = parse(page);
        assert_eq!(missing(&tree.0, &named), ["line 6: crates/a/src/gone.rs", "line 8: docs/Z.md"]);
        // a folder entry does not list the files in it
        assert_eq!(left_out(&tree.0, &["a"], &named), ["crates/a/src/m/x.rs"]);
        // a prose mention does not either
        let prose_only = parse("## `crates/a/`\n`src/lib.rs` `src/m/x.rs`\n");
        assert_eq!(left_out(&tree.0, &["a"], &prose_only), ["crates/a/src/lib.rs", "crates/a/src/m/x.rs"]);
        // a file named as a folder is missing; a folder named without its slash exists
        let kinds = parse("```map\ndocs/X.md/\ndocs\n```\n");
        assert_eq!(missing(&tree.0, &kinds), ["line 2: docs/X.md/"]);
    }
}

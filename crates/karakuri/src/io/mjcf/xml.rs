//! Pass 1, parse: the MJCF files as one owned element tree, `<include>` elements replaced by
//! the children of the included file's `<mujoco>`; every element keeps its file and line.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::MjcfError;

/// Deepest `<include>` nesting accepted (a file including itself is caught before).
const MAX_INCLUDE_DEPTH: usize = 32;
/// Deepest element nesting accepted (bodies in bodies): far beyond any robot, and shallow
/// enough that the recursive passes cannot overflow the stack.
const MAX_ELEMENT_DEPTH: usize = 500;

/// One XML element, with its children in document order (includes expanded).
#[derive(Clone, Debug)]
pub(super) struct Element {
    pub tag: String,
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Element>,
    pub file: Arc<str>,
    pub line: u32,
}

impl Element {
    /// The attribute's value as written.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
    /// An error at this element.
    pub fn error(&self, reason: impl Into<String>) -> MjcfError {
        MjcfError { file: self.file.to_string(), line: Some(self.line), element: self.tag.clone(), reason: reason.into() }
    }
    /// Refuses attributes outside `known` (named in the error with the accepted ones).
    pub fn check_attrs(&self, known: &[&str]) -> Result<(), MjcfError> {
        for (k, _) in &self.attrs {
            if !known.contains(&k.as_str()) {
                return Err(self.error(format!("unknown attribute '{k}' (accepted here: {})", known.join(", "))));
            }
        }
        Ok(())
    }
}

/// Reads `path` and expands its includes. `source_name` names the file in errors; `text` is
/// its content when already read (else it is read from `path`).
pub(super) fn read_tree(text: &str, source_name: &str, base_dir: Option<&Path>) -> Result<Element, MjcfError> {
    let mut stack = vec![PathBuf::from(source_name)];
    let root = parse_text(text, source_name)?;
    if root.tag != "mujoco" {
        return Err(root.error("the root element must be <mujoco>"));
    }
    let mut root = root;
    expand_includes(&mut root, base_dir, &mut stack)?;
    Ok(root)
}

fn parse_text(text: &str, name: &str) -> Result<Element, MjcfError> {
    let file: Arc<str> = Arc::from(name);
    if let Some(at) = text.find("<!ENTITY") {
        let line = text[..at].matches('\n').count() as u32 + 1;
        return Err(MjcfError {
            file: name.into(),
            line: Some(line),
            element: String::new(),
            reason: "entity declarations (<!ENTITY ...>) are not supported (they can expand without bound): write the text out".into(),
        });
    }
    check_nesting(text, name)?;
    let opts = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
    let doc = roxmltree::Document::parse_with_options(text, opts).map_err(|e| {
        let pos = e.pos();
        MjcfError { file: name.into(), line: Some(pos.row), element: String::new(), reason: format!("malformed XML: {e}") }
    })?;
    convert(&doc, doc.root_element(), &file, 0)
}

/// Refuses elements nested deeper than [`MAX_ELEMENT_DEPTH`] before the XML reader (which
/// recurses per level) sees them.
fn check_nesting(text: &str, name: &str) -> Result<(), MjcfError> {
    match crate::io::xml_depth::line_deeper_than(text, MAX_ELEMENT_DEPTH) {
        None => Ok(()),
        Some(line) => Err(MjcfError {
            file: name.into(),
            line: Some(line),
            element: String::new(),
            reason: format!("elements nested deeper than {MAX_ELEMENT_DEPTH}"),
        }),
    }
}

fn convert(doc: &roxmltree::Document, node: roxmltree::Node, file: &Arc<str>, depth: usize) -> Result<Element, MjcfError> {
    let line = doc.text_pos_at(node.range().start).row;
    let tag = node.tag_name().name().to_string();
    if depth > MAX_ELEMENT_DEPTH {
        return Err(MjcfError { file: file.to_string(), line: Some(line), element: tag, reason: format!("elements nested deeper than {MAX_ELEMENT_DEPTH}") });
    }
    let attrs = node.attributes().map(|a| (a.name().to_string(), a.value().to_string())).collect();
    let mut children = vec![];
    for c in node.children().filter(|c| c.is_element()) {
        children.push(convert(doc, c, file, depth + 1)?);
    }
    Ok(Element { tag, attrs, children, file: file.clone(), line })
}

/// Replaces every `<include file>` below `e` by the children of that file's `<mujoco>`. The
/// file is looked for relative to the main file's directory, as MuJoCo does.
fn expand_includes(e: &mut Element, base_dir: Option<&Path>, stack: &mut Vec<PathBuf>) -> Result<(), MjcfError> {
    let mut out = Vec::with_capacity(e.children.len());
    for mut c in std::mem::take(&mut e.children) {
        if c.tag != "include" {
            expand_includes(&mut c, base_dir, stack)?;
            out.push(c);
            continue;
        }
        c.check_attrs(&["file"])?;
        let Some(file) = c.attr("file") else {
            return Err(c.error("<include> needs a 'file' attribute"));
        };
        let path = match base_dir {
            Some(d) => d.join(file),
            None => PathBuf::from(file),
        };
        if stack.len() > MAX_INCLUDE_DEPTH || stack.iter().any(|p| same_file(p, &path)) {
            return Err(c.error(format!("'{file}' includes itself (directly or through other files)")));
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|err| c.error(format!("cannot read the included file {}: {err}", path.display())))?;
        let name = path.display().to_string();
        let mut inc = parse_text(&text, &name)?;
        if inc.tag != "mujoco" {
            return Err(inc.error("an included file's root element must be <mujoco>"));
        }
        stack.push(path);
        expand_includes(&mut inc, base_dir, stack)?;
        stack.pop();
        out.extend(inc.children);
    }
    e.children = out;
    Ok(())
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Parses `n` whitespace-separated numbers.
pub(super) fn numbers<const N: usize>(e: &Element, name: &str, text: &str) -> Result<[f64; N], MjcfError> {
    let v = numbers_vec(e, name, text)?;
    if v.len() != N {
        return Err(e.error(format!("attribute '{name}' needs {N} numbers, found {} ('{text}')", v.len())));
    }
    let mut out = [0.0; N];
    out.copy_from_slice(&v);
    Ok(out)
}

/// Parses whitespace-separated finite numbers.
pub(super) fn numbers_vec(e: &Element, name: &str, text: &str) -> Result<Vec<f64>, MjcfError> {
    text.split_whitespace()
        .map(|t| match t.parse::<f64>() {
            Ok(x) if x.is_finite() && x.abs() <= 1e15 => Ok(x),
            Ok(_) => Err(e.error(format!("attribute '{name}': '{t}' is not finite or exceeds 1e15"))),
            Err(_) => Err(e.error(format!("attribute '{name}': '{t}' is not a number"))),
        })
        .collect()
}

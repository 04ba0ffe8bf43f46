//! The YAML pass: saphyr-parser's events into a small tree whose every node keeps its line;
//! anchors and aliases resolved by copying (bounded, so an alias bomb is an error, not a hang),
//! nesting bounded. Keys are matched in either spelling Choreonoid accepts (`joint_type` and
//! `jointType`).

use saphyr_parser_bw::{Event, Parser};

/// Deepest nesting accepted.
const MAX_DEPTH: usize = 128;
/// Most nodes a file may expand to (aliases copied in).
const MAX_NODES: usize = 2_000_000;

/// One YAML node and the line it starts on.
#[derive(Clone, Debug)]
pub(super) struct Node {
    /// 1-based line.
    pub line: u32,
    /// What it holds.
    pub value: Value,
}

/// A node's value.
#[derive(Clone, Debug)]
pub(super) enum Value {
    /// A scalar as written.
    Scalar { text: String },
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, its keys in file order.
    Map(Vec<(String, Node)>),
}

/// The key's spelling with underscores folded into camel case (`center_of_mass` ->
/// `centerOfMass`).
pub(super) fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut up = false;
    for c in key.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

impl Node {
    /// The mapping's entries, if it is one.
    pub fn map(&self) -> Option<&[(String, Node)]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The sequence's items, if it is one.
    pub fn seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    /// The scalar's text, if it is one.
    pub fn scalar(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The entry of a mapping whose key is `camel_key` in either spelling.
    pub fn get(&self, camel_key: &str) -> Option<&Node> {
        self.map()?.iter().find(|(k, _)| k == camel_key || camel(k) == camel_key).map(|(_, v)| v)
    }

    /// The scalar as a number (`inf`, `.inf` accepted; NaN refused).
    pub fn number(&self) -> Option<f64> {
        let t = self.scalar()?.trim();
        let v = match t {
            ".inf" | ".Inf" | "+.inf" | "inf" => f64::INFINITY,
            "-.inf" | "-.Inf" | "-inf" => f64::NEG_INFINITY,
            _ => t.parse::<f64>().ok()?,
        };
        (!v.is_nan()).then_some(v)
    }
}

/// The YAML error of a parse: line and reason.
#[derive(Debug)]
pub(super) struct YamlError {
    /// 1-based line.
    pub line: u32,
    /// What the parser said.
    pub reason: String,
}

/// Parses `text` into its first document's root node (an empty document is an empty mapping).
pub(super) fn parse(text: &str) -> Result<Node, YamlError> {
    let mut b = TreeBuilder { anchors: Vec::new(), nodes: 0 };
    let mut parser = Parser::new_from_str(text);
    loop {
        let (ev, span) = next(&mut parser)?;
        match ev {
            Event::StreamEnd => return Ok(Node { line: 1, value: Value::Map(vec![]) }),
            Event::StreamStart | Event::DocumentStart(_) | Event::Nothing => continue,
            Event::DocumentEnd => continue,
            _ => return b.node(&mut parser, ev, span.start.line() as u32, 0),
        }
    }
}

fn next<'a>(p: &mut Parser<'a, saphyr_parser_bw::StrInput<'a>>) -> Result<(Event<'a>, saphyr_parser_bw::Span), YamlError> {
    match p.next_event() {
        Some(Ok(e)) => Ok(e),
        Some(Err(e)) => Err(YamlError { line: e.marker().line() as u32, reason: e.info().to_string() }),
        None => Err(YamlError { line: 0, reason: "unexpected end of the YAML stream".into() }),
    }
}

struct TreeBuilder {
    anchors: Vec<(usize, Node)>,
    nodes: usize,
}

impl TreeBuilder {
    fn count(&mut self, n: usize, line: u32) -> Result<(), YamlError> {
        self.nodes += n;
        if self.nodes > MAX_NODES {
            return Err(YamlError { line, reason: format!("the document expands to more than {MAX_NODES} nodes (aliases)") });
        }
        Ok(())
    }

    fn anchor(&mut self, id: usize, node: &Node) {
        if id > 0 {
            self.anchors.push((id, node.clone()));
        }
    }

    fn node<'a>(&mut self, p: &mut Parser<'a, saphyr_parser_bw::StrInput<'a>>, ev: Event<'a>, line: u32, depth: usize) -> Result<Node, YamlError> {
        if depth > MAX_DEPTH {
            return Err(YamlError { line, reason: format!("nesting deeper than {MAX_DEPTH}") });
        }
        self.count(1, line)?;
        match ev {
            Event::Scalar(text, _, anchor, _) => {
                let node = Node { line, value: Value::Scalar { text: text.into_owned() } };
                self.anchor(anchor, &node);
                Ok(node)
            }
            Event::Alias(id) => {
                let Some((_, node)) = self.anchors.iter().rev().find(|(a, _)| *a == id) else {
                    return Err(YamlError { line, reason: "alias to an unknown anchor".into() });
                };
                let node = node.clone();
                self.count(size(&node), line)?;
                Ok(node)
            }
            Event::SequenceStart(anchor, _) => {
                let mut items = vec![];
                loop {
                    let (ev, span) = next(p)?;
                    if matches!(ev, Event::SequenceEnd) {
                        break;
                    }
                    items.push(self.node(p, ev, span.start.line() as u32, depth + 1)?);
                }
                let node = Node { line, value: Value::Seq(items) };
                self.anchor(anchor, &node);
                Ok(node)
            }
            Event::MappingStart(anchor, _) => {
                let mut entries = vec![];
                loop {
                    let (ev, span) = next(p)?;
                    if matches!(ev, Event::MappingEnd) {
                        break;
                    }
                    let key = self.node(p, ev, span.start.line() as u32, depth + 1)?;
                    let Some(k) = key.scalar().map(str::to_string) else {
                        return Err(YamlError { line: key.line, reason: "a mapping key must be a scalar".into() });
                    };
                    let (ev, span) = next(p)?;
                    let value = self.node(p, ev, span.start.line() as u32, depth + 1)?;
                    entries.push((k, value));
                }
                let node = Node { line, value: Value::Map(entries) };
                self.anchor(anchor, &node);
                Ok(node)
            }
            _ => Err(YamlError { line, reason: "unexpected YAML event".into() }),
        }
    }
}

/// Nodes in a tree.
fn size(n: &Node) -> usize {
    match &n.value {
        Value::Scalar { .. } => 1,
        Value::Seq(s) => 1 + s.iter().map(size).sum::<usize>(),
        Value::Map(m) => 1 + m.iter().map(|(_, v)| 1 + size(v)).sum::<usize>(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_aliases_lines() {
        let t = "a: &X\n  b: 1\nc: *X\nd: [1, 2]\n";
        let n = parse(t).unwrap();
        assert_eq!(n.get("c").unwrap().get("b").unwrap().number(), Some(1.0));
        assert_eq!(n.get("d").unwrap().line, 4);
        assert_eq!(camel("center_of_mass"), "centerOfMass");
        assert!(n.get("a").is_some());
    }

    #[test]
    fn alias_bomb_is_an_error() {
        let mut t = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let p = i - 1;
            t.push_str(&format!("a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"));
        }
        assert!(parse(&t).is_err());
    }
}

//! The nesting bound shared by the XML loaders (URDF, MJCF): the XML reader recurses once per
//! level of elements, so a file of 100 000 nested elements overflowed the stack. A scan of the
//! tags refuses such files before the reader sees them.

/// The 1-based line of the first start tag that opens level `max + 1`, if any.
///
/// The scan skips comments, CDATA sections, processing instructions, declarations (with their
/// internal subset in brackets) and quoted `>` inside attribute values; over-counting malformed
/// input only makes the check stricter, and the XML reader reports the malformation itself.
pub(crate) fn line_deeper_than(text: &str, max: usize) -> Option<u32> {
    let b = text.as_bytes();
    let skip_to = |from: usize, end: &str| text[from..].find(end).map_or(b.len(), |k| from + k + end.len());
    let (mut i, mut depth) = (0, 0usize);
    while let Some(k) = text[i..].find('<') {
        i += k;
        let rest = &text[i..];
        if rest.starts_with("<!--") {
            i = skip_to(i + 4, "-->");
        } else if rest.starts_with("<![CDATA[") {
            i = skip_to(i + 9, "]]>");
        } else if rest.starts_with("<?") {
            i = skip_to(i + 2, "?>");
        } else if rest.starts_with("<!") {
            let close = rest.find('>').unwrap_or(rest.len());
            i = match rest[..close].find('[') {
                Some(open) => skip_to(skip_to(i + open, "]"), ">"),
                None => i + close + 1,
            };
        } else if rest.starts_with("</") {
            depth = depth.saturating_sub(1);
            i = skip_to(i + 2, ">");
        } else {
            let j = start_tag_end(b, i + 1);
            if j > i + 1 && b[j - 1] != b'/' {
                depth += 1;
                if depth > max {
                    return Some(text[..i].matches('\n').count() as u32 + 1);
                }
            }
            i = j + 1;
        }
        if i >= b.len() {
            break;
        }
    }
    None
}

/// The index of the `>` closing the start tag whose name begins at `from` (outside quoted
/// attribute values), or the text's length.
fn start_tag_end(b: &[u8], from: usize) -> usize {
    let (mut j, mut quote) = (from, None);
    while j < b.len() {
        match (quote, b[j]) {
            (None, b'"' | b'\'') => quote = Some(b[j]),
            (Some(q), c) if c == q => quote = None,
            (None, b'>') => break,
            _ => {}
        }
        j += 1;
    }
    j
}

#[cfg(test)]
mod tests {
    use super::line_deeper_than;

    #[test]
    fn counts_start_tags_and_skips_the_rest() {
        let ok = "<?xml version=\"1.0\"?>\n<!-- <a><a><a> -->\n<a b=\"x>y\"><c/><![CDATA[<d><d>]]><e></e></a>";
        assert_eq!(line_deeper_than(ok, 2), None);
        assert_eq!(line_deeper_than(ok, 1), Some(3), "<e> opens level 2 on line 3");
        let deep = "<a>\n<b>\n<c>\n</c></b></a>";
        assert_eq!(line_deeper_than(deep, 2), Some(3));
        assert_eq!(line_deeper_than(deep, 3), None);
        assert_eq!(line_deeper_than("<!DOCTYPE r [<!ELEMENT r ANY>]>\n<r><s/></r>", 1), None);
    }
}

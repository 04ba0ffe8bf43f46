//! The HTML page: one self-contained file holding the viewer's own script and style, the
//! vendored three.js and uPlot (`assets/vendor/`, refreshed by `scripts/refresh-viewer-assets`)
//! and the data of one replay or model as JSON with base64 binary arrays.
//!
//! three.js ships ES modules: `three.module.min.js` imports `./three.core.min.js`, and
//! `OrbitControls.js` imports `three`. A page opened from disk has no URL those relative imports
//! could resolve against, so each module becomes a `data:` URL named in an import map, and the
//! one relative import is rewritten to the bare specifier `three/core` the map also names.

use std::fmt::Write as _;

const THREE_MODULE: &str = include_str!("../assets/vendor/three/three.module.min.js");
const THREE_CORE: &str = include_str!("../assets/vendor/three/three.core.min.js");
const ORBIT_CONTROLS: &str = include_str!("../assets/vendor/three/OrbitControls.js");
const UPLOT_JS: &str = include_str!("../assets/vendor/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../assets/vendor/uplot/uPlot.min.css");
const VERSIONS: &str = include_str!("../assets/vendor/VERSIONS");
const VIEWER_JS: &str = include_str!("../assets/viewer/viewer.js");
/// The live page's part of the program, appended to `viewer.js` in the same module.
const LIVE_JS: &str = include_str!("../assets/viewer/live.js");
const VIEWER_CSS: &str = include_str!("../assets/viewer/viewer.css");
const ERRORS_JS: &str = include_str!("../assets/viewer/errors.js");

/// The import of three.js's core inside `three.module.min.js`.
const CORE_IMPORT: &str = "\"./three.core.min.js\"";

/// The whole page for `data` (a JSON object the viewer script reads), titled `title`.
pub fn render(title: &str, data: &serde_json::Value) -> String {
    let module = THREE_MODULE.replace(CORE_IMPORT, "\"three/core\"");
    debug_assert_ne!(module.len(), THREE_MODULE.len(), "three.module.min.js imports its core");
    let import_map = serde_json::json!({
        "imports": {
            "three": js_data_url(&module),
            "three/core": js_data_url(THREE_CORE),
            "three/addons/controls/OrbitControls.js": js_data_url(ORBIT_CONTROLS),
        }
    });
    let versions = VERSIONS.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut html = String::with_capacity(2_000_000);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"karakuri {} ({versions})\">\n<title>{}</title>\n\
         <script>\n{ERRORS_JS}</script>\n<style>\n{UPLOT_CSS}\n{VIEWER_CSS}</style>\n",
        env!("CARGO_PKG_VERSION"),
        escape_html(title)
    );
    let _ = write!(
        html,
        "<script type=\"importmap\">\n{}\n</script>\n</head>\n<body>\n\
         <pre id=\"karakuri-errors\" hidden></pre>\n\
         <div id=\"karakuri-status\" data-ready=\"0\"></div>\n\
         <script id=\"karakuri-data\" type=\"application/json\">{}</script>\n\
         <script>\n{}\n</script>\n<script type=\"module\">\n{VIEWER_JS}\n{LIVE_JS}</script>\n</body>\n</html>\n",
        script_safe(&import_map.to_string()),
        script_safe(&data.to_string()),
        script_safe(UPLOT_JS),
    );
    html
}

/// `data:text/javascript;base64,...`.
fn js_data_url(source: &str) -> String {
    format!("data:text/javascript;base64,{}", base64(source.as_bytes()))
}

/// Text safe inside a `<script>` element: no `</` that could close it (JSON and the vendored
/// scripts only hold `<` inside strings, regular expressions and comparisons, where `<\/` reads
/// the same in JavaScript; JSON strings read `\u003c` as `<`).
fn script_safe(s: &str) -> String {
    s.replace("</", "<\\/")
}

fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Standard base64 with padding (RFC 4648 §4).
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Binary data as the page reads it: base64, and from [`DEFLATE_FROM`] bytes on deflated first
/// (zlib format, which the browser's `DecompressionStream('deflate')` reads) and marked `z:`.
/// Recorded motion compresses well (bodies at rest repeat their values frame after frame: a
/// settled 100-body pile's poses shrink 5x).
pub fn pack(bytes: &[u8]) -> String {
    if bytes.len() < DEFLATE_FROM {
        base64(bytes)
    } else {
        format!("z:{}", base64(&miniz_oxide::deflate::compress_to_vec_zlib(bytes, 6)))
    }
}

/// Arrays this long (bytes) and longer are deflated.
pub const DEFLATE_FROM: usize = 1024;

/// Little-endian bytes of `f32` values, packed.
pub fn f32s(values: impl IntoIterator<Item = f32>) -> String {
    pack(&values.into_iter().flat_map(f32::to_le_bytes).collect::<Vec<u8>>())
}

/// Little-endian bytes of `i16` values, packed.
pub fn i16s(values: impl IntoIterator<Item = i16>) -> String {
    pack(&values.into_iter().flat_map(i16::to_le_bytes).collect::<Vec<u8>>())
}

/// Little-endian bytes of `u32` values, packed.
pub fn u32s(values: impl IntoIterator<Item = u32>) -> String {
    pack(&values.into_iter().flat_map(u32::to_le_bytes).collect::<Vec<u8>>())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded, "{plain:?}");
        }
        assert_eq!(base64(&[0xfb, 0xff]), "+/8=");
    }

    #[test]
    fn long_arrays_are_deflated_and_come_back() {
        let data: Vec<u8> = (0..5000u32).flat_map(|k| ((k / 7) as u16).to_le_bytes()).collect();
        let packed = pack(&data);
        let z = packed.strip_prefix("z:").expect("deflated");
        assert!(z.len() < data.len() / 4, "{} -> {}", data.len(), z.len());
        assert_eq!(
            miniz_oxide::inflate::decompress_to_vec_zlib(&unbase64(z)).unwrap(),
            data
        );
        assert_eq!(pack(&data[..10]), base64(&data[..10]));
    }

    /// Test inverse of [`base64`].
    pub fn unbase64(s: &str) -> Vec<u8> {
        let val = |c: u8| match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            _ => 63,
        };
        let clean: Vec<u8> = s.bytes().filter(|&c| c != b'=').collect();
        let mut out = Vec::new();
        for chunk in clean.chunks(4) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (k, &c)| n | u32::from(val(c)) << (18 - 6 * k));
            out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
        }
        out
    }

    /// Test inverse of [`pack`].
    pub fn unpack(s: &str) -> Vec<u8> {
        match s.strip_prefix("z:") {
            Some(z) => miniz_oxide::inflate::decompress_to_vec_zlib(&unbase64(z)).unwrap(),
            None => unbase64(s),
        }
    }

    #[test]
    fn the_vendored_three_module_imports_its_core_by_the_rewritten_path() {
        assert_eq!(
            THREE_MODULE.matches(CORE_IMPORT).count(),
            2,
            "one import, one re-export"
        );
        assert!(ORBIT_CONTROLS.contains("from 'three'"));
    }

    #[test]
    fn a_page_cannot_be_closed_early_by_its_data() {
        let page = render("a <b>", &serde_json::json!({"name": "</script><script>alert(1)"}));
        assert!(page.contains("<title>a &lt;b&gt;</title>"));
        assert!(!page.contains("</script><script>alert"));
    }
}

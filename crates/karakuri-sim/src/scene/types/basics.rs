//! Small value types and serde helpers every scene type uses: poses, twists, name-keyed lists
//! ([`Named`]), the `true` default.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A pose `{position, orientation}`: `x_parent = R(orientation) x_local + position`, the
/// quaternion in `[x, y, z, w]` order (unit).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Pose {
    /// Translation (m).
    pub position: [f64; 3],
    /// Unit quaternion `[x, y, z, w]`.
    pub orientation: [f64; 4],
}

impl Default for Pose {
    fn default() -> Self {
        Pose {
            position: [0.0; 3],
            orientation: [0.0, 0.0, 0.0, 1.0],
        }
    }
}

/// A velocity `{linear, angular}` in world axes (`linear`: velocity of the body-frame origin).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Twist {
    /// Linear velocity (m/s).
    pub linear: [f64; 3],
    /// Angular velocity (rad/s).
    pub angular: [f64; 3],
}

pub(super) fn yes() -> bool {
    true
}

/// A mapping from names to values, kept as a list of pairs (materials, robot joint values).
pub struct Named;

impl Named {
    /// Writes `{name: value, ...}`.
    #[allow(clippy::ptr_arg)] // serde's `with` passes `&Vec<_>`
    pub fn serialize<T: Serialize, S: Serializer>(v: &Vec<(String, T)>, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(v.iter().map(|(k, x)| (k, x)))
    }
    /// Reads `{name: value, ...}` in the order given.
    pub fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, T)>, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Vec<(String, T)>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping of names to values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry()? {
                    out.push((k, v));
                }
                Ok(out)
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

//! The model's named objects by MuJoCo id, and their lookup by name for the simulation
//! sections (actuators, sensors, equality, contact).

use super::error::MjcfError;
use super::xml::Element;

/// The named objects of the model, by MuJoCo id.
pub(super) struct Names {
    pub bodies: Vec<String>,
    pub joints: Vec<String>,
    pub sites: Vec<String>,
    pub geoms: Vec<Option<String>>,
    pub tendons: Vec<String>,
    pub actuators: Vec<String>,
}

impl Names {
    /// The id of the object named by `e`'s attribute `attr` among `list` (`what` names the
    /// kind in the error).
    pub fn find(e: &Element, attr: &str, list: &[String], what: &str) -> Result<usize, MjcfError> {
        let name = e.attr(attr).ok_or_else(|| e.error(format!("missing attribute '{attr}'")))?;
        list.iter().position(|n| n == name).ok_or_else(|| e.error(format!("no {what} named '{name}'")))
    }
    /// The geom named by `e`'s `attr`.
    pub fn geom(&self, e: &Element, attr: &str) -> Result<usize, MjcfError> {
        let name = e.attr(attr).ok_or_else(|| e.error(format!("missing attribute '{attr}'")))?;
        self.geoms.iter().position(|n| n.as_deref() == Some(name)).ok_or_else(|| e.error(format!("no geom named '{name}'")))
    }
}


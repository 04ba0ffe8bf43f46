//! MuJoCo's contact rules for an MJCF robot's geoms ([`MjcfContactRules`]): which pairs touch
//! (`<pair>`s always; else not two geoms of one weld body, nor parent and child unless `<flag
//! filterparent="disable">`, nor an `<exclude>`d body pair, and only when the `contype` /
//! `conaffinity` bits meet) and with what sliding friction (a `<pair>`'s own; else the geom
//! of higher `priority`'s, else the larger; 0 when the pair's `condim` is 1) and from what
//! distance (`margin`: a `<pair>`'s own, else the larger of the two geoms'), as MuJoCo's
//! collision driver and `mj_contactParam` decide them.

use karakuri::io::mjcf::MjcfWorld;

/// MuJoCo's collision rule for one robot's geoms, by collision index (the order of
/// [`mjcf_collisions`]).
#[derive(Clone, Debug, Default)]
pub struct MjcfContactRules {
    /// Each collision's geom.
    pub geoms: Vec<GeomRule>,
    /// `<exclude>` body pairs (MuJoCo body ids, smaller first).
    pub excludes: Vec<(usize, usize)>,
    /// `<pair>`s: collision indices (smaller first) and the sliding friction (0 for `condim` 1).
    pub pairs: Vec<(usize, usize, f64)>,
    /// Each `<pair>`'s `margin`, in the order of `pairs`.
    pub pair_margins: Vec<f64>,
    /// `<flag filterparent>` enabled (MuJoCo's default): parent and child never touch.
    pub filter_parent: bool,
}

/// What MuJoCo's collision filter and friction mixing read of one geom.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeomRule {
    /// Its MuJoCo body.
    pub body: usize,
    /// The robot model's joint that moves it (MuJoCo's weld body: bodies without joints are one).
    pub weld: usize,
    /// The weld body of its weld body's parent (MuJoCo's `body_weldid[body_parentid]`).
    pub weld_parent: usize,
    /// `contype`.
    pub contype: u32,
    /// `conaffinity`.
    pub conaffinity: u32,
    /// `friction[0]` (sliding).
    pub friction: f64,
    /// `priority`.
    pub priority: i32,
    /// `condim`.
    pub condim: u8,
    /// `margin`: contacts are made closer than this (m).
    pub margin: f64,
}

impl MjcfContactRules {
    /// The rules of `world`'s geoms `kept` (the collisions, in order).
    pub fn of(world: &MjcfWorld, kept: &[usize]) -> MjcfContactRules {
        let m = &world.model;
        // the joints that carry a MuJoCo body (not the intermediate joints of a body's chain)
        let carries: Vec<usize> = (0..world.body_names.len()).map(|b| world.body_placement(b).0 .0).collect();
        let weld_parent = |j: usize| {
            let mut p = if j == 0 { 0 } else { m.parents[j] };
            while p != 0 && !carries.contains(&p) {
                p = m.parents[p];
            }
            p
        };
        let geoms = kept
            .iter()
            .map(|&i| {
                let g = &world.geoms[i];
                let weld = world.geom_placement(i).0 .0;
                let (contype, conaffinity, priority, condim) = (g.contype, g.conaffinity, g.priority, g.condim);
                let weld_parent = weld_parent(weld);
                let margin = g.margin;
                GeomRule { body: g.body, weld, weld_parent, contype, conaffinity, friction: g.friction[0], priority, condim, margin }
            })
            .collect();
        let excludes = world.contact_excludes.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
        let index = |g: usize| kept.iter().position(|&k| k == g);
        let (pairs, pair_margins) = world
            .contact_pairs
            .iter()
            .filter_map(|p| {
                let (a, b) = (index(p.geoms.0)?, index(p.geoms.1)?);
                Some(((a.min(b), a.max(b), if p.condim == 1 { 0.0 } else { p.friction[0] }), p.margin))
            })
            .unzip();
        MjcfContactRules { geoms, excludes, pairs, pair_margins, filter_parent: !world.option.filterparent_disabled }
    }

    /// Whether collisions `a` and `b` of this robot touch (MuJoCo's `<pair>`s, else its
    /// filters: weld bodies, parent and child, `<exclude>`, `contype`/`conaffinity`), and
    /// their friction.
    pub fn pair(&self, a: usize, b: usize) -> Option<f64> {
        let (a, b) = (a.min(b), a.max(b));
        if let Some(p) = self.pairs.iter().find(|p| (p.0, p.1) == (a, b)) {
            return Some(p.2);
        }
        let (ga, gb) = (&self.geoms[a], &self.geoms[b]);
        let family = ga.weld == gb.weld
            || (self.filter_parent && ga.weld != 0 && gb.weld != 0 && (ga.weld == gb.weld_parent || gb.weld == ga.weld_parent));
        let excluded = self.excludes.contains(&(ga.body.min(gb.body), ga.body.max(gb.body)));
        (!family && !excluded && ga.bits_meet(gb)).then(|| ga.mixed_friction(gb))
    }
}

impl GeomRule {
    /// MuJoCo's bit test: `(contype₁ & conaffinity₂) || (contype₂ & conaffinity₁)`.
    pub fn bits_meet(&self, o: &GeomRule) -> bool {
        self.contype & o.conaffinity != 0 || o.contype & self.conaffinity != 0
    }

    /// MuJoCo's friction of a dynamic pair: the geom of higher `priority`'s, else the larger;
    /// 0 when the pair's `condim` (the higher priority's, else the larger) is 1.
    pub fn mixed_friction(&self, o: &GeomRule) -> f64 {
        let (f, condim) = match self.priority.cmp(&o.priority) {
            std::cmp::Ordering::Greater => (self.friction, self.condim),
            std::cmp::Ordering::Less => (o.friction, o.condim),
            std::cmp::Ordering::Equal => (self.friction.max(o.friction), self.condim.max(o.condim)),
        };
        if condim == 1 {
            0.0
        } else {
            f
        }
    }
}

/// The geoms that become collision shapes: all but those MuJoCo never collides
/// (`contype = conaffinity = 0`) and no `<pair>` names.
pub fn kept_geoms(world: &MjcfWorld) -> Vec<usize> {
    let paired = |i: usize| world.contact_pairs.iter().any(|p| p.geoms.0 == i || p.geoms.1 == i);
    (0..world.geoms.len()).filter(|&i| world.geoms[i].contype != 0 || world.geoms[i].conaffinity != 0 || paired(i)).collect()
}

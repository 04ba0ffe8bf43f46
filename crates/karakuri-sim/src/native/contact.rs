//! Contacts become rows or forces: Springhead's normal targets (restitution, penetration
//! correction, speculative gaps), circular friction with static and dynamic coefficients,
//! penalty contacts as impulses on the free velocity, material mixing, tangent frames and the
//! warm-start keys that recognise a contact in the next step.

use karakuri::constraints::rows::{
    add_point_rows, add_relative_point_rows, is_free_body, set_free_body_point_rows, DenseRows,
};
use karakuri::spatial::{Motion, Se3, Vec3};
use karakuri::Model;
use nalgebra::{DVector, DVectorView};

use super::build::SimModel;
pub use super::state::{WarmEntry, WarmKey};
use super::state::SimState;
pub use super::work::ContactRows;
use super::work::StepData;
use super::tracks::{friction_frame, FrictionFrame};
use crate::collision::RawContact;
pub use crate::compile::mean_material;
use crate::sort::sort_nearly_sorted;
use crate::scene::ContactMode;
use crate::solver::{BlockRows, Problem, RowKind};

/// The key of a contact.
pub fn warm_key(c: &RawContact) -> WarmKey {
    (c.shape_a, c.shape_b, c.features.0, c.features.1)
}

/// A forward lookup in the warm-start entries for contacts that come by shape pair (the
/// collider's order): the position of the current pair's first entry, kept from one lookup to
/// the next, so that a contact costs a short scan of its pair's entries instead of a binary
/// search. A lookup out of order (a pair below the last one) searches afresh: the answer is
/// always a binary search's (the tests hold it to one).
#[derive(Default)]
pub struct WarmCursor {
    /// First entry whose shape pair is not below the last looked-up key's.
    at: usize,
}

impl WarmCursor {
    /// The impulses remembered for `key` (entries sorted by key, one per key).
    pub fn find(&mut self, entries: &[WarmEntry], key: &WarmKey) -> Option<[f64; 3]> {
        let pair = (key.0, key.1);
        let pair_of = |e: &WarmEntry| (e.0 .0, e.0 .1);
        if self.at > entries.len() || (self.at > 0 && pair_of(&entries[self.at - 1]) >= pair) {
            self.at = entries.partition_point(|e| pair_of(e) < pair);
        }
        while self.at < entries.len() && pair_of(&entries[self.at]) < pair {
            self.at += 1;
        }
        entries[self.at..]
            .iter()
            .take_while(|e| pair_of(e) == pair)
            .find(|e| e.0 == *key)
            .map(|e| e.2)
    }
}

/// Sorts `entries` by key and keeps the last written of each key (no allocation). Written in
/// the contacts' order (by shape pair, then manifold point), the entries are sorted but for
/// each pair's few points: insertion sorts them in O(n).
pub fn warm_finish(entries: &mut Vec<WarmEntry>) {
    sort_nearly_sorted(entries, |a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).is_lt());
    entries.dedup_by(|later, first| later.0 == first.0);
}

/// Two unit tangents completing `n` to a right-handed frame (deterministic).
pub fn tangents(n: &Vec3) -> (Vec3, Vec3) {
    let a = if n.x.abs() < 0.57 {
        Vec3::x()
    } else if n.y.abs() < 0.57 {
        Vec3::y()
    } else {
        Vec3::z()
    };
    let t1 = n.cross(&a).normalize();
    let t2 = n.cross(&t1);
    (t1, t2)
}

/// `row · v`.
pub fn row_dot(row: &[f64], v: &DVector<f64>) -> f64 {
    row.iter().zip(v.iter()).map(|(a, b)| a * b).sum()
}

/// A contact seen from the rows: the joints of A and B, the point, and the world directions
/// normal, tangent 1, tangent 2.
struct ContactFrame {
    ja: usize,
    jb: usize,
    p: Vec3,
    dirs: [Vec3; 3],
    /// The length of `dirs[2]` (a track's lateral friction ratio, else 1): slip along it is
    /// its row's velocity over this.
    lateral: f64,
}

impl ContactFrame {
    /// The row of B's velocity relative to A's at the point along `dir` into `row`.
    fn row(&self, model: &Model, s_world: &[Motion], dir: &Vec3, row: &mut [f64]) {
        row.fill(0.0);
        add_relative_point_rows(model, s_world, (self.ja, &self.p), (self.jb, &self.p), &[*dir], &mut DenseRows([row]));
    }
}

/// The contact stage of the constraint build.
///
/// Reads `w.raw` (this step's contacts), `w.s_world`, `s.v`, `w.v_free`, `w.qh`, the
/// materials and `s.warm_contacts`. Writes, per contact, either a block into `w.problem` (a
/// normal with Springhead's target `b`, and two friction rows when `μ > 0`, warm-started from
/// the last step's impulses of the same contact, found by its key) or, for a penalty pair, its
/// spring-damper impulse into `w.v_free`; and the bookkeeping in `w.contact_rows`.
pub fn contact_rows(m: &SimModel, s: &SimState, w: &mut StepData) {
    let (model, cp) = (&m.model, &m.contact);
    let shapes = &m.collider.shapes;
    let mut warm = WarmCursor::default();
    for ci in 0..w.raw.len() {
        let c = w.raw[ci];
        let (sa, sb) = (&shapes[c.shape_a], &shapes[c.shape_b]);
        let n = c.normal;
        let mat = m.collider.material(c.shape_a, c.shape_b);
        if c.mode == ContactMode::Lcp && mat.static_friction <= 0.0 && mat.dynamic_friction <= 0.0 {
            // no friction whatever the slip: the normal row alone (see `frictionless_block`)
            let row = frictionless_block(m, s, w, (&c, &mut warm), mat.restitution);
            w.contact_rows.push(ContactRows {
                raw: ci,
                row,
                nrows: 1,
                dirs: [n, Vec3::zeros(), Vec3::zeros()],
                penalty_force: Vec3::zeros(),
            });
            continue;
        }
        // the friction directions and B's velocity relative to A's at which their surfaces
        // do not slip (tracks drive along their own direction 1, else tangents and zero)
        let ff = friction_frame(m, s, w, (c.shape_a, c.shape_b), &n).unwrap_or_else(|| {
            let (t1, t2) = tangents(&n);
            FrictionFrame { t1, t2, targets: [0.0; 2], lateral: None }
        });
        // a track's own coefficient across the belt: direction 2's row scaled by its ratio to
        // the contact's, which turns the friction disk into an ellipse
        let lateral = match ff.lateral {
            Some((mu2, g)) => {
                let mu = if mat.static_friction > 0.0 { mat.static_friction } else { mat.dynamic_friction };
                1.0 + (mu2 / mu - 1.0) * g
            }
            None => 1.0,
        };
        let frame = ContactFrame {
            ja: sa.joint,
            jb: sb.joint,
            p: c.point,
            dirs: [n, ff.t1, ff.t2 * lateral],
            lateral,
        };
        let tangent_targets = [ff.targets[0], ff.targets[1] * lateral];
        // the slip (the tangential relative velocity beyond the surfaces' own) chooses the
        // friction coefficient
        let pick_mu = |slip: &Vec3| {
            if slip.norm() <= cp.friction_threshold_velocity {
                mat.static_friction
            } else {
                mat.dynamic_friction
            }
        };
        let rows = if let ContactMode::Penalty { stiffness, damping } = c.mode {
            // relative velocity of B with respect to A at the contact point, before the step
            let mut rel = |dir: &Vec3| -> f64 {
                frame.row(model, &w.s_world, dir, &mut w.row);
                row_dot(&w.row, &s.v)
            };
            let vn = rel(&n);
            let vt = Vec3::new(rel(&frame.dirs[1]) - tangent_targets[0], rel(&frame.dirs[2]) - tangent_targets[1], 0.0);
            let mu = pick_mu(&Vec3::new(vt.x, vt.y / lateral, 0.0));
            let f = penalty_impulses(m, w, &c, &frame, (vn, vt, mu), (stiffness, damping));
            ContactRows {
                raw: ci,
                row: usize::MAX,
                nrows: 0,
                dirs: frame.dirs,
                penalty_force: f,
            }
        } else {
            let (row, nrows) = springhead_block(
                m,
                s,
                w,
                (&c, &mut warm),
                &frame,
                (pick_mu, tangent_targets),
                mat.restitution,
            );
            ContactRows {
                raw: ci,
                row,
                nrows,
                dirs: frame.dirs,
                penalty_force: Vec3::zeros(),
            }
        };
        w.contact_rows.push(rows);
    }
}

/// A penalty contact: spring-damper normal force and regularised Coulomb friction, applied
/// as impulses `dt qH⁻¹ Jᵀ f` on `w.v_free`. `(vn, vt, μ)` are the approach and slip
/// velocities along the frame's rows (slip: beyond the track surfaces' velocity) and the
/// friction coefficient. Returns the force on B (world).
fn penalty_impulses(
    m: &SimModel,
    w: &mut StepData,
    c: &RawContact,
    frame: &ContactFrame,
    (vn, vt, mu): (f64, Vec3, f64),
    (stiffness, damping): (f64, f64),
) -> Vec3 {
    let (model, dt) = (&m.model, m.dt);
    let [n, t1, t2] = frame.dirs;
    let touching = c.depth > 0.0;
    if !touching {
        return Vec3::zeros();
    }
    let fn_ = (stiffness * c.depth - damping * vn).max(0.0);
    // (slip in the rows' coordinates: with a track's scaled direction 2 (`frame.lateral`)
    // the disk there is the friction ellipse; the same length for an orthonormal frame)
    let vt_w = t1 * vt.x + t2 * vt.y;
    let slip = if frame.lateral == 1.0 { vt_w.norm() } else { vt.norm() };
    let ft = if slip > 1e-12 {
        -vt_w / slip * (mu * fn_).min(damping.max(stiffness * dt) * slip)
    } else {
        Vec3::zeros()
    };
    let f = n * fn_ + ft;
    // f along the frame's unit directions (a track's scaled direction 2 divided back)
    for (k, dir) in frame.dirs.iter().enumerate() {
        let dir = if k == 2 { dir / frame.lateral } else { *dir };
        let fd = f.dot(&dir);
        if fd == 0.0 {
            continue;
        }
        frame.row(model, &w.s_world, &dir, &mut w.row);
        w.qh.solve(&mut w.row);
        w.v_free
            .axpy(fd * dt, &DVectorView::from_slice(&w.row, model.nv), 1.0);
    }
    f
}

/// Writes a contact's `N` rows (B's velocity relative to A's at the world point `p` along
/// each of `dirs`) into block `bi` of `pr` through the core's row writer, B's side first. With
/// `placements` (given when the sides are on two trees), a free body's side takes the
/// writer's fast path from its placement.
fn write_sides<const N: usize>(
    (model, s_world): (&Model, &[Motion]),
    placements: Option<&[Se3]>,
    (pr, bi): (&mut Problem, usize),
    (ja, jb): (usize, usize),
    (p, dirs): (&Vec3, &[Vec3; N]),
) {
    for (joint, sign) in [(jb, 1.0), (ja, -1.0)] {
        match placements {
            Some(o_m_i) if is_free_body(model, joint) => {
                let sink = pr.sink(bi, joint).expect("a free body has a tree");
                set_free_body_point_rows(&o_m_i[joint], model.idx_v[joint], (p, dirs), sign, sink);
            }
            _ => add_point_rows(model, s_world, joint, (p, dirs), sign, &mut BlockRows { problem: pr, block: bi }),
        }
    }
}

/// Appends a contact's block of `N` rows (`kinds`, targets 0) to `w.problem`, warm-started
/// from the last step's impulses of the same contact (found through `cursor`), and writes its
/// rows: B's velocity relative to A's at the contact point along each of `dirs`. Returns the
/// block.
fn push_contact_block<const N: usize>(
    m: &SimModel,
    s: &SimState,
    w: &mut StepData,
    (c, cursor): (&RawContact, &mut WarmCursor),
    (ja, jb): (usize, usize),
    (kinds, dirs): (&[RowKind; N], &[Vec3; N]),
) -> usize {
    let pr = &mut w.problem;
    let warm = if m.engine.warm_start {
        cursor.find(&s.warm_contacts, &warm_key(c)).unwrap_or([0.0; 3])
    } else {
        [0.0; 3]
    };
    let (ta, tb) = (pr.trees.of_joint[ja], pr.trees.of_joint[jb]);
    let bi = pr.push_block(kinds, ta, tb, &[0.0; N], &warm[..N]);
    // (the placements are fresh from the kinematics stage; two sides on one tree add up)
    let placements = w.data.joint_placements().ok().filter(|_| ta != tb);
    write_sides((&m.model, &w.s_world), placements, (pr, bi), (ja, jb), (&c.point, dirs));
    bi
}

/// A constraint contact whose materials have no friction (static and dynamic coefficients
/// zero: the cradle's balls): [`springhead_block`] for `μ = 0`, which would write the two
/// friction rows, measure the slip, then drop them; here the block is the normal row alone
/// from the start (the same row, target and warm impulse; no tangent frame, no track
/// velocity, which only the friction rows read). Returns the row.
fn frictionless_block(m: &SimModel, s: &SimState, w: &mut StepData, (c, cursor): (&RawContact, &mut WarmCursor), e: f64) -> usize {
    let (cp, dt) = (&m.contact, m.dt);
    let shapes = &m.collider.shapes;
    let (ja, jb) = (shapes[c.shape_a].joint, shapes[c.shape_b].joint);
    let kinds = [RowKind::Normal { friction: 0, mu: 0.0 }];
    let bi = push_contact_block(m, s, w, (c, cursor), (ja, jb), (&kinds, &[c.normal]));
    let pr = &mut w.problem;
    // (`row_dot` is `block_dots`' first row: the same sum)
    let vn = pr.row_dot(bi, 0, s.v.as_slice());
    let vfree_n = pr.row_dot(bi, 0, w.v_free.as_slice());
    let b = normal_target(cp, dt, c.depth, (vn, vfree_n), e);
    let row = pr.blocks[bi].row;
    pr.b[row] = b;
    row
}

/// A constraint contact: a block of the normal row with Springhead's target (restitution `e`
/// above the threshold speed, else no further approach: the split-impulse pass removes the
/// penetration; a gap may only close within the step) and, when `μ > 0` (`mu_of_slip` of the
/// slip beyond the surfaces' no-slip velocity), the two friction rows targeting
/// `tangent_targets` (the no-slip velocity of track surfaces, else 0), warm-started from the
/// last step (found through `cursor`). Returns the first row and the number of rows.
fn springhead_block(
    m: &SimModel,
    s: &SimState,
    w: &mut StepData,
    (c, cursor): (&RawContact, &mut WarmCursor),
    frame: &ContactFrame,
    (mu_of_slip, tangent_targets): (impl Fn(&Vec3) -> f64, [f64; 2]),
    e: f64,
) -> (usize, usize) {
    let (cp, dt) = (&m.contact, m.dt);
    let kinds = [
        RowKind::Normal { friction: 2, mu: 0.0 },
        RowKind::Tangent,
        RowKind::Tangent,
    ];
    let bi = push_contact_block(m, s, w, (c, cursor), (frame.ja, frame.jb), (&kinds, &frame.dirs));
    let pr = &mut w.problem;
    // relative velocity of B with respect to A at the contact point, before the step
    let sv = s.v.as_slice();
    let [vn, vt1, vt2] = pr.block_dots(bi, sv);
    let vt = Vec3::new(vt1 - tangent_targets[0], (vt2 - tangent_targets[1]) / frame.lateral, 0.0);
    let mu = mu_of_slip(&vt);
    pr.blocks[bi].resting = vt.norm() <= cp.friction_threshold_velocity;
    let vfree_n = pr.row_dot(bi, 0, w.v_free.as_slice());
    let b = normal_target(cp, dt, c.depth, (vn, vfree_n), e);
    let friction = if mu > 0.0 { 2 } else { 0 };
    let row = pr.blocks[bi].row;
    pr.kind[row] = RowKind::Normal { friction, mu };
    pr.b[row] = b;
    pr.b[row + 1..row + 3].copy_from_slice(&tangent_targets);
    if friction == 0 {
        pr.truncate_last(1);
    }
    (row, 1 + friction)
}

/// Springhead's target of a contact's normal row, from its `depth` (negative: a gap), its
/// normal velocity before the step `vn` and at the free velocity `vfree_n`, and the
/// restitution `e`: `−e vn` for an impact (approaching faster than the threshold, `e > 0`)
/// that touches or would close its gap within the step; else a gap may only close within the
/// step (`−gap / dt`), and a touching contact only stops approaching (0: the split-impulse
/// pass, `split.rs`, removes the penetration as a capped pseudo-velocity).
fn normal_target(cp: &crate::scene::ContactParams, dt: f64, depth: f64, (vn, vfree_n): (f64, f64), e: f64) -> f64 {
    let impact = vn < -cp.restitution_threshold_velocity && e > 0.0;
    if depth < 0.0 {
        let gap = -depth;
        if impact && vfree_n * dt < -gap {
            -e * vn
        } else {
            -gap / dt
        }
    } else if impact {
        -e * vn
    } else {
        0.0
    }
}

/// Remembers this step's contact impulses for the next (reads `w.contact_rows`, `w.raw`,
/// `w.solution.lambda`; writes `s.warm_contacts` through `w.warm_next`).
pub fn remember_impulses(s: &mut SimState, w: &mut StepData) {
    w.warm_next.clear();
    for cr in &w.contact_rows {
        if cr.nrows == 0 {
            continue;
        }
        let mut imp = [0.0; 3];
        imp[..cr.nrows].copy_from_slice(&w.solution.lambda[cr.row..cr.row + cr.nrows]);
        w.warm_next
            .push((warm_key(&w.raw[cr.raw]), w.warm_next.len(), imp));
    }
    warm_finish(&mut w.warm_next);
    std::mem::swap(&mut s.warm_contacts, &mut w.warm_next);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The impulses remembered for `key` by binary search: what [`WarmCursor::find`] must give.
    fn warm_lookup(entries: &[WarmEntry], key: &WarmKey) -> Option<[f64; 3]> {
        entries
            .binary_search_by(|e| e.0.cmp(key))
            .ok()
            .map(|i| entries[i].2)
    }

    #[test]
    fn the_last_impulses_of_a_key_win_as_in_a_map() {
        let k = |a| (a, 0, 0, 0);
        let mut e = vec![
            (k(3), 0, [1.0; 3]),
            (k(1), 1, [2.0; 3]),
            (k(3), 2, [3.0; 3]),
            (k(2), 3, [4.0; 3]),
        ];
        warm_finish(&mut e);
        assert_eq!(e.len(), 3);
        assert_eq!(warm_lookup(&e, &k(3)), Some([3.0; 3]));
        assert_eq!(warm_lookup(&e, &k(1)), Some([2.0; 3]));
        assert_eq!(warm_lookup(&e, &k(9)), None);
    }

    #[test]
    fn the_cursor_finds_what_the_binary_search_finds_in_any_order() {
        let mut e = Vec::new();
        for a in 0..6 {
            for b in a + 1..6 {
                for f in 0..3u32 {
                    if !(a + b + f as usize).is_multiple_of(3) {
                        e.push(((a, b, f, 7 - f), e.len(), [(a * 10 + b) as f64, f64::from(f), 0.0]));
                    }
                }
            }
        }
        warm_finish(&mut e);
        // every key (present or not), by pair as the collider gives them, then out of order
        let mut keys = Vec::new();
        for a in 0..7 {
            for b in a + 1..7 {
                for f in [2u32, 0, 1, 5] {
                    keys.push((a, b, f, 7 - f));
                }
            }
        }
        let mut cursor = WarmCursor::default();
        for key in keys.iter().chain(keys.iter().rev()) {
            assert_eq!(cursor.find(&e, key), warm_lookup(&e, key), "{key:?}");
        }
    }
}

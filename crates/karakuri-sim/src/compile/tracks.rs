//! Robot tracks and the shapes' track lookup: a robot's `tracks` entries (a link by name,
//! its axis in the link's axes) and a `.body` robot's `pseudo_continuous_track` links (their
//! `jointAxis`) become [`Track`]s on the world joint that carries the link; then every
//! collision shape, in the colliders pass's order, gets the track of its body or link.

use karakuri::io::body::{BodyJointKind, BodyModel};
use karakuri::model::FrameKind;
use karakuri::spatial::Vec3;

use super::builder::{scene_err, Builder, Grafted};
use super::model::{Track, TrackOwner};
use crate::SimError;

/// Robot `ri`'s tracks: its `.body` track links (`body`), each with its `jointAxis` unless a
/// `tracks` entry names it, then its `tracks` entries (in the order listed).
pub(super) fn robot_tracks(b: &mut Builder, ri: usize, body: Option<&BodyModel>, g: &Grafted) -> Result<(), SimError> {
    let rs = &b.scene.robots[ri];
    let rm = &g.robot.model;
    let listed = |name: &str| rs.tracks.iter().position(|t| t.link == name);
    let mut new: Vec<Track> = Vec::new();
    for link in body.iter().flat_map(|m| m.links.iter()).filter(|l| l.kind == BodyJointKind::PseudoContinuousTrack) {
        if listed(&link.name).is_some() {
            continue;
        }
        let (joint, placement) = g.on_world(link.joint, &link.placement);
        new.push(Track {
            name: format!("{}/{}", rs.name, link.name),
            owner: TrackOwner::Link { robot: ri, link: link.name.clone() },
            joint,
            axis: placement.rotation * link.axis,
            speed: 0.0,
            lateral_friction: None,
        });
    }
    for (k, t) in rs.tracks.iter().enumerate() {
        let at = format!("robots[{ri}].tracks[{k}]");
        let is_link = |f: &&karakuri::model::Frame| f.name == t.link && f.kind == FrameKind::Body;
        let Some(f) = rm.frames.iter().find(is_link) else {
            return Err(scene_err(b.scene, format!("{at}.link"), format!("the robot has no link '{}'", t.link)));
        };
        let body_axis = body.and_then(|m| m.links.iter().find(|l| l.name == t.link && l.kind == BodyJointKind::PseudoContinuousTrack)).map(|l| l.axis);
        let Some(axis) = t.axis.map(|a| Vec3::from(a)).or(body_axis) else {
            let reason = "give the axis the surface turns about (link axes); only a .body pseudo_continuous_track link has one of its own";
            return Err(scene_err(b.scene, format!("{at}.axis"), reason));
        };
        let (joint, placement) = g.on_world(f.parent_joint.0, &f.placement);
        new.push(Track {
            name: format!("{}/{}", rs.name, t.link),
            owner: TrackOwner::Link { robot: ri, link: t.link.clone() },
            joint,
            axis: placement.rotation * axis,
            speed: t.speed,
            lateral_friction: t.lateral_friction,
        });
    }
    b.tracks.append(&mut new);
    Ok(())
}

/// Each collision shape's track, in the order of [`super::colliders::shapes`]: scene bodies'
/// colliding shapes (by body), then per robot its collisions and its colliding extra shapes
/// (by link name).
pub(super) fn shape_tracks(b: &Builder, tracks: &[Track]) -> Vec<Option<usize>> {
    let find = |owner: &TrackOwner| tracks.iter().position(|t| &t.owner == owner);
    let mut out = Vec::new();
    for (bi, bs) in b.scene.bodies.iter().enumerate() {
        let k = find(&TrackOwner::Body(bi));
        out.extend(bs.shapes.iter().filter(|s| s.collide).map(|_| k));
    }
    for (ri, g) in b.robots.iter().enumerate() {
        let on = |link: &str| {
            tracks.iter().position(|t| matches!(&t.owner, TrackOwner::Link { robot, link: l } if *robot == ri && l == link))
        };
        out.extend(g.robot.collisions.iter().map(|c| on(&c.link)));
        out.extend(b.scene.robots[ri].shapes.iter().filter(|(_, s)| s.collide).map(|(link, _)| on(link)));
    }
    out
}

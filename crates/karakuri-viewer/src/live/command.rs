//! [`Command`]: what a live page asks of the simulation, one JSON text message each.

use serde_json::Value;

/// One request of a live page.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// `{"cmd": "pause"}`: stop stepping.
    Pause,
    /// `{"cmd": "play"}`: step again.
    Play,
    /// `{"cmd": "step"}`: one step while paused.
    Step,
    /// `{"cmd": "reset"}`: back to the world as it was when the session started.
    Reset,
    /// `{"cmd": "realtime", "on": true}`: simulated time paced to the wall clock (else as fast
    /// as the machine steps).
    RealTime(bool),
    /// `{"cmd": "drag", "body": i, "local": [x, y, z], "target": [x, y, z]}`: the mouse spring
    /// pulls the point `local` (body frame) of body `i` toward `target` (world).
    Drag {
        /// Body index (`World::bodies`).
        body: usize,
        /// The grabbed point in the body's frame (m).
        local: [f64; 3],
        /// Where the mouse is, world (m).
        target: [f64; 3],
    },
    /// `{"cmd": "release"}`: the mouse spring lets go.
    Release,
    /// `{"cmd": "target", "joint": k, "value": x}`: the target of the actuator of one-dof joint
    /// `k` (`World::one_dof_joints`; a position, speed or torque by its mode).
    Target {
        /// One-dof joint index.
        joint: usize,
        /// The new target.
        value: f64,
    },
}

impl Command {
    /// Reads one message; `None` for anything else (a page cannot crash the server).
    pub fn parse(text: &str) -> Option<Command> {
        let v: Value = serde_json::from_str(text).ok()?;
        let vec3 = |key: &str| -> Option<[f64; 3]> {
            let a = v.get(key)?.as_array()?;
            let x: Vec<f64> = a.iter().filter_map(Value::as_f64).collect();
            (x.len() == 3 && a.len() == 3 && x.iter().all(|c| c.is_finite())).then(|| [x[0], x[1], x[2]])
        };
        let index = |key: &str| v.get(key)?.as_u64().and_then(|k| usize::try_from(k).ok());
        Some(match v.get("cmd")?.as_str()? {
            "pause" => Command::Pause,
            "play" => Command::Play,
            "step" => Command::Step,
            "reset" => Command::Reset,
            "realtime" => Command::RealTime(v.get("on")?.as_bool()?),
            "drag" => Command::Drag {
                body: index("body")?,
                local: vec3("local")?,
                target: vec3("target")?,
            },
            "release" => Command::Release,
            "target" => {
                let value = v.get("value")?.as_f64().filter(|x| x.is_finite())?;
                Command::Target { joint: index("joint")?, value }
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_parse_and_bad_ones_are_dropped() {
        assert_eq!(Command::parse(r#"{"cmd":"pause"}"#), Some(Command::Pause));
        assert_eq!(Command::parse(r#"{"cmd":"realtime","on":false}"#), Some(Command::RealTime(false)));
        assert_eq!(
            Command::parse(r#"{"cmd":"drag","body":3,"local":[0,0,0.5],"target":[1,2,3]}"#),
            Some(Command::Drag { body: 3, local: [0.0, 0.0, 0.5], target: [1.0, 2.0, 3.0] })
        );
        assert_eq!(
            Command::parse(r#"{"cmd":"target","joint":1,"value":-0.25}"#),
            Some(Command::Target { joint: 1, value: -0.25 })
        );
        for bad in [
            "",
            "not json",
            "[]",
            r#"{"cmd":"fly"}"#,
            r#"{"cmd":"drag","body":-1,"local":[0,0,0],"target":[0,0,0]}"#,
            r#"{"cmd":"drag","body":0,"local":[0,0],"target":[0,0,0]}"#,
            r#"{"cmd":"drag","body":0,"local":[0,0,"x"],"target":[0,0,0]}"#,
            r#"{"cmd":"target","joint":0}"#,
            r#"{"cmd":"realtime"}"#,
        ] {
            assert_eq!(Command::parse(bad), None, "{bad}");
        }
    }
}

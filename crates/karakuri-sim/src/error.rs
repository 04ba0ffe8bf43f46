//! The simulator's errors.

/// Errors of the simulator.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum SimError {
    /// A scene file problem: the file, the path inside it and the reason.
    #[error("{file}: {path}{}{reason}", if path.is_empty() { "" } else { ": " })]
    Scene {
        /// The scene file.
        file: String,
        /// Where in it, e.g. `bodies[3].shapes[0].radius` (empty: the whole file).
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The simulation diverged (a non-finite or runaway state).
    #[error("diverged in step {step} (t = {time} s), body '{body}': {reason}")]
    Diverged {
        /// The step whose result was found non-finite or runaway (1 = the first step).
        step: u64,
        /// The time that step reached (s).
        time: f64,
        /// The body concerned.
        body: String,
        /// What was found.
        reason: String,
    },
    /// No joint of that name.
    #[error("no joint named '{joint}'")]
    UnknownJoint {
        /// The name given.
        joint: String,
    },
    /// A per-joint scalar was asked of a joint with several degrees of freedom.
    #[error("joint '{joint}' has {dofs} degrees of freedom, not 1")]
    NotOneDof {
        /// The joint.
        joint: String,
        /// Its degrees of freedom.
        dofs: usize,
    },
    /// No sensor of that name.
    #[error("no sensor named '{sensor}'")]
    UnknownSensor {
        /// The name given.
        sensor: String,
    },
    /// A command was given to a joint that has no actuator.
    #[error("joint '{joint}' has no actuator (give it one in the scene: `actuator` or `robots[].actuators`)")]
    NoActuator {
        /// The joint.
        joint: String,
    },
    /// A command that is not finite or is outside the joint's limits.
    #[error("joint '{joint}' at t = {time} s: {reason}")]
    BadCommand {
        /// The joint.
        joint: String,
        /// Simulated time of the command (s).
        time: f64,
        /// What is wrong with it.
        reason: String,
    },
    /// A controller's period that is not a whole number of time steps.
    #[error("control period {period} s is not a positive whole number of time steps ({dt} s)")]
    BadControlPeriod {
        /// The period asked (s).
        period: f64,
        /// The time step (s).
        dt: f64,
    },
    /// A stage read a quantity of the dynamics core that was not computed for the current
    /// state (the stages ran out of order: a bug of the engine, not of the scene).
    #[error("engine stage order: {0}")]
    Stale(#[from] karakuri::Stale),
    /// Bad arguments (command-line values).
    #[error("{0}")]
    Input(String),
    /// Writing output failed.
    #[error("{0}")]
    Output(String),
    /// The engine does not offer what was asked of it.
    #[error("the {engine} engine does not support {what}")]
    Unsupported {
        /// The engine's name.
        engine: String,
        /// What was asked.
        what: String,
    },
    /// A checkpoint that cannot be taken, read or restored: the reason.
    #[error("checkpoint: {0}")]
    Checkpoint(String),
    /// No track surface of that name.
    #[error("no track surface named '{track}' (bodies with `track` are track surfaces)")]
    UnknownTrack {
        /// The name given.
        track: String,
    },
    /// A track speed command that is not finite.
    #[error("track '{track}' at t = {time} s: {reason}")]
    BadTrackSpeed {
        /// The track (its body's name).
        track: String,
        /// Simulated time of the command (s).
        time: f64,
        /// What is wrong with it.
        reason: String,
    },
}

//! The `karakuri` command's subcommands, as a library so benchmarks and tests can reuse them.

pub mod bench;
pub mod inspect;
pub mod verify;
pub mod viewer;

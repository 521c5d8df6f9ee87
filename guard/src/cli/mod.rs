//! One module per subcommand: parse arguments, call the library, render, return an exit code.

pub mod apply;
pub mod check;
pub mod inputs;
pub mod readiness;
pub mod run;
pub mod verify_tree;

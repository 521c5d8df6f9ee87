//! One module per subcommand: parse arguments, call the library, render, return an exit code.

pub mod check;
pub mod run;

use clap::Args;

#[derive(Args)]
pub struct CheckArgs {}

pub fn run(_args: CheckArgs) -> u8 {
    crate::EXIT_ERROR
}

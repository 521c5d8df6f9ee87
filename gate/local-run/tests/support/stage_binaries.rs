//! The stage binaries of local-run's integration tests, shared by `local_run.rs` and the act
//! harness (each includes this file).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// `guard`, `gate` and `report` built (debug) once, beside local-run; their directory.
pub fn stage_binaries() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = PathBuf::from(env!("CARGO_BIN_EXE_local-run"));
        let dir = exe.parent().unwrap().to_path_buf();
        let target = dir.parent().unwrap();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args([
                "build", "--locked", "-q", "-p", "guard", "-p", "gate", "-p", "report",
            ])
            .arg("--target-dir")
            .arg(target)
            .env_remove("CARGO_TARGET_DIR")
            .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
            .status()
            .unwrap();
        assert!(status.success(), "cargo build of the stage binaries failed");
        dir
    })
}

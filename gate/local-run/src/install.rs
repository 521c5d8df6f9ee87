//! The install step, with locally built binaries standing in for the release assets.
//!
//! The workflow downloads one pinned asset, checks its SHA-256 against the value written in the
//! workflow (`sha256sum --check --strict`), and installs `guard`, `gate` and `report` under
//! `/opt/agent-team/bin`. Here the "release" is a directory holding the three binaries and a
//! `SHA256SUMS` written when they were copied there; the install step copies each asset into the
//! install directory, hashes the copy and refuses the whole install on the first mismatch (one
//! hash check per asset), then makes each binary read-only and executable (`0555`). The stages
//! run from the install directory only.
//!
//! By default the binaries are built with the command `.ci/run` uses for its static check
//! ([`BUILD_COMMAND_LINE`]) and each is checked to be statically linked by reading its ELF
//! program headers: no `PT_INTERP` (no program interpreter) and no `DT_NEEDED` entry in its
//! dynamic section (no shared library), which is what `.ci/static-check.sh` asks `readelf`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use guard::hash::sha256_hex;

use crate::{LocalRunError, io_error};

/// The binaries of a release asset.
pub const STAGE_BINARIES: [&str; 3] = ["guard", "gate", "report"];
/// The target of the static build.
pub const TARGET: &str = "x86_64-unknown-linux-gnu";
/// The static build, as `.ci/run` runs it.
pub const BUILD_COMMAND_LINE: &str = "RUSTFLAGS=\"-C target-feature=+crt-static\" cargo build \
     --release --locked --workspace --no-default-features --target x86_64-unknown-linux-gnu --bin guard --bin gate --bin report";

/// How an ELF executable is linked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Linking {
    /// No `PT_INTERP`, no `DT_NEEDED`.
    Static,
    /// A program interpreter and/or needed shared libraries.
    Dynamic { interpreter: bool, needed: usize },
}

impl Linking {
    pub fn describe(&self) -> String {
        match self {
            Linking::Static => "statically linked (no PT_INTERP, no DT_NEEDED)".to_owned(),
            Linking::Dynamic {
                interpreter,
                needed,
            } => format!(
                "dynamically linked ({}{needed} DT_NEEDED)",
                if *interpreter { "PT_INTERP, " } else { "" }
            ),
        }
    }
}

const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;
const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;

fn read_u16(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn read_u64(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

/// The linking of a 64-bit little-endian ELF file (the only kind the release has for x86_64 and
/// aarch64 Linux), read from its program headers and its dynamic section.
pub fn elf_linking(bytes: &[u8]) -> Result<Linking, String> {
    if bytes.get(..4) != Some(b"\x7fELF".as_slice()) {
        return Err("not an ELF file".to_owned());
    }
    if bytes.get(4) != Some(&2) || bytes.get(5) != Some(&1) {
        return Err("not a 64-bit little-endian ELF file".to_owned());
    }
    let bad = || "truncated ELF headers".to_owned();
    let phoff = usize::try_from(read_u64(bytes, 0x20).ok_or_else(bad)?).map_err(|_| bad())?;
    let phentsize = usize::from(read_u16(bytes, 0x36).ok_or_else(bad)?);
    let phnum = usize::from(read_u16(bytes, 0x38).ok_or_else(bad)?);
    if phentsize < 56 {
        return Err("ELF program header entries are too small".to_owned());
    }
    let mut interpreter = false;
    let mut needed = 0;
    for index in 0..phnum {
        let at = phoff
            .checked_add(index.checked_mul(phentsize).ok_or_else(bad)?)
            .ok_or_else(bad)?;
        let kind = read_u32(bytes, at).ok_or_else(bad)?;
        if kind == PT_INTERP {
            interpreter = true;
        }
        if kind == PT_DYNAMIC {
            let offset =
                usize::try_from(read_u64(bytes, at + 8).ok_or_else(bad)?).map_err(|_| bad())?;
            let size =
                usize::try_from(read_u64(bytes, at + 32).ok_or_else(bad)?).map_err(|_| bad())?;
            for entry in 0..size / 16 {
                let tag = read_u64(bytes, offset + entry * 16).ok_or_else(bad)?;
                if tag == DT_NULL {
                    break;
                }
                if tag == DT_NEEDED {
                    needed += 1;
                }
            }
        }
    }
    Ok(if interpreter || needed > 0 {
        Linking::Dynamic {
            interpreter,
            needed,
        }
    } else {
        Linking::Static
    })
}

/// Builds the static binaries (a no-op when they are fresh) in `target_dir` from the workspace at
/// `workspace`; returns the directory holding them.
pub fn build_static(workspace: &Path, target_dir: &Path) -> Result<PathBuf, LocalRunError> {
    if !workspace.join("Cargo.toml").is_file() {
        return Err(LocalRunError::Setup(format!(
            "the workspace local-run was built from is not at {} any more; rebuild it, or pass \
             --binaries DIR with guard, gate and report",
            workspace.display()
        )));
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(&cargo);
    cmd.args([
        "build",
        "--quiet",
        "--release",
        "--locked",
        "--workspace",
        "--no-default-features",
        "--target",
        TARGET,
    ])
    .args(STAGE_BINARIES.iter().flat_map(|b| ["--bin", b]))
    .arg("--target-dir")
    .arg(target_dir)
    .env("RUSTFLAGS", "-C target-feature=+crt-static")
    .env_remove("CARGO_ENCODED_RUSTFLAGS")
    .env_remove("CARGO_TARGET_DIR")
    .env_remove("CARGO_BUILD_TARGET")
    .current_dir(workspace)
    .stdin(Stdio::null());
    let status = cmd
        .status()
        .map_err(io_error(format!("run {}", PathBuf::from(&cargo).display())))?;
    if !status.success() {
        return Err(LocalRunError::Setup(format!(
            "the static build of the stage binaries failed ({status})"
        )));
    }
    Ok(target_dir.join(TARGET).join("release"))
}

/// One installed binary.
#[derive(Debug, Clone)]
pub struct Installed {
    pub name: &'static str,
    pub bytes: u64,
    pub sha256: String,
    pub linking: Linking,
}

/// Copies the binaries in `source` into `release` and writes `release/SHA256SUMS` (what the
/// release workflow publishes beside its assets).
pub fn write_release(source: &Path, release: &Path) -> Result<String, LocalRunError> {
    std::fs::create_dir_all(release).map_err(io_error(format!("create {}", release.display())))?;
    let mut sums = String::new();
    for name in STAGE_BINARIES {
        let from = source.join(name);
        let bytes = std::fs::read(&from).map_err(io_error(format!(
            "read the stage binary {} (build it, or point --binaries at a directory holding \
             guard, gate and report)",
            from.display()
        )))?;
        let to = release.join(name);
        std::fs::write(&to, &bytes).map_err(io_error(format!("write {}", to.display())))?;
        let _ = writeln!(sums, "{}  {name}", sha256_hex(&bytes));
    }
    let path = release.join("SHA256SUMS");
    std::fs::write(&path, &sums).map_err(io_error(format!("write {}", path.display())))?;
    Ok(sums)
}

/// The SHA-256 `SHA256SUMS` gives `name`: exactly one line `<64 hex>  <name>` (`--strict`).
fn expected_sum(sums: &str, name: &str) -> Result<String, LocalRunError> {
    let mut found = None;
    for line in sums.lines() {
        let Some((hash, file)) = line.split_once("  ") else {
            return Err(LocalRunError::Setup(format!(
                "SHA256SUMS: improperly formatted line {line:?}"
            )));
        };
        if contract::ids::Sha256Hex::parse(hash).is_err() {
            return Err(LocalRunError::Setup(format!(
                "SHA256SUMS: improperly formatted line {line:?}"
            )));
        }
        if file == name {
            if found.is_some() {
                return Err(LocalRunError::Setup(format!(
                    "SHA256SUMS names {name} twice"
                )));
            }
            found = Some(hash.to_owned());
        }
    }
    found.ok_or_else(|| LocalRunError::Setup(format!("SHA256SUMS does not name {name}")))
}

/// The install step: each asset of `release` copied into `install`, its copy hashed and compared
/// with `release/SHA256SUMS` before it is made executable; the first mismatch refuses the install
/// (the copied files are removed).
pub fn install(release: &Path, install: &Path) -> Result<Vec<Installed>, LocalRunError> {
    let result = install_all(release, install);
    if result.is_err() {
        for name in STAGE_BINARIES {
            let _ = std::fs::remove_file(install.join(name));
        }
    }
    result
}

fn install_all(release: &Path, install: &Path) -> Result<Vec<Installed>, LocalRunError> {
    use std::os::unix::fs::PermissionsExt;
    let sums_path = release.join("SHA256SUMS");
    let sums = std::fs::read_to_string(&sums_path)
        .map_err(io_error(format!("read {}", sums_path.display())))?;
    std::fs::create_dir_all(install).map_err(io_error(format!("create {}", install.display())))?;
    let mut installed = Vec::new();
    for name in STAGE_BINARIES {
        let expected = expected_sum(&sums, name)?;
        let to = install.join(name);
        std::fs::copy(release.join(name), &to)
            .map_err(io_error(format!("copy {name} into {}", install.display())))?;
        let bytes = std::fs::read(&to).map_err(io_error(format!("read {}", to.display())))?;
        let actual = sha256_hex(&bytes);
        if actual != expected {
            return Err(LocalRunError::Setup(format!(
                "{name} hashes to {actual}, not the {expected} SHA256SUMS gives it: install refused"
            )));
        }
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o555))
            .map_err(io_error(format!("chmod {}", to.display())))?;
        let linking = elf_linking(&bytes)
            .map_err(|e| LocalRunError::Setup(format!("{}: {e}", to.display())))?;
        installed.push(Installed {
            name,
            bytes: bytes.len() as u64,
            sha256: actual,
            linking,
        });
    }
    Ok(installed)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    /// A minimal ELF64 header with the given program headers (type, offset, file size) and a
    /// dynamic section of `dynamic` tags at offset 0x200.
    fn elf(phdrs: &[(u32, u64, u64)], dynamic: &[u64]) -> Vec<u8> {
        let mut bytes = vec![0u8; 0x400];
        bytes[..4].copy_from_slice(b"\x7fELF");
        bytes[4] = 2;
        bytes[5] = 1;
        bytes[0x20..0x28].copy_from_slice(&0x40u64.to_le_bytes());
        bytes[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
        bytes[0x38..0x3a].copy_from_slice(&(phdrs.len() as u16).to_le_bytes());
        for (i, (kind, offset, size)) in phdrs.iter().enumerate() {
            let at = 0x40 + i * 56;
            bytes[at..at + 4].copy_from_slice(&kind.to_le_bytes());
            bytes[at + 8..at + 16].copy_from_slice(&offset.to_le_bytes());
            bytes[at + 32..at + 40].copy_from_slice(&size.to_le_bytes());
        }
        for (i, tag) in dynamic.iter().enumerate() {
            let at = 0x200 + i * 16;
            bytes[at..at + 8].copy_from_slice(&tag.to_le_bytes());
        }
        bytes
    }

    #[test]
    fn linking_is_read_from_the_program_headers() {
        // static-pie: a dynamic section without DT_NEEDED, no interpreter.
        let static_pie = elf(&[(1, 0, 0), (PT_DYNAMIC, 0x200, 48)], &[0x6ffffffb, 30, 0]);
        assert_eq!(elf_linking(&static_pie), Ok(Linking::Static));
        let dynamic = elf(
            &[(PT_INTERP, 0x300, 28), (PT_DYNAMIC, 0x200, 64)],
            &[DT_NEEDED, DT_NEEDED, 30, 0],
        );
        assert_eq!(
            elf_linking(&dynamic),
            Ok(Linking::Dynamic {
                interpreter: true,
                needed: 2
            })
        );
        let needed_only = elf(&[(PT_DYNAMIC, 0x200, 32)], &[DT_NEEDED, 0]);
        assert_eq!(
            elf_linking(&needed_only),
            Ok(Linking::Dynamic {
                interpreter: false,
                needed: 1
            })
        );
        assert!(elf_linking(b"#!/bin/sh\n").is_err());
        let mut truncated = static_pie.clone();
        truncated.truncate(0x50);
        assert!(elf_linking(&truncated).is_err());
    }

    #[test]
    fn this_test_binary_is_read_as_the_toolchain_linked_it() {
        // A test binary of the gnu target is dynamically linked unless built with crt-static.
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let linking = elf_linking(&me).unwrap();
        let crt_static = cfg!(target_feature = "crt-static");
        assert_eq!(linking == Linking::Static, crt_static, "{linking:?}");
    }

    fn fake_binaries(dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        for name in STAGE_BINARIES {
            std::fs::write(dir.join(name), elf(&[], &[])).unwrap();
        }
    }

    #[test]
    fn install_checks_every_asset_against_sha256sums() {
        let tmp = tempfile::tempdir().unwrap();
        fake_binaries(&tmp.path().join("built"));
        let release = tmp.path().join("release");
        let sums = write_release(&tmp.path().join("built"), &release).unwrap();
        assert_eq!(sums.lines().count(), 3);
        let installed = install(&release, &tmp.path().join("bin")).unwrap();
        assert_eq!(installed.len(), 3);
        for item in &installed {
            assert!(sums.contains(&format!("{}  {}", item.sha256, item.name)));
        }
    }

    #[test]
    fn a_tampered_asset_or_sums_file_refuses_the_install() {
        for tamper in [
            "gate",
            "SHA256SUMS-missing",
            "SHA256SUMS-dup",
            "SHA256SUMS-bad",
        ] {
            let tmp = tempfile::tempdir().unwrap();
            fake_binaries(&tmp.path().join("built"));
            let release = tmp.path().join("release");
            let sums = write_release(&tmp.path().join("built"), &release).unwrap();
            let sums_path = release.join("SHA256SUMS");
            let want = match tamper {
                "gate" => {
                    std::fs::write(release.join("gate"), b"\x7fELF replaced").unwrap();
                    "gate hashes to"
                }
                "SHA256SUMS-missing" => {
                    let kept: String = sums
                        .lines()
                        .filter(|l| !l.ends_with("  report"))
                        .map(|l| format!("{l}\n"))
                        .collect();
                    std::fs::write(&sums_path, kept).unwrap();
                    "does not name report"
                }
                "SHA256SUMS-dup" => {
                    std::fs::write(&sums_path, format!("{sums}{}  guard\n", "0".repeat(64)))
                        .unwrap();
                    "names guard twice"
                }
                _ => {
                    std::fs::write(&sums_path, format!("{sums}not a sum line\n")).unwrap();
                    "improperly formatted"
                }
            };
            let bin = tmp.path().join("bin");
            let err = install(&release, &bin).unwrap_err().to_string();
            assert!(err.contains(want), "{tamper}: {err}");
            for name in STAGE_BINARIES {
                assert!(!bin.join(name).exists(), "{tamper}: {name} left installed");
            }
        }
    }
}

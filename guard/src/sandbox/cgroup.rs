//! The build's memory and task bound as a whole: a control group of its own, where the host
//! allows one (root on a cgroup v2 host, as on GitHub's runners; the v1 `memory` and `pids`
//! hierarchies where those are mounted instead). Every page the build's processes allocate is
//! charged there, also the pages of its tmpfs files and `memfd`s, which `RLIMIT_DATA` does not
//! count; past `memory.max` the kernel reclaims and then kills inside the group only.
//!
//! The group is made by the trusted outer process, which moves itself into it just before it
//! starts the sandbox (a child starts in its parent's group: nothing of the build is ever
//! outside) and back out at once. The stages then make a cgroup namespace rooted at the group,
//! and the enter stage proves that it is a member and reads the limits. The group is removed
//! once no process of the build is left.
//!
//! On cgroup v2 the group is made at the root of the hierarchy the guard sees: a group that
//! holds processes (the guard's own) cannot enable controllers for its children there. On v1
//! it is made beneath the guard's own group in each hierarchy, so limits above it still apply.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// The bound in force for one build.
#[derive(Debug)]
pub struct BuildCgroup {
    pub version: u8,
    /// The group's directories (one on v2, one per hierarchy on v1), in the host's view.
    pub dirs: Vec<PathBuf>,
    /// The `cgroup.procs` files of the guard's own groups, to return to.
    home: Vec<PathBuf>,
    pub memory_max: u64,
    pub pids_max: u64,
}

/// The control group the sandbox started in, as the stages are told of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CgroupPlan {
    pub version: u8,
    /// Its directories, as the host (and the read-only view) shows them.
    pub dirs: Vec<PathBuf>,
    pub memory_max: u64,
    pub pids_max: u64,
}

/// The files of one version: where memory and tasks are limited.
pub struct Files {
    pub memory_max: &'static str,
    pub pids_max: &'static str,
}

impl BuildCgroup {
    pub fn files(version: u8) -> Files {
        if version == 2 {
            Files {
                memory_max: "memory.max",
                pids_max: "pids.max",
            }
        } else {
            Files {
                memory_max: "memory.limit_in_bytes",
                pids_max: "pids.max",
            }
        }
    }

    /// Makes the group `guard-run-<nonce>` with the limits, or says why the host allows none.
    pub fn create(nonce: &str, memory_max: u64, pids_max: u64) -> Result<BuildCgroup, String> {
        let name = format!("guard-run-{nonce}");
        let own = std::fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| format!("read /proc/self/cgroup: {e}"))?;
        let version = if is_cgroup2(Path::new(CGROUP_ROOT)) {
            2
        } else {
            1
        };
        let mut group = BuildCgroup {
            version,
            dirs: Vec::new(),
            home: Vec::new(),
            memory_max,
            pids_max,
        };
        let files = Self::files(version);
        let placements: Vec<(PathBuf, PathBuf, &str)> = if version == 2 {
            let root = PathBuf::from(CGROUP_ROOT);
            let controllers = std::fs::read_to_string(root.join("cgroup.subtree_control"))
                .map_err(|e| format!("cgroup v2: {e}"))?;
            let enabled: Vec<&str> = controllers.split_whitespace().collect();
            if !enabled.contains(&"memory") || !enabled.contains(&"pids") {
                return Err(format!(
                    "cgroup v2: the memory and pids controllers are not enabled at the root ({})",
                    controllers.trim()
                ));
            }
            let own_path = own
                .lines()
                .find_map(|l| l.strip_prefix("0::"))
                .ok_or("cgroup v2: no entry in /proc/self/cgroup")?;
            let home = root.join(own_path.trim_start_matches('/'));
            vec![(
                root.join(&name),
                home.join("cgroup.procs"),
                files.memory_max,
            )]
        } else {
            let mut placements = Vec::new();
            for controller in ["memory", "pids"] {
                let mount = Path::new(CGROUP_ROOT).join(controller);
                if !mount.join("cgroup.procs").is_file() {
                    return Err(format!("no cgroup v1 {controller} hierarchy"));
                }
                let own_path = own
                    .lines()
                    .find_map(|l| {
                        let mut fields = l.splitn(3, ':');
                        let _id = fields.next()?;
                        let list = fields.next()?;
                        let path = fields.next()?;
                        list.split(',').any(|c| c == controller).then_some(path)
                    })
                    .ok_or(format!("cgroup v1: not in a {controller} group"))?;
                let home = mount.join(own_path.trim_start_matches('/'));
                placements.push((home.join(&name), home.join("cgroup.procs"), controller));
            }
            placements
        };
        for (dir, home, _) in &placements {
            std::fs::create_dir(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
            group.dirs.push(dir.clone());
            group.home.push(home.clone());
        }
        let write = |dir: &Path, file: &str, value: &str| {
            std::fs::write(dir.join(file), value)
                .map_err(|e| format!("write {}/{file}: {e}", dir.display()))
        };
        for (dir, _, controller) in &placements {
            if version == 2 || *controller == "memory" {
                write(dir, files.memory_max, &memory_max.to_string())?;
                // No swap either (a file that exists only with swap accounting).
                let swap = if version == 2 {
                    "memory.swap.max"
                } else {
                    "memory.memsw.limit_in_bytes"
                };
                if dir.join(swap).exists() {
                    let value = if version == 2 {
                        "0".to_string()
                    } else {
                        memory_max.to_string()
                    };
                    write(dir, swap, &value)?;
                }
            }
            if version == 2 || *controller == "pids" {
                write(dir, files.pids_max, &pids_max.to_string())?;
            }
        }
        Ok(group)
    }

    /// Moves the calling process (all its threads) into the group.
    pub fn enter(&self) -> io::Result<()> {
        let pid = std::process::id().to_string();
        for dir in &self.dirs {
            std::fs::write(dir.join("cgroup.procs"), &pid)?;
        }
        Ok(())
    }

    /// Moves the calling process back to the groups it came from.
    pub fn leave(&self) -> io::Result<()> {
        let pid = std::process::id().to_string();
        for home in &self.home {
            std::fs::write(home, &pid)?;
        }
        Ok(())
    }

    /// How often the kernel killed a process of the group for memory (v2 `memory.events`,
    /// v1 `memory.oom_control`'s `oom_kill`).
    pub fn oom_kills(&self) -> Option<u64> {
        let (file, key) = if self.version == 2 {
            ("memory.events", "oom_kill ")
        } else {
            ("memory.oom_control", "oom_kill ")
        };
        let dir = self.dirs.first()?;
        let text = std::fs::read_to_string(dir.join(file)).ok()?;
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse().ok())
    }
}

impl Drop for BuildCgroup {
    /// Removes the group; it is empty once the build's pid namespace is gone (the kernel may
    /// take a moment to release the last exited task).
    fn drop(&mut self) {
        for dir in &self.dirs {
            for _ in 0..50 {
                if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }
}

fn is_cgroup2(path: &Path) -> bool {
    nix::sys::statfs::statfs(path)
        .is_ok_and(|s| s.filesystem_type() == nix::sys::statfs::CGROUP2_SUPER_MAGIC)
}

/// The host's memory (`MemTotal` of `/proc/meminfo`) in bytes.
pub fn mem_total() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

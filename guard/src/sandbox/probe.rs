//! Proof that the network is closed, read from inside the namespace before the command runs. It is
//! obtained without sending any traffic: it only reads `/proc` (the interfaces and routing tables
//! of the reading task's network namespace, and the namespace identities).

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::Path;

use serde::{Deserialize, Serialize};

/// What the inner stage saw. The raw namespace identities (`net:[4026532181]`) travel to the outer
/// process, which compares them with its own; the booleans in the report are computed there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkProbe {
    /// Interface names from `/proc/net/dev`.
    pub interfaces: Vec<String>,
    /// Every IPv4 and IPv6 route.
    pub routes: Vec<Route>,
    /// `readlink /proc/self/ns/net`.
    pub netns: String,
    /// `readlink /proc/self/ns/user`.
    pub userns: String,
    /// Whether `ip link set lo up` succeeded (loopback is usable inside; it isolates either way).
    pub loopback_up: bool,
    /// Whether a write into the repository's `.git` failed with "read-only file system";
    /// `None` without `--repo`.
    pub git_dir_read_only: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// `ipv4` or `ipv6`.
    pub family: String,
    pub interface: String,
    /// `address/prefix`.
    pub destination: String,
}

pub const LOOPBACK: &str = "lo";

impl NetworkProbe {
    /// Reads the probe from `/proc` as the calling process sees it.
    pub fn collect(loopback_up: bool, git_dir_read_only: Option<bool>) -> io::Result<NetworkProbe> {
        let read_optional = |path: &str| match std::fs::read_to_string(path) {
            // No table means the protocol is absent (e.g. ipv6.disable=1), so it has no routes.
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(String::new()),
            other => other,
        };
        let mut routes = parse_ipv4_routes(&read_optional("/proc/net/route")?);
        routes.extend(parse_ipv6_routes(&read_optional("/proc/net/ipv6_route")?));
        Ok(NetworkProbe {
            interfaces: parse_net_dev(&std::fs::read_to_string("/proc/net/dev")?),
            routes,
            netns: namespace_id("net")?,
            userns: namespace_id("user")?,
            loopback_up,
            git_dir_read_only,
        })
    }

    /// Why this probe does not prove isolation (empty when it does): only loopback exists, every
    /// route goes through it, and both the network and the user namespace differ from the outer
    /// ones; with a repository, `.git` is read-only.
    /// `network_namespace`: whether the sandbox has one; without one (`--no-isolation-because`)
    /// the interfaces, routes and network namespace are the host's, and only the rest is checked.
    pub fn problems(
        &self,
        outer_netns: &str,
        outer_userns: &str,
        network_namespace: bool,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        if network_namespace {
            problems.extend(self.network_problems(outer_netns));
        }
        if self.userns == outer_userns {
            problems.push(format!("user namespace {} is the outer one", self.userns));
        }
        if self.git_dir_read_only == Some(false) {
            problems.push(".git is writable".to_string());
        }
        problems
    }

    fn network_problems(&self, outer_netns: &str) -> Vec<String> {
        let mut problems = Vec::new();
        let foreign: Vec<&str> = self
            .interfaces
            .iter()
            .map(String::as_str)
            .filter(|i| *i != LOOPBACK)
            .collect();
        if !foreign.is_empty() {
            problems.push(format!(
                "interfaces other than {LOOPBACK}: {}",
                foreign.join(", ")
            ));
        }
        let routed: Vec<String> = self
            .routes
            .iter()
            .filter(|r| r.interface != LOOPBACK)
            .map(|r| format!("{} via {}", r.destination, r.interface))
            .collect();
        if !routed.is_empty() {
            problems.push(format!("non-loopback routes: {}", routed.join(", ")));
        }
        if self.netns == outer_netns {
            problems.push(format!("network namespace {} is the outer one", self.netns));
        }
        problems
    }
}

/// `readlink /proc/self/ns/<kind>`, e.g. `net:[4026531833]`.
pub fn namespace_id(kind: &str) -> io::Result<String> {
    let link = std::fs::read_link(Path::new("/proc/self/ns").join(kind))?;
    Ok(link.to_string_lossy().into_owned())
}

/// Interface names from `/proc/net/dev` (two header lines, then `name: counters...`).
pub fn parse_net_dev(text: &str) -> Vec<String> {
    text.lines()
        .skip(2)
        .filter_map(|line| line.split_once(':'))
        .map(|(name, _)| name.trim().to_string())
        .collect()
}

/// Routes from `/proc/net/route`: a header line, then `Iface Destination Gateway Flags RefCnt Use
/// Metric Mask ...`, addresses as the kernel's native-endian hex of the network-order value.
pub fn parse_ipv4_routes(text: &str) -> Vec<Route> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let interface = fields.first()?;
            let destination = u32::from_str_radix(fields.get(1)?, 16).ok()?;
            let mask = u32::from_str_radix(fields.get(7)?, 16).ok()?;
            let address = Ipv4Addr::from(destination.to_ne_bytes());
            let prefix = mask.count_ones();
            Some(Route {
                family: "ipv4".into(),
                interface: (*interface).to_string(),
                destination: format!("{address}/{prefix}"),
            })
        })
        .collect()
}

/// Routes from `/proc/net/ipv6_route`: `dest dest_prefix src src_prefix next_hop metric refcnt use
/// flags iface`, addresses as 32 hex digits in network order.
pub fn parse_ipv6_routes(text: &str) -> Vec<Route> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let address = Ipv6Addr::from(u128::from_str_radix(fields.first()?, 16).ok()?);
            let prefix = u8::from_str_radix(fields.get(1)?, 16).ok()?;
            let interface = fields.get(9)?;
            Some(Route {
                family: "ipv6".into(),
                interface: (*interface).to_string(),
                destination: format!("{address}/{prefix}"),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    const NET_DEV: &str = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
  eth0: 1234      10    0    0    0     0          0         0      567       8    0    0    0     0       0          0
";

    // A host table: default route via eth0 (10.0.0.1), the 10.0.0.0/24 link route.
    const ROUTE: &str =
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
eth0\t00000000\t0100000A\t0003\t0\t0\t0\t00000000\t0\t0\t0
eth0\t0000000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
";

    // Inside a fresh namespace with lo up: ::1/128 on lo, and the unreachable null route on lo.
    const IPV6_ROUTE: &str = "\
00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 00000000 00000002 00000000 80200001       lo
00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo
";

    #[test]
    fn parses_proc_tables() {
        assert_eq!(parse_net_dev(NET_DEV), ["lo", "eth0"]);
        let v4 = parse_ipv4_routes(ROUTE);
        let v4: Vec<(&str, &str)> = v4
            .iter()
            .map(|r| (r.interface.as_str(), r.destination.as_str()))
            .collect();
        assert_eq!(v4, [("eth0", "0.0.0.0/0"), ("eth0", "10.0.0.0/24")]);
        let v6 = parse_ipv6_routes(IPV6_ROUTE);
        let v6: Vec<(&str, &str)> = v6
            .iter()
            .map(|r| (r.interface.as_str(), r.destination.as_str()))
            .collect();
        assert_eq!(v6, [("lo", "::1/128"), ("lo", "::/0")]);
        assert!(parse_ipv4_routes("Iface\tDestination\n").is_empty());
    }

    fn isolated() -> NetworkProbe {
        NetworkProbe {
            interfaces: vec!["lo".into()],
            routes: parse_ipv6_routes(IPV6_ROUTE),
            netns: "net:[2]".into(),
            userns: "user:[2]".into(),
            loopback_up: true,
            git_dir_read_only: Some(true),
        }
    }

    #[test]
    fn isolation_problems() {
        assert!(isolated().problems("net:[1]", "user:[1]", true).is_empty());

        let mut host = isolated();
        host.interfaces = parse_net_dev(NET_DEV);
        host.routes = parse_ipv4_routes(ROUTE);
        host.netns = "net:[1]".into();
        host.userns = "user:[1]".into();
        host.git_dir_read_only = Some(false);
        assert_eq!(
            host.problems("net:[1]", "user:[1]", true),
            [
                "interfaces other than lo: eth0",
                "non-loopback routes: 0.0.0.0/0 via eth0, 10.0.0.0/24 via eth0",
                "network namespace net:[1] is the outer one",
                "user namespace user:[1] is the outer one",
                ".git is writable",
            ]
        );
    }
}

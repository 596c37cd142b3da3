//! The memory a scenario may take: `simulation.memory_limit_mib`, or less when the process's
//! address-space limit (`ulimit -v`, RLIMIT_AS, which batch systems set), its memory cgroup
//! (a container's or a batch job's cap on resident memory, [`super::cgroup_memory`]) or a
//! limit its host program sets (a Dask worker's, [`super::host_memory`]) leaves less: a
//! scenario within `simulation.memory_limit_mib` but beyond that room passed validation and
//! aborted the process when an allocation failed ("memory allocation of 4097024 bytes
//! failed", exit 134), or was killed (exit 137, by the kernel or by the worker's nanny). The
//! room is read on Linux; elsewhere, and without a limit, only `memory_limit_mib` counts.

use super::{cgroup_memory, host_memory};
use std::path::PathBuf;

/// The default of `simulation.memory_limit_mib`.
pub const DEFAULT_LIMIT_MIB: u64 = 4096;

/// The memory a scenario may take: `simulation.memory_limit_mib` (4 GiB by default), or less
/// when the process's room leaves less. Only half of the room counts: the estimate is what the
/// run holds, and a table that grows needs up to twice its size for a moment (at exactly the
/// room under `ulimit -v`, a run still aborted), while the results are copied once into
/// Python's tables before the core's copy is freed.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryLimit {
    pub mib: u64,
    /// The process's room, when half of it is the smaller limit.
    pub room: Option<Room>,
}

/// What a limit of the process leaves it: MiB it may still map (`ulimit -v`) or still hold
/// (a memory cgroup, a host's limit).
#[derive(Clone, Debug, PartialEq)]
pub struct Room {
    pub mib: u64,
    pub cap: Cap,
}

/// The process's limit a room comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Cap {
    AddressSpace,
    /// A memory cgroup, by its folder.
    Group(PathBuf),
    /// A limit the host program set, by its words and how to raise it.
    Host {
        what: String,
        raise: String,
    },
}

impl MemoryLimit {
    /// The limit of a scenario that gives `given` (`simulation.memory_limit_mib`), in this
    /// process.
    pub fn of(given: Option<u64>) -> Self {
        Self::within(given, process_room())
    }

    /// The limit of a scenario that gives `given`, in a process with `room`.
    pub fn within(given: Option<u64>, room: Option<Room>) -> Self {
        let asked = given.unwrap_or(DEFAULT_LIMIT_MIB);
        match room {
            Some(room) if room.mib / 2 < asked => MemoryLimit {
                mib: room.mib / 2,
                room: Some(room),
            },
            _ => MemoryLimit {
                mib: asked,
                room: None,
            },
        }
    }

    /// Whether a limit of the process, not the scenario's, is the smaller.
    pub fn by_process(&self) -> bool {
        self.room.is_some()
    }

    /// The limit in an error's words: "the memory limit of 4096 MiB".
    pub fn words(&self) -> String {
        match &self.room {
            Some(Room {
                mib: room,
                cap: Cap::AddressSpace,
            }) => format!(
                "{} MiB, half the {room} MiB this process may still map (ulimit -v: a growing \
                 table needs twice its size for a moment)",
                self.mib
            ),
            Some(Room {
                mib: room,
                cap: Cap::Group(group),
            }) => format!(
                "{} MiB, half the {room} MiB this process may still hold under its memory \
                 cgroup's limit ({}: the results are copied once into Python's tables)",
                self.mib,
                group.display()
            ),
            Some(Room {
                mib: room,
                cap: Cap::Host { what, .. },
            }) => format!(
                "{} MiB, half the {room} MiB this process may still hold under {what} (half: \
                 the results are copied once into Python's tables)",
                self.mib
            ),
            None => format!("the memory limit of {} MiB", self.mib),
        }
    }

    /// How to raise it on purpose.
    pub fn raise(&self) -> String {
        let words = match &self.room {
            Some(Room {
                cap: Cap::AddressSpace,
                ..
            }) => "or run with a larger ulimit -v",
            Some(Room {
                cap: Cap::Group(_), ..
            }) => "or run with a larger memory limit (the container's or the job's)",
            Some(Room {
                cap: Cap::Host { raise, .. },
                ..
            }) => raise,
            None => "or raise simulation.memory_limit_mib on purpose",
        };
        words.to_string()
    }
}

/// The smaller room the process's limits leave it, if it has one.
pub fn process_room() -> Option<Room> {
    let mappable = room_mib().map(|mib| Room {
        mib,
        cap: Cap::AddressSpace,
    });
    let held = cgroup_memory::room().map(|group| Room {
        mib: group.bytes >> 20,
        cap: Cap::Group(group.group),
    });
    let hosted = host_memory::room().map(|(limit, bytes)| Room {
        mib: bytes >> 20,
        cap: Cap::Host {
            what: limit.what,
            raise: limit.raise,
        },
    });
    [mappable, held, hosted]
        .into_iter()
        .flatten()
        .min_by_key(|r| r.mib)
}

/// The MiB the process may still map, when an address-space limit is set.
pub fn room_mib() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let limit = address_space_limit()?;
        Some(limit.saturating_sub(mapped_bytes()?) >> 20)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

#[cfg(target_os = "linux")]
fn address_space_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the limit into the struct it is given and reads nothing else.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) };
    (read == 0 && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

/// The process's mapped address space now.
#[cfg(target_os = "linux")]
fn mapped_bytes() -> Option<u64> {
    statm_bytes(0)
}

/// Field `field` of /proc/self/statm (0: the mapped size, 1: the resident size) in bytes.
#[cfg(target_os = "linux")]
pub(super) fn statm_bytes(field: usize) -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(field)?.parse().ok()?;
    // SAFETY: sysconf reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()?)
}

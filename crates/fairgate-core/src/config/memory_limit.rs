//! The memory a scenario may take: `simulation.memory_limit_mib`, or less when the process's
//! address-space limit (`ulimit -v`, RLIMIT_AS, which batch systems set) leaves less: a
//! scenario within `simulation.memory_limit_mib` but beyond that room passed validation and
//! aborted the process when an allocation failed ("memory allocation of 4097024 bytes
//! failed", exit 134). The room is read on Linux; elsewhere, and without a limit, only
//! `memory_limit_mib` counts.

/// The default of `simulation.memory_limit_mib`.
pub const DEFAULT_LIMIT_MIB: u64 = 4096;

/// The memory a scenario may take: `simulation.memory_limit_mib` (4 GiB by default), or less
/// when the process's address-space limit (`ulimit -v`) leaves less. Only half of what the
/// process may still map counts: the estimate is what the run holds, and a table that grows
/// needs up to twice its size for a moment (at exactly the room, a run still aborted).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemoryLimit {
    pub mib: u64,
    /// What the process may still map, when that (halved) is the smaller limit.
    pub mappable_mib: Option<u64>,
}

impl MemoryLimit {
    /// The limit of a scenario that gives `given` (`simulation.memory_limit_mib`), in this
    /// process.
    pub fn of(given: Option<u64>) -> Self {
        Self::within(given, room_mib())
    }

    /// The limit of a scenario that gives `given`, in a process that may map `room` MiB more.
    pub fn within(given: Option<u64>, room: Option<u64>) -> Self {
        let asked = given.unwrap_or(DEFAULT_LIMIT_MIB);
        match room {
            Some(room) if room / 2 < asked => MemoryLimit {
                mib: room / 2,
                mappable_mib: Some(room),
            },
            _ => MemoryLimit {
                mib: asked,
                mappable_mib: None,
            },
        }
    }

    /// Whether the address-space limit, not the scenario's, is the smaller.
    pub fn by_ulimit(&self) -> bool {
        self.mappable_mib.is_some()
    }

    /// The limit in an error's words: "the memory limit of 4096 MiB".
    pub fn words(&self) -> String {
        match self.mappable_mib {
            Some(room) => format!(
                "{} MiB, half the {room} MiB this process may still map (ulimit -v: a growing \
                 table needs twice its size for a moment)",
                self.mib
            ),
            None => format!("the memory limit of {} MiB", self.mib),
        }
    }

    /// How to raise it on purpose.
    pub fn raise(&self) -> &'static str {
        if self.by_ulimit() {
            "or run with a larger ulimit -v"
        } else {
            "or raise simulation.memory_limit_mib on purpose"
        }
    }
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

/// The process's mapped address space now (the first field of /proc/self/statm, in pages).
#[cfg(target_os = "linux")]
fn mapped_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().next()?.parse().ok()?;
    // SAFETY: sysconf reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()?)
}

//! A memory limit the program hosting the core sets for its process: a Dask worker's
//! `memory_limit`, past which its nanny kills the worker and the sweep's point is lost
//! ("worker lost (KilledWorker ...)", after as many deaths as attempts). Neither the address
//! space nor a cgroup shows it, so the host says it ([`set`]) and the room is that limit less
//! the process's resident memory now.

use std::sync::RwLock;

/// A host's limit on this process's resident memory, and how an error names and raises it.
#[derive(Clone, Debug, PartialEq)]
pub struct HostLimit {
    pub bytes: u64,
    /// What the limit is, for an error ("the Dask worker's memory limit of 1907 MiB").
    pub what: String,
    /// How to raise it ("or workers with more memory (dask worker --memory-limit)").
    pub raise: String,
}

static HOST_LIMIT: RwLock<Option<HostLimit>> = RwLock::new(None);

/// Sets (or, with None, clears) the host's limit for the rest of the process.
pub fn set(limit: Option<HostLimit>) {
    *HOST_LIMIT
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = limit;
}

/// The host's limit and the bytes it leaves the process now, if a host set one.
pub fn room() -> Option<(HostLimit, u64)> {
    let limit = HOST_LIMIT
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone()?;
    let left = limit.bytes.saturating_sub(resident_bytes().unwrap_or(0));
    Some((limit, left))
}

/// The process's resident memory (the second field of /proc/self/statm), after
/// the allocator has handed back the heap earlier runs freed, so that pages free for the next
/// run are not counted against it (the nanny, reading the same figure, sees them gone too).
fn resident_bytes() -> Option<u64> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap memory to the system.
    unsafe {
        libc::malloc_trim(0);
    }
    #[cfg(target_os = "linux")]
    {
        super::memory_limit::statm_bytes(1)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_limit_leaves_its_bytes_less_the_resident_memory_until_cleared() {
        let limit = HostLimit {
            bytes: 1 << 40,
            what: "a host's limit".into(),
            raise: "or a larger one".into(),
        };
        set(Some(limit.clone()));
        let (got, left) = room().unwrap();
        assert_eq!(got, limit);
        // Less the test process's resident memory, which other tests' threads change.
        assert!(left < 1 << 40 && left > (1 << 40) - (4 << 30), "{left}");
        set(None);
        assert_eq!(room(), None);
    }
}

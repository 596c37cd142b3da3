//! The memory the process's control group may still take: a container (`docker run
//! --memory`), a batch job (Slurm's `--mem`) or a CI runner caps the resident memory of its
//! processes with a memory cgroup, and the kernel kills (SIGKILL, exit 137) a process that
//! passes the cap. A scenario within `simulation.memory_limit_mib` but beyond that cap ran
//! until the kernel killed it, with no word. Read on Linux from cgroup v2 (`memory.max` less
//! what the group holds, of the group and each ancestor) or v1 (`hierarchical_memory_limit`
//! of `memory.stat` less what the group holds); a group without a limit gives none. What the
//! group holds is its usage less its file cache (active and inactive), which the kernel takes
//! back before it kills: the files a run writes would otherwise shrink the next run's room,
//! and a group that had read much would refuse runs that fit.

use std::path::{Path, PathBuf};

/// The control group that caps the room, and its room in bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupRoom {
    pub bytes: u64,
    /// The group's folder, for the error's words.
    pub group: PathBuf,
}

/// The room of the process's memory cgroup, when it has a limit.
pub fn room() -> Option<GroupRoom> {
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    room_under(Path::new("/sys/fs/cgroup"), &membership)
}

/// The room of the memory cgroup that `membership` (the text of /proc/self/cgroup) names,
/// with the cgroup file systems mounted under `mounts`.
pub fn room_under(mounts: &Path, membership: &str) -> Option<GroupRoom> {
    let unified = membership.lines().find_map(|l| l.strip_prefix("0::"));
    let v1 = membership.lines().find_map(memory_v1_path);
    let from_v1 = v1.and_then(|path| v1_room(&group_folder(&mounts.join("memory"), path)?));
    let from_v2 = unified.and_then(|path| {
        [mounts.to_path_buf(), mounts.join("unified")]
            .iter()
            .find_map(|mount| v2_room(mount, path))
    });
    [from_v1, from_v2]
        .into_iter()
        .flatten()
        .min_by_key(|r| r.bytes)
}

/// The group's path in a v1 line that lists the memory controller ("4:memory:/a/b").
fn memory_v1_path(line: &str) -> Option<&str> {
    let mut fields = line.splitn(3, ':');
    let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
    controllers
        .split(',')
        .any(|c| c == "memory")
        .then_some(path)
}

/// The group's folder under `mount`; in a container's own namespace the group is the mount's
/// root, where the path from /proc/self/cgroup does not exist.
fn group_folder(mount: &Path, path: &str) -> Option<PathBuf> {
    let nested = mount.join(path.trim_start_matches('/'));
    [nested, mount.to_path_buf()]
        .into_iter()
        .find(|folder| folder.is_dir())
}

fn v1_room(group: &Path) -> Option<GroupRoom> {
    let stat = std::fs::read_to_string(group.join("memory.stat")).ok()?;
    let limit = stat_field(&stat, "hierarchical_memory_limit")?;
    if limit >= 1 << 62 {
        return None; // no limit reads as the largest page-aligned i64 (9223372036854771712)
    }
    let usage = number_in(&group.join("memory.usage_in_bytes"))?;
    let cache = file_cache(&stat, "total_");
    Some(GroupRoom {
        bytes: limit.saturating_sub(usage.saturating_sub(cache)),
        group: group.to_path_buf(),
    })
}

/// The smallest room of the group and its ancestors up to the mount: each limit counts.
fn v2_room(mount: &Path, path: &str) -> Option<GroupRoom> {
    let mut folder = group_folder(mount, path)?;
    let mut smallest: Option<GroupRoom> = None;
    loop {
        if let Some(room) = v2_group_room(&folder) {
            if smallest.as_ref().is_none_or(|s| room.bytes < s.bytes) {
                smallest = Some(room);
            }
        }
        if folder == mount || !folder.pop() {
            return smallest;
        }
    }
}

fn v2_group_room(group: &Path) -> Option<GroupRoom> {
    let max = number_in(&group.join("memory.max"))?; // "max": no limit
    let current = number_in(&group.join("memory.current"))?;
    let stat = std::fs::read_to_string(group.join("memory.stat")).unwrap_or_default();
    let cache = file_cache(&stat, "");
    Some(GroupRoom {
        bytes: max.saturating_sub(current.saturating_sub(cache)),
        group: group.to_path_buf(),
    })
}

/// The file cache a `memory.stat` text counts: its `active_file` and `inactive_file` (v1's
/// hierarchical ones with the `total_` prefix).
fn file_cache(stat: &str, prefix: &str) -> u64 {
    ["active_file", "inactive_file"]
        .iter()
        .filter_map(|name| stat_field(stat, &format!("{prefix}{name}")))
        .sum()
}

/// A field of a `memory.stat` text ("inactive_file 11415552").
fn stat_field(stat: &str, name: &str) -> Option<u64> {
    stat.lines().find_map(|line| {
        let (field, value) = line.split_once(' ')?;
        (field == name).then(|| value.trim().parse().ok())?
    })
}

fn number_in(file: &Path) -> Option<u64> {
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn write(folder: &Path, files: &[(&str, &str)]) {
        fs::create_dir_all(folder).unwrap();
        for (name, text) in files {
            fs::write(folder.join(name), text).unwrap();
        }
    }

    fn temp(name: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("fg-cgroup-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        root
    }

    #[test]
    fn a_v2_group_and_its_ancestors_each_cap_the_room() {
        let root = temp("v2");
        write(
            &root.join("job"),
            &[
                ("memory.max", "1073741824\n"),
                ("memory.current", "73741824\n"),
            ],
        );
        write(
            &root.join("job/step"),
            &[("memory.max", "max\n"), ("memory.current", "5\n")],
        );
        let room = room_under(&root, "0::/job/step\n").unwrap();
        assert_eq!(
            (room.bytes, room.group.clone()),
            (1_000_000_000, root.join("job"))
        );
        write(&root.join("job/step"), &[("memory.max", "600000000\n")]);
        assert_eq!(
            room_under(&root, "0::/job/step\n").unwrap().bytes,
            599_999_995
        );
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_v1_memory_group_gives_its_hierarchical_limit_less_its_usage() {
        let root = temp("v1");
        let group = root.join("memory/process_api/x");
        let stat = "cache 9\nhierarchical_memory_limit 1073741824\ntotal_inactive_file 5\n\
                    total_active_file 4\ninactive_file 1000\n";
        write(
            &group,
            &[
                ("memory.stat", stat),
                ("memory.usage_in_bytes", "73741824\n"),
            ],
        );
        let membership = "5:devices:/\n4:cpu,memory:/process_api/x\n0::/\n";
        let room = room_under(&root, membership).unwrap();
        assert_eq!((room.bytes, room.group), (1_000_000_009, group));
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn no_limit_no_group_or_unreadable_files_give_no_room() {
        let root = temp("none");
        let stat = "hierarchical_memory_limit 9223372036854771712\n";
        write(
            &root.join("memory"),
            &[("memory.stat", stat), ("memory.usage_in_bytes", "1\n")],
        );
        write(&root, &[("memory.max", "max\n"), ("memory.current", "1\n")]);
        assert_eq!(room_under(&root, "4:memory:/gone\n0::/\n"), None);
        assert_eq!(room_under(&root, ""), None);
        assert_eq!(room_under(&root.join("absent"), "4:memory:/\n0::/\n"), None);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn in_a_namespace_the_mount_root_is_the_group() {
        let root = temp("ns");
        write(
            &root,
            &[("memory.max", "2000\n"), ("memory.current", "500\n")],
        );
        assert_eq!(room_under(&root, "0::/\n").unwrap().bytes, 1500);
        assert_eq!(room_under(&root, "0::/not/here\n").unwrap().bytes, 1500);
        fs::remove_dir_all(&root).unwrap();
    }
}

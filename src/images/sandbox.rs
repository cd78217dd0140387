//! The system call filter of a decoder's child process: once the file is
//! read, the child may only write its answer (stdout, stderr), manage its
//! memory, start threads (the AVIF decoder's two) and exit. A decoder that a
//! hostile file takes over can then open no file, no socket and no
//! process; any other call kills the child, which the server sees as a
//! refused image. Filters are inherited by the threads started after.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

/// The calls allowed with any arguments: memory (the allocator), locks,
/// signals returning, and leaving.
const ANY_ARGUMENTS: [libc::c_long; 11] = [
    libc::SYS_munmap,
    libc::SYS_mremap,
    libc::SYS_brk,
    libc::SYS_madvise,
    libc::SYS_futex,
    libc::SYS_sched_yield,
    libc::SYS_rt_sigreturn,
    libc::SYS_rt_sigprocmask,
    libc::SYS_sigaltstack,
    libc::SYS_exit,
    libc::SYS_exit_group,
];

/// The calls a thread's start takes, beyond [`ANY_ARGUMENTS`]: its stack's
/// guard page, glibc's per-thread registrations and signal handler, its
/// CPU set and id. `clone` is allowed only for a thread (below); `clone3`,
/// whose flags a filter cannot see, answers ENOSYS and glibc falls back to
/// `clone`.
const FOR_THREADS: [libc::c_long; 6] = [
    libc::SYS_mprotect,
    libc::SYS_set_robust_list,
    libc::SYS_rseq,
    libc::SYS_rt_sigaction,
    libc::SYS_sched_getaffinity,
    libc::SYS_gettid,
];

/// Whether the child may start threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Threads {
    None,
    Allowed,
}

/// The filters: the calls above, `read` of stdin and `write` to stdout and
/// stderr (and with `threads`, what starting a thread takes); anything else
/// gets `otherwise`.
pub(super) fn filters(
    threads: Threads,
    otherwise: SeccompAction,
) -> Result<Vec<BpfProgram>, String> {
    let arch = std::env::consts::ARCH.try_into().map_err(|e| {
        format!(
            "no system call filter for {}: {e:?}",
            std::env::consts::ARCH
        )
    })?;
    let arg0 = |op: SeccompCmpOp, value: u64| {
        SeccompCondition::new(0, SeccompCmpArgLen::Qword, op, value)
            .and_then(|c| SeccompRule::new(vec![c]))
            .map_err(|e| e.to_string())
    };
    let fd_is = |fd: u64| arg0(SeccompCmpOp::Eq, fd);
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        ANY_ARGUMENTS.iter().map(|n| (*n, Vec::new())).collect();
    // Memory, not a file: a descriptor the server left open stays unread.
    let anonymous = u64::try_from(libc::MAP_ANONYMOUS).map_err(|e| e.to_string())?;
    let mmap_anonymous = SeccompCondition::new(
        3,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::MaskedEq(anonymous),
        anonymous,
    )
    .and_then(|c| SeccompRule::new(vec![c]))
    .map_err(|e| e.to_string())?;
    rules.insert(libc::SYS_mmap, vec![mmap_anonymous]);
    rules.insert(libc::SYS_read, vec![fd_is(0)?]);
    rules.insert(libc::SYS_write, vec![fd_is(1)?, fd_is(2)?]);
    let mut programs = Vec::new();
    if threads == Threads::Allowed {
        rules.extend(FOR_THREADS.iter().map(|n| (*n, Vec::new())));
        let thread = u64::try_from(libc::CLONE_THREAD).map_err(|e| e.to_string())?;
        rules.insert(
            libc::SYS_clone,
            vec![arg0(SeccompCmpOp::MaskedEq(thread), thread)?],
        );
        let name = u64::try_from(libc::PR_SET_NAME).map_err(|e| e.to_string())?;
        rules.insert(libc::SYS_prctl, vec![arg0(SeccompCmpOp::Eq, name)?]);
        // Allowed here, refused by the filter below (the stricter wins).
        rules.insert(libc::SYS_clone3, Vec::new());
        let no_clone3 = SeccompFilter::new(
            BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
            SeccompAction::Allow,
            SeccompAction::Errno(libc::ENOSYS.unsigned_abs()),
            arch,
        )
        .map_err(|e| e.to_string())?;
        programs.push(compile(no_clone3)?);
    }
    let filter = SeccompFilter::new(rules, otherwise, SeccompAction::Allow, arch)
        .map_err(|e| e.to_string())?;
    programs.push(compile(filter)?);
    Ok(programs)
}

fn compile(filter: SeccompFilter) -> Result<BpfProgram, String> {
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())
}

/// Puts the process (every thread it has, and those it starts) under
/// [`filters`], killing it on any other call.
pub(super) fn enter(threads: Threads) -> Result<(), String> {
    for program in filters(threads, SeccompAction::KillProcess)? {
        seccompiler::apply_filter_all_threads(&program).map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Runs `probe` on a thread of its own under the filters, refusing
    /// with EPERM rather than killing the test run.
    fn under<T: Send + 'static>(threads: Threads, probe: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::spawn(move || {
            let refuse = SeccompAction::Errno(libc::EPERM.unsigned_abs());
            for program in filters(threads, refuse).unwrap() {
                seccompiler::apply_filter(&program).unwrap();
            }
            probe()
        })
        .join()
        .unwrap()
    }

    /// What a taken-over decoder would try, as OS error numbers (None: it
    /// worked).
    fn escapes(path: &std::path::Path) -> [Option<i32>; 3] {
        let opened = std::fs::File::open(path)
            .err()
            .and_then(|e| e.raw_os_error());
        let socket = std::net::TcpListener::bind("127.0.0.1:0")
            .err()
            .and_then(|e| e.raw_os_error());
        let spawned = std::process::Command::new("/bin/true")
            .status()
            .err()
            .map(|e| e.raw_os_error().unwrap_or(0));
        [opened, socket, spawned]
    }

    /// Memory and stderr work; opening a file, a socket or a process does
    /// not, nor (without threads) starting a thread.
    #[test]
    fn the_filter_allows_memory_and_output_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        std::fs::write(&path, b"x").unwrap();
        let (grown, wrote, escaped, thread) = under(Threads::None, move || {
            let big = vec![7u8; 64 << 20];
            let grown = big.iter().map(|b| u64::from(*b)).sum::<u64>();
            let wrote = std::io::stderr().write_all(b"\n").is_ok();
            let thread = std::thread::Builder::new().spawn(|| ()).is_ok();
            (grown, wrote, escapes(&path), thread)
        });
        assert_eq!(grown, 7 << 26);
        assert!(wrote);
        assert_eq!(escaped[0], Some(libc::EPERM));
        assert_eq!(escaped[1], Some(libc::EPERM));
        assert!(escaped[2].is_some(), "a process started");
        assert!(!thread, "a thread started");
    }

    /// With threads allowed (the AVIF decoder): named threads start, work
    /// and end; the rest stays refused.
    #[test]
    fn threads_may_start_and_nothing_else_more() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        std::fs::write(&path, b"x").unwrap();
        let (sum, escaped) = under(Threads::Allowed, move || {
            let workers: Vec<_> = (0..2u64)
                .map(|i| {
                    std::thread::Builder::new()
                        .name(format!("worker-{i}"))
                        .spawn(move || vec![i; 1 << 20].iter().sum::<u64>())
                        .unwrap()
                })
                .collect();
            let sum: u64 = workers.into_iter().map(|w| w.join().unwrap()).sum();
            (sum, escapes(&path))
        });
        assert_eq!(sum, 1 << 20);
        assert_eq!(escaped[0], Some(libc::EPERM));
        assert_eq!(escaped[1], Some(libc::EPERM));
        assert!(escaped[2].is_some(), "a process started");
    }
}

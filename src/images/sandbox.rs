//! The system call filter of a decoder's child process: once the file is
//! read, the child may only write its answer (stdout, stderr), manage its
//! memory and exit. A decoder in C that a hostile file takes over can then
//! open no file, no socket and no process; any other call kills the child,
//! which the server sees as a refused image.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

/// The calls allowed with any arguments: memory (the allocator), locks,
/// signals returning, and leaving.
const ANY_ARGUMENTS: [libc::c_long; 12] = [
    libc::SYS_mmap,
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

/// The filter: the calls above, `read` of stdin and `write` to stdout and
/// stderr; anything else gets `otherwise`.
pub(super) fn filter(otherwise: SeccompAction) -> Result<BpfProgram, String> {
    let arch = std::env::consts::ARCH.try_into().map_err(|e| {
        format!(
            "no system call filter for {}: {e:?}",
            std::env::consts::ARCH
        )
    })?;
    let fd_is = |fd: u64| {
        SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, fd)
            .and_then(|c| SeccompRule::new(vec![c]))
            .map_err(|e| e.to_string())
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        ANY_ARGUMENTS.iter().map(|n| (*n, Vec::new())).collect();
    rules.insert(libc::SYS_read, vec![fd_is(0)?]);
    rules.insert(libc::SYS_write, vec![fd_is(1)?, fd_is(2)?]);
    let filter = SeccompFilter::new(rules, otherwise, SeccompAction::Allow, arch)
        .map_err(|e| e.to_string())?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())
}

/// Puts this thread (the child's only one) under [`filter`], killing the
/// process on any other call.
pub(super) fn enter() -> Result<(), String> {
    let program = filter(SeccompAction::KillProcess)?;
    seccompiler::apply_filter(&program).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// On a thread of its own under the filter (refusing with EPERM rather
    /// than killing the test run): memory and stderr work, opening a file,
    /// a socket or a process does not.
    #[test]
    fn the_filter_allows_memory_and_output_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        std::fs::write(&path, b"x").unwrap();
        let outcome = std::thread::spawn(move || {
            let program = filter(SeccompAction::Errno(libc::EPERM.unsigned_abs())).unwrap();
            seccompiler::apply_filter(&program).unwrap();
            let big = vec![7u8; 64 << 20];
            let grown = big.iter().map(|b| u64::from(*b)).sum::<u64>();
            let wrote = std::io::stderr().write_all(b"\n").is_ok();
            let opened = std::fs::File::open(&path).map_err(|e| e.raw_os_error());
            let socket = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.raw_os_error());
            let spawned = std::process::Command::new("/bin/true")
                .status()
                .map_err(|e| e.raw_os_error());
            (grown, wrote, opened.err(), socket.err(), spawned.is_err())
        })
        .join()
        .unwrap();
        assert_eq!(outcome.0, 7 << 26);
        assert!(outcome.1);
        assert_eq!(outcome.2, Some(Some(libc::EPERM)));
        assert_eq!(outcome.3, Some(Some(libc::EPERM)));
        assert!(outcome.4);
    }
}

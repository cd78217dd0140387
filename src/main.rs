//! `filestore`: the binary. Everything it does is `filestore::main` (the
//! command line, in `cli/entry.rs`); this file only picks the allocator.

/// jemalloc instead of glibc's malloc: with buffers allocated on one thread
/// and freed on another (blob chunks read on the blocking pool and sent by
/// the runtime), glibc's arenas kept growing under a long mixed load.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    filestore::main()
}

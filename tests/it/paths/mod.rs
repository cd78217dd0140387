//! Paths (docs/api.md, "Folders" and "Paths"): folders of any characters
//! but control and bidirectional formatting ones at every door, the path
//! index's lookups and byte-ordered listings on either database, and the
//! CLI's `upload --folder` and `sync` into such folders.

mod api;
mod cli;
mod store;

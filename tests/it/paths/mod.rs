//! Paths (docs/api.md, "Folders", "Paths" and "Paths and stable links"):
//! folders of any characters but control and bidirectional formatting ones
//! at every door, the path index's lookups and byte-ordered listings on
//! either database, the CLI's `upload --folder` and `sync` into such
//! folders; replace and if_absent, stable links and PATCH private.

mod absent;
mod api;
mod cli;
mod replace;
mod stable;
mod store;
mod swaps;

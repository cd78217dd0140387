//! Folder and bulk operations (docs/api.md, "Folders"): rename and move keeping the
//! id, with their webhook, on every store and database the suite runs.

mod bulk;
mod cli;
mod folder_delete;
mod update;
mod zip;

//! Folder and bulk operations (CONTRACT §15): rename and move keeping the
//! id, with their webhook, on every store and database the suite runs.

mod bulk;
mod cli;
mod folder_delete;
mod update;
mod zip;

//! Folder and bulk operations (CONTRACT §15): rename and move keeping the
//! id, copies, with their webhooks, on every store and database the suite runs.

mod bulk;
mod cli;
mod copy;
mod folder_delete;
mod update;

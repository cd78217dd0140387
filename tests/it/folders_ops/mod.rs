//! Folder and bulk operations (docs/api.md, "Records"): rename and move
//! keeping the id, copies, bulk and folder deletes, folder archives, with
//! their webhooks, on every store and database the suite runs.

mod bulk;
mod cli;
mod copy;
mod folder_delete;
mod update;
mod zip;
mod zip_limits;

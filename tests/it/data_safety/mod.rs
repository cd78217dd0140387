//! Data safety (CONTRACT §20), the serving side: the data dir's lock, the
//! PostgreSQL refusal of a data dir with files, the `damaged` mark and the
//! reads that never serve a damaged file whole, the scrub and `admin verify`.

mod lock;

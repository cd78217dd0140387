pub mod admin;
pub mod globals;
pub mod serve;

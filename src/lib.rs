//! autorepair: a watcher that repairs broken instances and machines, steered by tags.
//!
//! The pure core ([`tags`], [`policy`], [`health`], [`plan`]) decides from a [`snapshot`] and a
//! clock; [`backend`] and [`exec`] are the only code that talks to the world.

pub mod admin;
pub mod backend;
pub mod config;
pub mod exec;
pub mod face;
pub mod generate;
pub mod health;
pub mod lock;
pub mod metrics;
pub mod plan;
pub mod policy;
pub mod report;
pub mod sabakan;
pub mod simulate;
pub mod snapshot;
pub mod tags;

pub use face::cli;

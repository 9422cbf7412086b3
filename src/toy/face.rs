//! The toy family's command-line side: its flag `--toy-room FILE`, its config section `[toy]`,
//! and [`FamilyFace`], which says how a room is claimed, opened, described and locked.

use super::room::kind;
use super::{Toy, ToyBox, ToyFacts, ToyRoom, file};
use crate::engine::object::parse_object_ref;
use crate::engine::{Backend, ObjectRef};
use crate::plug::claim::{By, Claim, Look, Shared};
use crate::plug::{FamilyFace, LockPathError, LockSite, OpenError};
use std::path::PathBuf;

/// The toy family's one flag.
#[derive(Debug, Default, clap::Args)]
#[command(next_help_heading = "toy fleet")]
pub struct ToyArgs {
    /// A room file (JSON: marks, shelves, boxes, steps) to work on: the toy family.
    #[arg(long, global = true, value_name = "FILE")]
    pub toy_room: Option<PathBuf>,
}

/// The toy family's key of the config file: `[toy] room = FILE`.
#[derive(Debug, Default, Clone, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToyConfig {
    pub toy: ToySection,
}

#[derive(Debug, Default, Clone, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToySection {
    pub room: Option<PathBuf>,
}

/// A room: its file, or none (the generic output's tests plan rooms made in memory).
#[derive(Debug)]
pub struct RoomSource(pub Option<PathBuf>);

impl crate::plug::FamilyConfig for ToyConfig {}

impl FamilyFace for Toy {
    const FACT_COLUMNS: &'static [&'static str] = &["SHELF"];
    const FAMILY: &'static str = "toy";
    const HOLDS: &'static str = "boxes";
    type Source = RoomSource;
    type Args = ToyArgs;
    type Commands = crate::plug::cli::NoCommands;
    type Config = ToyConfig;
    const CONFIG_KEYS: &'static [&'static str] = &["toy"];
    const FLEET_FLAGS: &'static [&'static str] = &["toy_room"];
    const FLEET_HINT: &'static str = "--toy-room FILE (the toy family)";
    const HELP: &'static crate::plug::help::Help = &crate::plug::help::Help {
        scopes: &["shelf/NAME"],
        targets: &["box/NAME"],
        target: "a box's name",
        marks: "toy marks",
        fleet_file: Some("--toy-room"),
        ..crate::plug::help::Help::NONE
    };

    fn claim(
        args: &ToyArgs,
        config: &ToyConfig,
        _shared: &Shared,
        look: Look,
    ) -> Option<Claim<RoomSource>> {
        let (room, by) = match look {
            Look::Flags => (args.toy_room.clone(), By::Flag),
            Look::Config => (config.toy.room.clone(), By::Config("[toy] room")),
        };
        room.map(|room| Claim {
            source: Ok(RoomSource(Some(room))),
            by,
            uses_kubeconfig: false,
        })
    }

    fn parse_object(text: &str) -> Result<ObjectRef, crate::engine::object::ObjectRefError> {
        parse_object_ref(text, &[kind::SHELF, kind::BOX], &[kind::ROOM], kind::BOX)
    }

    fn input_files(source: &RoomSource) -> Vec<(&'static str, PathBuf)> {
        source.0.iter().map(|p| ("--toy-room", p.clone())).collect()
    }

    fn describe(source: &RoomSource) -> String {
        match &source.0 {
            Some(path) => path.display().to_string(),
            None => "the toy room".into(),
        }
    }

    fn buffers_writes(_: &RoomSource) -> bool {
        true
    }

    fn lock_path(source: &RoomSource, named: Option<PathBuf>) -> Result<PathBuf, LockPathError> {
        let site = match &source.0 {
            Some(room) => LockSite::File(room, &file::MISSING),
            None => LockSite::Path("toy.lock".into()),
        };
        crate::plug::fleet_lock(site, named)
    }

    fn open(source: &RoomSource) -> Result<Box<dyn Backend<Toy>>, OpenError> {
        match &source.0 {
            Some(room) => Ok(Box::new(
                file::RoomFile::open(room).map_err(OpenError::Open)?,
            )),
            None => Err(OpenError::Open(crate::engine::BackendError::Api(
                "the toy room is made in memory".into(),
            ))),
        }
    }

    fn settings(_: &RoomSource, _: &dyn Backend<Toy>) {}

    fn fact_cells(facts: &ToyFacts) -> Vec<String> {
        vec![facts.shelf.clone()]
    }

    fn facts_line(facts: &ToyFacts) -> String {
        format!("on shelf {}", facts.shelf)
    }

    fn report_scope<'a>(_: &&'a ToyRoom, _: &'a ToyBox) -> &'a str {
        "room"
    }
}

//! The toy family's snapshot: one room, its shelves, the boxes on them and the steps run on the
//! boxes. A box is a target; the room and each shelf carry marks as scopes (the nearest policy
//! governs a box: its shelf's, else the room's); a shelf is a failure domain, whose fall breaks
//! every box on it.

use super::ToyLevel;
use crate::engine::family::OpState;

/// The kinds of objects that carry toy marks: `room`, `shelf/NAME` and `box/NAME`.
pub mod kind {
    pub const ROOM: &str = "room";
    pub const SHELF: &str = "shelf";
    pub const BOX: &str = "box";
}

#[derive(Clone, Debug, Default)]
pub struct ToyRoom {
    pub marks: Vec<String>,
    pub shelves: Vec<ToyShelf>,
    pub boxes: Vec<ToyBox>,
    pub steps: Vec<ToyStep>,
}

#[derive(Clone, Debug, Default)]
pub struct ToyShelf {
    pub name: String,
    pub marks: Vec<String>,
    pub down: bool,
    /// When it came back up (Unix seconds), if it went down: the storm cool-down counts from it.
    pub back_at: Option<i64>,
}

/// A box: the toy family's target.
#[derive(Clone, Debug, Default)]
pub struct ToyBox {
    pub name: String,
    pub shelf: String,
    pub marks: Vec<String>,
    /// The repair it needs, if broken.
    pub needs: Option<ToyLevel>,
}

/// A step submitted on a box: the toy family's operation. It does what its level says.
#[derive(Clone, Debug)]
pub struct ToyStep {
    pub id: u32,
    pub target: String,
    /// The id of the repair it belongs to.
    pub repair: String,
    pub step: ToyLevel,
    pub state: OpState,
    /// When it ended, if it did.
    pub ended: Option<i64>,
}

//! The pictures the page shows beside its timeline, registered in one
//! table ([`PANES`]): a share link's `view=` key is read and written from
//! it ([`crate::view_query`]), and the app builds its picker and mounts
//! each pane from it. A new picture is a row here and the app's pane file
//! that draws it.

use overlap_core::search::Objective;

/// Which picture a pane is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaneId {
    /// The timeline alone.
    Timeline,
    /// A sweep of one field.
    Sweep,
    /// Bus bandwidth against message size.
    BusBandwidth,
    /// The layout search of the scenario's model.
    Search,
}

/// One pane of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PaneRow {
    /// The pane.
    pub id: PaneId,
    /// Its value of `view=` in a link, and the picker button's class
    /// (`pane-KEY`). Interface: course material uses them; never rename one.
    pub key: &'static str,
    /// The picker button's text.
    pub button: &'static str,
    /// The accessible name of the pane's picture; empty for the timeline
    /// alone, which adds none.
    pub picture: &'static str,
}

/// Every pane, in the picker's order.
pub const PANES: &[PaneRow] = &[
    PaneRow {
        id: PaneId::Timeline,
        key: "timeline",
        button: "Timeline only",
        picture: "",
    },
    PaneRow {
        id: PaneId::Sweep,
        key: "sweep",
        button: "Sweep a field",
        picture:
            "Step time and memory against the swept value; the points are listed below as buttons",
    },
    PaneRow {
        id: PaneId::BusBandwidth,
        key: "busbw",
        button: "Bus bandwidth",
        picture: "Bus bandwidth against message size; the points are listed below",
    },
    PaneRow {
        id: PaneId::Search,
        key: "search",
        button: "Search layouts",
        picture: "Step time against memory of every simulated layout, the Pareto front joined and the GPU's memory as a line; the best layouts are listed below as buttons",
    },
];

/// The field a sweep opens on when the link names none: what CoCoNet tunes.
pub const DEFAULT_SWEEP_FIELD: &str = "overlap.tp_chunks";

/// The picture the page opens on beside its timeline, with what it reads
/// from the link besides `view=`: a sweep of one field
/// (`view=sweep&sweep=FIELD[&values=A,B]`) or bus bandwidth against
/// message size (`view=busbw`).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Pane {
    /// The timeline alone.
    #[default]
    Timeline,
    /// A sweep of `field` over `values` (a comma-separated list as links
    /// write it), or over the field's slider range without them.
    Sweep {
        /// The field's dotted path.
        field: String,
        /// The values as the link wrote them.
        values: Option<String>,
    },
    /// Bus bandwidth against message size for the scenario's hardware.
    BusBandwidth,
    /// The layout search of the scenario's model on `gpus` (`None`: the
    /// scenario's), ranked by `objective`
    /// (`view=search[&search_gpus=N][&objective=O]`).
    Search {
        /// The GPUs to lay the model out on.
        gpus: Option<u64>,
        /// What the best list is ranked by.
        objective: Objective,
    },
}

impl Pane {
    /// Which pane this is.
    pub fn id(&self) -> PaneId {
        match self {
            Pane::Timeline => PaneId::Timeline,
            Pane::Sweep { .. } => PaneId::Sweep,
            Pane::BusBandwidth => PaneId::BusBandwidth,
            Pane::Search { .. } => PaneId::Search,
        }
    }

    /// Its row of the table.
    pub fn row(&self) -> &'static PaneRow {
        row(self.id())
    }

    /// The pane `id` as its picker button opens it: a sweep of
    /// `sweep_field`, over its slider's range.
    pub fn opened(id: PaneId, sweep_field: String) -> Pane {
        match id {
            PaneId::Timeline => Pane::Timeline,
            PaneId::Sweep => Pane::Sweep {
                field: sweep_field,
                values: None,
            },
            PaneId::BusBandwidth => Pane::BusBandwidth,
            PaneId::Search => Pane::Search {
                gpus: None,
                objective: Objective::default(),
            },
        }
    }
}

/// The row of pane `id`.
pub fn row(id: PaneId) -> &'static PaneRow {
    PANES
        .iter()
        .find(|r| r.id == id)
        .expect("every pane has a row of PANES")
}

/// The row whose `view=` key is `key`.
pub fn find(key: &str) -> Option<&'static PaneRow> {
    PANES.iter().find(|r| r.key == key)
}

/// The keys as a link's error lists them: "timeline, sweep or busbw".
pub fn keys_text() -> String {
    let keys: Vec<&str> = PANES.iter().map(|r| r.key).collect();
    match keys.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pane_has_one_row_and_one_key() {
        for id in [
            PaneId::Timeline,
            PaneId::Sweep,
            PaneId::BusBandwidth,
            PaneId::Search,
        ] {
            assert_eq!(PANES.iter().filter(|r| r.id == id).count(), 1, "{id:?}");
            assert_eq!(row(id).id, id);
            assert_eq!(find(row(id).key), Some(row(id)));
            let opened = Pane::opened(id, DEFAULT_SWEEP_FIELD.to_string());
            assert_eq!(opened.id(), id);
        }
        assert_eq!(keys_text(), "timeline, sweep, busbw or search");
        assert!(PANES
            .iter()
            .all(|r| r.key.chars().all(|c| c.is_ascii_lowercase())));
        assert!(PANES
            .iter()
            .all(|r| (r.id == PaneId::Timeline) == r.picture.is_empty()));
    }
}

//! `parallel.pipeline_layout` (model.md 4, interface.md round 4): what each
//! virtual pipeline stage holds, in Megatron-LM's
//! `pipeline_model_parallel_layout` vocabulary, `E` the embedding, `t` a
//! transformer layer, `L` the loss with the output layer, `t*3` three
//! layers. One entry per virtual stage, in layer order.
//!
//! Megatron's entry `i` is virtual-pipeline rank `i / pp` of pipeline rank
//! `i % pp`, and its layers are numbered by flattening the entries in that
//! same order (Megatron-LM `megatron/core/transformer/
//! pipeline_parallel_layer_layout.py`:49-55 and 76-79, commit d98e8a6):
//! entry `i` is this project's virtual stage `i`, whichever GPU the
//! schedule puts it on (the interleaved schedule's chunk `i / pp` of stage
//! `i % pp`, as in Megatron; a V's chunks as the V places them). Megatron's
//! string form `"Et|(tt|)*30mL"` is this list with its `|` as the list's
//! commas and its `(...)*n` written out.

use serde::{Deserialize, Serialize};

/// The longest entry read, in bytes: the deepest layer stack the table
/// accepts (4,096 layers) fits in a few characters (`t*4096`), and a
/// stage's layers spelled one by one (`tttt`, as Megatron's examples write
/// short ones) stay far under this; past it an entry is refused rather
/// than read.
pub const MAX_ENTRY_BYTES: usize = 256;

/// The layout as given: one string per virtual stage.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PipelineLayout(pub Vec<String>);

/// What one virtual stage holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageContents {
    /// Times `E` appears (the layout is valid with one, in the first stage).
    pub embeddings: u32,
    /// Transformer layers.
    pub layers: u32,
    /// Times `L` appears (valid with one, in the last stage).
    pub losses: u32,
}

/// Why a layout is refused: the entry at fault, if one is, and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutError {
    /// The entry's index in the list.
    pub entry: Option<usize>,
    /// What is wrong and what is valid.
    pub message: String,
}

/// The valid form, as refusals state it.
pub const VALID_FORM: &str = "a list of pp x virtual_stages strings, one per virtual stage in layer order, \
     each of `E` (embedding, first stage only), `t` (a layer; `t*3` three) and `L` (loss, last stage only), \
     separated by spaces or nothing, e.g. [\"E t*3\", \"t*4\", \"t*3 L\"]";

impl PipelineLayout {
    /// Each virtual stage's contents, checked against the scenario: `stages`
    /// entries (pp x virtual_stages), `layers` layers in all, `E` once in
    /// the first stage and `L` once in the last, no stage empty.
    pub fn check(&self, stages: u32, layers: u32) -> Result<Vec<StageContents>, LayoutError> {
        let whole = |message: String| LayoutError {
            entry: None,
            message,
        };
        if self.0.len() as u64 != u64::from(stages) {
            return Err(whole(format!(
                "has {} entries for pp x virtual_stages = {stages} virtual stages: valid is {VALID_FORM}",
                self.0.len()
            )));
        }
        let contents: Vec<StageContents> = self
            .0
            .iter()
            .enumerate()
            .map(|(i, e)| {
                parse_entry(e).map_err(|message| LayoutError {
                    entry: Some(i),
                    message,
                })
            })
            .collect::<Result<_, _>>()?;
        let last = contents.len() - 1;
        for (i, c) in contents.iter().enumerate() {
            let at = |message: String| LayoutError {
                entry: Some(i),
                message,
            };
            if c.embeddings > 0 && i != 0 {
                return Err(at(
                    "holds the embedding `E`, which belongs to the first virtual stage (entry 0) alone"
                        .to_string(),
                ));
            }
            if c.losses > 0 && i != last {
                return Err(at(format!(
                    "holds the loss `L`, which belongs to the last virtual stage (entry {last}) alone"
                )));
            }
            if c.embeddings > 1 || c.losses > 1 {
                return Err(at(
                    "names `E` or `L` more than once: valid is each exactly once".to_string(),
                ));
            }
            if *c == StageContents::default() {
                return Err(at(
                    "is empty: every virtual stage holds at least one of `E`, `t` or `L`"
                        .to_string(),
                ));
            }
        }
        if contents[0].embeddings != 1 {
            return Err(LayoutError {
                entry: Some(0),
                message: "lacks the embedding: the first virtual stage starts with `E`".to_string(),
            });
        }
        if contents[last].losses != 1 {
            return Err(LayoutError {
                entry: Some(last),
                message: "lacks the loss: the last virtual stage ends with `L`".to_string(),
            });
        }
        let total: u64 = contents.iter().map(|c| u64::from(c.layers)).sum();
        if total != u64::from(layers) {
            return Err(whole(format!(
                "holds {total} layers `t` in all, but workload.layers is {layers}: valid layouts name every layer once"
            )));
        }
        Ok(contents)
    }
}

/// One entry's contents: `E`, `t`, `L`, each optionally `*n`, separated by
/// spaces, commas (Megatron's cosmetic ones) or nothing.
fn parse_entry(entry: &str) -> Result<StageContents, String> {
    if entry.len() > MAX_ENTRY_BYTES {
        return Err(format!(
            "is {} bytes long: valid entries are at most {MAX_ENTRY_BYTES} (write repeated layers as `t*n`)",
            entry.len()
        ));
    }
    let mut c = StageContents::default();
    let mut chars = entry.chars().peekable();
    while let Some(ch) = chars.next() {
        let slot = match ch {
            ' ' | ',' | '\t' => continue,
            'E' => &mut c.embeddings,
            't' => &mut c.layers,
            'L' => &mut c.losses,
            'm' => {
                return Err(
                    "names an MTP layer `m`, which this simulator does not model: leave it out"
                        .to_string(),
                )
            }
            '|' => return Err(
                "holds `|`: write one list entry per virtual stage (Megatron's `|` separates them)"
                    .to_string(),
            ),
            other => {
                return Err(format!(
                    "holds {other:?}: valid are `E`, `t`, `L`, `*n` after one of them, and spaces"
                ))
            }
        };
        let mut times: u64 = 1;
        if chars.peek() == Some(&'*') {
            chars.next();
            let mut digits = String::new();
            while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(*d);
                chars.next();
            }
            times = digits
                .parse::<u64>()
                .ok()
                .filter(|&n| (1..=u64::from(u32::MAX)).contains(&n))
                .ok_or_else(|| {
                    format!(
                        "repeats {ch:?} by {:?}: valid is `*n` with n a whole number from 1",
                        digits
                    )
                })?;
        }
        *slot = u32::try_from(u64::from(*slot) + times).unwrap_or(u32::MAX);
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(entries: &[&str]) -> PipelineLayout {
        PipelineLayout(entries.iter().map(|e| e.to_string()).collect())
    }

    #[test]
    fn entries_read_as_megatron_writes_them() {
        let c = layout(&["E t*3", "tttt", "t,t L"]).check(3, 9).unwrap();
        let layers: Vec<u32> = c.iter().map(|c| c.layers).collect();
        assert_eq!(layers, [3, 4, 2]);
        assert_eq!((c[0].embeddings, c[2].losses), (1, 1));
        // Stages of the embedding or the loss alone.
        let c = layout(&["E", "t*2", "L"]).check(3, 2).unwrap();
        assert_eq!(c[0].layers + c[2].layers, 0);
    }

    #[test]
    fn each_fault_names_its_entry() {
        let entry = |l: &[&str], stages, layers| layout(l).check(stages, layers).unwrap_err().entry;
        assert_eq!(entry(&["E t", "x", "t L"], 3, 2), Some(1));
        assert_eq!(entry(&["E t", "", "t L"], 3, 2), Some(1));
        assert_eq!(entry(&["t", "E t", "t L"], 3, 3), Some(1));
        assert_eq!(entry(&["E t", "t L", "t"], 3, 3), Some(1));
        assert_eq!(entry(&["t", "t", "t L"], 3, 3), Some(0));
        assert_eq!(entry(&["E t", "t", "t"], 3, 3), Some(2));
        assert_eq!(entry(&["E t", "t*0", "t L"], 3, 2), Some(1));
        assert_eq!(entry(&["E t", "t*99999999999", "t L"], 3, 2), Some(1));
        assert_eq!(entry(&["E t", "tm", "t L"], 3, 2), Some(1));
        assert_eq!(entry(&["E t|t", "t L"], 2, 3), Some(0));
        // The whole list: its length, its layer count.
        assert_eq!(entry(&["E t", "t L"], 3, 2), None);
        assert_eq!(entry(&["E t", "t L"], 2, 3), None);
        let long = "t".repeat(MAX_ENTRY_BYTES + 1);
        assert_eq!(entry(&["E", &long, "L"], 3, 257), Some(1));
    }
}

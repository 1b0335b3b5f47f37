//! The scenario as users write it (JSON, share links): `ScenarioInput` has
//! every field optional; `resolve` fills the gaps from the hardware preset
//! and the defaults, then validates. Parsing is strict and bounded.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::input::fields::{self, Field, FIELDS};
use crate::input::validate;
use crate::model::hardware::HardwarePreset;
use crate::model::scenario::*;

/// Every field optional: what is missing comes from the preset or the default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioInput {
    /// The cluster.
    #[serde(default, skip_serializing_if = "HardwareInput::is_empty")]
    pub hardware: HardwareInput,
    /// What one step computes.
    #[serde(default, skip_serializing_if = "WorkloadInput::is_empty")]
    pub workload: WorkloadInput,
    /// The parallel layout.
    #[serde(default, skip_serializing_if = "ParallelInput::is_empty")]
    pub parallel: ParallelInput,
    /// The overlap switches and knobs.
    #[serde(default, skip_serializing_if = "OverlapInput::is_empty")]
    pub overlap: OverlapInput,
    /// Compute slowdown while a collective runs beside it (v1 meaning).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_tax: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Whether compute and communication slow each other (`"modelled"` or `"off"`).
    pub interference: Option<Interference>,
}

/// The `hardware` section: a preset and any datasheet figure overriding it.
/// Each field's range, default and share-link key are its row in
/// [`FIELDS`](crate::input::fields::FIELDS), as for every section.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HardwareInput {
    /// Hardware preset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<HardwarePreset>,
    /// Nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u32>,
    /// GPUs per node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus_per_node: Option<u32>,
    /// Peak compute, TFLOP/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_tflops: Option<f64>,
    /// HBM bandwidth, GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hbm_gbps: Option<f64>,
    /// NVLink bandwidth, GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlink_gbps: Option<f64>,
    /// NIC bandwidth, GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic_gbps: Option<f64>,
    /// Oversubscription of the network core (1: non-blocking).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oversubscription: Option<f64>,
    /// NVLink latency, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlink_latency_us: Option<f64>,
    /// Network latency, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_latency_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Streaming multiprocessors per GPU.
    pub sms: Option<u32>,
    /// 1-32 (8): `CUDA_DEVICE_MAX_CONNECTIONS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_connections: Option<u32>,
    /// Memory capacity per GPU, GB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hbm_gb: Option<f64>,
}

/// The `workload` section.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadInput {
    /// Workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<WorkloadKind>,
    /// Mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    /// Layers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layers: Option<u32>,
    /// Hidden size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden: Option<u32>,
    /// Attention heads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heads: Option<u32>,
    /// Sequence length, tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u32>,
    /// Vocabulary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vocab: Option<u32>,
    /// Micro-batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub micro_batch: Option<u32>,
    /// Global batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_batch: Option<u32>,
    /// Recomputation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recompute: Option<Recompute>,
    /// Sequence parallelism.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence_parallel: Option<bool>,
    /// MatMul+AllReduce only: the GEMM is [m x k] x [k x n].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub m: Option<u32>,
    /// GEMM columns n.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u32>,
    /// GEMM inner k.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
    /// Collective workload only: which collective.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collective: Option<CollectiveOp>,
    /// Collective workload only: the buffer's bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<f64>,
    /// Key/value heads (grouped-query attention); `heads` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_heads: Option<u32>,
    /// The MLP's inner width; 4 x hidden when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ffn_hidden: Option<u32>,
    /// The MLP's form, `"gelu"` or `"swiglu"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mlp: Option<Mlp>,
    /// Whether the input embedding and the output layer share one matrix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tied_embeddings: Option<bool>,
    /// The attention core, `"flash"` or `"materialized"` (materialized
    /// when absent, so v1 links keep their figures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention: Option<Attention>,
    /// The linear layers' number format, `"bf16"` or `"fp8"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<Precision>,
    /// Width of one attention head; hidden / heads when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_dim: Option<u32>,
    /// The mixture of experts: absent (or without `experts`) for a dense model.
    #[serde(default, skip_serializing_if = "MoeInput::is_empty")]
    pub moe: MoeInput,
}

/// The `workload.moe` object: every field optional; `experts` makes the
/// model a mixture of experts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoeInput {
    /// Routed experts per MoE layer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experts: Option<u32>,
    /// Experts per token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    /// Each expert's inner width; `ffn_hidden` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expert_ffn_hidden: Option<u32>,
    /// Shared experts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_experts: Option<u32>,
    /// Leading dense layers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dense_layers: Option<u32>,
    /// `"alltoall"` or `"deepep"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatcher: Option<Dispatcher>,
    /// DeepEP: nodes a token may reach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_nodes_per_token: Option<u32>,
    /// Busiest expert's tokens over the mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imbalance: Option<f64>,
    /// SMs DeepEP's kernels hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deepep_sms: Option<u32>,
}

impl MoeInput {
    /// Whether no field of the object is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// The `parallel` section.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParallelInput {
    /// TP degree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tp: Option<u32>,
    /// PP degree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pp: Option<u32>,
    /// DP degree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dp: Option<u32>,
    /// Pipeline schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
    /// Virtual stages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtual_stages: Option<u32>,
    /// Scatter/gather of pipeline sends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scatter_gather: Option<bool>,
    /// DP sharding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dp_sharding: Option<DpSharding>,
    /// Expert-parallel degree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ep: Option<u32>,
    /// CP degree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cp: Option<u32>,
    /// CP's K/V exchange, `"ring"` or `"allgather"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cp_mode: Option<CpMode>,
}

/// The `overlap` section.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OverlapInput {
    /// TP overlap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tp: Option<bool>,
    /// PP overlap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pp: Option<bool>,
    /// DP overlap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dp: Option<bool>,
    /// TP chunks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tp_chunks: Option<u32>,
    /// How TP overlaps: chunked, Megatron's or Async TP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tp_mode: Option<TpMode>,
    /// DP bucket size, MB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bucket_mb: Option<f64>,
    /// Gradient width, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grad_bytes: Option<u32>,
    /// Chunks of the sliced pipeline boundary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pp_chunks: Option<u32>,
    /// TP collectives fused with the pointwise work after them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuse: Option<bool>,
    /// Parameter all-gather under forward (distributed optimizer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param_gather: Option<bool>,
    /// FSDP gradient reduce-scatter on every or the last micro-batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grad_sync: Option<GradSync>,
    /// EP all-to-all overlap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ep: Option<bool>,
    /// CP overlap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cp: Option<bool>,
    /// FSDP gathers fp8 weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp8_all_gather: Option<bool>,
}

// A section is empty when it equals its default (every field `None`):
// nothing to list, so a new field cannot be forgotten here.
impl HardwareInput {
    /// Whether no hardware field is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}
impl WorkloadInput {
    /// Whether no workload field is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}
impl ParallelInput {
    /// Whether no parallel field is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}
impl OverlapInput {
    /// Whether no overlap field is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// The most scenario text read from one source, in bytes: a file, standard
/// input, a pasted scenario or a share link. The largest preset is under
/// 2 KB, so this leaves room for any hand-written scenario while a stream
/// such as /dev/zero is cut off after this many bytes.
pub const MAX_INPUT_BYTES: usize = MAX_INPUT_MIB << 20;

/// [`MAX_INPUT_BYTES`] in MiB, as messages state it.
pub const MAX_INPUT_MIB: usize = 1;

/// How much of one echoed value (a string, a name, a number) an error
/// message repeats, in characters: enough to recognise it, never the 50 MB
/// a hostile input could carry.
pub const MAX_ECHO_CHARS: usize = 80;

/// The most characters one refused field's name or message holds, however
/// many short values it quotes.
pub const MAX_MESSAGE_CHARS: usize = 600;

/// `text` made safe to show on one line: each quoted value (`"..."` or
/// `` `...` ``) and each unquoted word keeps its first [`MAX_ECHO_CHARS`]
/// characters, control characters are written as escapes, and the whole is
/// cut at [`MAX_MESSAGE_CHARS`]. A cut is marked with `…`.
pub fn clip_echoes(text: &str) -> String {
    let mut out = String::new();
    // Characters in `out`: an escape counts for each of its characters.
    let mut shown = 0usize;
    // The quote that opened the current token, if it is a quoted value.
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut run = 0usize;
    let mut cut = false;
    for c in text.chars() {
        if shown >= MAX_MESSAGE_CHARS {
            out.push('…');
            return out;
        }
        let ends_token = match quote {
            Some(q) => !escaped && c == q,
            None => c.is_whitespace() || c == '"' || c == '`',
        };
        if ends_token {
            if cut {
                out.push('…');
                shown += 1;
            }
            run = 0;
            cut = false;
            escaped = false;
            if quote.take().is_none() && (c == '"' || c == '`') {
                quote = Some(c);
            }
            shown += push_visible(&mut out, c);
            continue;
        }
        escaped = quote == Some('"') && !escaped && c == '\\';
        if run < MAX_ECHO_CHARS {
            shown += push_visible(&mut out, c);
            run += 1;
        } else {
            cut = true;
        }
    }
    if cut {
        out.push('…');
    }
    out
}

/// Control characters (a newline in a pasted value) would break the one
/// line an error takes: they are shown as escapes. Returns the characters
/// written.
fn push_visible(out: &mut String, c: char) -> usize {
    if c.is_control() || invisible_format(c) {
        let before = out.len();
        out.extend(c.escape_default());
        out.len() - before
    } else {
        out.push(c);
        1
    }
}

/// Format characters that would reorder or hide what a message shows
/// (Unicode's bidirectional controls, zero-width characters, separators of
/// lines and paragraphs, the byte-order mark): escaped like control
/// characters, so that a key echoed in an error reads as it was written.
fn invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
    )
}

/// One refused field: its dotted path and what would be valid.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldError {
    /// Dotted path of the field (or `scenario`, `link`, a link key).
    pub field: String,
    /// What is wrong and what would be valid.
    pub message: String,
}

impl FieldError {
    /// A refusal whose field name and message are clipped with
    /// [`clip_echoes`], so that neither repeats a long input back.
    pub fn new(field: &str, message: &str) -> Self {
        Self {
            field: clip_echoes(field),
            message: clip_echoes(message),
        }
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Every problem found in a scenario, so that a user sees them all at once.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScenarioError {
    /// Each refused field, in the order found.
    pub errors: Vec<FieldError>,
}

impl ScenarioError {
    /// One refused field, clipped as [`FieldError::new`] does.
    pub fn single(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            errors: vec![FieldError::new(&field.into(), &message.into())],
        }
    }
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.errors.iter().map(ToString::to_string).collect();
        f.write_str(&parts.join("; "))
    }
}

impl std::error::Error for ScenarioError {}

impl ScenarioInput {
    /// Parses scenario JSON strictly: the text is exactly one JSON object
    /// of at most [`MAX_INPUT_BYTES`], sections are objects (never arrays
    /// read by position), and every field holds a single value. Errors name
    /// the field's path and echo at most [`MAX_ECHO_CHARS`] of any value.
    pub fn from_json(text: &str) -> Result<Self, ScenarioError> {
        if text.len() > MAX_INPUT_BYTES {
            return Err(too_large(text.len()));
        }
        if text.trim().is_empty() {
            // serde would say "EOF while parsing a value at line 1 column 0".
            return Err(ScenarioError::single(
                "scenario",
                "the input is empty: a scenario is one JSON object, such as \
                 {\"parallel\":{\"tp\":4}}; {} is the default scenario"
                    .to_string(),
            ));
        }
        // A first pass reads the text as plain JSON to check the shapes
        // serde's derived structs would accept by position (an array for a
        // struct) and what follows the scenario.
        let mut de = serde_json::Deserializer::from_str(text);
        let plain = Value::deserialize(&mut de);
        if let Ok(value) = &plain {
            refuse_arrays_for_objects(value)?;
            de.end().map_err(|e| {
                ScenarioError::single(
                    "scenario",
                    format!(
                        "more follows the scenario ({e}): the input must be exactly one JSON object"
                    ),
                )
            })?;
        }
        let mut de = serde_json::Deserializer::from_str(text);
        let input = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            use serde_path_to_error::Segment;
            // serde's derived structs read arrays by position, so an index
            // in the path is an array given for an object (a syntax error
            // inside it is reported as that). A key that merely holds
            // brackets (`"nodes[0]"`) is a name, not an index.
            let indexed = e
                .path()
                .iter()
                .position(|seg| matches!(seg, Segment::Seq { .. }));
            if let Some(at) = indexed {
                let field = e
                    .path()
                    .iter()
                    .take(at)
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(".");
                let field = if field.is_empty() {
                    "scenario".to_string()
                } else {
                    field
                };
                return ScenarioError::single(
                    field,
                    "an array is given where an object is expected",
                );
            }
            let path = e.path().to_string();
            let inner = e.into_inner();
            let message = inner.to_string();
            // A syntax error has no field (serde_path_to_error says "." or
            // "?"), or names the section it stands in ("workload.?").
            let path = match path.strip_suffix("?").map(|p| p.trim_end_matches('.')) {
                Some("") => ".".to_string(),
                Some(section) => section.to_string(),
                None => path,
            };
            let named = unknown_field_name(&message);
            // A value the parser stopped inside (`0x10` read as 0, then `x`)
            // is reported at its section: the field is the key before it.
            let path = match key_before(text, inner.line(), inner.column()) {
                Some(key) if message.starts_with("expected `,` or `}`") && named.is_none() => {
                    if path == "." {
                        key
                    } else {
                        format!("{path}.{key}")
                    }
                }
                _ => path,
            };
            let field = match (path.as_str(), named.clone()) {
                (".", Some(name)) => name,
                (p, Some(name)) if !p.ends_with(&name) => format!("{p}.{name}"),
                (".", None) => "scenario".to_string(),
                (p, _) => p.to_string(),
            };
            // A known field's value refused: said as the field table states
            // what is valid, with where it stands in the text.
            let given = plain
                .as_ref()
                .ok()
                .filter(|_| named.is_none())
                .and_then(|v| v.pointer(&format!("/{}", field.replace('.', "/"))));
            let unreadable = plain.as_ref().err().map(ToString::to_string);
            let at = format!("(line {}, column {})", inner.line(), inner.column());
            let token = token_at(text, inner.line(), inner.column());
            if let Some(said) = fields::find(&field)
                .and_then(|row| field_refusal(row, given, unreadable.as_deref(), &at, &token))
            {
                return ScenarioError::single(field.as_str(), said);
            }
            ScenarioError::single(field, message)
        })?;
        let value = plain.map_err(|e| ScenarioError::single("scenario", e.to_string()))?;
        refuse_objects_for_values(&value)?;
        Ok(input)
    }

    /// The input as indented JSON, only the fields it sets: what the
    /// command line reads back unchanged.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("scenario input always serialises")
    }

    /// Fills every missing field (hardware preset first, then defaults) and validates.
    pub fn resolve(&self) -> Result<Scenario, ScenarioError> {
        validate::resolve(self)
    }

    /// The input of the all-overlap-off baseline of the scenario this
    /// describes ([`Scenario::all_overlap_off`]), every field set. Nothing is
    /// checked: resolving it validates it, and counts the baseline's cost,
    /// half of what resolving this input counts. A caller may split one
    /// long check in two by resolving this first: this input's own check
    /// then finds the baseline's count kept (`workload::cost`).
    pub fn all_overlap_off(&self) -> ScenarioInput {
        crate::input::fields::complete_input(&validate::filled(self).all_overlap_off())
    }
}

/// What the parser refused of a known field, as the field table states what
/// is valid for it, `at` a place in the text: `value`, the field's JSON where
/// the text is JSON (its type, a whole number past u32, or a name where
/// serde_json's words would be "expected value"); else, where the first
/// pass could not read the text (`unreadable`, its words), a number too
/// large for JSON, whose field's range is still what the reader needs (the
/// typed pass may say only "expected value" of it). `None`: another error,
/// worded as the parser words it.
/// `token`, the text where the parser stopped (see [`token_at`]): a value
/// JSON cannot hold (`NaN`, `Infinity`, `+1`, `0x10`) is refused naming the
/// field and its valid range, not as serde_json's bare "expected value".
fn field_refusal(
    row: &Field,
    value: Option<&Value>,
    unreadable: Option<&str>,
    at: &str,
    token: &str,
) -> Option<String> {
    let article = if row.is_number() { "a " } else { "" };
    match (value, unreadable) {
        (Some(value), _) => Some(format!("{} {at}", row.json_refusal(value))),
        (None, Some(words)) if words.starts_with("number out of range") => Some(format!(
            "the number is too large to read {at}: valid is {article}{}",
            row.kind.describe()
        )),
        (None, Some(words))
            if words.starts_with("expected value")
                || words.starts_with("invalid number")
                || words.starts_with("expected `,` or `}`") =>
        {
            Some(format!(
                "`{token}` is not a JSON value (JSON writes numbers in decimal, with no \
                 leading + and no hexadecimal, and has no NaN or Infinity): valid is {article}{} {at}",
                row.kind.describe()
            ))
        }
        _ => None,
    }
}

/// The key of the last `"key":` before 1-based `line` and `column` on that
/// line: the field whose value the parser stopped in.
fn key_before(text: &str, line: usize, column: usize) -> Option<String> {
    let row = text.lines().nth(line.saturating_sub(1))?;
    let before: String = row.chars().take(column.saturating_sub(1)).collect();
    let colon = before.rfind(':')?;
    if before[colon + 1..].contains(['}', ',', ']', '{', '[', '"']) {
        return None;
    }
    let head = before[..colon].trim_end().strip_suffix('"')?;
    let open = head.rfind('"')?;
    let key = &head[open + 1..];
    (!key.is_empty() && !key.contains('\\')).then(|| key.to_string())
}

/// The word of `text` at 1-based `line` and `column` (where serde_json
/// stopped), and the word-like characters just before it: what the reader
/// wrote in place of a value. At most 40 characters.
fn token_at(text: &str, line: usize, column: usize) -> String {
    let Some(row) = text.lines().nth(line.saturating_sub(1)) else {
        return String::new();
    };
    let chars: Vec<char> = row.chars().collect();
    let at = column.saturating_sub(1).min(chars.len());
    let word =
        |c: &char| !matches!(c, ',' | '}' | ']' | ':' | '{' | '[' | '"') && !c.is_whitespace();
    let start = chars[..at]
        .iter()
        .rposition(|c| !word(c))
        .map_or(0, |i| i + 1);
    let end = chars[at..]
        .iter()
        .position(|c| !word(c))
        .map_or(chars.len(), |i| at + i);
    chars[start..end].iter().take(40).collect()
}

fn too_large(len_bytes: usize) -> ScenarioError {
    ScenarioError::single(
        "scenario",
        format!(
            "the input is {len_bytes} bytes: a scenario is at most {MAX_INPUT_BYTES} bytes ({MAX_INPUT_MIB} MiB)"
        ),
    )
}

/// The field an "unknown field" or "duplicate field" message names.
fn unknown_field_name(message: &str) -> Option<String> {
    let rest = message
        .strip_prefix("unknown field `")
        .or_else(|| message.strip_prefix("duplicate field `"))?;
    Some(rest.split('`').next()?.to_string())
}

/// Whether the top-level `key` is a section (an object of fields). Asking
/// serde keeps this in step with the structs as sections are added.
fn is_section(key: &str) -> bool {
    let mut probe = Map::new();
    probe.insert(key.to_string(), Value::Object(Map::new()));
    serde_json::from_value::<ScenarioInput>(Value::Object(probe)).is_ok()
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "true or false",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// serde's derived structs read an array by position (`[preset, nodes]`):
/// the scenario and its sections must be objects with named fields.
fn refuse_arrays_for_objects(value: &Value) -> Result<(), ScenarioError> {
    let Some(root) = value.as_object() else {
        return Err(ScenarioError::single(
            "scenario",
            format!(
                "{} is given where an object is expected: a scenario is {{\"hardware\": {{...}}, \"parallel\": {{...}}, ...}}",
                kind_of(value)
            ),
        ));
    };
    for (key, section) in root {
        if section.is_null() && is_section(key) {
            return Err(ScenarioError::single(
                key.as_str(),
                "null is given where a section is expected: leave the section out (or write {}) \
                 for its defaults; null stands for an absent value only in a field",
            ));
        }
        if section.is_array() && is_section(key) {
            return Err(ScenarioError::single(
                key.as_str(),
                format!(
                    "an array is given where an object is expected: write its fields by name, as {{\"{}\": ...}}",
                    example_field(key)
                ),
            ));
        }
    }
    Ok(())
}

/// A field of `section` to show in a message: its first number field.
fn example_field(section: &str) -> &'static str {
    FIELDS
        .iter()
        .find(|f| f.section() == section && f.is_number())
        .map_or("field", |f| f.name())
}

/// serde_json reads `{"gpipe": null}` as the enum value `"gpipe"`: every
/// field holds a single value (number, string, true or false), so an object
/// anywhere but a section is refused.
fn refuse_objects_for_values(value: &Value) -> Result<(), ScenarioError> {
    let Some(root) = value.as_object() else {
        return Ok(());
    };
    for (key, section) in root {
        let Some(fields) = section.as_object() else {
            continue;
        };
        if !is_section(key) {
            return Err(single_value_expected(key, section));
        }
        for (name, field) in fields {
            // `workload.moe` is the one object inside a section: its own
            // fields hold single values.
            if let (true, Some(inner)) = (is_subsection(key, name), field.as_object()) {
                for (inner_name, value) in inner {
                    if value.is_object() || value.is_array() {
                        return Err(single_value_expected(
                            &format!("{key}.{name}.{inner_name}"),
                            value,
                        ));
                    }
                }
                continue;
            }
            if field.is_object() || field.is_array() {
                return Err(single_value_expected(&format!("{key}.{name}"), field));
            }
        }
    }
    Ok(())
}

/// Whether `section.name` is an object of fields (`workload.moe`): a
/// field of the table has its path below it.
fn is_subsection(section: &str, name: &str) -> bool {
    let prefix = format!("{section}.{name}.");
    FIELDS.iter().any(|f| f.path.starts_with(&prefix))
}

fn single_value_expected(field: &str, value: &Value) -> ScenarioError {
    ScenarioError::single(
        field,
        format!(
            "{} is given where a single value is expected (a number, a string, true or false)",
            kind_of(value)
        ),
    )
}

/// Parses and resolves in one go.
pub fn parse_scenario(text: &str) -> Result<Scenario, ScenarioError> {
    ScenarioInput::from_json(text)?.resolve()
}

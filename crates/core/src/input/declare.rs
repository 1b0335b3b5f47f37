//! The `fields!` macro: one declaration per scenario field, from which the
//! input structs, their fill and the table's rows are all written, so that
//! a field cannot be parsed under one name, filled under another and
//! listed under a third.
//!
//! The table is a list of sections, each one struct of scenario JSON:
//!
//! ```text
//! /// doc of the struct
//! ParallelInput => FilledParallel at [parallel] (hardware: FilledHardware, workload: FilledWorkload) {
//!     /// doc of the field
//!     tp: u32 {
//!         link: 19, key: "tp", kind: Kind::Int { min: 1, max: 64 },
//!         default: WorkloadKind(match workload.kind { ... }),
//!         ignored: workload.kind == WorkloadKind::Collective,
//!         label: "TP degree", unit: "", slider: (1.0, 16.0, 1.0),
//!         resolved: |s| Some(s.parallel.tp),
//!         inert: collective_layout_inert,
//!     },
//!     /// doc of a section inside this one, and what its fill is given
//!     moe: MoeInput(ffn_hidden),
//! }
//! ```
//!
//! For each section it writes the input struct (every field optional,
//! serde-strict, in the order listed: serde's messages and JSON follow
//! it), its filled mirror (every field's value, `Option` only for a field
//! whose default is `Absent`) and `fill`, which fills the fields in the
//! order listed. A default expression may name any field filled before it
//! in its own section, and the section's parameters: what it reads of the
//! sections filled before it. `default:` is one of
//!
//! - `Fixed(value)`;
//! - `HardwarePreset(preset)`: the figure of the same name on the datasheet
//!   of `preset`, a field filled before;
//! - `WorkloadKind(expression)` and `Derived("rule in words", expression)`:
//!   computed from other fields;
//! - `Absent`: no value unless given.
//!
//! A section followed by `into Model` (`ParallelInput => FilledParallel at
//! [parallel] (...) into Parallel { ... }`) is the model's struct field for
//! field, by the same names: the macro writes `From<FilledParallel> for
//! Parallel`, so that a field of it is declared here and in the model's
//! struct, and set nowhere else.
//!
//! `ignored: condition` drops a given value where the model has no use for
//! it, so that the default applies. `link` is the field's place in share
//! links and in `FIELDS`: the order fields were added, which old links
//! keep, so never change one; the next field takes the next number.
//!
//! The expansion names, unqualified, what `input::table` has in scope:
//! `Field`, `Section`, `unset`, `to_json`, `from_json`, `FieldValue`,
//! `DefaultFrom`, `never_inert`, `Scenario` and `ScenarioInput`.

/// See the module's documentation.
macro_rules! fields {
    ($(
        $(#[doc = $struct_doc:literal])*
        $input:ident => $filled:ident at $at:tt ($($param:ident: $param_ty:ty),*)
            $(into $model:ident)? {
            $($(#[doc = $doc:literal])* $name:ident: $ty:ident $tail:tt),* $(,)?
        }
    )*) => {
        $(
            $(#[doc = $struct_doc])*
            #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
            #[serde(deny_unknown_fields)]
            pub struct $input {
                $(
                    $(#[doc = $doc])*
                    #[serde(default, skip_serializing_if = "unset")]
                    pub $name: $crate::input::declare::fields!(@input_type $ty $tail),
                )*
            }

            impl $input {
                /// Whether no field is set.
                pub fn is_empty(&self) -> bool {
                    unset(self)
                }

                /// Every field's value: as given, or from its default.
                // One form, `unwrap_or_else`, for every computed default,
                // cheap (a field filled before) or not.
                #[allow(clippy::unnecessary_lazy_evaluations)]
                pub(crate) fn fill(&self, $($param: $param_ty),*) -> $filled {
                    $(
                        let $name: $crate::input::declare::fields!(@filled_type $ty $tail) =
                            $crate::input::declare::fields!(@fill self.$name, $name, $tail);
                    )*
                    $filled { $($name),* }
                }

                /// The section's rows, each with its place in link order
                /// (`None` for a section inside it, which lists its own).
                const ROWS: &'static [Option<(usize, Field)>] = &[$(
                    $crate::input::declare::fields!(@row $at $name $ty $tail)
                ),*];
            }

            #[doc = concat!("[`", stringify!($input), "`] with every field filled in.")]
            #[derive(Clone, Debug, PartialEq)]
            pub(crate) struct $filled {
                $(
                    $(#[doc = $doc])*
                    pub(crate) $name: $crate::input::declare::fields!(@filled_type $ty $tail),
                )*
            }

            impl Section for $input {
                type Filled = $filled;
            }

            $crate::input::declare::fields!(@into $filled ($($model)?) [$($name)*]);
        )*

        const ROW_COUNT: usize = count_rows(&[$($input::ROWS),*]);

        /// Every scenario field, in share-link order.
        pub const FIELDS: &[Field] = &in_link_order::<ROW_COUNT>(&[$($input::ROWS),*]);
    };

    // A field holds an optional value; a section inside a section is
    // itself (empty when it sets nothing).
    (@input_type $ty:ident ($($arg:ident),*)) => { $ty };
    (@input_type $ty:ident { $($meta:tt)* }) => { Option<$ty> };

    (@filled_type $ty:ident ($($arg:ident),*)) => { <$ty as Section>::Filled };
    (@filled_type $ty:ident {
        link: $link:literal, key: $key:literal, kind: $kind:expr, default: Absent, $($rest:tt)*
    }) => { Option<$ty> };
    (@filled_type $ty:ident { $($meta:tt)* }) => { $ty };

    // The value of one field, given as `$given`.
    // Filled sections are not `Copy` (a layout is a list): each fill gets
    // its own copy of the sections it reads.
    (@fill $given:expr, $name:ident, ($($arg:ident),*)) => {
        $given.fill($(::std::clone::Clone::clone(&$arg)),*)
    };
    (@fill $given:expr, $name:ident, {
        link: $link:literal, key: $key:literal, kind: $kind:expr, default: Absent, $($rest:tt)*
    }) => { ::std::clone::Clone::clone(&$given) };
    (@fill $given:expr, $name:ident, {
        link: $link:literal, key: $key:literal, kind: $kind:expr, default: Fixed($value:expr),
        $(ignored: $ignored:expr,)? label: $($rest:tt)*
    }) => { $given $(.filter(|_| !($ignored)))? .unwrap_or($value) };
    (@fill $given:expr, $name:ident, {
        link: $link:literal, key: $key:literal, kind: $kind:expr, default: HardwarePreset($preset:ident),
        $(ignored: $ignored:expr,)? label: $($rest:tt)*
    }) => { $given $(.filter(|_| !($ignored)))? .unwrap_or_else(|| $preset.hardware().$name) };
    (@fill $given:expr, $name:ident, {
        link: $link:literal, key: $key:literal, kind: $kind:expr, default: WorkloadKind($value:expr),
        $(ignored: $ignored:expr,)? label: $($rest:tt)*
    }) => { $given $(.filter(|_| !($ignored)))? .unwrap_or_else(|| $value) };
    (@fill $given:expr, $name:ident, {
        link: $link:literal, key: $key:literal, kind: $kind:expr,
        default: Derived($rule:literal, $value:expr),
        $(ignored: $ignored:expr,)? label: $($rest:tt)*
    }) => { $given $(.filter(|_| !($ignored)))? .unwrap_or_else(|| $value) };

    // A section the model holds field for field, by the same names.
    (@into $filled:ident () [$($name:ident)*]) => {};
    (@into $filled:ident ($model:ident) [$($name:ident)*]) => {
        impl From<$filled> for $model {
            fn from(filled: $filled) -> Self {
                $model { $($name: filled.$name),* }
            }
        }
    };

    (@row [$($at:ident)*] $name:ident $ty:ident ($($arg:ident),*)) => { None };
    (@row [$($at:ident)*] $name:ident $ty:ident {
        link: $link:literal,
        key: $key:literal,
        kind: $kind:expr,
        default: $from:ident $(($($how:tt)*))?,
        $(ignored: $ignored:expr,)?
        label: $label:literal,
        unit: $unit:literal,
        slider: $slider:expr,
        resolved: $resolved:expr
        $(, inert: $inert:expr)? $(,)?
    }) => {
        Some(($link, Field {
            path: concat!($(stringify!($at), ".",)* stringify!($name)),
            key: $key,
            kind: $kind,
            default: $crate::input::declare::fields!(@default_from $from $(($($how)*))?),
            label: $label,
            unit: $unit,
            slider: $slider,
            get: |i| i.$($at.)*$name.as_ref().map(to_json),
            set: |i, v| {
                i.$($at.)*$name = from_json::<$ty>(v)?;
                Ok(())
            },
            resolved: |s| {
                let read: fn(&Scenario) -> Option<$ty> = $resolved;
                read(s).map(|v| to_json(&v))
            },
            set_number: |i, v| {
                if let Some(x) = <$ty as FieldValue>::from_number(v) {
                    i.$($at.)*$name = Some(x);
                }
            },
            inert: [$($inert as fn(&Scenario) -> Option<String>,)? never_inert][0],
        }))
    };

    (@default_from Derived($rule:literal, $value:expr)) => { DefaultFrom::Derived($rule) };
    (@default_from $from:ident $(($($how:tt)*))?) => { DefaultFrom::$from };
}

pub(crate) use fields;

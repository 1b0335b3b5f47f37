//! One declaration for each of the model's named enums (`Axis`, `Phase`,
//! `OpKind`): each variant with its code (the snake-case key of reports,
//! links, CSS classes and serde) and the label readers see. From it come
//! the enum, `ALL` in declaration order, `COUNT`, `index` (the place in
//! `ALL`, which is also the code the page's timeline encoding sends),
//! `name`, `label` and `from_name`, so that a new variant is written once.

/// Declares a named enum: `Variant = ("code", "Label")` per variant, each
/// with its doc comment. See the module's documentation for what it writes.
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = ($code:literal, $label:literal),
            )+
        }
    ) => {
        $(#[$meta])*
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize,
        )]
        pub enum $name {
            $(
                $(#[$vmeta])*
                #[serde(rename = $code)]
                $variant,
            )+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: [$name; [$($code),+].len()] = [$($name::$variant),+];

            /// Every variant's code, in declaration order.
            pub const NAMES: [&'static str; [$($code),+].len()] = [$($code),+];

            /// How many variants there are: the length of per-variant arrays.
            pub const COUNT: usize = Self::ALL.len();

            /// The variant's place in [`Self::ALL`] and in per-variant arrays.
            pub fn index(self) -> usize {
                self as usize
            }

            /// The snake-case code of reports, share links, CSS classes and serde.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $code,)+
                }
            }

            /// The label readers see.
            pub fn label(self) -> &'static str {
                match self {
                    $($name::$variant => $label,)+
                }
            }

            /// The variant whose code is `name`.
            pub fn from_name(name: &str) -> Option<Self> {
                Self::ALL.into_iter().find(|v| v.name() == name)
            }
        }
    };
}

pub(crate) use named_enum;

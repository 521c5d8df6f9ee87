//! Registries complete by construction: an enum of stable kebab-case ids, each with a one-line
//! description, generated from one table. Every lookup is an exhaustive `match`, so a variant
//! without its name or description does not compile, and [`ALL`](crate::rules::RuleId::ALL) lists
//! every variant for the tests and docs that walk them.

/// `registry! { /// docs  pub enum Name { Variant => "kebab-id": "Description.", ... } }`
#[macro_export]
macro_rules! registry {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $($variant:ident => $id:literal: $description:expr,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord,
            ::serde::Serialize, ::serde::Deserialize,
        )]
        pub enum $name {
            $(#[serde(rename = $id)] $variant,)+
        }

        impl $name {
            /// Every variant, in documentation order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The stable kebab-case id.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $id,)+
                }
            }

            /// One line saying what it means.
            pub fn description(self) -> &'static str {
                match self {
                    $($name::$variant => $description,)+
                }
            }

            /// The variant with this id, if there is one.
            pub fn from_name(name: &str) -> Option<$name> {
                match name {
                    $($id => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

/// `schema_marker!(Name, "agent-team-apply/...")`: a unit type that is written as the schema string
/// and refuses any other string when read, so a document of another schema never parses.
#[macro_export]
macro_rules! schema_marker {
    ($(#[$meta:meta])* $name:ident, $value:literal) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct $name;

        impl $name {
            pub const ID: &'static str = $value;
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str($value)
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<$name, D::Error> {
                let found = <String as ::serde::Deserialize>::deserialize(deserializer)?;
                if found == $value {
                    Ok($name)
                } else {
                    Err(<D::Error as ::serde::de::Error>::custom(format!(
                        "unknown schema {:?} (expected {:?})",
                        $crate::escape::neutralize(&found),
                        $value
                    )))
                }
            }
        }
    };
}

//! Tables selected by a `kind` key (queue disciplines, sources): the tag is read here and the
//! rest handed to the kind's own config, keeping the field path of any error inside it.

use super::error::marked;
use serde::de::Error;

/// Splits `{ kind = "...", rest... }` into the kind and the remaining table.
pub fn split_kind<E: Error>(
    value: toml::Value,
    kinds: &[&str],
) -> Result<(String, toml::Value), E> {
    // The deliberately broken disciplines for tests (`test_leak`, `test_corrupt`) are
    // accepted but not offered.
    let offered: Vec<&str> = kinds
        .iter()
        .copied()
        .filter(|k| !k.starts_with("test_"))
        .collect();
    let expected = format!("expected one of {}", offered.join(", "));
    let mut table = match value {
        toml::Value::Table(t) => t,
        other => {
            return Err(E::custom(format!(
                "got {other}, expected a table with a `kind` key ({expected})"
            )))
        }
    };
    let kind = match table.remove("kind") {
        Some(toml::Value::String(k)) => k,
        Some(other) => {
            return Err(E::custom(marked(
                "kind",
                &format!("got {other}, {expected}"),
            )))
        }
        None => return Err(E::custom(format!("missing `kind`: {expected}"))),
    };
    if !kinds.contains(&kind.as_str()) {
        return Err(E::custom(marked(
            "kind",
            &format!("got {kind:?}, {expected}"),
        )));
    }
    Ok((kind, toml::Value::Table(table)))
}

/// Implements `Deserialize` for an enum of newtype variants selected by a `kind` key, keeping
/// field paths inside the variant (serde's internally tagged enums lose them).
macro_rules! deserialize_by_kind {
    ($ty:ty, { $( $kind:literal => $variant:ident ),* $(,)? }) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                const KINDS: &[&str] = &[$($kind),*];
                let value = <toml::Value as serde::Deserialize>::deserialize(d)?;
                let (kind, rest) = $crate::config::tagged::split_kind::<D::Error>(value, KINDS)?;
                match kind.as_str() {
                    $( $kind => $crate::config::error::deserialize_nested(rest).map(Self::$variant), )*
                    _ => unreachable!("split_kind checked the kind"),
                }
            }
        }
    };
}
pub(crate) use deserialize_by_kind;

//! A deserializer over a parsed TOML value that refuses an array where a table is expected.
//!
//! `toml::Value` deserializes a struct from an array too, field by field in declaration order
//! (serde's sequence form of a struct), so `two_server = [540]` silently meant
//! `two_server = { rate = 540 }` and `bottleneck = ["10Mbps", "5ms"]` a rate and a delay. No
//! table of the schema is documented that way, and a misplaced bracket should not change a
//! field's meaning, so every table is read through [`Strict`], which refuses the array form
//! ("got an array, expected a table") and otherwise hands each value on unchanged.

use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use toml::Value;

/// `value`, deserialized as toml's own deserializer does except that a struct (a table of the
/// schema) cannot be read from an array, at any depth.
pub struct Strict(pub Value);

type Error = toml::de::Error;

/// Said of a date or time wherever one is given.
pub const NO_DATES: &str = "no field takes a date or time";

impl<'de> de::Deserializer<'de> for Strict {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(items) => visitor.visit_seq(Items(items.into_iter())),
            Value::Table(table) => visitor.visit_map(Entries {
                entries: table.into_iter(),
                value: None,
            }),
            // toml hands a date or time on as its text, so `name = 2024-01-01` was the name
            // "2024-01-01" while `name = 5` is refused; no field of the schema is a date.
            Value::Datetime(when) => Err(de::Error::invalid_type(
                de::Unexpected::Other(&format!("date-time `{when}` ({NO_DATES})")),
                &visitor,
            )),
            scalar => scalar.deserialize_any(visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(_) => Err(de::Error::invalid_type(de::Unexpected::Seq, &"a table")),
            Value::Datetime(_) => self.0.deserialize_struct(name, fields, visitor),
            value => Strict(value).deserialize_any(visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        // Every externally tagged enum of the schema is a list of names. toml would read a
        // one-key table `{ a = 1 }` as the name `a` (and `{ one = {} }` as `one`), and for any
        // other value its message is "got unit variant, expected string only".
        let names: Vec<String> = variants.iter().map(|v| format!("`{v}`")).collect();
        let expected = format!("expected one of {}", names.join(", "));
        match self.0 {
            Value::String(_) => self.0.deserialize_enum(name, variants, visitor),
            Value::Table(_) => Err(de::Error::custom(format!("got a table, {expected}"))),
            other => Err(de::Error::custom(format!("got {other}, {expected}"))),
        }
    }

    serde::forward_to_deserialize_any! {
        bool u8 u16 u32 u64 i8 i16 i32 i64 f32 f64 char str string unit seq
        bytes byte_buf map unit_struct tuple_struct tuple ignored_any identifier
    }
}

struct Items(std::vec::IntoIter<Value>);

impl<'de> SeqAccess<'de> for Items {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0
            .next()
            .map(|v| seed.deserialize(Strict(v)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Entries {
    entries: <toml::Table as IntoIterator>::IntoIter,
    value: Option<Value>,
}

impl<'de> MapAccess<'de> for Entries {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(key.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let value = self
            .value
            .take()
            .expect("serde asks for a value after its key");
        seed.deserialize(Strict(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        rate: f64,
        #[serde(default)]
        queue: Option<String>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Outer {
        inner: Inner,
        list: Vec<Inner>,
        maybe: Option<Inner>,
    }

    fn read(text: &str) -> Result<Outer, String> {
        let value = Value::Table(toml::from_str(text).unwrap());
        Outer::deserialize(Strict(value)).map_err(|e| e.message().to_string())
    }

    #[test]
    fn tables_read_as_before_and_arrays_for_tables_are_refused_at_any_depth() {
        let good =
            "inner = { rate = 1 }\nlist = [{ rate = 2, queue = \"q\" }]\nmaybe = { rate = 3 }";
        let read_good = read(good).unwrap();
        assert_eq!(read_good.list[0].queue.as_deref(), Some("q"));
        assert_eq!(
            read_good.maybe,
            Some(Inner {
                rate: 3.0,
                queue: None
            })
        );
        for bad in [
            "inner = [1]\nlist = []",
            "inner = { rate = 1 }\nlist = [[2]]",
            "inner = { rate = 1 }\nlist = []\nmaybe = [3, \"q\"]",
        ] {
            let err = read(bad).unwrap_err();
            assert!(err.contains("expected a table"), "{bad}: {err}");
        }
        let unknown = read("inner = { rate = 1, rat = 2 }\nlist = []").unwrap_err();
        assert!(unknown.contains("unknown field `rat`"), "{unknown}");
    }

    #[test]
    fn a_date_or_time_is_refused_not_taken_as_its_text() {
        for (text, shown) in [
            ("inner = { rate = 1, queue = 2024-01-01 }", "2024-01-01"),
            ("inner = { rate = 07:32:00 }", "07:32:00"),
            (
                "inner = { rate = 1979-05-27T07:32:00Z }",
                "1979-05-27T07:32:00Z",
            ),
        ] {
            let err = read(&format!("{text}\nlist = []")).unwrap_err();
            assert!(
                err.contains(&format!("date-time `{shown}`")),
                "{text}: {err}"
            );
        }
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "snake_case")]
    enum Cc {
        Reno,
        Sack,
    }

    #[test]
    fn a_name_given_as_a_number_or_a_table_lists_the_names() {
        let cc = |text: &str| {
            Cc::deserialize(Strict(text.parse::<toml::Table>().unwrap()["cc"].clone()))
        };
        assert_eq!(cc("cc = \"sack\"").unwrap(), Cc::Sack);
        let err = cc("cc = 1").unwrap_err().message().to_string();
        assert_eq!(err, "got 1, expected one of `reno`, `sack`");
        for table in ["cc = { sack = {} }", "cc = { a = 1 }", "cc = {}"] {
            let err = cc(table).unwrap_err().message().to_string();
            assert_eq!(
                err, "got a table, expected one of `reno`, `sack`",
                "{table}"
            );
        }
    }
}

//! Scenario errors: one message naming the field path, the bad value and what was expected.

use std::fmt;

/// A bad scenario: the field path (`flows[2].source.rate`), and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: String,
    pub message: String,
}

impl ScenarioError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError {
            path: printable(&clipped_path(&path.into())),
            message: printable(&clipped_quotes(&compact_numbers(&plain_words(
                &message.into(),
            )))),
        }
    }
}

/// `text` with each character a terminal acts on or does not show written as its escape
/// (`\u{1b}`): a control character other than a line break, a format character (a
/// bidirectional override reverses what follows), a line or paragraph separator. Keys and
/// values of a file are echoed in errors, and `"\u001b[2J" = 1` cleared the screen.
pub fn printable(text: &str) -> String {
    use unicode_properties::{GeneralCategory as G, UnicodeGeneralCategory};
    let acts = |c: char| {
        c != '\n'
            && matches!(
                c.general_category(),
                G::Control | G::Format | G::LineSeparator | G::ParagraphSeparator
            )
    };
    if !text.chars().any(acts) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if acts(c) {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// serde's words for Rust types, and the phrases around them, as a scenario's author reads
/// them: `invalid type: string "x", expected u64` becomes `got string "x", expected a whole
/// number >= 0`, and `expected struct RedConfig` becomes `expected a table`.
const PLAIN_WORDS: [(&str, &str); 22] = [
    ("invalid type: ", "got "),
    ("invalid value: ", "got "),
    ("unknown variant ", "got "),
    ("got sequence", "got an array"),
    ("got map", "got a table"),
    ("expected variant identifier", "expected a name"),
    ("there are no fields", "expected none here"),
    ("expected f64", "expected a number"),
    ("expected f32", "expected a number"),
    ("expected u8", "expected a whole number from 0 to 255"),
    ("expected u16", "expected a whole number from 0 to 65535"),
    (
        "expected u32",
        "expected a whole number from 0 to 4294967295",
    ),
    ("expected u64", "expected a whole number >= 0"),
    ("expected usize", "expected a whole number >= 0"),
    ("expected i32", "expected a whole number"),
    ("expected i64", "expected a whole number"),
    ("expected a sequence", "expected an array"),
    ("expected a boolean", "expected true or false"),
    (
        "expected internally tagged enum ",
        "expected a table with a `kind`",
    ),
    ("expected struct ", "expected a table"),
    (
        "date or time), expected any valid TOML value",
        "date or time; quote it to make it text)",
    ),
    (
        " as i128, expected any valid TOML value",
        ", expected a whole number from -9223372036854775808 to 9223372036854775807",
    ),
];

/// The message in plain words (`PLAIN_WORDS`). A phrase is replaced only where it ends a word;
/// a Rust type name after `struct` or `enum` (and serde's " with N elements") is dropped.
fn plain_words(message: &str) -> String {
    let mut out = message.to_string();
    for (rust, plain) in PLAIN_WORDS {
        out = replace_words(&out, rust, plain);
    }
    if out.starts_with("invalid length ") && out.contains("expected a table") {
        out = "got an array, expected a table".to_string();
    }
    out
}

/// `text` with each `phrase` replaced by `plain` where it ends a word; an `expected ...`
/// phrase ending in a space takes the type name after it along.
fn replace_words(text: &str, phrase: &str, plain: &str) -> String {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(phrase) {
        let after = &rest[at + phrase.len()..];
        let (matched, tail) = if phrase.ends_with(' ') && phrase.starts_with("expected") {
            let name_end = after.find(|c: char| !word(c)).unwrap_or(after.len());
            let elements = after[name_end..]
                .strip_prefix(" with ")
                .and_then(|t| {
                    t.find(" elements")
                        .map(|e| " with ".len() + e + " elements".len())
                })
                .unwrap_or(0);
            (name_end > 0, &after[name_end + elements..])
        } else {
            (phrase.ends_with(' ') || !after.starts_with(word), after)
        };
        out.push_str(&rest[..at]);
        if matched {
            out.push_str(plain);
            rest = tail;
        } else {
            out.push_str(phrase);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// The message with every number of more than 21 digits (not inside a name) written in
/// scientific notation: Rust and serde print a float in full, so 1e300 would otherwise show
/// as 301 digits.
fn compact_numbers(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    let mut in_quotes = false; // a string value is shown as it is
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        in_quotes ^= unescaped_quotes(&rest[..start]) % 2 == 1;
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        let end = tail
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(tail.len());
        let number = tail[..end].trim_end_matches('.');
        let digits = number.chars().filter(char::is_ascii_digit).count();
        let in_a_word = out.ends_with(|c: char| c.is_alphanumeric() || c == '_');
        if digits > 21 && !in_a_word && !in_quotes {
            out.push_str(&scientific(number));
        } else {
            out.push_str(number);
        }
        rest = &tail[number.len()..];
    }
    out.push_str(rest);
    out
}

fn unescaped_quotes(text: &str) -> usize {
    let mut count = 0;
    let mut escaped = false;
    for c in text.chars() {
        if c == '"' && !escaped {
            count += 1;
        }
        escaped = c == '\\' && !escaped;
    }
    count
}

/// `number` (digits with at most one point) in scientific notation, from its own digits: every
/// significant digit it has, up to SHOWN_DIGITS (then "..."). Through an f64 a 23-digit whole
/// number typed as 99999999999999999999999 showed as 1e23.
fn scientific(number: &str) -> String {
    const SHOWN_DIGITS: usize = 30;
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let digits: Vec<u8> = whole.bytes().chain(fraction.bytes()).collect();
    let Some(lead) = digits.iter().position(|&d| d != b'0') else {
        return "0".into();
    };
    let exponent = whole.len() as i64 - 1 - lead as i64;
    let significant = std::str::from_utf8(&digits[lead..])
        .unwrap_or("0")
        .trim_end_matches('0');
    let (first, rest) = significant.split_at(1);
    let (rest, cut) = if significant.len() > SHOWN_DIGITS {
        (&rest[..SHOWN_DIGITS - 1], "...")
    } else {
        (rest, "")
    };
    let point = if rest.is_empty() { "" } else { "." };
    format!("{first}{point}{rest}{cut}e{exponent}")
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "`{}`: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_type_names_are_shown_in_plain_words() {
        let plain = |m: &str| ScenarioError::new("x", m).message;
        assert_eq!(
            plain("invalid type: string \"x\", expected u64"),
            "got string \"x\", expected a whole number >= 0"
        );
        assert_eq!(
            plain("invalid value: integer `-1`, expected u32 in `count`"),
            "got integer `-1`, expected a whole number from 0 to 4294967295 in `count`"
        );
        assert_eq!(
            plain("invalid type: integer `0`, expected struct RedConfig"),
            "got integer `0`, expected a table"
        );
        assert_eq!(
            plain("invalid type: float `1`, expected internally tagged enum AppSpec"),
            "got float `1`, expected a table with a `kind`"
        );
        assert_eq!(
            plain("invalid length 0, expected struct TwoServerSpec with 2 elements"),
            "got an array, expected a table"
        );
        assert_eq!(
            plain("invalid type: map, expected a string"),
            "got a table, expected a string"
        );
        assert_eq!(
            plain("unknown variant `vegas`, expected one of `reno`, `sack`"),
            "got `vegas`, expected one of `reno`, `sack`"
        );
        assert_eq!(
            plain("got integer `99999999999999999999` as i128, expected any valid TOML value"),
            "got integer `99999999999999999999`, \
             expected a whole number from -9223372036854775808 to 9223372036854775807"
        );
        assert_eq!(
            plain("got 3, expected u64s or f64_x, a sequence"),
            "got 3, expected u64s or f64_x, a sequence"
        );
    }

    #[test]
    fn characters_a_terminal_acts_on_are_escaped_in_paths_and_messages() {
        let e = ScenarioError::new("x\u{1b}[2J", "unknown field `a\rb\u{202e}c`, \nnext line");
        assert_eq!(e.path, "x\\u{1b}[2J");
        assert_eq!(e.message, "unknown field `a\\u{d}b\\u{202e}c`, \nnext line");
        assert_eq!(printable("café, 10 Mb/s"), "café, 10 Mb/s");
    }

    #[test]
    fn a_count_that_must_be_positive_says_so_in_the_words_of_its_type_error() {
        // `limit = 0.5` is "expected a whole number >= 0" (serde's, in plain words); `limit = 0`
        // said "expected a positive integer", another vocabulary for the same field.
        let e = check::positive_int("q", "limit", 0).unwrap_err();
        assert_eq!(e.message, "got 0, expected a whole number >= 1");
        assert!(check::positive_int("q", "limit", 1).is_ok());
    }

    #[test]
    fn long_keys_and_quoted_values_are_clipped() {
        let long = "a".repeat(200_000);
        let err = ScenarioError::new(
            format!("flows[0].{long}"),
            format!("unknown field `{long}`, expected one of `name`, `src`; got \"{long}\""),
        );
        let clip = format!("{}... (200000 characters)", "a".repeat(50));
        assert_eq!(clipped(&clip), clip);
        assert_eq!(err.path, format!("flows[0].{clip}"));
        assert_eq!(
            err.message,
            format!("unknown field `{clip}`, expected one of `name`, `src`; got \"{clip}\"")
        );
        let tail = "an unmatched ` quote and a long explanation after it, which stays whole \
                    however long it runs";
        let short = ScenarioError::new("x.y", format!("got `a`, expected \"b\\\"\" or {tail}"));
        assert_eq!(short.path, "x.y");
        assert_eq!(
            short.message,
            format!("got `a`, expected \"b\\\"\" or {tail}")
        );
    }

    proptest::proptest! {
        /// Scientific notation of a whole number keeps every digit it has (up to 30).
        #[test]
        fn scientific_notation_keeps_a_whole_numbers_digits(digits in "[1-9][0-9]{21,29}") {
            let shown = scientific(&digits);
            let (mantissa, exponent) = shown.split_once('e').expect("an exponent");
            let significant = mantissa.replace('.', "");
            let exponent: usize = exponent.parse().expect("a whole exponent");
            proptest::prop_assert_eq!(exponent + 1, digits.len());
            proptest::prop_assert_eq!(significant.as_str(), digits.trim_end_matches('0'));
        }
    }

    #[test]
    fn long_numbers_are_shown_in_scientific_notation() {
        let huge = format!("got {}, expected at most 5", 1e300);
        assert_eq!(
            ScenarioError::new("x", huge).message,
            "got 1e300, expected at most 5"
        );
        let tiny = format!("floating point `{}` in 0.5s", 1.5e-30);
        assert_eq!(compact_numbers(&tiny), "floating point `1.5e-30` in 0.5s");
        let plain = format!(
            "got 4294967295 and 1048560, 0.25 s, f12.3, v1., s{}",
            "0".repeat(30)
        );
        assert_eq!(compact_numbers(&plain), plain);
        let quoted = format!(
            "got string \"x{0}\\\"{0}\", expected a number",
            "1".repeat(25)
        );
        assert_eq!(compact_numbers(&quoted), quoted);
        let typed = "got 99999999999999999999999 and 123456789012345678901234567890123";
        assert_eq!(
            compact_numbers(typed),
            "got 9.9999999999999999999999e22 and 1.23456789012345678901234567890...e32"
        );
    }
}

/// What an error shows of a text a user gave: the text, or its first 50 characters and its
/// length when it is longer than 80, so that an error stays readable. A clipped text is at
/// most 80 characters long, so clipping it again leaves it as it is.
pub fn clipped(text: &str) -> String {
    if text.chars().count() <= 80 {
        return text.to_string();
    }
    let head: String = text.chars().take(50).collect();
    format!("{head}... ({} characters)", text.chars().count())
}

/// A field path with each name longer than 80 characters clipped: a key is the user's text.
fn clipped_path(path: &str) -> String {
    path.split('.').map(clipped).collect::<Vec<_>>().join(".")
}

/// The message with every quoted text (between backticks or double quotes) longer than 80
/// characters clipped, whichever check quoted it: a value or key of 200,000 characters would
/// otherwise be printed whole, sometimes twice.
fn clipped_quotes(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(4096));
    let mut rest = message;
    while let Some(open) = rest.find(['`', '"']) {
        let quote = rest[open..].chars().next().unwrap_or('"');
        let inner_start = open + 1;
        let Some(len) = closing_quote(&rest[inner_start..], quote) else {
            break;
        };
        out.push_str(&rest[..inner_start]);
        out.push_str(&clipped(&rest[inner_start..inner_start + len]));
        out.push(quote);
        rest = &rest[inner_start + len + 1..];
    }
    out.push_str(rest);
    out
}

/// Where `quote` closes `text`, skipping a backslash-escaped double quote (Rust's `{:?}`).
fn closing_quote(text: &str, quote: char) -> Option<usize> {
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quote == '"' => escaped = true,
            _ if c == quote => return Some(at),
            _ => {}
        }
    }
    None
}

/// Marks a field path inside an error message raised by a nested deserializer, so the
/// outer loader can join it to the path it knows (serde loses paths inside tagged enums).
const PATH_MARK: char = '\u{1}';

/// Deserializes `value` as `T`, keeping the path of any error inside it.
pub fn deserialize_nested<T, E>(value: toml::Value) -> Result<T, E>
where
    T: serde::de::DeserializeOwned,
    E: serde::de::Error,
{
    serde_path_to_error::deserialize(super::strict::Strict(value)).map_err(|e| {
        let outer = e.path().to_string();
        let outer = if outer == "." { String::new() } else { outer };
        let (inner, message) = split_marked(e.into_inner().message());
        E::custom(marked(&join(&outer, &inner), &message))
    })
}

/// An error message carrying a nested field path.
pub fn marked(path: &str, message: &str) -> String {
    if path.is_empty() {
        message.to_string()
    } else {
        format!("{PATH_MARK}{path}{PATH_MARK}{message}")
    }
}

/// Splits a marked message into its nested path and the message.
pub fn split_marked(message: &str) -> (String, String) {
    let message = message.trim();
    if let Some(rest) = message.strip_prefix(PATH_MARK) {
        if let Some((path, msg)) = rest.split_once(PATH_MARK) {
            return (path.to_string(), msg.to_string());
        }
    }
    (String::new(), message.to_string())
}

/// Joins a parent path and a field name.
pub fn join(path: &str, field: &str) -> String {
    if field.is_empty() {
        path.to_string()
    } else if path.is_empty() {
        field.to_string()
    } else if field.starts_with('[') {
        format!("{path}{field}")
    } else {
        format!("{path}.{field}")
    }
}

/// Parameter checks used by every config's `validate`.
pub mod check {
    use super::{clipped, join, ScenarioError};

    pub fn positive_int(path: &str, field: &str, value: u64) -> Result<(), ScenarioError> {
        if value == 0 {
            return Err(ScenarioError::new(
                join(path, field),
                "got 0, expected a whole number >= 1",
            ));
        }
        Ok(())
    }

    /// A whole number in `low..=high`.
    pub fn int_in_range(
        path: &str,
        field: &str,
        value: u64,
        low: u64,
        high: u64,
    ) -> Result<(), ScenarioError> {
        if !(low..=high).contains(&value) {
            return Err(ScenarioError::new(
                join(path, field),
                format!("got {value}, expected a whole number from {low} to {high}"),
            ));
        }
        Ok(())
    }

    /// The first of `keys` that is given (`true`) while `beside`, a setting of the same table,
    /// leaves it unread: refused rather than ignored, naming `reader`, the setting that reads
    /// it (`unread(path, &[("ecn_floor", given)], "ecn = true", "`ecn = false`")`).
    pub fn unread(
        path: &str,
        keys: &[(&str, bool)],
        reader: &str,
        beside: &str,
    ) -> Result<(), ScenarioError> {
        match keys.iter().find(|(_, given)| *given) {
            None => Ok(()),
            Some((key, _)) => Err(ScenarioError::new(
                join(path, key),
                format!(
                    "got a value that only `{reader}` reads, beside {beside}; expected \
                     `{reader}` beside it, or no `{key}`"
                ),
            )),
        }
    }

    /// A packet's size in bytes: at least 1, at most `MAX_PACKET_BYTES` as every size is.
    pub fn packet_size(path: &str, field: &str, value: u64) -> Result<(), ScenarioError> {
        let largest = crate::config::dist::MAX_PACKET_BYTES as u64;
        if !(1..=largest).contains(&value) {
            return Err(ScenarioError::new(
                join(path, field),
                format!(
                    "got {value}, expected a whole number of bytes from 1 to {largest} \
                     (65,535 x 16) per packet"
                ),
            ));
        }
        Ok(())
    }

    pub fn positive(path: &str, field: &str, value: f64) -> Result<(), ScenarioError> {
        if !(value.is_finite() && value > 0.0) {
            return Err(ScenarioError::new(
                join(path, field),
                format!("got {value}, expected a positive number"),
            ));
        }
        Ok(())
    }

    pub fn non_negative(path: &str, field: &str, value: f64) -> Result<(), ScenarioError> {
        if !(value.is_finite() && value >= 0.0) {
            return Err(ScenarioError::new(
                join(path, field),
                format!("got {value}, expected a number >= 0"),
            ));
        }
        Ok(())
    }

    pub fn probability(path: &str, field: &str, value: f64) -> Result<(), ScenarioError> {
        in_range(path, field, value, 0.0, 1.0)
    }

    pub fn in_range(
        path: &str,
        field: &str,
        value: f64,
        low: f64,
        high: f64,
    ) -> Result<(), ScenarioError> {
        if !(value.is_finite() && value >= low && value <= high) {
            return Err(ScenarioError::new(
                join(path, field),
                format!("got {value}, expected a number in [{low}, {high}]"),
            ));
        }
        Ok(())
    }

    /// `low_field` must be strictly below `high_field`.
    pub fn ordered(
        path: &str,
        low_field: &str,
        low: f64,
        high_field: &str,
        high: f64,
    ) -> Result<(), ScenarioError> {
        if low >= high {
            return Err(ScenarioError::new(
                join(path, high_field),
                format!("got {high}, expected a value above {low_field} = {low}"),
            ));
        }
        Ok(())
    }

    /// What is wrong with a node's, a flow's or a VC's name as a label of the result tables, if anything.
    pub fn label_problem(name: &str) -> Option<&'static str> {
        if name.is_empty() {
            Some("a name")
        } else if name.trim() != name || name.chars().any(is_unseen) {
            Some(
                "a name without spaces at its ends, control characters or invisible ones \
                 (formatting such as U+200B or U+202E, line separators, private or unassigned)",
            )
        } else {
            None
        }
    }

    /// How a name looks: its canonical composition (NFC), so that two names that print alike
    /// but are encoded differently ("café" with a precomposed é, and with e + U+0301; the
    /// Kelvin sign U+212A and K) have one key. An ASCII name is its own.
    pub fn look(name: &str) -> std::borrow::Cow<'_, str> {
        use unicode_normalization::UnicodeNormalization;
        if name.is_ascii() {
            std::borrow::Cow::Borrowed(name)
        } else {
            std::borrow::Cow::Owned(name.nfc().collect())
        }
    }

    /// The end of the error for a name that looks like one taken before (`taken`), or that is
    /// the same: what a reader of the tables would see.
    pub fn taken_message(name: &str, taken: &str, what: &str) -> String {
        if name == taken {
            format!(
                "got {:?}, which names another {what} already; expected a unique name",
                clipped(name)
            )
        } else {
            format!(
                "got {:?}, which prints as another {what}'s name, {:?}, differing only in how \
                 its characters are encoded (Unicode composition: NFC against NFD, or a \
                 compatibility sign such as U+212A for K); expected a name that looks different",
                clipped(name),
                clipped(taken)
            )
        }
    }

    /// Whether `c` prints as nothing or as something else: a control, a format character (a
    /// zero-width space prints nothing, a bidirectional override reverses what follows), a line
    /// or paragraph separator, a private-use or unassigned code point. Two names differing only
    /// by such a character would look alike in every table.
    fn is_unseen(c: char) -> bool {
        use unicode_properties::{GeneralCategory as G, UnicodeGeneralCategory};
        matches!(
            c.general_category(),
            G::Control
                | G::Format
                | G::Surrogate
                | G::PrivateUse
                | G::Unassigned
                | G::LineSeparator
                | G::ParagraphSeparator
        )
    }
}

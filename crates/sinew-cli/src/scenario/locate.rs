//! Where a key or a group sits in a scenario file's text, for
//! errors that name the file's line.

use super::*;

/// Every key of a `[[groups]]` table the reader knows: [`GroupToml`]'s
/// fields, as its `Deserialize` implementation declares them.
pub(super) fn group_keys() -> &'static [&'static str] {
    static KEYS: std::sync::OnceLock<&'static [&'static str]> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let found = std::cell::Cell::new(&[][..]);
        let _ = GroupToml::deserialize(FieldNames(&found));
        found.get()
    })
}

/// A deserializer that only records the field names a struct asks for.
pub(super) struct FieldNames<'a>(pub(super) &'a std::cell::Cell<&'static [&'static str]>);

impl<'de> serde::Deserializer<'de> for FieldNames<'_> {
    type Error = serde::de::value::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(serde::de::Error::custom("field names only"))
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.set(fields);
        Err(serde::de::Error::custom("field names only"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// The keys of a group that are the group's own, not its kind's.
pub(super) const GROUP_OWN_KEYS: &[&str] = &[
    "name",
    "targets",
    "kind",
    "preset",
    "transmission",
    "armature",
    "frictionloss",
    "viscous_damping",
    "delay",
];

/// The byte offset of `key = …` in the table whose header starts at
/// `span` (up to the next header), if written there at the start of a line.
pub(super) fn key_offset(text: &str, span: &std::ops::Range<usize>, key: &str) -> Option<usize> {
    let body = text.get(span.start..)?;
    let mut offset = span.start;
    for (i, line) in body.split_inclusive('\n').enumerate() {
        if i > 0 && is_header(line) {
            return None;
        }
        let indent = line.len() - line.trim_start().len();
        let rest = line.trim_start().strip_prefix(key).map(str::trim_start);
        if rest.is_some_and(|r| r.starts_with('=')) {
            return Some(offset + indent);
        }
        offset += line.len();
    }
    None
}

/// The key a value at byte `offset` belongs to: the identifier before the
/// last `=` ahead of it on its line (`key = value`, also inside inline
/// tables). `None` when the line has no `=` before the offset: the error
/// is then in a key or a header, and no earlier key is at fault.
pub(super) fn key_before(text: &str, offset: usize) -> Option<&str> {
    let head = text.get(..offset)?;
    let line = &head[head.rfind('\n').map_or(0, |i| i + 1)..];
    let name = line[..line.rfind('=')?].trim_end();
    let start = name
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    Some(&name[start..]).filter(|k| !k.is_empty())
}

/// Whether `line` is a table header (`[robot]`, `[[groups]]`), not a line
/// of an array value.
pub(super) fn is_header(line: &str) -> bool {
    line.starts_with('[')
        && line
            .trim_start_matches(['[', ' '])
            .starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '"' || c == '\'')
}

/// The `name` of the `[[groups]]` entry whose table holds byte `offset` of
/// `text`, when the text parses as TOML and that entry has a name.
pub(super) fn group_at(text: &str, offset: usize) -> Option<String> {
    #[derive(Deserialize)]
    struct Groups {
        #[serde(default)]
        groups: Vec<S<toml::Table>>,
    }
    let file: Groups = toml::from_str(text).ok()?;
    // An inline table's span holds its values; a `[[groups]]` entry's span
    // is its header, and its values follow up to the next header that is
    // not one of its own subtables (`[groups.delay]`).
    let group = file.groups.iter().rev().find(|g| {
        let span = g.span();
        span.contains(&offset)
            || span.end <= offset
                && text.get(span.end..offset).is_some_and(|between| {
                    !between
                        .lines()
                        .any(|l| is_header(l) && !l.starts_with("[groups."))
                })
    })?;
    group.get_ref().get("name")?.as_str().map(str::to_owned)
}

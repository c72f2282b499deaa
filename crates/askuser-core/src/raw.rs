//! A lenient mirror of the argument JSON: it records every value whatever its type, so that
//! validation can report all problems at once instead of stopping at the first type error, as
//! `derive(Deserialize)` would. Duplicate keys: the last one wins, as in the reference.
//!
//! Strings are trimmed and appended to one text arena as they are parsed, and recorded as spans:
//! a validated call then owns one string instead of one allocation per field, which is most of the
//! difference between validating and merely parsing (see `docs/performance.md`).

use std::fmt;
use std::marker::PhantomData;

use std::ops::Range;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::error::JsonType;
use crate::model::QuestionKind;

/// A field or array item as it was sent.
#[derive(Debug, Default)]
pub(crate) enum Slot<T> {
    #[default]
    Missing,
    Present(T),
    Wrong(JsonType),
}

/// A value that knows which JSON shapes it accepts; every other shape becomes [`Slot::Wrong`].
pub(crate) trait Raw: Sized {
    fn from_str(_s: &str, _text: &mut String) -> Option<Self> {
        None
    }
    fn from_bool(_b: bool) -> Option<Self> {
        None
    }
    fn from_u64(_n: u64) -> Option<Self> {
        None
    }
    fn from_i64(_n: i64) -> Option<Self> {
        None
    }
    fn from_f64(_n: f64) -> Option<Self> {
        None
    }
    fn from_seq<'de, A: SeqAccess<'de>>(mut seq: A, _text: &mut Arena<'_>) -> Result<Option<Self>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn from_map<'de, A: MapAccess<'de>>(mut map: A, _text: &mut Arena<'_>) -> Result<Option<Self>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// The text arena strings are appended to, whether the extended profile's keys are known, and
/// the extended keys read so far.
pub(crate) struct Arena<'t> {
    pub(crate) text: &'t mut String,
    pub(crate) extended: bool,
    pub(crate) exts: Vec<RawQuestionExt>,
}

impl<'t> Arena<'t> {
    pub(crate) fn new(text: &'t mut String, extended: bool) -> Self {
        Self { text, extended, exts: Vec::new() }
    }
}

/// Reads one value into a [`Slot`], appending its strings to the arena.
pub(crate) struct SlotSeed<'a, 't, T>(&'a mut Arena<'t>, PhantomData<T>);

impl<'a, 't, T> SlotSeed<'a, 't, T> {
    pub(crate) fn new(arena: &'a mut Arena<'t>) -> Self {
        Self(arena, PhantomData)
    }
}

impl<'de, T: Raw> DeserializeSeed<'de> for SlotSeed<'_, '_, T> {
    type Value = Slot<T>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Slot<T>, D::Error> {
        d.deserialize_any(SlotVisitor(self.0, PhantomData))
    }
}

struct SlotVisitor<'a, 't, T>(&'a mut Arena<'t>, PhantomData<T>);

fn slot<T>(value: Option<T>, found: JsonType) -> Slot<T> {
    value.map_or(Slot::Wrong(found), Slot::Present)
}

impl<'de, T: Raw> Visitor<'de> for SlotVisitor<'_, '_, T> {
    type Value = Slot<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Slot<T>, E> {
        Ok(slot(T::from_bool(v), JsonType::Boolean))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Slot<T>, E> {
        Ok(slot(T::from_u64(v), JsonType::Number))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Slot<T>, E> {
        Ok(slot(T::from_i64(v), JsonType::Number))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Slot<T>, E> {
        Ok(slot(T::from_f64(v), JsonType::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Slot<T>, E> {
        Ok(slot(T::from_str(v, self.0.text), JsonType::String))
    }
    fn visit_unit<E>(self) -> Result<Slot<T>, E> {
        Ok(Slot::Wrong(JsonType::Null))
    }
    fn visit_none<E>(self) -> Result<Slot<T>, E> {
        Ok(Slot::Wrong(JsonType::Null))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Slot<T>, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Slot<T>, A::Error> {
        Ok(slot(T::from_seq(seq, self.0)?, JsonType::Array))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Slot<T>, A::Error> {
        Ok(slot(T::from_map(map, self.0)?, JsonType::Object))
    }
}

/// A trimmed string: where it stands in the arena.
pub(crate) type Span = Range<usize>;

impl Raw for Span {
    fn from_str(s: &str, text: &mut String) -> Option<Self> {
        // Only the trimmed text is ever needed (SPEC §2.1 step 2), so only it is kept.
        let start = text.len();
        text.push_str(crate::text::trim(s));
        Some(start..text.len())
    }
}

/// A question's `kind` as sent: one of the three kinds, read without copying it anywhere, or
/// another string, trimmed into the arena for the error.
#[derive(Debug)]
pub(crate) enum RawKind {
    Known(QuestionKind),
    Other(Span),
}

impl Raw for RawKind {
    fn from_str(s: &str, text: &mut String) -> Option<Self> {
        Some(match crate::text::trim(s) {
            "choice" => Self::Known(QuestionKind::Choice),
            "text" => Self::Known(QuestionKind::Text),
            "secret" => Self::Known(QuestionKind::Secret),
            _ => Self::Other(Span::from_str(s, text)?),
        })
    }
}

impl<T: Raw> Raw for Vec<Slot<T>> {
    fn from_seq<'de, A: SeqAccess<'de>>(mut seq: A, text: &mut Arena<'_>) -> Result<Option<Self>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(4).min(16));
        while let Some(item) = seq.next_element_seed(SlotSeed::<T>::new(text))? {
            items.push(item);
        }
        Ok(Some(items))
    }
}

/// `multi_select` after the lax coercion of SPEC §2.4: `Ok(value)` or `Err(the JSON sent)`.
#[derive(Debug)]
pub(crate) struct LaxBool(pub(crate) Result<bool, String>);

impl Raw for LaxBool {
    fn from_bool(b: bool) -> Option<Self> {
        Some(Self(Ok(b)))
    }
    fn from_u64(n: u64) -> Option<Self> {
        Some(Self(match n {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(n.to_string()),
        }))
    }
    fn from_i64(n: i64) -> Option<Self> {
        Some(Self(match n {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(n.to_string()),
        }))
    }
    #[expect(clippy::float_cmp, reason = "only exactly 0.0 and 1.0 are booleans")]
    fn from_f64(n: f64) -> Option<Self> {
        Some(Self(if n == 0.0 {
            Ok(false)
        } else if n == 1.0 {
            Ok(true)
        } else {
            Err(serde_json::Number::from_f64(n).map_or_else(|| n.to_string(), |n| n.to_string()))
        }))
    }
    fn from_str(s: &str, _text: &mut String) -> Option<Self> {
        const TRUE: [&str; 5] = ["true", "yes", "on", "1", "t"];
        const FALSE: [&str; 5] = ["false", "no", "off", "0", "f"];
        // Untrimmed and case-insensitive, exactly as the reference coerces.
        let value = if TRUE.iter().any(|w| w.eq_ignore_ascii_case(s)) || s.eq_ignore_ascii_case("y") {
            Ok(true)
        } else if FALSE.iter().any(|w| w.eq_ignore_ascii_case(s)) || s.eq_ignore_ascii_case("n") {
            Ok(false)
        } else {
            Err(crate::error::quoted(s))
        };
        Some(Self(value))
    }
}

/// Object keys: known field names are matched without allocating; others are kept for the error.
enum Key<F> {
    Known(F),
    Unknown(String),
}

struct KeyVisitor<F>(fn(&str) -> Option<F>);

impl<F> Visitor<'_> for KeyVisitor<F> {
    type Value = Key<F>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }
    fn visit_str<E>(self, v: &str) -> Result<Key<F>, E> {
        Ok((self.0)(v).map_or_else(|| Key::Unknown(v.to_owned()), Key::Known))
    }
}

struct KeySeed<F>(fn(&str) -> Option<F>);

impl<'de, F> de::DeserializeSeed<'de> for KeySeed<F> {
    type Value = Key<F>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key<F>, D::Error> {
        d.deserialize_str(KeyVisitor(self.0))
    }
}

/// Reads an object, handing each known key's value to `known` and collecting unknown keys in order.
fn read_object<'de, A, F>(
    mut map: A,
    field: fn(&str) -> Option<F>,
    mut known: impl FnMut(F, &mut A) -> Result<(), A::Error>,
) -> Result<Vec<String>, A::Error>
where
    A: MapAccess<'de>,
{
    let mut unknown = Vec::new();
    while let Some(key) = map.next_key_seed(KeySeed(field))? {
        match key {
            Key::Known(f) => known(f, &mut map)?,
            Key::Unknown(name) => {
                map.next_value::<IgnoredAny>()?;
                unknown.push(name);
            }
        }
    }
    Ok(unknown)
}

#[derive(Debug, Default)]
pub(crate) struct RawOption {
    pub(crate) label: Slot<Span>,
    pub(crate) description: Slot<Span>,
    pub(crate) default: Slot<bool>,
    pub(crate) unknown: Vec<String>,
}

#[derive(Clone, Copy)]
enum OptionField {
    Label,
    Description,
    Default,
}

impl Raw for RawOption {
    fn from_map<'de, A: MapAccess<'de>>(map: A, text: &mut Arena<'_>) -> Result<Option<Self>, A::Error> {
        let mut raw = Self::default();
        let field: fn(&str) -> Option<OptionField> = if text.extended {
            |k| match k {
                "label" => Some(OptionField::Label),
                "description" => Some(OptionField::Description),
                "default" => Some(OptionField::Default),
                _ => None,
            }
        } else {
            |k| match k {
                "label" => Some(OptionField::Label),
                "description" => Some(OptionField::Description),
                _ => None,
            }
        };
        raw.unknown = read_object(map, field, |f, map| {
            match f {
                OptionField::Label => raw.label = map.next_value_seed(SlotSeed::new(text))?,
                OptionField::Description => raw.description = map.next_value_seed(SlotSeed::new(text))?,
                OptionField::Default => raw.default = map.next_value_seed(SlotSeed::new(text))?,
            }
            Ok(())
        })?;
        Ok(Some(raw))
    }
}

impl Raw for bool {
    fn from_bool(b: bool) -> Option<Self> {
        Some(b)
    }
}

/// A number as sent: an integer (exact), or any other number (a fraction, an exponent, too large
/// for an integer, `NaN`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum RawNumber {
    Integer(i128),
    Other(f64),
}

impl Raw for RawNumber {
    fn from_u64(n: u64) -> Option<Self> {
        Some(Self::Integer(i128::from(n)))
    }
    fn from_i64(n: i64) -> Option<Self> {
        Some(Self::Integer(i128::from(n)))
    }
    fn from_f64(n: f64) -> Option<Self> {
        Some(Self::Other(n))
    }
}

#[derive(Debug, Default)]
pub(crate) struct RawQuestion {
    pub(crate) header: Slot<Span>,
    pub(crate) question: Slot<Span>,
    pub(crate) options: Slot<Vec<Slot<RawOption>>>,
    pub(crate) multi_select: Slot<LaxBool>,
    pub(crate) unknown: Vec<String>,
    /// Where the extended profile's keys are in [`RawArgs::exts`], once one is read: one list for
    /// the whole call rather than an allocation per question, and the reference profile's mirror
    /// stays as small as it was.
    pub(crate) ext: Option<usize>,
}

impl RawQuestion {
    /// This question's extended keys, added to `exts` when the first one is read.
    pub(crate) fn ext<'e>(&mut self, exts: &'e mut Vec<RawQuestionExt>) -> &'e mut RawQuestionExt {
        let index = *self.ext.get_or_insert_with(|| {
            exts.push(RawQuestionExt::default());
            exts.len() - 1
        });
        &mut exts[index]
    }
}

#[derive(Debug, Default)]
pub(crate) struct RawQuestionExt {
    pub(crate) kind: Slot<RawKind>,
    pub(crate) id: Slot<Span>,
    pub(crate) allow_other: Slot<bool>,
    pub(crate) secret_name: Slot<Span>,
    pub(crate) purpose: Slot<Span>,
}

impl RawQuestionExt {
    /// None of the keys sent.
    pub(crate) const NONE: Self = Self {
        kind: Slot::Missing,
        id: Slot::Missing,
        allow_other: Slot::Missing,
        secret_name: Slot::Missing,
        purpose: Slot::Missing,
    };
}

#[derive(Clone, Copy)]
enum QuestionField {
    Header,
    Question,
    Options,
    MultiSelect,
    Kind,
    Id,
    AllowOther,
    SecretName,
    Purpose,
}

impl Raw for RawQuestion {
    fn from_map<'de, A: MapAccess<'de>>(map: A, text: &mut Arena<'_>) -> Result<Option<Self>, A::Error> {
        let mut raw = Self::default();
        let field: fn(&str) -> Option<QuestionField> = if text.extended {
            |k| match k {
                "header" => Some(QuestionField::Header),
                "question" => Some(QuestionField::Question),
                "options" => Some(QuestionField::Options),
                "multi_select" => Some(QuestionField::MultiSelect),
                "kind" => Some(QuestionField::Kind),
                "id" => Some(QuestionField::Id),
                "allow_other" => Some(QuestionField::AllowOther),
                "secret_name" => Some(QuestionField::SecretName),
                "purpose" => Some(QuestionField::Purpose),
                _ => None,
            }
        } else {
            |k| match k {
                "header" => Some(QuestionField::Header),
                "question" => Some(QuestionField::Question),
                "options" => Some(QuestionField::Options),
                "multi_select" => Some(QuestionField::MultiSelect),
                _ => None,
            }
        };
        raw.unknown = read_object(map, field, |f, map| {
            match f {
                QuestionField::Header => raw.header = map.next_value_seed(SlotSeed::new(text))?,
                QuestionField::Question => raw.question = map.next_value_seed(SlotSeed::new(text))?,
                QuestionField::Options => raw.options = map.next_value_seed(SlotSeed::new(text))?,
                QuestionField::MultiSelect => raw.multi_select = map.next_value_seed(SlotSeed::new(text))?,
                QuestionField::Kind => {
                    let kind = map.next_value_seed(SlotSeed::new(text))?;
                    raw.ext(&mut text.exts).kind = kind;
                }
                QuestionField::Id => {
                    let id = map.next_value_seed(SlotSeed::new(text))?;
                    raw.ext(&mut text.exts).id = id;
                }
                QuestionField::AllowOther => {
                    let allow_other = map.next_value_seed(SlotSeed::new(text))?;
                    raw.ext(&mut text.exts).allow_other = allow_other;
                }
                QuestionField::SecretName => {
                    let secret_name = map.next_value_seed(SlotSeed::new(text))?;
                    raw.ext(&mut text.exts).secret_name = secret_name;
                }
                QuestionField::Purpose => {
                    let purpose = map.next_value_seed(SlotSeed::new(text))?;
                    raw.ext(&mut text.exts).purpose = purpose;
                }
            }
            Ok(())
        })?;
        Ok(Some(raw))
    }
}

#[derive(Debug, Default)]
pub(crate) struct RawArgs {
    pub(crate) questions: Slot<Vec<Slot<RawQuestion>>>,
    pub(crate) timeout_seconds: Slot<RawNumber>,
    pub(crate) unknown: Vec<String>,
    /// The extended keys of every question, which [`RawQuestion::ext`] indexes.
    pub(crate) exts: Vec<RawQuestionExt>,
}

#[derive(Clone, Copy)]
enum ArgsField {
    Questions,
    TimeoutSeconds,
}

impl Raw for RawArgs {
    fn from_map<'de, A: MapAccess<'de>>(map: A, text: &mut Arena<'_>) -> Result<Option<Self>, A::Error> {
        let mut raw = Self::default();
        let field: fn(&str) -> Option<ArgsField> = if text.extended {
            |k| match k {
                "questions" => Some(ArgsField::Questions),
                "timeout_seconds" => Some(ArgsField::TimeoutSeconds),
                _ => None,
            }
        } else {
            |k| (k == "questions").then_some(ArgsField::Questions)
        };
        raw.unknown = read_object(map, field, |f, map| {
            match f {
                ArgsField::Questions => raw.questions = map.next_value_seed(SlotSeed::new(text))?,
                ArgsField::TimeoutSeconds => {
                    raw.timeout_seconds = map.next_value_seed(SlotSeed::new(text))?;
                }
            }
            Ok(())
        })?;
        raw.exts = std::mem::take(&mut text.exts);
        Ok(Some(raw))
    }
}

//! A lenient mirror of the argument JSON: it records every value whatever its type, so that
//! validation can report all problems at once instead of stopping at the first type error, as
//! `derive(Deserialize)` would. Duplicate keys: the last one wins, as in the reference.
//!
//! Strings are trimmed and appended to one text arena as they are parsed, and recorded as spans:
//! a validated call then owns one string instead of one allocation per field, which is most of the
//! difference between validating and merely parsing (see CHANGELOG.md, performance history).
//!
//! Three ways in: the crate's own JSON reader (`json.rs`, through [`Source`]), any serde
//! `Deserializer` (the `Deserialize` impls of the validated types), and a `serde_json::Value`
//! already parsed ([`value_slot`]), which is what an MCP server or an agent framework is handed.
//! The last walks the value directly instead of through serde's visitors (18 % fewer instructions
//! for the typical call, CHANGELOG.md's performance history). Whichever way, a key is found in
//! the tables of `keys.rs` and its value stored in one place ([`Fields::set`]).

use std::convert::Infallible;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::error::{JsonType, quoted};
use crate::keys::{ArgsKey, Key, OptionKey, QuestionKey};
use crate::profile::QuestionKind;
use crate::text::{Span, trim};

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
    /// [`from_seq`](Self::from_seq) for an array already parsed.
    fn from_values(_items: &[Value], _text: &mut Arena<'_>) -> Option<Self> {
        None
    }
    /// [`from_map`](Self::from_map) for an object already parsed.
    fn from_object(_fields: &Map<String, Value>, _text: &mut Arena<'_>) -> Option<Self> {
        None
    }
    /// Reads the next value of JSON text: a list and an object say so, anything else is a scalar.
    fn read<S: Source>(source: &mut S, arena: &mut Arena<'_>) -> Result<Slot<Self>, S::Error> {
        source.scalar(arena)
    }
}

/// JSON text being read (`json.rs`): the mirror says which shape it wants next, the reader reads
/// it, and hands a scalar over through [`Raw`]'s `from_*` as `serde_json` would.
pub(crate) trait Source {
    type Error;
    /// A string, a boolean, a number or `null`; a list or an object is skipped as the wrong type.
    fn scalar<T: Raw>(&mut self, arena: &mut Arena<'_>) -> Result<Slot<T>, Self::Error>;
    /// A list of `T`.
    fn list<T: Raw>(&mut self, arena: &mut Arena<'_>) -> Result<Slot<Vec<Slot<T>>>, Self::Error>;
    /// An object of the arguments.
    fn object<F: Fields>(&mut self, arena: &mut Arena<'_>) -> Result<Slot<F>, Self::Error>;
}

/// Reads a parsed value into a [`Slot`], as [`SlotSeed`] does through serde: the same shapes, the
/// same numbers (`serde_json` hands an integer over as `u64`, else `i64`, else `f64`).
pub(crate) fn value_slot<T: Raw>(value: &Value, arena: &mut Arena<'_>) -> Slot<T> {
    match value {
        Value::Null => Slot::Wrong(JsonType::Null),
        Value::Bool(b) => slot(T::from_bool(*b), JsonType::Boolean),
        Value::Number(n) => {
            let raw = match (n.as_u64(), n.as_i64()) {
                (Some(n), _) => T::from_u64(n),
                (None, Some(n)) => T::from_i64(n),
                (None, None) => T::from_f64(n.as_f64().unwrap_or(f64::NAN)),
            };
            slot(raw, JsonType::Number)
        }
        Value::String(s) => slot(T::from_str(s, arena.text), JsonType::String),
        Value::Array(items) => slot(T::from_values(items, arena), JsonType::Array),
        Value::Object(fields) => slot(T::from_object(fields, arena), JsonType::Object),
    }
}

/// Where a field's value comes from: JSON text ([`Source`]), serde's map access ([`Next`]) or a
/// parsed [`Value`].
pub(crate) trait FieldValue {
    type Error;
    fn slot<T: Raw>(self, arena: &mut Arena<'_>) -> Result<Slot<T>, Self::Error>;
}

/// The value of the key a [`MapAccess`] just gave.
struct Next<'m, 'de, A>(&'m mut A, PhantomData<&'de ()>);

impl<'de, A: MapAccess<'de>> FieldValue for Next<'_, 'de, A> {
    type Error = A::Error;
    fn slot<T: Raw>(self, arena: &mut Arena<'_>) -> Result<Slot<T>, A::Error> {
        self.0.next_value_seed(SlotSeed::new(arena))
    }
}

impl<S: Source> FieldValue for &mut S {
    type Error = S::Error;
    fn slot<T: Raw>(self, arena: &mut Arena<'_>) -> Result<Slot<T>, S::Error> {
        T::read(self, arena)
    }
}

impl FieldValue for &Value {
    type Error = Infallible;
    fn slot<T: Raw>(self, arena: &mut Arena<'_>) -> Result<Slot<T>, Infallible> {
        Ok(value_slot(self, arena))
    }
}

/// An object of the arguments: which keys it knows (a table of `keys.rs`), and where each one's
/// value goes.
pub(crate) trait Fields: Default {
    /// The object's table of keys.
    type Field: Key;
    /// Reads the value of `field` from `value` into its slot: a later duplicate key wins.
    fn set<V: FieldValue>(
        &mut self,
        field: Self::Field,
        value: V,
        arena: &mut Arena<'_>,
    ) -> Result<(), V::Error>;
    fn unknown(&mut self) -> &mut Vec<String>;
    /// Called once every key is read.
    fn finish(&mut self, _arena: &mut Arena<'_>) {}
}

/// Reads an object through serde: each known key's value to its field, unknown keys collected
/// in order.
fn fields_from_map<'de, A: MapAccess<'de>, F: Fields>(
    mut map: A,
    arena: &mut Arena<'_>,
) -> Result<F, A::Error> {
    let mut raw = F::default();
    while let Some(key) = map.next_key_seed(KeySeed::<F>(arena.extended, PhantomData))? {
        match key {
            SeenKey::Known(f) => raw.set(f, Next(&mut map, PhantomData), arena)?,
            SeenKey::Unknown(name) => {
                map.next_value::<IgnoredAny>()?;
                raw.unknown().push(name);
            }
        }
    }
    raw.finish(arena);
    Ok(raw)
}

/// [`fields_from_map`] for an object already parsed.
fn fields_from_object<F: Fields>(fields: &Map<String, Value>, arena: &mut Arena<'_>) -> F {
    let mut raw = F::default();
    for (key, value) in fields {
        match F::Field::find(key, arena.extended) {
            Some(f) => {
                let Ok(()) = raw.set(f, value, arena);
            }
            None => raw.unknown().push(key.clone()),
        }
    }
    raw.finish(arena);
    raw
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

/// `value` in its slot, or the type found where none could be read.
pub(crate) fn slot<T>(value: Option<T>, found: JsonType) -> Slot<T> {
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

impl Raw for Span {
    fn from_str(s: &str, text: &mut String) -> Option<Self> {
        // Only the trimmed text is ever needed (docs/contract.md §2.1 step 2), so only it is kept.
        let start = text.len();
        text.push_str(trim(s));
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
        Some(match trim(s) {
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
    fn from_values(items: &[Value], text: &mut Arena<'_>) -> Option<Self> {
        Some(items.iter().map(|item| value_slot(item, text)).collect())
    }
    fn read<S: Source>(source: &mut S, arena: &mut Arena<'_>) -> Result<Slot<Self>, S::Error> {
        source.list(arena)
    }
}

/// `multi_select` after the lax coercion of contract §2.4: `Ok(value)` or `Err(the JSON sent)`.
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
            Err(quoted(s))
        };
        Some(Self(value))
    }
}

/// Object keys: known field names are matched without allocating; others are kept for the error.
enum SeenKey<F> {
    Known(F),
    Unknown(String),
}

/// Reads a key of `F`'s object; the flag says whether the extended profile's keys are known.
struct KeySeed<F>(bool, PhantomData<F>);

impl<F: Fields> Visitor<'_> for KeySeed<F> {
    type Value = SeenKey<F::Field>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }
    fn visit_str<E>(self, v: &str) -> Result<SeenKey<F::Field>, E> {
        Ok(F::Field::find(v, self.0).map_or_else(|| SeenKey::Unknown(v.to_owned()), SeenKey::Known))
    }
}

impl<'de, F: Fields> de::DeserializeSeed<'de> for KeySeed<F> {
    type Value = SeenKey<F::Field>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<SeenKey<F::Field>, D::Error> {
        d.deserialize_str(self)
    }
}

#[derive(Debug, Default)]
pub(crate) struct RawOption {
    pub(crate) label: Slot<Span>,
    pub(crate) description: Slot<Span>,
    pub(crate) default: Slot<bool>,
    pub(crate) unknown: Vec<String>,
}

impl Fields for RawOption {
    type Field = OptionKey;
    fn set<V: FieldValue>(
        &mut self,
        field: OptionKey,
        value: V,
        arena: &mut Arena<'_>,
    ) -> Result<(), V::Error> {
        match field {
            OptionKey::Label => self.label = value.slot(arena)?,
            OptionKey::Description => self.description = value.slot(arena)?,
            OptionKey::Default => self.default = value.slot(arena)?,
        }
        Ok(())
    }
    fn unknown(&mut self) -> &mut Vec<String> {
        &mut self.unknown
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
    /// Stores `slot` as this question's extended key `field`, adding the question's entry to
    /// `exts` when it is the first such key read. The slot comes first so that a reader can pass
    /// what it just read and its own `exts` in one call.
    pub(crate) fn put_ext<T>(
        &mut self,
        slot: Slot<T>,
        exts: &mut Vec<RawQuestionExt>,
        field: impl FnOnce(&mut RawQuestionExt) -> &mut Slot<T>,
    ) {
        let index = *self.ext.get_or_insert_with(|| {
            exts.push(RawQuestionExt::default());
            exts.len() - 1
        });
        *field(&mut exts[index]) = slot;
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

impl Fields for RawQuestion {
    type Field = QuestionKey;
    fn set<V: FieldValue>(
        &mut self,
        field: QuestionKey,
        value: V,
        arena: &mut Arena<'_>,
    ) -> Result<(), V::Error> {
        match field {
            QuestionKey::Header => self.header = value.slot(arena)?,
            QuestionKey::Question => self.question = value.slot(arena)?,
            QuestionKey::Options => self.options = value.slot(arena)?,
            QuestionKey::MultiSelect => self.multi_select = value.slot(arena)?,
            QuestionKey::Kind => self.put_ext(value.slot(arena)?, &mut arena.exts, |e| &mut e.kind),
            QuestionKey::Id => self.put_ext(value.slot(arena)?, &mut arena.exts, |e| &mut e.id),
            QuestionKey::AllowOther => {
                self.put_ext(value.slot(arena)?, &mut arena.exts, |e| &mut e.allow_other);
            }
            QuestionKey::SecretName => {
                self.put_ext(value.slot(arena)?, &mut arena.exts, |e| &mut e.secret_name);
            }
            QuestionKey::Purpose => self.put_ext(value.slot(arena)?, &mut arena.exts, |e| &mut e.purpose),
        }
        Ok(())
    }
    fn unknown(&mut self) -> &mut Vec<String> {
        &mut self.unknown
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

impl Fields for RawArgs {
    type Field = ArgsKey;
    fn set<V: FieldValue>(
        &mut self,
        field: ArgsKey,
        value: V,
        arena: &mut Arena<'_>,
    ) -> Result<(), V::Error> {
        match field {
            ArgsKey::Questions => self.questions = value.slot(arena)?,
            ArgsKey::TimeoutSeconds => self.timeout_seconds = value.slot(arena)?,
        }
        Ok(())
    }
    fn unknown(&mut self) -> &mut Vec<String> {
        &mut self.unknown
    }
    fn finish(&mut self, arena: &mut Arena<'_>) {
        self.exts = std::mem::take(&mut arena.exts);
    }
}

/// The objects of the arguments read either way, through [`Fields`].
macro_rules! raw_objects {
    ($($object:ty),*) => {$(
        impl Raw for $object {
            fn from_map<'de, A: MapAccess<'de>>(map: A, text: &mut Arena<'_>) -> Result<Option<Self>, A::Error> {
                fields_from_map(map, text).map(Some)
            }
            fn from_object(fields: &Map<String, Value>, text: &mut Arena<'_>) -> Option<Self> {
                Some(fields_from_object(fields, text))
            }
            fn read<S: Source>(source: &mut S, arena: &mut Arena<'_>) -> Result<Slot<Self>, S::Error> {
                source.object(arena)
            }
        }
    )*};
}

raw_objects!(RawOption, RawQuestion, RawArgs);

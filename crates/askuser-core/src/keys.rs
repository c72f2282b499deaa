//! The keys of the arguments' three objects, one table each: the name on the wire, and whether only
//! the extended profile knows it (in the reference profile it is then an unknown key). The JSON
//! reader and the `serde` mirror find a key here (`find`), the mirror stores its value by the
//! same enum (`raw.rs`), and the validator takes its names from here: for a problem's location
//! and for the keys an unknown-key problem lists. A new key is one line here, the slot the
//! compiler then asks the mirror for, and its rule.
//!
//! Each table is in the order the object's problems are reported (docs/contract.md §2.2, §10), which is also
//! the order the allowed keys are listed in.

/// The keys of one object.
pub(crate) trait Key: Copy {
    /// The key called `name`, if the profile knows it (`extended`: the extended profile).
    fn find(name: &str, extended: bool) -> Option<Self>;
}

/// Declares one object's keys: an enum with a variant per key and its tables.
macro_rules! keys {
    (
        $(#[$doc:meta])*
        $object:ident { $($key:ident $name:literal $($extended:ident)?,)* }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum $object {
            $($key,)*
        }

        impl $object {
            /// Every key, in the order problems are reported.
            pub(crate) const ALL: &[Self] = &[$(Self::$key,)*];

            /// The key's name on the wire.
            pub(crate) const fn name(self) -> &'static str {
                match self {
                    $(Self::$key => $name,)*
                }
            }

            /// Whether only the extended profile knows the key.
            pub(crate) const fn extended_only(self) -> bool {
                match self {
                    $(Self::$key => keys!(@extended $($extended)?),)*
                }
            }

            /// The names the profile knows, in order: what an unknown-key problem lists.
            pub(crate) const fn names(extended: bool) -> &'static [&'static str] {
                const EXTENDED: &[&str] = &[$($name,)*];
                const REFERENCE_COUNT: usize = {
                    let mut count = 0;
                    let mut i = 0;
                    while i < $object::ALL.len() {
                        if !$object::ALL[i].extended_only() {
                            count += 1;
                        }
                        i += 1;
                    }
                    count
                };
                const REFERENCE: &[&str] = &{
                    let mut names = [""; REFERENCE_COUNT];
                    let (mut i, mut j) = (0, 0);
                    while i < $object::ALL.len() {
                        if !$object::ALL[i].extended_only() {
                            names[j] = $object::ALL[i].name();
                            j += 1;
                        }
                        i += 1;
                    }
                    names
                };
                if extended { EXTENDED } else { REFERENCE }
            }
        }

        impl Key for $object {
            // Always inlined into the reader of the object, where the match on the name and the
            // match on the key it returns become one: out of line, finding the key cost 1 % of the
            // typical validation's instructions (callgrind, `examples/validate_n.rs`).
            #[inline(always)]
            fn find(name: &str, extended: bool) -> Option<Self> {
                match name {
                    $($name if extended || !keys!(@extended $($extended)?) => Some(Self::$key),)*
                    _ => None,
                }
            }
        }
    };
    (@extended extended) => {
        true
    };
    (@extended) => {
        false
    };
}

keys! {
    /// The keys of the arguments object.
    ArgsKey {
        Questions "questions",
        TimeoutSeconds "timeout_seconds" extended,
    }
}

keys! {
    /// The keys of a question.
    QuestionKey {
        Kind "kind" extended,
        Id "id" extended,
        Header "header",
        Question "question",
        Options "options",
        MultiSelect "multi_select",
        AllowOther "allow_other" extended,
        SecretName "secret_name" extended,
        Purpose "purpose" extended,
    }
}

keys! {
    /// The keys of an option.
    OptionKey {
        Label "label",
        Description "description",
        Default "default" extended,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The files that read the arguments: the JSON reader, the mirror, the validator.
    const READERS: [&str; 6] = ["json.rs", "raw.rs", "rules.rs", "extended.rs", "walk.rs", "validate.rs"];

    /// Where each key is declared: the lines of `keys.rs` and of the readers that spell its name
    /// (comments and unit tests aside). Each key is spelled once, in its table; every reader
    /// takes it from there.
    #[test]
    fn each_key_is_declared_once_in_its_table() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let names = ArgsKey::ALL
            .iter()
            .map(|k| k.name())
            .chain(QuestionKey::ALL.iter().map(|k| k.name()))
            .chain(OptionKey::ALL.iter().map(|k| k.name()));
        let mut listing = Vec::new();
        for name in names {
            let quoted = format!("\"{name}\"");
            let mut declared = Vec::new();
            for file in std::iter::once("keys.rs").chain(READERS) {
                let source = std::fs::read_to_string(src.join(file)).unwrap();
                let code = source.lines().take_while(|line| line.trim() != "#[cfg(test)]");
                for (i, line) in code.enumerate() {
                    if line.split("//").next().unwrap_or_default().contains(&quoted) {
                        declared.push(format!("{file}:{}", i + 1));
                    }
                }
            }
            listing.push((name, declared));
        }
        let listing_text = listing
            .iter()
            .map(|(name, at)| format!("{name}: {}", at.join(", ")))
            .collect::<Vec<_>>()
            .join("\n");
        for (name, declared) in &listing {
            assert!(
                declared.len() == 1 && declared[0].starts_with("keys.rs:"),
                "`{name}` is declared at {declared:?}, not once in keys.rs:\n{listing_text}"
            );
        }
    }

    #[test]
    fn the_reference_profile_knows_only_the_reference_keys() {
        assert_eq!(ArgsKey::names(false), ["questions"]);
        assert_eq!(QuestionKey::names(false), ["header", "question", "options", "multi_select"]);
        assert_eq!(OptionKey::names(false), ["label", "description"]);
        assert_eq!(QuestionKey::find("kind", false), None);
        assert_eq!(QuestionKey::find("kind", true), Some(QuestionKey::Kind));
        assert_eq!(QuestionKey::find("header", false), Some(QuestionKey::Header));
        for key in QuestionKey::ALL {
            assert_eq!(QuestionKey::find(key.name(), true), Some(*key));
        }
    }
}

//! The keys of the arguments' three objects, one table each: the name on the wire, and whether only
//! the extended profile knows it (in the reference profile it is then an unknown key). The JSON
//! reader and the `serde` mirror find a key here (`find`), the mirror stores its value by the
//! same enum (`raw.rs`), and the validator takes its names from here: for a problem's location
//! and for the keys an unknown-key problem lists. A new key is one line here, the slot the
//! compiler then asks the mirror for, and its rule.
//!
//! Each table is in the order the object's problems are reported (SPEC §2.2, §10), which is also
//! the order the allowed keys are listed in.

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

            /// The key called `name`, if the profile knows it (`extended`: the extended profile).
            #[inline]
            pub(crate) fn find(name: &str, extended: bool) -> Option<Self> {
                match name {
                    $($name if extended || !keys!(@extended $($extended)?) => Some(Self::$key),)*
                    _ => None,
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

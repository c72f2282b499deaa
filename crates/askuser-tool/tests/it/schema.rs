//! The parameters schema: equal to the reference, each dialect snapshotted and its rules walked,
//! and the checked-in files fresh.

use askuser_core::Profile;
use askuser_tool::plumbing::{inline_refs, schema_files};
use askuser_tool::{
    DESCRIPTION, Dialect, EXTENDED_DESCRIPTION, EXTENDED_INSTRUCTIONS, INSTRUCTIONS, TOOL_NAME,
    ToolDefinition, parameters, parameters_for, parameters_schema, parameters_schema_for, response_schema,
};
use serde_json::{Map, Value};

/// Every object in `value`, with its path, parents first.
fn objects<'a>(value: &'a Value, path: &str, out: &mut Vec<(String, &'a Map<String, Value>)>) {
    match value {
        Value::Object(object) => {
            out.push((path.to_owned(), object));
            for (key, child) in object {
                objects(child, &format!("{path}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                objects(item, &format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn all_objects(value: &Value) -> Vec<(String, &Map<String, Value>)> {
    let mut out = Vec::new();
    objects(value, "", &mut out);
    out
}

/// The schema objects only: skips the maps under `properties`, whose keys are field names.
fn schemas(value: &Value) -> Vec<(String, &Map<String, Value>)> {
    all_objects(value).into_iter().filter(|(path, _)| !path.ends_with("/properties")).collect()
}

/// Replaces every description text by a placeholder, so only where descriptions are is compared.
fn blank_descriptions(value: &mut Value) {
    match value {
        Value::Object(object) => {
            for (key, child) in object.iter_mut() {
                if key == "description" && child.is_string() {
                    *child = Value::String("…".to_owned());
                } else {
                    blank_descriptions(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(blank_descriptions),
        _ => {}
    }
}

#[test]
fn equals_the_reference_schema_up_to_description_wording() {
    let reference: Value =
        serde_json::from_str(include_str!("reference_schema.json")).expect("reference schema is JSON");
    let mut ours = inline_refs(parameters_schema());
    let mut theirs = inline_refs(reference);
    blank_descriptions(&mut ours);
    blank_descriptions(&mut theirs);
    assert_eq!(ours, theirs);
}

#[test]
fn canonical_schema_keeps_the_reference_definitions() {
    let schema = parameters_schema();
    assert_eq!(schema["properties"]["questions"]["items"]["$ref"], "#/$defs/Question");
    assert_eq!(schema["$defs"]["Question"]["title"], "Question");
    assert_eq!(schema["$defs"]["QuestionOption"]["title"], "QuestionOption");
    assert!(schema.get("title").is_none() && schema.get("$schema").is_none());
}

#[test]
fn canonical_snapshot() {
    insta::assert_json_snapshot!("canonical", parameters_schema());
}

#[test]
fn dialect_snapshots() {
    for dialect in Dialect::ALL {
        insta::assert_json_snapshot!(format!("definition_{}", dialect.name()), ToolDefinition::new(dialect));
    }
}

#[test]
fn description_and_instructions_snapshot() {
    insta::assert_snapshot!("description", DESCRIPTION);
    insta::assert_snapshot!("instructions", INSTRUCTIONS);
    assert_eq!(ToolDefinition::new(Dialect::Generic).name, TOOL_NAME);
}

#[test]
fn description_says_defaults_are_not_consent() {
    for text in [DESCRIPTION, INSTRUCTIONS] {
        assert!(text.contains("answered_by"), "{text}");
        assert!(text.contains("consent"), "{text}");
    }
}

#[track_caller]
fn assert_no_keyword(schema: &Value, keywords: &[&str]) {
    for (path, object) in schemas(schema) {
        for keyword in keywords {
            assert!(!object.contains_key(*keyword), "{keyword} at {path:?}");
        }
    }
}

#[test]
fn generic_is_inlined_without_noise() {
    let schema = parameters(Dialect::Generic);
    assert_no_keyword(&schema, &["$ref", "$defs", "title", "format", "$schema"]);
    for (path, object) in schemas(&schema) {
        if object.get("type") == Some(&Value::from("object")) {
            assert_eq!(object.get("additionalProperties"), Some(&Value::Bool(false)), "{path}");
        }
    }
    // Same limits as the canonical schema once that is inlined.
    let mut canonical = inline_refs(parameters_schema());
    strip(&mut canonical, &["title"]);
    assert_eq!(schema, canonical);
}

fn strip(value: &mut Value, keys: &[&str]) {
    match value {
        Value::Object(object) => {
            for key in keys {
                object.remove(*key);
            }
            object.values_mut().for_each(|child| strip(child, keys));
        }
        Value::Array(items) => items.iter_mut().for_each(|item| strip(item, keys)),
        _ => {}
    }
}

#[test]
fn openai_strict_rules_hold() {
    let schema = parameters(Dialect::OpenAiStrict);
    assert_no_keyword(&schema, &["$ref", "$defs", "oneOf", "default", "title", "format"]);
    assert_eq!(schema["type"], "object");
    assert!(schema.get("anyOf").is_none(), "no root anyOf");
    let mut objects_seen = 0;
    for (path, object) in schemas(&schema) {
        if object.get("type") != Some(&Value::from("object")) {
            continue;
        }
        objects_seen += 1;
        assert_eq!(object.get("additionalProperties"), Some(&Value::Bool(false)), "{path}");
        let properties: Vec<&String> = object["properties"].as_object().expect("properties").keys().collect();
        let required: Vec<&str> =
            object["required"].as_array().expect("required").iter().filter_map(Value::as_str).collect();
        assert_eq!(properties, required, "every key required at {path}");
    }
    assert_eq!(objects_seen, 3);
    let option = &schema["properties"]["questions"]["items"]["properties"]["options"]["items"];
    assert_eq!(option["properties"]["description"]["type"], serde_json::json!(["string", "null"]));
    assert_eq!(option["properties"]["description"]["maxLength"], 200);
    // `null` is not an accepted multi_select, so it stays a plain (now required) boolean.
    let question = &schema["properties"]["questions"]["items"];
    assert_eq!(question["properties"]["multi_select"]["type"], "boolean");
}

#[test]
fn anthropic_rules_hold() {
    let schema = parameters(Dialect::Anthropic);
    assert_no_keyword(
        &schema,
        &["$ref", "$defs", "default", "minLength", "maxLength", "maxItems", "title", "format"],
    );
    for (path, object) in schemas(&schema) {
        if let Some(min) = object.get("minItems") {
            assert!(min.as_u64().is_some_and(|m| m <= 1), "minItems {min} at {path}");
        }
        if object.get("type") == Some(&Value::from("object")) {
            assert_eq!(object.get("additionalProperties"), Some(&Value::Bool(false)), "{path}");
        }
    }
    // The limits strict mode cannot express are stated in the descriptions instead.
    let question = &schema["properties"]["questions"]["items"]["properties"];
    assert!(question["header"]["description"].as_str().expect("text").ends_with("1 to 25 characters."));
    assert!(question["options"]["description"].as_str().expect("text").ends_with("2 to 6 items."));
    assert!(question["multi_select"]["description"].as_str().expect("text").ends_with("Default: false."));
    assert!(
        schema["properties"]["questions"]["description"].as_str().expect("text").ends_with("1 to 10 items.")
    );
}

#[test]
fn gemini_rules_hold() {
    let schema = parameters(Dialect::Gemini);
    assert_no_keyword(
        &schema,
        &["additionalProperties", "$ref", "$defs", "oneOf", "const", "title", "format", "$schema"],
    );
    for (path, object) in schemas(&schema) {
        if let Some(kind) = object.get("type") {
            assert!(kind.is_string(), "type array at {path}");
        }
    }
    let option = &schema["properties"]["questions"]["items"]["properties"]["options"]["items"];
    assert_eq!(option["properties"]["description"]["nullable"], true);
    assert_eq!(option["properties"]["description"]["type"], "string");
    assert_eq!(option["properties"]["description"]["maxLength"], 200);
}

#[test]
fn extended_snapshots() {
    insta::assert_json_snapshot!("extended_canonical", parameters_schema_for(Profile::Extended));
    for dialect in Dialect::ALL {
        insta::assert_json_snapshot!(
            format!("extended_definition_{}", dialect.name()),
            ToolDefinition::for_profile(Profile::Extended, dialect)
        );
    }
    insta::assert_snapshot!("extended_description", EXTENDED_DESCRIPTION);
    insta::assert_snapshot!("extended_instructions", EXTENDED_INSTRUCTIONS);
    insta::assert_json_snapshot!("response", response_schema());
}

#[test]
fn extended_dialects_keep_each_providers_rules() {
    let generic = parameters_for(Profile::Extended, Dialect::Generic);
    assert_no_keyword(&generic, &["$ref", "$defs", "title", "format", "$schema"]);
    let mut canonical = inline_refs(parameters_schema_for(Profile::Extended));
    strip(&mut canonical, &["title", "format"]);
    assert_eq!(generic, canonical);

    let strict = parameters_for(Profile::Extended, Dialect::OpenAiStrict);
    assert_no_keyword(&strict, &["$ref", "$defs", "oneOf", "anyOf", "default", "title", "format"]);
    let mut objects_seen = 0;
    for (path, object) in schemas(&strict) {
        if object.get("type") != Some(&Value::from("object")) {
            continue;
        }
        objects_seen += 1;
        assert_eq!(object.get("additionalProperties"), Some(&Value::Bool(false)), "{path}");
        let properties: Vec<&String> = object["properties"].as_object().expect("properties").keys().collect();
        let required: Vec<&str> =
            object["required"].as_array().expect("required").iter().filter_map(Value::as_str).collect();
        assert_eq!(properties, required, "every key required at {path}");
    }
    assert_eq!(objects_seen, 3);
    let question = &strict["properties"]["questions"]["items"]["properties"];
    // A field the model may leave out is nullable where no neutral value exists, and a plain
    // boolean or enum (with its default as the value to send) where one does.
    assert_eq!(question["id"]["type"], serde_json::json!(["string", "null"]));
    assert_eq!(question["kind"]["enum"], serde_json::json!(["choice", "text", "secret"]));
    assert_eq!(question["allow_other"]["type"], "boolean");
    assert_eq!(question["options"]["items"]["properties"]["default"]["type"], "boolean");
    assert_eq!(strict["properties"]["timeout_seconds"]["type"], serde_json::json!(["integer", "null"]));

    let anthropic = parameters_for(Profile::Extended, Dialect::Anthropic);
    assert_no_keyword(
        &anthropic,
        &[
            "$ref",
            "$defs",
            "default",
            "minLength",
            "maxLength",
            "maxItems",
            "minimum",
            "maximum",
            "title",
            "format",
        ],
    );
    let question = &anthropic["properties"]["questions"]["items"]["properties"];
    assert!(question["allow_other"]["description"].as_str().expect("text").ends_with("Default: true."));
    assert!(question["kind"]["description"].as_str().expect("text").starts_with("`choice` (the default)"));

    let gemini = parameters_for(Profile::Extended, Dialect::Gemini);
    assert_no_keyword(
        &gemini,
        &["additionalProperties", "$ref", "$defs", "oneOf", "anyOf", "const", "title", "format"],
    );
    for (path, object) in schemas(&gemini) {
        if let Some(kind) = object.get("type") {
            assert!(kind.is_string(), "type array at {path}");
        }
    }
    assert_eq!(gemini["properties"]["timeout_seconds"]["nullable"], true);
}

#[test]
fn checked_in_schema_files_are_fresh() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut stale = Vec::new();
    for file in schema_files() {
        let on_disk = std::fs::read_to_string(root.join(&file.path)).unwrap_or_default();
        if on_disk != file.contents {
            stale.push(file.path);
        }
    }
    assert!(stale.is_empty(), "stale schema files {stale:?}: run `cargo xtask schema`");
}

#[test]
fn schema_files_carry_the_generated_marker() {
    let files = schema_files();
    // Reference and extended: canonical plus one per dialect each; and the response schema.
    assert_eq!(files.len(), 2 * (1 + Dialect::ALL.len()) + 1);
    for file in files {
        let value: Value = serde_json::from_str(&file.contents).expect("file is JSON");
        assert_eq!(value["$comment"], askuser_tool::plumbing::GENERATED_MARKER, "{}", file.path);
        assert!(file.contents.ends_with('\n'));
    }
}

//! Forms rmcp's types refuse, in the shapes the Python and TypeScript SDKs emit (nullable and
//! `$ref`'d fields, lists of free text), made readable before they are asked.

use rmcp::model::ElicitRequestParams;
use serde_json::Value;

/// An `elicitation/create` whose params rmcp's types refused, in the shapes the SDKs emit, made
/// readable: the Python SDK's `FastMCP` (pydantic) writes an `Optional[...]` field as
/// `anyOf: [{type: T}, {type: "null"}]` with `default: null`, the TypeScript SDK's zod helper a
/// nullable one as `type: [T, "null"]`, and pydantic an `Enum` field as a `$ref` into `$defs`.
/// Each becomes the plain field (MCP's schema has no null: an empty optional field is left out of
/// the answer, which the SDKs read as `None`/absent). A list of free text (`list[str]`) cannot be
/// asked: left out when optional, refused when required.
///
/// # Errors
///
/// What cannot be read, naming the field.
pub(super) fn readable_params(mut params: Value) -> Result<ElicitRequestParams, String> {
    if let Some(schema) = params.get_mut("requestedSchema").and_then(Value::as_object_mut) {
        let defs = schema.remove("$defs").or_else(|| schema.remove("definitions"));
        schema.remove("additionalProperties");
        let required: Vec<String> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        let mut dropped = Vec::new();
        if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            for (key, field) in properties.iter_mut() {
                plain_field(field, defs.as_ref());
                let free_list = field.get("type").and_then(Value::as_str) == Some("array")
                    && field.get("items").is_none_or(|items| {
                        ["enum", "anyOf", "oneOf"].iter().all(|k| items.get(*k).is_none())
                    });
                if free_list {
                    if required.contains(key) {
                        return Err(format!(
                            "field {key:?} asks for a list of free text, which askuser cannot ask"
                        ));
                    }
                    dropped.push(key.clone());
                }
            }
            for key in &dropped {
                properties.remove(key);
            }
        }
    }
    serde_json::from_value(params).map_err(|e| format!("the form cannot be read: {e}"))
}

/// One property made plain (see [`readable_params`]).
fn plain_field(field: &mut Value, defs: Option<&Value>) {
    let Some(object) = field.as_object_mut() else { return };
    // `$ref` into the schema's definitions: the definition, under the field's own keys.
    if let Some(target) = object.remove("$ref") {
        let name = target.as_str().and_then(|r| r.rsplit('/').next()).unwrap_or_default();
        if let Some(Value::Object(def)) = defs.and_then(|d| d.get(name)) {
            for (k, v) in def {
                object.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    // `anyOf`/`oneOf` of one schema and null: that schema.
    for union in ["anyOf", "oneOf"] {
        let Some(Value::Array(members)) = object.get(union) else { continue };
        let is_null = |m: &Value| m.get("type").and_then(Value::as_str) == Some("null");
        if !members.iter().any(is_null) {
            continue;
        }
        let rest: Vec<Value> = members.iter().filter(|m| !is_null(m)).cloned().collect();
        if let [Value::Object(only)] = rest.as_slice()
            && !only.contains_key("const")
        {
            object.remove(union);
            for (k, v) in only {
                object.entry(k.clone()).or_insert_with(|| v.clone());
            }
        } else {
            object.insert(union.to_owned(), Value::Array(rest));
        }
    }
    // `type: [T, "null"]`: T.
    if let Some(Value::Array(types)) = object.get("type") {
        let rest: Vec<&Value> = types.iter().filter(|t| t.as_str() != Some("null")).collect();
        if let [only] = rest.as_slice() {
            let only = (*only).clone();
            object.insert("type".to_owned(), only);
        }
    }
    if object.get("default").is_some_and(Value::is_null) {
        object.remove("default");
    }
    // An `enum` of strings without a type (a `$ref`'d definition may lack it).
    if !object.contains_key("type")
        && object.get("enum").and_then(Value::as_array).is_some_and(|e| e.iter().all(Value::is_string))
    {
        object.insert("type".to_owned(), Value::from("string"));
    }
    if let Some(items) = object.get_mut("items") {
        plain_field(items, defs);
    }
}

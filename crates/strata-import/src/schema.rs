//! RyeOS `config_schema` / `input_schema` / `CONFIG_SCHEMA` (JSON Schema) → strata
//! `parameters`, in strata's focused subset (docs/tools.md "Parameters"): every keyword of the
//! subset is kept, `$schema` is dropped (documentation), any other keyword is dropped with an
//! `IMP-schema-keyword` warning since strata would refuse the file at load.

use serde_json::{Map, Value};

use crate::util::string;

/// A keyword dropped from a schema: its name and where (`parameters.properties.url`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Dropped {
    /// The keyword.
    pub keyword: String,
    /// The path of the schema holding it, from `parameters`.
    pub at: String,
}

/// What converting a schema gives: the strata schema, the keywords dropped with a loss, and
/// whether `$schema` was dropped (lossless).
pub(crate) struct Converted {
    pub schema: Value,
    pub dropped: Vec<Dropped>,
    pub dollar_schema: bool,
}

/// The permissive schema of a tool whose RyeOS form validated nothing.
pub(crate) fn permissive() -> Value {
    let mut m = Map::new();
    m.insert("type".into(), string("object"));
    m.insert("additionalProperties".into(), Value::Bool(true));
    Value::Object(m)
}

/// Converts a RyeOS JSON Schema to strata's subset. A schema that is not a map becomes the
/// permissive schema.
pub(crate) fn convert(schema: &Value) -> Converted {
    let mut out = Converted {
        schema: permissive(),
        dropped: Vec::new(),
        dollar_schema: false,
    };
    if schema.is_object() {
        let mut s = walk(schema, "parameters", &mut out);
        if let Value::Object(m) = &mut s {
            if !m.contains_key("type") {
                m.insert("type".into(), string("object"));
            }
        }
        out.schema = s;
    }
    out
}

fn walk(schema: &Value, at: &str, out: &mut Converted) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut result = Map::new();
    for (k, v) in map {
        let name = k.as_str();
        if name == "$schema" {
            out.dollar_schema = true;
            continue;
        }
        if !strata_app::PARAMETER_KEYWORDS.contains(&name) {
            out.dropped.push(Dropped {
                keyword: name.to_owned(),
                at: at.to_owned(),
            });
            continue;
        }
        let v = match name {
            "properties" => match v {
                Value::Object(props) => {
                    let mut m = Map::new();
                    for (pname, pv) in props {
                        m.insert(
                            pname.clone(),
                            walk(pv, &format!("{at}.properties.{pname}"), out),
                        );
                    }
                    Value::Object(m)
                }
                other => other.clone(),
            },
            "items" => walk(v, &format!("{at}.items"), out),
            "additionalProperties" if v.is_object() => {
                walk(v, &format!("{at}.additionalProperties"), out)
            }
            _ => v.clone(),
        };
        result.insert(k.clone(), v);
    }
    Value::Object(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(s: &str) -> Value {
        crate::yaml::read_yaml(s).unwrap()
    }

    #[test]
    fn keeps_the_subset_and_drops_the_rest() {
        let c = convert(&yaml(
            "$schema: x\ntype: object\nproperties:\n  u: {type: string, pattern: '^a', minLength: 1}\n  l: {type: array, items: {type: string, format: uri}}\nrequired: [u]\nadditionalProperties: false\n",
        ));
        assert!(c.dollar_schema);
        assert_eq!(
            c.dropped,
            vec![
                Dropped {
                    keyword: "pattern".into(),
                    at: "parameters.properties.u".into()
                },
                Dropped {
                    keyword: "format".into(),
                    at: "parameters.properties.l.items".into()
                }
            ]
        );
        assert_eq!(
            c.schema,
            yaml("type: object\nproperties:\n  u: {type: string, minLength: 1}\n  l: {type: array, items: {type: string}}\nrequired: [u]\nadditionalProperties: false\n")
        );
    }

    #[test]
    fn a_schema_without_type_is_an_object() {
        let c = convert(&yaml("properties: {a: {type: string}}"));
        assert_eq!(
            c.schema,
            yaml("properties: {a: {type: string}}\ntype: object")
        );
    }
}

//! A builder that points into the text (`Build::VERBATIM`) is told where each string
//! scalar stands in it — only when the text from there is the value, byte for byte — and
//! builds the same document as one that keeps every string.

use std::sync::Arc;

use serde_json::{json, Map, Value};
use strata_core::{Error, Limits};
use strata_doc::{Build, Document, Format, Values};

/// Builds JSON values as [`Values`] does, noting each string said to stand in the text and
/// where.
#[derive(Default)]
struct Pointing {
    source: Option<Arc<String>>,
    verbatim: Vec<(String, usize)>,
}

impl Build for Pointing {
    type Node = Value;
    type Map = Map<String, Value>;
    type Tally = ();
    const VERBATIM: bool = true;

    fn tally(&self) {}

    fn scalar(&mut self, value: Value) -> Result<Value, Error> {
        Values.scalar(value)
    }

    fn source(&mut self, text: &Arc<String>) {
        self.source = Some(Arc::clone(text));
    }

    fn verbatim(&mut self, value: String, at: usize) -> Result<Value, Error> {
        let text = self.source.as_ref().expect("the text comes first");
        assert_eq!(
            &text[at..at + value.len()],
            value,
            "{value:?} stands at {at}"
        );
        self.verbatim.push((value.clone(), at));
        Values.scalar(Value::String(value))
    }

    fn insert(&mut self, map: &mut Self::Map, key: String, node: Value) -> Result<(), String> {
        Values.insert(map, key, node)
    }

    fn contains(&self, map: &Self::Map, key: &str) -> bool {
        Values.contains(map, key)
    }

    fn list(&mut self, items: Vec<Value>) -> Value {
        Values.list(items)
    }

    fn map(&mut self, map: Self::Map) -> Value {
        Values.map(map)
    }

    fn repeat(&mut self, node: &Value, before: (), after: ()) -> Result<Value, Error> {
        Values.repeat(node, before, after)
    }
}

fn read(text: &str) -> (Value, Vec<(String, usize)>) {
    read_as(text, Format::Yaml)
}

fn read_as(text: &str, format: Format) -> (Value, Vec<(String, usize)>) {
    let mut pointing = Pointing::default();
    let (doc, node) = Document::parse_into(
        "d.yaml",
        text.as_bytes().to_vec(),
        format,
        &Limits::default(),
        &mut pointing,
    )
    .expect("reads");
    let value = node.expect("builds");
    let plain = Document::parse(
        "d.yaml",
        text.as_bytes().to_vec(),
        format,
        &Limits::default(),
    )
    .expect("reads")
    .value;
    assert_eq!(value, plain, "the same document either way");
    assert_eq!(doc.text.as_str(), text);
    (value, pointing.verbatim)
}

fn strings(found: &[(String, usize)]) -> Vec<&str> {
    found.iter().map(|(s, _)| s.as_str()).collect()
}

#[test]
fn plain_and_quoted_strings_without_escapes_point_into_the_text() {
    let text = "plain: some words\nsingle: 'one two'\ndouble: \"three ${X}\"\nlist: [a, \"b c\"]\nn: 12\nempty: \"\"\n";
    let (value, found) = read(text);
    assert_eq!(value["double"], json!("three ${X}"));
    assert_eq!(
        strings(&found),
        ["some words", "one two", "three ${X}", "a", "b c", ""]
    );
}

#[test]
fn strings_that_are_not_their_text_are_kept_as_strings() {
    let text = "esc: \"a\\tb\"\nquote: 'it''s'\nfolded: >\n  one\n  two\nliteral: |\n  line\nwrapped: \"first\n  second\"\ntagged: !!str 12\nkept: yes\n";
    let (value, found) = read(text);
    assert_eq!(value["esc"], json!("a\tb"));
    assert_eq!(value["wrapped"], json!("first second"));
    // A tagged scalar stands after its tag.
    assert_eq!(strings(&found), ["12", "yes"]);
}

#[test]
fn offsets_are_bytes_after_text_that_is_not_ascii() {
    let text = "clé: \"née à Zürich\"\nnext: 'ok'\n—: plain — dash\nlast: [\"ü\", x]\n";
    let (_, found) = read(text);
    assert_eq!(
        strings(&found),
        ["née à Zürich", "ok", "plain — dash", "ü", "x"]
    );
    let at = |s: &str| found.iter().find(|(f, _)| f == s).unwrap().1;
    assert_eq!(at("ok"), text.find("ok").unwrap());
    assert_eq!(at("x"), text.rfind('x').unwrap());
}

#[test]
fn json_strings_without_escapes_point_into_the_text() {
    let text = r#"{"clé": "née à Zürich", "esc": "a\tb", "uni": "\u00e9", "list": ["x", 1, "y z"], "empty": "", "deep": {"k": "v"}}"#;
    let (value, found) = read_as(text, Format::Json);
    assert_eq!(value["esc"], json!("a\tb"));
    assert_eq!(value["uni"], json!("é"));
    assert_eq!(strings(&found), ["née à Zürich", "x", "y z", "", "v"]);
    let at = |s: &str| found.iter().find(|(f, _)| f == s).unwrap().1;
    assert_eq!(at("née à Zürich"), text.find("née").unwrap());
    assert_eq!(at("y z"), text.find("y z").unwrap());
    assert_eq!(at("v"), text.rfind('v').unwrap());
}

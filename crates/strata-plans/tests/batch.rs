//! `strata plan resolve --batch` served from a stream: one reply per line, the plan kept
//! compiled between requests that repeat it.

use serde_json::json;
use strata_core::Limits;

/// A resolver serving lines answers as each line alone would be answered, whether the plan
/// repeats (kept compiled) or changes, with one reply line per request.
#[test]
fn a_served_stream_answers_as_each_line_alone() {
    use strata_plans::{answer_line, Resolver};
    let a = json!([{"id": "x", "tool": "t", "arguments": {}},
                   {"id": "y", "tool": "t", "arguments": {"v": "{{x.result.n}}"}}]);
    let b = json!([{"id": "x", "tool": "t", "arguments": {"w": "{{PLACEHOLDER_who}}"}}]);
    let lines = [
        json!({"id": 1, "plan": a, "results": {"x": {"n": 1}}}).to_string(),
        json!({"id": 2, "plan": a, "results": {"x": {"n": 2}}}).to_string(),
        json!({"id": 3, "plan": b, "values": {"who": "Ann"}}).to_string(),
        "not json".to_string(),
        json!({"id": 5, "plan": a, "failed": ["x"]}).to_string(),
        json!({"id": 6, "plan": a, "resluts": {}}).to_string(),
    ];
    let input = lines.join("\n") + "\n\n";
    let mut out = Vec::new();
    Resolver::new(&Limits::default())
        .serve(input.as_bytes(), &mut out)
        .unwrap();
    let replies: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let alone: Vec<serde_json::Value> = lines.iter().map(|l| answer_line(l)).collect();
    assert_eq!(replies, alone);
    assert_eq!(replies[1]["steps"][1]["arguments"], json!({"v": 2}));
    assert_eq!(replies[2]["steps"][0]["arguments"], json!({"w": "Ann"}));
    assert_eq!(
        replies[5]["error"]["message"],
        json!("unknown request key `resluts`; did you mean `results`?")
    );
}

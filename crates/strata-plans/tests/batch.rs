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
    // Ten times over, in one read: shared among the server's threads, answered in order.
    let input = (lines.join("\n") + "\n\n").repeat(10);
    let mut out = Vec::new();
    Resolver::serve(&Limits::default(), input.as_bytes(), &mut out).unwrap();
    let replies: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let alone: Vec<serde_json::Value> = lines.iter().map(|l| answer_line(l)).collect();
    assert_eq!(replies.len(), 60);
    assert!(replies.chunks(6).all(|c| c == alone), "{replies:?}");
    assert_eq!(replies[1]["steps"][1]["arguments"], json!({"v": 2}));
    assert_eq!(replies[2]["steps"][0]["arguments"], json!({"w": "Ann"}));
    assert_eq!(
        replies[5]["error"]["message"],
        json!("unknown request key `resluts`; did you mean `results`?")
    );
}

/// Serves `lines` through one resolver within `limits` and returns each reply line as
/// written, checking each against the line answered alone, byte for byte.
fn served_as_alone(lines: &[String], limits: &Limits) -> Vec<String> {
    use strata_plans::{answer_line_within, Resolver};
    let input = lines.join("\n") + "\n";
    let mut out = Vec::new();
    Resolver::serve(limits, input.as_bytes(), &mut out).unwrap();
    let served: Vec<String> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let alone: Vec<String> = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::to_string(&answer_line_within(l, limits)).unwrap())
        .collect();
    assert_eq!(served.len(), alone.len());
    for (i, (s, a)) in served.iter().zip(&alone).enumerate() {
        assert_eq!(s, a, "line {i}: {}", lines[i]);
    }
    served
}

/// The typical request, answered on the fast path, has exactly this reply.
#[test]
fn the_typical_request_has_its_exact_reply() {
    let line = r#"{"id":7,"plan":[{"id":"find","tool":"t","arguments":{}},{"id":"boss","tool":"t","arguments":{}},{"id":"stats","tool":"t","arguments":{}},{"id":"send","tool":"t","arguments":{"input":{"to":"{{find.result.data[0].email}}","cc":"{{boss.result.email}}","subject":"Re: {{find.result.data[0].subject}}","body":"Hi {{find.result.data[0].name}}, the total is {{stats.result.total}}.","items":"{{stats.result.items}}","count":3,"flags":{"urgent":true,"tags":["q1","report"]},"priority":"high","attachments":[]}}}],"results":{"find":{"data":[{"email":"sarah@company.com","name":"Sarah","subject":"Q1 Report","id":"thread_abc123"}]},"boss":{"email":"boss@company.com"},"stats":{"total":1234.5,"items":[1,2,3]}}}"#;
    let mut resolver = strata_plans::Resolver::new(&Limits::default());
    let mut out = Vec::new();
    assert!(resolver.answer_into(line, &mut out));
    assert_eq!(
        String::from_utf8(out).unwrap(),
        r#"{"id":7,"ok":true,"levels":[["find","boss","stats"],["send"]],"steps":[{"id":"find","depends_on":[],"state":"completed"},{"id":"boss","depends_on":[],"state":"completed"},{"id":"stats","depends_on":[],"state":"completed"},{"id":"send","depends_on":["find","boss","stats"],"state":"ready","arguments":{"input":{"to":"sarah@company.com","cc":"boss@company.com","subject":"Re: Q1 Report","body":"Hi Sarah, the total is 1234.5.","items":[1,2,3],"count":3,"flags":{"urgent":true,"tags":["q1","report"]},"priority":"high","attachments":[]}}}],"missing_values":[]}"#
            .to_string()
            + "\n"
    );
    served_as_alone(&[line.to_string()], &Limits::default());
}

/// Every state, reference form, value shape and written form of JSON the fast path reads
/// gives the reply the line alone gets; requests it does not answer (errors, duplicate
/// keys, deep nesting, limits) fall back to it, whatever came before.
#[test]
fn fast_replies_are_those_of_each_line_alone() {
    let plan = json!([
        {"id": 1, "tool": "t", "arguments": {}},
        {"id": "b", "tool": "t", "arguments": {"x": "$step1", "y": "{$step1.k} and {{step1.result.k}}"}},
        {"id": "c", "tool": "t", "arguments": {"whole": "{{step1.result}}", "st": "{{step1.status}}", "id": "{{step1.id}}",
            "run": "{{step1.run}}", "err": "{{step1.error}}", "t": "[{{step1.run}}|{{step1.result.n}}|{{step1.result.f}}|{{step1.result.o}}|{{step1.result.l}}|{{step1.result.b}}]",
            "neg": "{{step1.result.l[-1]}}", "dot": "{{step1.result.l.0}}", "key": "{{step1.result.l[\"1\"]}}",
            "num_key": "{{step1.result.o.5}}", "quoted": "{{step1.result[\"w x\"]}}", "{{step1.result.k}}": "$$step and {{{{",
            "deep": {"list": [1, "{{step1.result.s}}", {"z": "{{PLACEHOLDER_v}}"}]}}},
        {"id": "d", "tool": "t", "arguments": "{{step1.result.o}}"},
        {"id": "e", "tool": "t", "arguments": {"v": "{{PLACEHOLDER_w}}", "u": "{{PLACEHOLDER_v}}"}, "depends_on": ["b"]},
        {"id": "f", "tool": "t", "parameters": {"p": "{{c.result}}"}},
        {"id": "g", "tool": "t", "arguments": {"q": "{{e.result}}"}}
    ]);
    let step1 =
        json!([{"tool": "t", "arguments": {}}, {"tool": "t", "arguments": {"x": "$step1"}}]);
    let result_a = r#"{"k":"K\"\\\u00e9\n\u0001/","n":-0,"f":1.50E3,"o":{"5":"five","q":[]},"l":[true,null,1e300,2],"b":false,"s":"\ud83d\ude00","w x":18446744073709551616}"#;
    let mut lines: Vec<String> = Vec::new();
    let p = plan.to_string();
    for id in [
        "1",
        "1.0",
        "1e2",
        "-0",
        "\"s\\u0041\"",
        "null",
        "{\"a\":[1, 2.5]}",
        "[]",
        "184467440737095516160",
    ] {
        lines.push(format!(r#"{{"id": {id}, "plan": {p}, "results": {{"step1": {result_a}}}, "values": {{"v": [1, "two", {{"3": null}}]}}}}"#));
    }
    let req = |rest: &str| format!(r#"{{"id": 0, "plan": {p}{rest}}}"#);
    for rest in [
        "",
        r#", "results": null, "failed": null, "values": null"#,
        r#", "results": {}"#,
        r#", "results": {"step1": {"k": 1, "o": {"x": 1}}}"#,
        r#", "results": {"step1": {"k": 1, "o": 3}}"#,
        r#", "results": {"step1": {"k": "x"}}"#,
        r#", "failed": ["step1"]"#,
        r#", "failed": ["step1", "step1"]"#,
        r#", "results": {"step1": 1}, "failed": ["step1"]"#,
        r#", "results": {"step1": 1, "step1": 2}"#,
        r#", "results": {"step1": {"k": 1, "k": 2}}"#,
        r#", "results": {"zz": 1}"#,
        r#", "results": [1]"#,
        r#", "failed": "step1""#,
        r#", "failed": [1]"#,
        r#", "values": []"#,
        r#", "values": {"w": "W", "v": "V"}, "results": {"step1": {"k": "K", "o": {}, "n": 1, "f": 2, "l": [0, 1], "b": 1, "s": "s", "w x": 0}}"#,
        r#", "values": {"w": "W", "v": "V"}, "results": {"step1": {"k": "K", "o": {}}, "b": 2}"#,
        r#", "values": {"w": "W"}, "results": {"step1": {"k": "K", "o": {}}, "b": 2, "c": null}, "failed": ["e"]"#,
        r#", "results": {"step1": {"k": "K", "o": {}}, "b": 2}, "failed": ["c"]"#,
        r#", "id": 2"#,
        r#", "resluts": {}"#,
    ] {
        lines.push(req(rest));
    }
    lines.push(format!(
        r#"{{"plan": {step1}, "results": {{"step1": {{"step1": 1}}}}}}"#
    ));
    lines.push(format!(
        r#" {{ "results" : {{ "step1" : [ 1 , 2 ] }} , "plan" : {step1} }} "#
    ));
    lines.push(format!(
        r#"{{"plan": {step1}, "results": {{"step1": 1}}}} x"#
    ));
    lines.push(format!(r#"{{"plan": {step1}, "pl\u0061n": {step1}}}"#));
    lines.push(format!(
        r#"{{"plan": {step1}  , "results": {{"step1": 3}}}}"#
    ));
    lines.push(format!(
        r#"{{"plan": {step1}], "results": {{"step1": 3}}}}"#
    ));
    lines.push(format!(r#"{{"plan": {step1}x}}"#));
    lines.push(format!(r#"{{"plan": {step1}}}}}"#));
    lines.push(format!(r#"{{"plan": {step1}, "plan": {step1}}}"#));
    lines.push(format!(
        r#"{{"plan":{step1},"results":{{"step1":{{"\u0061":"\u00e9"}}}},"id":"\n"}}"#
    ));
    lines.push(r#"{"plan": [{"tool": "t", "arguments": {"a\"b\u00e9": "{$step2}"}}, {"tool": "t", "arguments": {}}], "results": {"step2": "x\u2028y"}}"#.into());
    lines.push(r#"{"plan": [{"tool": "t", "arguments": {"a": "$step2"}}, {"tool": "t", "arguments": {}}]}"#.into());
    lines.push(r#"{"plan": [{"tool": "t", "arguments": {"a": "$step1"}}]}"#.into());
    lines.push("[]".into());
    lines.push("{}".into());
    lines.push("not json".into());
    for depth in [98, 99, 100, 101, 124, 125, 126, 127, 128] {
        let nested = "[".repeat(depth) + &"]".repeat(depth);
        lines.push(format!(
            r#"{{"plan": {step1}, "results": {{"step1": {nested}}}}}"#
        ));
        lines.push(format!(r#"{{"id": {nested}, "plan": {step1}}}"#));
        lines.push(format!(
            r#"{{"plan": {step1}, "values": {{"v": {nested}}}}}"#
        ));
        let deep_plan = format!(r#"[{{"tool": "t", "arguments": {{"a": {nested}}}}}]"#);
        lines.push(format!(r#"{{"plan": {deep_plan}}}"#));
    }
    served_as_alone(&lines, &Limits::default());
    let fast: Vec<usize> = (0..lines.len())
        .filter(|&i| {
            strata_plans::Resolver::new(&Limits::default()).answer_into(&lines[i], &mut Vec::new())
        })
        .collect();
    // The requests whose steps all resolve are answered on the fast path.
    assert_eq!(fast.len(), 29, "{fast:?}");
    for (per_string, per_config) in [
        (4, 1000),
        (8, 1000),
        (1000, 8),
        (1000, 30),
        (1000, 60),
        (0, 0),
    ] {
        let limits = Limits {
            output_bytes_per_string: per_string,
            output_bytes_per_config: per_config,
            ..Limits::default()
        };
        served_as_alone(&lines, &limits);
    }
}

/// Lines mangled at random (bytes changed, dropped, repeated) are answered as each alone,
/// without a panic, whether the fast path takes them or not.
#[test]
fn mangled_lines_are_answered_as_alone() {
    let good = r#"{"id":"r1","plan":[{"id":"a","tool":"t","arguments":{}},{"id":"b","tool":"t","arguments":{"x":"{{a.result.k[0]}}","y":"n={{a.result.n}} {{PLACEHOLDER_v}}","z":["$step1",{"w":"{{a.result}}"}]}}],"results":{"a":{"k":["v\"1",2],"n":1.5}},"values":{"v":{"q":null}},"failed":[]}"#;
    let alphabet = br#"{}[]",:\ 0123456789.-eE+abknrtuv$"#;
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let mut lines = vec![good.to_string()];
    for _ in 0..3000 {
        let mut bytes = good.as_bytes().to_vec();
        for _ in 0..1 + next(3) {
            let at = next(bytes.len());
            match next(3) {
                0 => bytes[at] = alphabet[next(alphabet.len())],
                1 => {
                    bytes.remove(at);
                }
                _ => bytes.insert(at, alphabet[next(alphabet.len())]),
            }
        }
        lines.push(String::from_utf8(bytes).unwrap());
        if next(4) == 0 {
            lines.push(good.to_string());
        }
    }
    let lines: Vec<String> = lines.into_iter().filter(|l| !l.contains('\n')).collect();
    served_as_alone(&lines, &Limits::default());
}

/// A line that is not a request still gets the id it carries back: a number out of range, a
/// key repeated, bytes that are not UTF-8; not when the id is written twice.
#[test]
fn a_line_that_cannot_be_read_still_gets_its_id_back() {
    use strata_plans::Resolver;
    let input: &[u8] = concat!(
        "{\"id\": 1, \"plan\": [{\"tool\": \"t\", \"arguments\": {\"x\": 1e400}}]}\n",
        "{\"id\": \"two\", \"plan\": [], \"results\": {\"a\": 2, \"a\": 1e999}}\n",
        "{\"id\": 3, \"id\": 4, \"plan\": 1e400}\n",
        "{\"id\": 5, \"plan\": [",
        "\n"
    )
    .as_bytes();
    let input = [input, b"{\"id\": 6, \"plan\": \"\xff\"}\n"].concat();
    let mut out = Vec::new();
    Resolver::serve(&Limits::default(), &input[..], &mut out).unwrap();
    let error =
        |message: &str| json!({"kind": "syntax", "message": message, "path": "$", "span": null});
    let replies: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        replies,
        [
            json!({"id": 1, "ok": false, "error": error("the line is not JSON: number out of range at line 1 column 57")}),
            json!({"id": "two", "ok": false, "error": error("the line is not JSON: duplicate key `a` at line 1 column 49")}),
            json!({"ok": false, "error": error("the line is not JSON: duplicate key `id` at line 1 column 14")}),
            json!({"ok": false, "error": error("the line is not JSON: EOF while parsing a list at line 1 column 19")}),
            json!({"id": 6, "ok": false, "error": error("the line is not valid UTF-8")}),
        ]
    );
}

/// Numbers of a request take the one form of every document, on the fast path as read
/// whole: integers exact past 64 bits, floats shortest; a float out of range is refused.
#[test]
fn numbers_are_read_as_documents_read_them_on_either_path() {
    let plan = r#"[{"id":"a","tool":"t","arguments":{}},{"id":"b","tool":"t","arguments":{"x":"{{a.result.n}}","t":"{{a.result.n}} {{a.result.f}}","k":1.50,"z":-0}}]"#;
    let lines: Vec<String> = [
        "18446744073709551617",
        "-9223372036854775809",
        "1234567890123456789012345678901234567890",
    ]
    .iter()
    .map(|n| format!(r#"{{"id":{n},"plan":{plan},"results":{{"a":{{"n":{n},"f":2.50}}}}}}"#))
    .collect();
    let served = served_as_alone(&lines, &Limits::default());
    for (reply, n) in served.iter().zip([
        "18446744073709551617",
        "-9223372036854775809",
        "1234567890123456789012345678901234567890",
    ]) {
        assert!(
            reply.starts_with(&format!(r#"{{"id":{n},"ok":true,"#)),
            "{reply}"
        );
        assert!(
            reply.contains(&format!(
                r#""arguments":{{"x":{n},"t":"{n} 2.5","k":1.5,"z":-0.0}}"#
            )),
            "{reply}"
        );
    }
    let out_of_range = [format!(
        r#"{{"id":1,"plan":{plan},"results":{{"a":{{"n":1e400}}}}}}"#
    )];
    let served = served_as_alone(&out_of_range, &Limits::default());
    assert_eq!(
        served[0],
        r#"{"id":1,"ok":false,"error":{"kind":"syntax","message":"the line is not JSON: number out of range at line 1 column 188","path":"$","span":null}}"#
    );
}

/// A key written twice at the top of a request is refused as it is in any map of the line,
/// however well-formed the rest (the reply of the line read whole).
#[test]
fn a_key_repeated_at_the_top_of_a_request_is_refused() {
    let plan = r#"[{"id":"a","tool":"t","arguments":{}}]"#;
    let lines: Vec<String> = [
        format!(r#"{{"id":0,"plan":{plan},"id":2}}"#),
        format!(r#"{{"plan":{plan},"plan":{plan}}}"#),
        format!(r#"{{"id":0,"plan":{plan},"results":{{}},"results":{{"a":1}}}}"#),
    ]
    .into();
    let served = served_as_alone(&lines, &Limits::default());
    assert_eq!(
        served,
        [
            r#"{"ok":false,"error":{"kind":"syntax","message":"the line is not JSON: duplicate key `id` at line 1 column 58","path":"$","span":null}}"#,
            r#"{"ok":false,"error":{"kind":"syntax","message":"the line is not JSON: duplicate key `plan` at line 1 column 53","path":"$","span":null}}"#,
            r#"{"id":0,"ok":false,"error":{"kind":"syntax","message":"the line is not JSON: duplicate key `results` at line 1 column 76","path":"$","span":null}}"#,
        ]
    );
}

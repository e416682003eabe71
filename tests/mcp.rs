//! End-to-end tests of `strata mcp` over stdio with JSON-RPC written by hand (docs/mcp.md):
//! the exact lines of the handshake, a listing, a call, a refusal and the protocol's errors.
//! The official MCP SDK and conformance suite drive it too (`.ci/mcp`,
//! `.ci/mcp-conformance`).

mod common;
use common::Test;

fn project() -> Test {
    Test::new()
        .copy("tools/runtimes/subprocess.yaml")
        .tool(
            "t/echo",
            "description: Prints a word\nread_only: true\nexecutor: runtimes/subprocess\nparameters:\n  type: object\n  properties:\n    word: {type: string, default: hi}\nconfig:\n  command: printf\n  args: [\"%s\", \"{word}\"]\n",
        )
        .tool(
            "t/broken",
            "description: Broken\nexecutor: runtimes/subprocess\nconfig: {command: touch, args: [\"ran-{nope}\"]}\n",
        )
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
"#;

#[test]
fn an_agent_negotiates_lists_calls_and_is_refused_over_stdio() {
    let mut s = project().args(&["mcp"]).status(0).start();
    s.write(INIT);
    let init: serde_json::Value = serde_json::from_str(&s.read_line()).unwrap();
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(init["result"]["serverInfo"]["name"], "strata");
    assert_eq!(
        init["result"]["capabilities"],
        serde_json::json!({"completions": {}, "prompts": {"listChanged": true}, "resources": {"listChanged": true}, "tools": {"listChanged": true}})
    );
    s.write("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n");
    let list: serde_json::Value = serde_json::from_str(&s.read_line()).unwrap();
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["run_plan", "t.broken", "t.echo"]);
    assert_eq!(
        list["result"]["tools"][2],
        serde_json::json!({
            "name": "t.echo",
            "title": "Tool t/echo",
            "description": "Prints a word",
            "inputSchema": {"type": "object", "properties": {"word": {"type": "string", "default": "hi"}}},
            "annotations": {"title": "Tool t/echo", "readOnlyHint": true, "destructiveHint": false, "openWorldHint": false},
        })
    );
    s.write("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"t.echo\",\"arguments\":{\"word\":\"${HOME}{x}\"}}}\n");
    assert_eq!(
        s.read_line(),
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"${HOME}{x}\"}],\"isError\":false}}\n"
    );
    s.write("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"t.broken\"}}\n");
    let refused: serde_json::Value = serde_json::from_str(&s.read_line()).unwrap();
    assert_eq!(refused["result"]["isError"], true);
    let error = &refused["result"]["structuredContent"]["error"];
    assert_eq!(error["kind"], "check");
    assert_eq!(error["message"], "`t/broken` was not run: 1 error found");
    assert_eq!(error["diagnostics"][0]["code"], "R001");
    s.write("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"t/echo\"}}\n");
    assert_eq!(
        s.read_line(),
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32602,\"message\":\"unknown tool `t/echo`\"}}\n"
    );
    let ran = s.finish();
    assert!(
        !ran.path().join("ran-{nope}").exists(),
        "a refused tool never runs"
    );
}

#[test]
fn wrong_options_are_refused_before_serving() {
    project()
        .args(&["mcp", "--tools", "a["])
        .stderr("error[request]: --tools `a[`: error parsing glob 'a[': unclosed character class; missing ']'\n   = help: a glob such as `examples.*` or `plans/*`: `*` matches any text, `?` one character\n")
        .status(2)
        .run();
    project()
        .args(&["mcp", "--http", "0.0.0.0:0"])
        .stderr("error[request]: --http `0.0.0.0:0` is not loopback: anyone who reaches it could run the project's tools\n   = help: give --token-file FILE (clients then send `Authorization: Bearer <token>`), or serve 127.0.0.1\n")
        .status(2)
        .run();
}

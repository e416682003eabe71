use serde_json::{json, Value};
use strata_core::Limits;
use strata_pipeline::batch::handle_line;

fn reply(req: Value) -> Value {
    handle_line(&req.to_string(), &Limits::default())
}

#[test]
fn smoke() {
    let r = reply(json!({
        "template": {"a": "${HOME} {x} ${state.n} {input:k}", "b": "${state.n}", "c": "{input:k}", "d": "${PY:-${state.py}}", "e": "${J:-{\"a\":1}}", "f": "$${HOME} {{x}}", "g": "{items}", "greeting": "Hello {user}", "user": "${USER}"},
        "env": {"HOME": "/home/a", "USER": "alice"},
        "params": {"x": "X", "items": [1,2]},
        "context": {"state": {"n": 3, "py": "/usr/bin/python3"}},
        "inputs": {"k": 5}
    }));
    println!("{}", serde_json::to_string_pretty(&r).unwrap());
    assert_eq!(r["ok"], true);
}

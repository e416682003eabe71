//! Directives with `responses:` against fake tools: the reply after the actions, candidates
//! and conditions, std values as stages 1–2 templates, `std.missing_params`, the generator,
//! the error when no candidate renders, bad input, and load-time checks with file:line:col.

use serde_json::{json, Map, Value};
use strata_core::{Error, ErrorKind, Limits};
use strata_directive::{Directive, Report, RunOptions};
use strata_tools::{CallOptions, FakeTools, RunResult, ToolRunner};

/// Fake tools, plus parameter schemas (the fakes have none).
struct Tools {
    fake: FakeTools,
    schemas: Vec<(&'static str, Value)>,
}

impl ToolRunner for Tools {
    fn has_tool(&self, id: &str) -> bool {
        self.fake.has_tool(id)
    }
    fn unknown_tool(&self, id: &str) -> Error {
        self.fake.unknown_tool(id)
    }
    fn parameters(&self, id: &str) -> Option<Value> {
        self.schemas
            .iter()
            .find(|(t, _)| *t == id)
            .map(|(_, s)| s.clone())
    }
    fn run(
        &self,
        id: &str,
        params: &Map<String, Value>,
        options: &CallOptions,
    ) -> Result<RunResult, Error> {
        if let Some(schema) = self.parameters(id) {
            let missing: Vec<&str> = schema["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter(|n| params.get(*n).is_none_or(Value::is_null))
                .collect();
            if !missing.is_empty() {
                return Err(Error::new(
                    strata_core::Layer::REQUEST,
                    ErrorKind::Invalid,
                    format!("missing required parameter `{}`", missing.join("`, `")),
                ));
            }
        }
        self.fake.run(id, params, options)
    }
}

/// `bank/check_balance` answers for the account its `last_four` names (`0000` is
/// overdrawn); `bank/history` lists two transactions; `gen/phrases` generates; `bad/fields`
/// returns fields that are not an object.
fn tools() -> Tools {
    let fake = FakeTools::new()
        .tool("bank/check_balance", |p| {
            let last_four = p["last_four"].as_str().unwrap_or("");
            let (balance, shown) = if last_four == "0000" {
                (-20.5, "-$20.50")
            } else {
                (5432.10, "$5,432.10")
            };
            Ok(RunResult::ok(
                json!({
                    "data": {"balance": balance, "type": "Checking"},
                    "canned_response_fields": {
                        "account.balance": shown,
                        "account.type": "Checking",
                        "account.last_four": last_four,
                        "account.overdraft": balance < 0.0,
                        "account.overdraft_amount": if balance < 0.0 { "$20.50" } else { "$0.00" }
                    }
                })
                .to_string(),
            ))
        })
        .tool("bank/history", |_| {
            Ok(RunResult::ok(
                json!({"canned_response_fields": {"transactions": [
                    {"date": "2024-01-15", "description": "Coffee Shop", "amount": "-$4.50"},
                    {"date": "2024-01-14", "description": "Salary Deposit", "amount": "+$3,000.00"}
                ]}})
                .to_string(),
            ))
        })
        .tool("gen/phrases", |p| {
            Ok(RunResult::ok(
                json!(format!("[{}]", p["field"].as_str().unwrap_or(""))).to_string(),
            ))
        })
        .tool("bad/fields", |_| {
            Ok(RunResult::ok(r#"{"canned_response_fields": "$5"}"#))
        })
        .tool("fail", |_| Ok(RunResult::exited(3, "", "")));
    Tools {
        fake,
        schemas: vec![(
            "bank/check_balance",
            json!({"type": "object", "required": ["last_four"], "properties": {"last_four": {"type": "string"}}}),
        )],
    }
}

fn load(text: &str) -> Result<Directive, Error> {
    Directive::load("d.md", text, &tools(), &[], &Limits::default())
}

fn run(d: &Directive, inputs: &[(&str, &str)], tools: &Tools) -> Report {
    let given: Map<String, Value> = inputs
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    let inputs = d.bind_inputs(&given).unwrap();
    d.run(&inputs, tools, RunOptions::default()).unwrap()
}

fn located(e: &Error) -> String {
    let loc = e.location().unwrap();
    format!("{}:{}:{} {}", loc.file, loc.line, loc.column, e.message())
}

const BANK: &str = "---
name: balance
inputs:
  - {name: customer, type: string, required: true}
  - {name: last_four, type: string, default: '1234'}
actions:
  - id: balance
    tool: bank/check_balance
    params: {last_four: '{input:last_four}'}
responses:
  std:
    customer: {name: '{input:customer}'}
    agent: {name: Ada}
    variables: {branch: 'Main Street', checked: '${steps.balance.status}'}
  generator: gen/phrases
  candidates:
    - id: overdrawn
      condition: steps.balance.result.data.balance < 0
      template: |
        {{std.customer.name}}, your account is overdrawn by {{account.overdraft_amount}}.
    - id: balance
      template: |
        Hi {{std.customer.name}}, {{generative.greeting}}.
        Your {{account.type}} account (ending in {{account.last_four}}) has a current balance of {{account.balance}}.
        {{std.agent.name}} at {{std.variables.branch}} ({{std.variables.checked}})
---
";

#[test]
fn the_first_candidate_whose_condition_holds_and_fields_fill_is_the_reply() {
    let d = load(BANK).unwrap();
    let t = tools();
    let report = run(&d, &[("customer", "Ann")], &t);
    let chosen = report.response.clone().unwrap().unwrap();
    assert_eq!(
        chosen.reply.text,
        "Hi Ann, [generative.greeting].\nYour Checking account (ending in 1234) has a current balance of $5,432.10.\nAda at Main Street (completed)"
    );
    assert_eq!(
        report.to_json()["response"],
        json!({
            "reply": chosen.reply.text,
            "candidate": {"index": 1, "id": "balance"},
            "fields": [
                {"field": "std.customer.name", "source": "std", "value": "Ann"},
                {"field": "generative.greeting", "source": "generative", "from": "gen/phrases", "value": "[generative.greeting]"},
                {"field": "account.type", "source": "tool", "from": "step `balance` (bank/check_balance)", "value": "Checking"},
                {"field": "account.last_four", "source": "tool", "from": "step `balance` (bank/check_balance)", "value": "1234"},
                {"field": "account.balance", "source": "tool", "from": "step `balance` (bank/check_balance)", "value": "$5,432.10"},
                {"field": "std.agent.name", "source": "std", "value": "Ada"},
                {"field": "std.variables.branch", "source": "std", "value": "Main Street"},
                {"field": "std.variables.checked", "source": "std", "value": "completed"}
            ]
        })
    );
    let report = run(&d, &[("customer", "Bo"), ("last_four", "0000")], &t);
    let chosen = report.response.unwrap().unwrap();
    assert_eq!(
        (chosen.index, chosen.reply.text.as_str()),
        (0, "Bo, your account is overdrawn by $20.50.")
    );
    let generated: Vec<Value> = t
        .fake
        .calls()
        .iter()
        .filter(|c| c.0 == "gen/phrases")
        .map(|c| c.1["field"].clone())
        .collect();
    assert_eq!(generated, [json!("generative.greeting")]);
}

#[test]
fn no_renderable_candidate_is_an_error_listing_each_candidate() {
    let text = "---
name: n
actions:
  - {id: history, tool: bank/history}
responses:
  candidates:
    - id: never
      condition: false
      template: '{{a}}'
    - id: balance
      template: '{{account.balance}} {{account.type}}'
    - template: '{{generative.x}}'
---
";
    let d = load(text).unwrap();
    let report = run(&d, &[], &tools());
    let e = report.response.unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MissingFields);
    assert_eq!(
        located(&e),
        "d.md:7:5 no response candidate can be rendered: `never`: condition `false` is false; \
         `balance`: missing `account.balance` (tried: tool fields of step `history` (bank/history)), \
         `account.type` (tried: tool fields of step `history` (bank/history)); \
         `candidates[2]`: missing `generative.x` (tried: tool fields of step `history` (bank/history); generator (none configured))"
    );
    assert_eq!(e.path().to_string(), "responses.candidates");
}

#[test]
fn loops_render_the_tool_lists() {
    let text = "---
name: t
actions:
  - {id: history, tool: bank/history}
responses:
  candidates:
    - template: |
        Recent transactions:
        {% for t in transactions %}
        - {{t.date}}: {{t.description}} {{t.amount}}
        {% endfor %}
---
";
    let report = run(&load(text).unwrap(), &[], &tools());
    assert_eq!(
        report.response.unwrap().unwrap().reply.text,
        "Recent transactions:\n\n- 2024-01-15: Coffee Shop -$4.50\n\n- 2024-01-14: Salary Deposit +$3,000.00\n"
    );
}

#[test]
fn missing_params_are_the_required_parameters_failed_actions_lacked() {
    let text = "---
name: m
actions:
  - id: balance
    tool: bank/check_balance
    params: {last_four: '${inputs.last_four ?? null}'}
    continue_on_error: true
responses:
  candidates:
    - condition: steps.balance.status == 'completed'
      template: '{{account.balance}}'
    - template: 'I need your {% for p in std.missing_params %}{{p}}{% endfor %} to check the balance.'
---
";
    let report = run(&load(text).unwrap(), &[], &tools());
    assert_eq!(report.actions[0].status, "failed");
    assert_eq!(
        report.response.unwrap().unwrap().reply.text,
        "I need your last_four to check the balance."
    );
}

#[test]
fn no_reply_is_attempted_when_the_actions_failed_or_nothing_ran() {
    let text = "---\nname: f\nactions:\n  - {id: a, tool: fail}\nresponses:\n  candidates:\n    - template: hi\n---\n";
    let report = run(&load(text).unwrap(), &[], &tools());
    assert_eq!(report.status.name(), "failed");
    assert_eq!(report.response, None);
    assert_eq!(report.to_json()["response"], Value::Null);
    let text = "---\nname: n\nresponses:\n  candidates:\n    - template: hi\n---\n";
    let d = load(text).unwrap();
    let dry = d
        .run(
            &Map::new(),
            &tools(),
            RunOptions {
                dry_run: true,
                ..RunOptions::default()
            },
        )
        .unwrap();
    assert_eq!(dry.response, None);
    let report = run(&d, &[], &tools());
    assert_eq!(report.response.unwrap().unwrap().reply.text, "hi");
}

#[test]
fn a_tool_whose_fields_are_not_an_object_is_an_error_at_its_action() {
    let text = "---\nname: b\nactions:\n  - {id: a, tool: bad/fields}\nresponses:\n  candidates:\n    - template: '{{x}}'\n---\n";
    let report = run(&load(text).unwrap(), &[], &tools());
    let e = report.response.unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    assert_eq!(
        located(&e),
        "d.md:4:5 `canned_response_fields` of step `a` (bad/fields) is a string, not an object"
    );
}

#[test]
fn a_secret_in_a_tool_field_is_refused_and_never_shown() {
    let text = "---\nname: s\nactions:\n  - {id: balance, tool: bank/check_balance, params: {last_four: '9999'}}\nresponses:\n  candidates:\n    - template: |\n        ok\n        {{account.last_four}}\n---\n";
    let d = load(text).unwrap();
    let secrets = ["9999".to_string()];
    let report = d
        .run(
            &Map::new(),
            &tools(),
            RunOptions {
                secrets: &secrets,
                ..RunOptions::default()
            },
        )
        .unwrap();
    let e = report.response.clone().unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Forbidden);
    assert_eq!(
        located(&e),
        "d.md:4:5 field `account.last_four` from tool fields of step `balance` (bank/check_balance) holds a secret value; a reply never shows secrets"
    );
    assert!(!report.to_json()["response"].to_string().contains("9999"));
}

#[test]
fn render_errors_point_into_the_template_block() {
    let text = "---\nname: r\nactions:\n  - {id: history, tool: bank/history}\nresponses:\n  candidates:\n    - template: |\n        Recent:\n        {% for t in transactions %}{{ t.dat }}{% endfor %}\n---\n";
    let report = run(&load(text).unwrap(), &[], &tools());
    let e = report.response.unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Undefined);
    assert_eq!(located(&e), "d.md:9:39 response template: undefined value");
    assert_eq!(e.path().to_string(), "responses.candidates[0].template");
}

#[test]
fn the_section_is_checked_at_load_with_file_line_and_column() {
    let cases = [
        (
            "responses:\n  candidates: []\n",
            "d.md:4:15 `responses` needs at least one candidate",
        ),
        (
            "responses:\n  generator: gen/phrase\n  candidates: [{template: x}]\n",
            "d.md:4:14 unknown tool `gen/phrase`",
        ),
        (
            "responses:\n  candidates:\n    - template: |\n        line one\n        {{ account. }}\n",
            "d.md:7:21 response template: unexpected end of variable block, expected identifier or integer",
        ),
        (
            "responses:\n  candidates:\n    - template: 'Hello {{ in }}'\n",
            "d.md:5:27 `in` is a Jinja keyword, not a field name",
        ),
        (
            "responses:\n  candidates:\n    - {id: a, template: x}\n    - {id: a, template: y}\n",
            "d.md:6:12 candidate id `a` is used twice",
        ),
        (
            "responses:\n  candidates:\n    - {condition: {path: a, op: is, value: 1}, template: x}\n",
            "d.md:5:19 bad condition: unknown operator `is`; the operators are eq, ne, gt, gte, lt, lte, in, contains, regex, exists",
        ),
        (
            "responses:\n  std:\n    variables: {for: x}\n  candidates: [{template: x}]\n",
            "d.md:5:22 `std.variables.for`: `for` is a Jinja keyword, not a field name",
        ),
        (
            "responses:\n  std: {customer: {name: 'hi {input:who'}}\n  candidates: [{template: x}]\n",
            "d.md:4:30 unclosed `{input:`: no matching `}`",
        ),
        (
            "responses:\n  candidates: [{templat: x}]\n",
            "d.md:4:17 bad front matter: responses.candidates[0]: unknown field `templat`, expected one of `id`, `condition`, `template`",
        ),
    ];
    for (section, want) in cases {
        let text = format!("---\nname: x\n{section}---\n");
        let e = load(&text).unwrap_err();
        assert_eq!(located(&e), want, "{section}");
    }
}

//! SPEC §7, rule by rule, against fake tools: the three sources and their order, the naming
//! of dotted fields, the generator protocol and when it runs, the all-at-once missing-fields
//! error, rendering with conditionals and loops, values as data, secrets, limits.

use std::cell::RefCell;

use serde_json::{json, Value};
use strata_core::{Error, ErrorKind, Span};
use strata_responses::{
    generator_failed, Field, FieldSource, Generate, Generator, JinjaLimits, Place, Response,
    Sources, ToolResult,
};
use strata_tools::{CallOptions, FakeTools, RunResult};

const BANK: &str = "Your {{account.type}} account (ending in {{account.last_four}}) has a current balance of {{account.balance}}.";

fn compile(src: &str) -> Response {
    Response::compile(src, Some("r.j2"), JinjaLimits::default()).unwrap()
}

fn results(values: &[Value]) -> Vec<ToolResult<'_>> {
    values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            ToolResult::of(format!("result {}", i + 1), v, Place::Nowhere).unwrap()
        })
        .collect()
}

fn sources<'a>(std: &'a Value, tools: &'a [ToolResult<'a>]) -> Sources<'a> {
    Sources {
        std,
        std_place: Place::Nowhere,
        tools,
        generator: None,
        secrets: &[],
    }
}

fn balance() -> Value {
    json!({
        "data": {"balance": 5432.10, "type": "Checking"},
        "canned_response_fields": {
            "account.balance": "$5,432.10",
            "account.type": "Checking",
            "account.last_four": "1234"
        }
    })
}

/// Seed 004's bank balance example, end to end.
#[test]
fn the_bank_balance_template_is_filled_from_the_tool_fields() {
    let values = [balance()];
    let tools = results(&values);
    let reply = compile(BANK).respond(&sources(&json!({}), &tools)).unwrap();
    assert_eq!(
        reply.text,
        "Your Checking account (ending in 1234) has a current balance of $5,432.10."
    );
    assert_eq!(
        Value::Array(reply.fields.iter().map(Field::to_json).collect()),
        json!([
            {"field": "account.type", "source": "tool", "from": "result 1", "value": "Checking"},
            {"field": "account.last_four", "source": "tool", "from": "result 1", "value": "1234"},
            {"field": "account.balance", "source": "tool", "from": "result 1", "value": "$5,432.10"}
        ])
    );
}

#[test]
fn standard_fields_come_from_the_callers_context() {
    let r = compile(
        "{{std.customer.name}}/{{std.agent.name}}/{{std.variables.tier}}/{% for p in std.missing_params %}[{{p}}]{% endfor %}",
    );
    let std = json!({"customer": {"name": "Ann"}, "agent": {"name": "Ada"},
                     "variables": {"tier": "gold"}, "missing_params": ["account", "pin"]});
    let reply = r.respond(&sources(&std, &[])).unwrap();
    assert_eq!(reply.text, "Ann/Ada/gold/[account][pin]");
    assert!(reply.fields.iter().all(|f| f.source == FieldSource::Std));
}

#[test]
fn std_alone_is_every_standard_field_and_missing_std_is_named() {
    let r = compile("{% for k in std %}{{k}};{% endfor %}");
    let reply = r
        .respond(&sources(
            &json!({"agent": {"name": "Ada"}, "variables": {}}),
            &[],
        ))
        .unwrap();
    assert_eq!(reply.text, "agent;variables;");
    let err = compile("{{std.agent.name}}")
        .respond(&sources(&json!({}), &[]))
        .unwrap_err();
    assert_eq!(
        err.message(),
        "no source provides `std.agent.name` (tried: std (no `agent.name`); tool fields (no tool result has any))"
    );
}

#[test]
fn std_comes_first_then_tool_fields_and_tools_may_fill_std_names() {
    let r = compile("{{std.customer.name}} {{std.agent.name}}");
    let values =
        [json!({"canned_response_fields": {"std.customer.name": "Tool", "std.agent.name": "Bot"}})];
    let tools = results(&values);
    let reply = r
        .respond(&sources(&json!({"customer": {"name": "Ann"}}), &tools))
        .unwrap();
    assert_eq!(reply.text, "Ann Bot");
    assert_eq!(reply.fields[0].source, FieldSource::Std);
    assert_eq!(reply.fields[1].source.name(), "tool");
}

#[test]
fn a_field_is_a_flat_key_first_then_a_nested_path_and_the_latest_result_wins() {
    let r = compile("{{account.balance}} {{account.type}} {{account.last_four}}");
    let values = [
        json!({"canned_response_fields": {"account.balance": "$1", "account.type": "Savings", "account": {"last_four": "0001"}}}),
        json!({"data": "no fields here"}),
        json!({"canned_response_fields": {"account": {"balance": "$2", "type": "Checking"}, "account.type": "flat wins"}}),
    ];
    let tools = results(&values);
    let reply = r.respond(&sources(&json!({}), &tools)).unwrap();
    assert_eq!(reply.text, "$2 flat wins 0001");
    let from: Vec<Value> = reply
        .fields
        .iter()
        .map(|f| f.to_json()["from"].clone())
        .collect();
    assert_eq!(
        from,
        [json!("result 3"), json!("result 3"), json!("result 1")]
    );
}

#[test]
fn every_missing_field_is_named_at_once_with_the_sources_tried_and_nothing_is_rendered() {
    let r = compile(
        "Hi {{std.customer.name}}, {{account.type}} {{account.balance}} {{generative.closing}}",
    );
    let values = [json!({"canned_response_fields": {"account.balance": "$1"}})];
    let tools = results(&values);
    let err = r.respond(&sources(&json!({}), &tools)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::MissingFields);
    assert_eq!(
        err.message(),
        "no source provides `std.customer.name` (tried: std (no `customer.name`); tool fields of result 1), \
         `account.type` (tried: tool fields of result 1), \
         `generative.closing` (tried: tool fields of result 1; generator (none configured))"
    );
    assert_eq!(err.span(), Some(Span::new(5, 22)));
    let loc = err.location().unwrap();
    assert_eq!((loc.file.as_str(), loc.line, loc.column), ("r.j2", 1, 6));
    let err = compile("{{a}}")
        .respond(&sources(&json!({}), &[]))
        .unwrap_err();
    assert_eq!(
        err.message(),
        "no source provides `a` (tried: tool fields (no tool result has any))"
    );
}

fn generator_tools() -> FakeTools {
    FakeTools::new().tool("gen/phrases", |p| {
        let field = p["field"].as_str().unwrap_or_default();
        let name = p["context"]["std"]["customer"]["name"]
            .as_str()
            .unwrap_or("you");
        let text = match field {
            "generative.greeting_phrase" => format!("I hope you're having a great day, {name}"),
            _ => "Is there anything else I can help you with?".to_string(),
        };
        Ok(RunResult::ok(json!(text).to_string()))
    })
}

/// Seed 004's mixed example: std, tool and generated fields in one response.
#[test]
fn the_generator_fills_generative_fields_after_the_others_with_the_protocol() {
    let r = compile(
        "Hi {{std.customer.name}}, {{generative.greeting_phrase}}.\nYour {{account.type}} balance is {{account.balance}}.\n{{generative.closing_remark}}",
    );
    let values = [balance()];
    let tools = results(&values);
    let fake = generator_tools();
    let generator = Generator {
        tool: "gen/phrases",
        runner: &fake,
        call: CallOptions::default(),
        place: Place::Nowhere,
    };
    let std = json!({"customer": {"name": "John"}});
    let reply = r
        .respond(&Sources {
            generator: Some(&generator),
            ..sources(&std, &tools)
        })
        .unwrap();
    assert_eq!(
        reply.text,
        "Hi John, I hope you're having a great day, John.\nYour Checking balance is $5,432.10.\nIs there anything else I can help you with?"
    );
    let calls = fake.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[0].1,
        json!({"template": r.source(), "field": "generative.greeting_phrase",
               "context": {"std": {"customer": {"name": "John"}},
                           "fields": {"std.customer.name": "John", "account.type": "Checking", "account.balance": "$5,432.10"}}})
    );
    assert_eq!(calls[1].1["field"], json!("generative.closing_remark"));
    assert_eq!(
        calls[1].1["context"]["fields"]["generative.greeting_phrase"],
        json!("I hope you're having a great day, John")
    );
    assert_eq!(
        reply.fields[1].to_json(),
        json!({"field": "generative.greeting_phrase", "source": "generative", "from": "gen/phrases",
               "value": "I hope you're having a great day, John"})
    );
}

#[test]
fn no_generation_is_spent_on_a_response_that_cannot_render() {
    let r = compile("{{generative.greeting_phrase}} {{account.balance}}");
    let fake = generator_tools();
    let generator = Generator {
        tool: "gen/phrases",
        runner: &fake,
        call: CallOptions::default(),
        place: Place::Nowhere,
    };
    let err = r
        .respond(&Sources {
            generator: Some(&generator),
            ..sources(&json!({}), &[])
        })
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::MissingFields);
    assert_eq!(
        err.message(),
        "no source provides `account.balance` (tried: tool fields (no tool result has any))"
    );
    assert!(fake.calls().is_empty());
}

#[test]
fn a_tool_field_wins_over_generation() {
    let r = compile("{{generative.greeting_phrase}}");
    let values = [json!({"canned_response_fields": {"generative.greeting_phrase": "Hello"}})];
    let tools = results(&values);
    let fake = generator_tools();
    let generator = Generator {
        tool: "gen/phrases",
        runner: &fake,
        call: CallOptions::default(),
        place: Place::Nowhere,
    };
    let reply = r
        .respond(&Sources {
            generator: Some(&generator),
            ..sources(&json!({}), &tools)
        })
        .unwrap();
    assert_eq!(reply.text, "Hello");
    assert!(fake.calls().is_empty());
}

#[test]
fn a_failing_generator_is_an_error_at_the_field() {
    let r = compile("x\n{{generative.greeting_phrase}}");
    let fake = FakeTools::new().tool("gen", |_| Ok(RunResult::ok("not json")));
    let generator = Generator {
        tool: "gen",
        runner: &fake,
        call: CallOptions::default(),
        place: Place::Nowhere,
    };
    let err = r
        .respond(&Sources {
            generator: Some(&generator),
            ..sources(&json!({}), &[])
        })
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Generator);
    assert_eq!(
        err.to_string(),
        "r.j2:2:3: response error at $ 4..30: the generator of `generative.greeting_phrase` failed: tool `gen` printed something that is not JSON (hint: a generator prints the field's value as JSON: a text is printed with its quotes (\"Have a nice day.\"))"
    );
}

/// A generator that is not a tool: a library caller's function, recording the fields asked.
struct Echo {
    asked: RefCell<Vec<String>>,
}

impl Generate for Echo {
    fn name(&self) -> &str {
        "echo"
    }

    fn place(&self) -> Place<'_> {
        Place::Nowhere
    }

    fn generate(&self, _template: &str, field: &str, context: &Value) -> Result<Value, Error> {
        self.asked.borrow_mut().push(field.to_string());
        match field {
            "generative.broken" => Err(generator_failed(field, "it gave up", "try again")),
            _ => Ok(json!(format!(
                "<{}>",
                context["fields"].as_object().map_or(0, |f| f.len())
            ))),
        }
    }
}

#[test]
fn any_generate_fills_the_generative_fields_after_the_others() {
    let r = compile("{{generative.a}} {{x}} {{generative.b}}");
    let values = [json!({"canned_response_fields": {"x": "X"}})];
    let tools = results(&values);
    let echo = Echo {
        asked: RefCell::new(Vec::new()),
    };
    let reply = r
        .respond(&Sources {
            generator: Some(&echo),
            ..sources(&json!({}), &tools)
        })
        .unwrap();
    assert_eq!(reply.text, "<1> X <2>");
    assert_eq!(*echo.asked.borrow(), ["generative.a", "generative.b"]);
    assert_eq!(
        reply.fields[0].to_json(),
        json!({"field": "generative.a", "source": "generative", "from": "echo", "value": "<1>"})
    );
    let err = compile("x {{generative.broken}}")
        .respond(&Sources {
            generator: Some(&echo),
            ..sources(&json!({}), &[])
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "r.j2:1:5: response error at $ 4..21: the generator of `generative.broken` failed: it gave up (hint: try again)"
    );
}

/// Seed 004's overdraft conditional.
#[test]
fn conditionals_render_both_ways() {
    let r = compile(
        "Your account balance is {{account.balance}}.\n{% if account.overdraft %}\nWARNING: Your account is overdrawn by {{account.overdraft_amount}}.\n{% endif %}",
    );
    assert_eq!(
        r.fields(),
        [
            "account.balance",
            "account.overdraft",
            "account.overdraft_amount"
        ]
    );
    let over = [
        json!({"canned_response_fields": {"account.balance": "-$20.00", "account.overdraft": true, "account.overdraft_amount": "$20.00"}}),
    ];
    let tools = results(&over);
    assert_eq!(
        r.respond(&sources(&json!({}), &tools)).unwrap().text,
        "Your account balance is -$20.00.\n\nWARNING: Your account is overdrawn by $20.00.\n"
    );
    let fine = [
        json!({"canned_response_fields": {"account.balance": "$5.00", "account.overdraft": false, "account.overdraft_amount": "$0.00"}}),
    ];
    let tools = results(&fine);
    assert_eq!(
        r.respond(&sources(&json!({}), &tools)).unwrap().text,
        "Your account balance is $5.00.\n"
    );
}

/// Seed 004's transactions loop.
#[test]
fn loops_render_lists() {
    let r = compile(
        "Recent transactions:\n{% for t in transactions %}\n- {{t.date}}: {{t.description}} {{t.amount}}\n{% endfor %}",
    );
    assert_eq!(r.fields(), ["transactions"]);
    let values = [
        json!({"data": {}, "canned_response_fields": {"transactions": [
            {"date": "2024-01-15", "description": "Coffee Shop", "amount": "-$4.50"},
            {"date": "2024-01-14", "description": "Salary Deposit", "amount": "+$3,000.00"}
        ]}}),
    ];
    let tools = results(&values);
    assert_eq!(
        r.respond(&sources(&json!({}), &tools)).unwrap().text,
        "Recent transactions:\n\n- 2024-01-15: Coffee Shop -$4.50\n\n- 2024-01-14: Salary Deposit +$3,000.00\n"
    );
}

#[test]
fn a_missing_attribute_of_a_field_value_is_an_error_not_a_blank() {
    let r = compile("{% for t in transactions %}{{t.dat}}{% endfor %}");
    let values = [json!({"canned_response_fields": {"transactions": [{"date": "x"}]}})];
    let tools = results(&values);
    let err = r.respond(&sources(&json!({}), &tools)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Undefined);
    assert_eq!(err.span(), Some(Span::new(29, 34)));
}

#[test]
fn field_values_are_data_and_never_rendered_again() {
    let r = compile("{{note}}|{{std.variables.x}}");
    let values = [
        json!({"canned_response_fields": {"note": "{{ std.customer.name }} {% include 'x' %} ${HOME} {input:x}"}}),
    ];
    let tools = results(&values);
    let std = json!({"customer": {"name": "LEAK"}, "variables": {"x": "{% for i in range(9) %}{{i}}{% endfor %}"}});
    assert_eq!(
        r.respond(&sources(&std, &tools)).unwrap().text,
        "{{ std.customer.name }} {% include 'x' %} ${HOME} {input:x}|{% for i in range(9) %}{{i}}{% endfor %}"
    );
}

#[test]
fn values_print_as_layer_c_prints_them() {
    let r = compile("{{a}}|{{b}}|{{c}}|{{d}}|{{e}}");
    let values = [
        json!({"canned_response_fields": {"a": null, "b": 10000000, "c": 0.38, "d": [1, "x"], "e": {"k": true}}}),
    ];
    let tools = results(&values);
    assert_eq!(
        r.respond(&sources(&json!({}), &tools)).unwrap().text,
        r#"|10000000|0.38|[1,"x"]|{"k":true}"#
    );
}

#[test]
fn a_field_holding_a_secret_is_refused_and_shown_as_stars() {
    let r = compile("Token: {{account.token}} {{account.type}}");
    let values =
        [json!({"canned_response_fields": {"account.token": "sk-live-123", "account.type": "x"}})];
    let tools = results(&values);
    let secrets = ["sk-live-123".to_string()];
    let std = json!({});
    let s = Sources {
        secrets: &secrets,
        ..sources(&std, &tools)
    };
    let extraction = r.extract(&s);
    assert_eq!(
        extraction.found[0].to_json(),
        json!({"field": "account.token", "source": "tool", "from": "result 1", "value": "***"})
    );
    let err = r.respond(&s).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Forbidden);
    assert_eq!(
        err.message(),
        "field `account.token` from tool fields of result 1 holds a secret value; a reply never shows secrets"
    );
    assert!(!err.to_string().contains("sk-live-123"));
    assert_eq!(err.span(), Some(Span::new(9, 22)));
}

#[test]
fn a_loop_over_a_million_items_stops_at_the_fuel_limit() {
    let r = compile("{% for t in items %}{{t}}{% endfor %}");
    let values = [json!({"canned_response_fields": {"items": vec![0; 1_000_000]}})];
    let tools = results(&values);
    let err = r.respond(&sources(&json!({}), &tools)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Limit);
    assert_eq!(err.message(), "response template: engine ran out of fuel");
    assert_eq!(err.location().unwrap().line, 1);
}

#[test]
fn canned_response_fields_must_be_an_object() {
    let doc = strata_doc::Document::parse(
        "results/r.json",
        b"{\n  \"data\": 1,\n  \"canned_response_fields\": \"$5\"\n}".to_vec(),
        strata_doc::Format::Json,
        &Default::default(),
    )
    .unwrap();
    let err = ToolResult::of("`results/r.json`", &doc.value, Place::Doc(&doc)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "results/r.json:3:29: response error at canned_response_fields: `canned_response_fields` of `results/r.json` is a string, not an object (hint: a tool returns its response fields as an object: {\"data\": …, \"canned_response_fields\": {\"account.balance\": \"$5,432.10\"}})"
    );
}

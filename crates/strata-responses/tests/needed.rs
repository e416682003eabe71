//! SPEC §7, the fields a render *needs*: a field read only in a branch not taken, or only
//! tested with `is defined` / `is undefined` / `default(…)`, is optional; the generator is
//! asked last, only for the `generative.*` fields the render reads (a condition too), each at
//! most once; a needed field no source provides is still the all-or-nothing error.

use std::cell::RefCell;

use serde_json::{json, Value};
use strata_core::{Error, ErrorKind};
use strata_responses::{Generate, JinjaLimits, Place, Response, Sources, ToolResult};

/// Seed 004's overdraft template, as the seed writes it.
const OVERDRAFT: &str = "Your account balance is {{account.balance}}.\n{% if account.overdraft %}\nWARNING: Your account is overdrawn by {{account.overdraft_amount}}.\n{% endif %}";

fn compile(src: &str) -> Response {
    Response::compile(src, Some("r.j2"), JinjaLimits::default()).unwrap()
}

fn results(values: &[Value]) -> Vec<ToolResult<'_>> {
    values
        .iter()
        .filter_map(|v| ToolResult::of("result 1", v, Place::Nowhere).unwrap())
        .collect()
}

fn render(r: &Response, fields: Value) -> Result<String, Error> {
    let values = [json!({ "canned_response_fields": fields })];
    let tools = results(&values);
    r.respond(&Sources {
        std: &json!({}),
        std_place: Place::Nowhere,
        tools: &tools,
        generator: None,
        secrets: &[],
    })
    .map(|reply| reply.text)
}

/// A generator answering from a table, remembering what it was asked.
struct Table {
    values: Value,
    asked: RefCell<Vec<String>>,
}

impl Generate for Table {
    fn name(&self) -> &str {
        "table"
    }
    fn place(&self) -> Place<'_> {
        Place::Nowhere
    }
    fn generate(&self, _: &str, field: &str, _: &Value) -> Result<Value, Error> {
        self.asked.borrow_mut().push(field.to_string());
        Ok(self.values[field].clone())
    }
}

fn table(values: Value) -> Table {
    Table {
        values,
        asked: RefCell::new(Vec::new()),
    }
}

fn generate(r: &Response, fields: Value, generator: &Table) -> Result<String, Error> {
    let values = [json!({ "canned_response_fields": fields })];
    let tools = results(&values);
    r.respond(&Sources {
        std: &json!({}),
        std_place: Place::Nowhere,
        tools: &tools,
        generator: Some(generator),
        secrets: &[],
    })
    .map(|reply| reply.text)
}

#[test]
fn the_seeds_overdraft_warning_renders_for_a_normal_account_without_the_amount() {
    let r = compile(OVERDRAFT);
    assert_eq!(
        r.fields(),
        [
            "account.balance",
            "account.overdraft",
            "account.overdraft_amount"
        ]
    );
    assert_eq!(
        render(
            &r,
            json!({"account.balance": "$5,432.10", "account.overdraft": false})
        )
        .unwrap(),
        "Your account balance is $5,432.10.\n"
    );
    assert_eq!(
        render(
            &r,
            json!({"account.balance": "-$20.50", "account.overdraft": true, "account.overdraft_amount": "$20.50"})
        )
        .unwrap(),
        "Your account balance is -$20.50.\n\nWARNING: Your account is overdrawn by $20.50.\n"
    );
    // Overdrawn without the amount: the branch taken reads it.
    let e = render(
        &r,
        json!({"account.balance": "-$20.50", "account.overdraft": true}),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MissingFields);
    assert_eq!(
        e.message(),
        "no source provides `account.overdraft_amount` (tried: tool fields of result 1)"
    );
    // The condition reads `account.overdraft`: it is needed.
    let e = render(&r, json!({"account.balance": "$1"})).unwrap_err();
    assert_eq!(
        e.message(),
        "no source provides `account.overdraft` (tried: tool fields of result 1)"
    );
}

#[test]
fn a_field_only_tested_with_is_defined_or_given_a_default_is_optional() {
    let r = compile(
        "{% if account.nickname is defined %}{{ account.nickname }}{% else %}Your account{% endif %}\
         {% if account.note is undefined %}.{% endif %} {{ account.tier | default('standard') }} {{ account.x | d('-') }}",
    );
    assert_eq!(render(&r, json!({})).unwrap(), "Your account. standard -");
    assert_eq!(
        render(
            &r,
            json!({"account": {"nickname": "Rainy day", "note": 1, "tier": "gold", "x": "y"}})
        )
        .unwrap(),
        "Rainy day gold y"
    );
}

#[test]
fn every_needed_missing_field_is_named_at_once_and_the_untaken_branch_is_not() {
    let r = compile(
        "{{ a }} {% if flag %}{{ b }}{% else %}{{ c }}{% endif %} {% for t in rows %}{{ t }}{% endfor %} {{ d is defined }}",
    );
    let e = render(&r, json!({"flag": false})).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MissingFields);
    assert_eq!(
        e.message(),
        "no source provides `a` (tried: tool fields of result 1), `c` (tried: tool fields of result 1), \
         `rows` (tried: tool fields of result 1)"
    );
    assert_eq!(
        render(&r, json!({"flag": false, "a": 1, "c": 3, "rows": [4, 5]})).unwrap(),
        "1 3 45 false"
    );
}

#[test]
fn a_generative_field_a_condition_reads_is_generated_and_an_untaken_one_is_not() {
    let r = compile(
        "{% if generative.upsell %}{{ generative.offer }}{% else %}{{ generative.plain }}{% endif %} {{ x }}",
    );
    let gen = table(
        json!({"generative.upsell": true, "generative.offer": "Try gold", "generative.plain": "-"}),
    );
    assert_eq!(generate(&r, json!({"x": 1}), &gen).unwrap(), "Try gold 1");
    assert_eq!(
        *gen.asked.borrow(),
        ["generative.upsell", "generative.offer"]
    );
    let gen = table(json!({"generative.upsell": false, "generative.plain": "ok"}));
    assert_eq!(generate(&r, json!({"x": 1}), &gen).unwrap(), "ok 1");
    assert_eq!(
        *gen.asked.borrow(),
        ["generative.upsell", "generative.plain"]
    );
    // A tool may provide a generative field: then it is not asked.
    let gen = table(json!({"generative.plain": "p"}));
    assert_eq!(
        generate(&r, json!({"x": 1, "generative.upsell": false}), &gen).unwrap(),
        "p 1"
    );
    assert_eq!(*gen.asked.borrow(), ["generative.plain"]);
}

#[test]
fn no_generation_is_spent_when_a_needed_field_is_missing() {
    let r = compile("{% if generative.upsell %}{{ generative.offer }}{% endif %} {{ x }}");
    let gen = table(json!({}));
    let e = generate(&r, json!({}), &gen).unwrap_err();
    assert_eq!(
        e.message(),
        "no source provides `x` (tried: tool fields of result 1)"
    );
    assert!(gen.asked.borrow().is_empty());
}

#[test]
fn a_field_the_generated_values_make_needed_is_still_the_error() {
    let r = compile("{% if generative.upsell %}{{ offer }}{% endif %}.");
    let gen = table(json!({"generative.upsell": true}));
    let e = generate(&r, json!({}), &gen).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MissingFields);
    assert_eq!(
        e.message(),
        "no source provides `offer` (tried: tool fields of result 1)"
    );
    let gen = table(json!({"generative.upsell": false}));
    assert_eq!(generate(&r, json!({}), &gen).unwrap(), ".");
}

#[test]
fn a_generated_field_read_twice_is_asked_once() {
    let r = compile("{{ generative.g }} {% if generative.g %}{{ generative.g }}{% endif %}");
    let gen = table(json!({"generative.g": "hi"}));
    assert_eq!(generate(&r, json!({}), &gen).unwrap(), "hi hi");
    assert_eq!(*gen.asked.borrow(), ["generative.g"]);
}

#[test]
fn a_field_a_condition_compares_is_needed_unless_it_is_tested_first() {
    let r = compile("{% if account.status == 'closed' %}Closed{% else %}Open{% endif %}: {{ n }}");
    let e = render(&r, json!({"n": 1})).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MissingFields);
    assert_eq!(
        e.message(),
        "no source provides `account.status` (tried: tool fields of result 1)"
    );
    assert_eq!(
        render(&r, json!({"n": 1, "account.status": "closed"})).unwrap(),
        "Closed: 1"
    );
    let r = compile(
        "{% if account.status is defined and account.status == 'closed' %}Closed{% else %}Open{% endif %}",
    );
    assert_eq!(render(&r, json!({})).unwrap(), "Open");
}

#[test]
fn a_default_taken_from_another_field_needs_only_that_field() {
    let r = compile("{{ account.nickname | default(account.type) }}");
    assert_eq!(
        render(&r, json!({"account.type": "Checking"})).unwrap(),
        "Checking"
    );
    assert_eq!(
        render(
            &r,
            json!({"account": {"nickname": "Rainy day", "type": "Checking"}})
        )
        .unwrap(),
        "Rainy day"
    );
    let e = render(&r, json!({})).unwrap_err();
    assert_eq!(
        e.message(),
        "no source provides `account.type` (tried: tool fields of result 1)"
    );
    // Defaults and tests on values inside data do not hide a field the render reads.
    let r = compile(
        "{% for t in rows %}{{ t.note | default('-') }}{% if t.x is undefined %}.{% endif %}{% endfor %}{{ n }}",
    );
    let e = render(&r, json!({"rows": [{}, {"note": "a"}]})).unwrap_err();
    assert_eq!(
        e.message(),
        "no source provides `n` (tried: tool fields of result 1)"
    );
    assert_eq!(
        render(&r, json!({"rows": [{}, {"note": "a"}], "n": 2})).unwrap(),
        "-.a.2"
    );
}

//! Seed 004's bank examples through `strata respond`, their templates written as the seed
//! writes them, and the SPEC §7 rule of the fields a render *needs*: a field read only in a
//! branch not taken, or only tested with `is defined` / `default(…)`, is optional; a
//! `generative.*` field a condition reads is asked of the generator tool; a needed field no
//! source provides is the error naming the field and the sources tried.

mod common;
use common::Test;

const BALANCE: &str = "Your {{account.type}} account (ending in {{account.last_four}}) has a current balance of {{account.balance}}.";

const OVERDRAFT: &str = "Your account balance is {{account.balance}}.\n{% if account.overdraft %}\nWARNING: Your account is overdrawn by {{account.overdraft_amount}}.\n{% endif %}";

const TRANSACTIONS: &str =
    "Recent transactions:\n{% for t in transactions %}\n- {{t.date}}: {{t.description}} {{t.amount}}\n{% endfor %}";

const GREETING: &str = "Hi {{std.customer.name}}, {{generative.greeting_phrase}}.\nYour {{account.type}} balance is {{account.balance}}.\n{{generative.closing_remark}}";

/// A generator of `generative.*` fields answering from a table; `generative.vip` is true for a
/// customer whose standard variable `tier` is `gold`.
const TABLE: &str = r#"import json, sys
request = json.load(sys.stdin)
variables = request["context"]["std"].get("variables", {})
TABLE = {
    "generative.vip": variables.get("tier") == "gold",
    "generative.vip_offer": "As a gold customer, your transfers are free",
    "generative.standard_offer": "Ask us about gold accounts",
}
field = request["field"]
if field not in TABLE:
    sys.exit(f"no value for `{field}`")
print(json.dumps(TABLE[field]))
"#;

fn project() -> Test {
    ["tools/runtimes", "tools/responses"]
        .into_iter()
        .fold(Test::new(), Test::copy)
        .file("balance.j2", BALANCE)
        .file("overdraft.j2", OVERDRAFT)
        .file("transactions.j2", TRANSACTIONS)
        .file("greeting.j2", GREETING)
        .file(
            "results/balance.json",
            r#"{"data": {"balance": 5432.10, "type": "Checking"}, "canned_response_fields": {"account.balance": "$5,432.10", "account.type": "Checking", "account.last_four": "1234"}}"#,
        )
        .file(
            "results/overdrawn.json",
            r#"{"data": {"balance": -20.50}, "canned_response_fields": {"account.balance": "-$20.50", "account.overdraft": true, "account.overdraft_amount": "$20.50"}}"#,
        )
        .file(
            "results/normal.json",
            r#"{"data": {"balance": 5432.10}, "canned_response_fields": {"account.balance": "$5,432.10", "account.overdraft": false}}"#,
        )
        .file(
            "results/overdrawn_no_amount.json",
            r#"{"canned_response_fields": {"account.balance": "-$20.50", "account.overdraft": true}}"#,
        )
        .file(
            "results/transactions.json",
            r#"{"data": {"count": 2}, "canned_response_fields": {"transactions": [
                {"date": "2024-01-15", "description": "Coffee Shop", "amount": "-$4.50"},
                {"date": "2024-01-14", "description": "Salary Deposit", "amount": "+$3,000.00"}]}}"#,
        )
        .file(
            "results/no_transactions.json",
            r#"{"data": {"count": 0}, "canned_response_fields": {"transactions": []}}"#,
        )
        .tool(
            "gen/table",
            "executor: runtimes/python\nparameters:\n  type: object\n  properties:\n    template: {type: string}\n    \
             field: {type: string}\n    context: {type: object}\nconfig:\n  script: scripts/table.py\n",
        )
        .file("tools/gen/scripts/table.py", TABLE)
}

#[test]
fn the_seeds_balance_example() {
    project()
        .then(&[
            "respond",
            "balance.j2",
            "--tool-result",
            "results/balance.json",
        ])
        .stdout("Your Checking account (ending in 1234) has a current balance of $5,432.10.\n")
        .stderr("")
        .status(0)
        .run();
}

#[test]
fn the_seeds_greeting_mixes_std_tool_and_generated_fields() {
    project()
        .then(&[
            "respond",
            "greeting.j2",
            "--std-json",
            r#"{"customer": {"name": "John"}}"#,
            "--tool-result",
            "results/balance.json",
            "--generator",
            "responses/phrases",
        ])
        .stdout("Hi John, I hope you're having a great day.\nYour Checking balance is $5,432.10.\nIs there anything else I can help you with?\n")
        .stderr("")
        .status(0)
        .run();
}

#[test]
fn the_seeds_overdraft_warning_for_an_overdrawn_and_a_normal_account() {
    let p = project();
    p.then(&[
        "respond",
        "overdraft.j2",
        "--tool-result",
        "results/overdrawn.json",
    ])
    .stdout("Your account balance is -$20.50.\n\nWARNING: Your account is overdrawn by $20.50.\n")
    .stderr("")
    .status(0)
    .run();
    // The normal account's tool sends no overdraft amount: the branch that reads it is not
    // taken, so the amount is not needed.
    p.then(&[
        "respond",
        "overdraft.j2",
        "--tool-result",
        "results/normal.json",
    ])
    .stdout("Your account balance is $5,432.10.\n")
    .stderr("")
    .status(0)
    .run();
    p.then(&[
        "respond",
        "overdraft.j2",
        "--tool-result",
        "results/normal.json",
        "--json",
    ])
    .stdout(
        r#"{
  "reply": "Your account balance is $5,432.10.\n",
  "fields": [
    {
      "field": "account.balance",
      "source": "tool",
      "from": "`results/normal.json`",
      "value": "$5,432.10"
    },
    {
      "field": "account.overdraft",
      "source": "tool",
      "from": "`results/normal.json`",
      "value": false
    }
  ]
}
"#,
    )
    .status(0)
    .run();
}

#[test]
fn an_overdrawn_account_without_the_amount_is_the_missing_field_error() {
    project()
        .then(&[
            "respond",
            "overdraft.j2",
            "--tool-result",
            "results/overdrawn_no_amount.json",
        ])
        .stdout("")
        .status(2)
        .stderr(
            "error[response]: no source provides `account.overdraft_amount` (tried: tool fields of `results/overdrawn_no_amount.json`)\n  \
             --> overdraft.j2:3:41\n  |\n3 | WARNING: Your account is overdrawn by {{account.overdraft_amount}}.\n  |                                         \
             ^^^^^^^^^^^^^^^^^^^^^^^^\n   = field: $ (bytes 112..136)\n   = help: `std.*` come from the caller, other fields from the \
             `canned_response_fields` of tool results, `generative.*` from the generator\n",
        )
        .run();
    // The condition reads `account.overdraft`: without it nothing renders.
    project()
        .then(&["respond", "overdraft.j2", "--tool-result", "results/balance.json"])
        .stdout("")
        .status(2)
        .stderr(
            "error[response]: no source provides `account.overdraft` (tried: tool fields of `results/balance.json`)\n  \
             --> overdraft.j2:2:7\n  |\n2 | {% if account.overdraft %}\n  |       ^^^^^^^^^^^^^^^^^\n   = field: $ (bytes 51..68)\n   \
             = help: `std.*` come from the caller, other fields from the `canned_response_fields` of tool results, `generative.*` from the generator\n",
        )
        .run();
}

#[test]
fn the_seeds_transactions_with_and_without_rows() {
    let p = project();
    p.then(&["respond", "transactions.j2", "--tool-result", "results/transactions.json"])
        .stdout("Recent transactions:\n\n- 2024-01-15: Coffee Shop -$4.50\n\n- 2024-01-14: Salary Deposit +$3,000.00\n")
        .stderr("")
        .status(0)
        .run();
    p.then(&[
        "respond",
        "transactions.j2",
        "--tool-result",
        "results/no_transactions.json",
    ])
    .stdout("Recent transactions:\n")
    .stderr("")
    .status(0)
    .run();
}

#[test]
fn a_field_only_tested_with_is_defined_or_given_a_default_is_optional() {
    let p = project().file(
        "nickname.j2",
        "{% if account.nickname is defined %}{{account.nickname}}{% else %}Your account{% endif %} \
         ({{account.tier | default('standard')}}) has {{account.balance}}.",
    );
    p.then(&[
        "respond",
        "nickname.j2",
        "--tool-result",
        "results/balance.json",
    ])
    .stdout("Your account (standard) has $5,432.10.\n")
    .stderr("")
    .status(0)
    .run();
    let p = p.file(
        "results/named.json",
        r#"{"canned_response_fields": {"account": {"nickname": "Rainy day", "tier": "gold", "balance": "$9"}}}"#,
    );
    p.then(&[
        "respond",
        "nickname.j2",
        "--tool-result",
        "results/named.json",
    ])
    .stdout("Rainy day (gold) has $9.\n")
    .status(0)
    .run();
}

#[test]
fn a_generative_field_a_condition_reads_is_asked_of_the_generator_tool() {
    let p = project()
        .file(
            "offer.j2",
            "Your balance is {{account.balance}}. {% if generative.vip %}{{generative.vip_offer}}{% else %}{{generative.standard_offer}}{% endif %}.",
        )
        .file(
            "results/gold.json",
            r#"{"canned_response_fields": {"account.balance": "$9"}}"#,
        );
    let run = |result: &str, tier: &str| {
        let std = format!(r#"{{"variables": {{"tier": "{tier}"}}}}"#);
        p.then(&[
            "respond",
            "offer.j2",
            "--std-json",
            &std,
            "--tool-result",
            result,
            "--generator",
            "gen/table",
            "--json",
        ])
        .status(0)
        .run()
        .json()
    };
    // Only the fields the render reads are generated, each once: the untaken branch's is not.
    let fields = |doc: &serde_json::Value| -> Vec<String> {
        doc["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                format!(
                    "{}={}:{}",
                    f["field"].as_str().unwrap(),
                    f["source"].as_str().unwrap(),
                    f["value"]
                )
            })
            .collect()
    };
    let gold = run("results/gold.json", "gold");
    assert_eq!(
        gold["reply"],
        "Your balance is $9. As a gold customer, your transfers are free."
    );
    assert_eq!(
        fields(&gold),
        [
            "account.balance=tool:\"$9\"",
            "generative.vip=generative:true",
            "generative.vip_offer=generative:\"As a gold customer, your transfers are free\"",
        ]
    );
    let normal = run("results/balance.json", "silver");
    assert_eq!(
        normal["reply"],
        "Your balance is $5,432.10. Ask us about gold accounts."
    );
    assert_eq!(
        fields(&normal),
        [
            "account.balance=tool:\"$5,432.10\"",
            "generative.vip=generative:false",
            "generative.standard_offer=generative:\"Ask us about gold accounts\"",
        ]
    );
    // No generator: the condition's field is needed, and named with the sources tried.
    p.then(&["respond", "offer.j2", "--tool-result", "results/gold.json"])
        .stdout("")
        .status(2)
        .stderr(
            "error[response]: no source provides `generative.vip` (tried: tool fields of `results/gold.json`; generator (none configured)), \
             `generative.standard_offer` (tried: tool fields of `results/gold.json`; generator (none configured))\n  \
             --> offer.j2:1:44\n  |\n1 | Your balance is {{account.balance}}. {% if generative.vip %}{{generative.vip_offer}}{% else %}{{generative.standard_offer}}{% endif %}.\n  \
             |                                            ^^^^^^^^^^^^^^\n   = field: $ (bytes 43..57)\n   \
             = help: `std.*` come from the caller, other fields from the `canned_response_fields` of tool results, `generative.*` from the generator\n",
        )
        .run();
}

/// A balance tool as seed 004 writes one: the overdraft amount only when there is one.
const SEED_BALANCE: &str = r#"import json, sys
last_four = json.load(sys.stdin)["account_last_four"]
balance = -20.50 if last_four == "0000" else 5432.10
fields = {"account.balance": f"-${-balance:,.2f}" if balance < 0 else f"${balance:,.2f}", "account.overdraft": balance < 0}
if balance < 0:
    fields["account.overdraft_amount"] = f"${-balance:,.2f}"
print(json.dumps({"data": {"balance": balance}, "canned_response_fields": fields}))
"#;

#[test]
fn a_directive_replies_with_the_seeds_overdraft_template_for_either_account() {
    let template = OVERDRAFT.replace('\n', "\n        ");
    let p = project()
        .tool(
            "seed/balance",
            "executor: runtimes/python\nparameters:\n  type: object\n  properties:\n    account_last_four: {type: string}\n\
             response_fields: [account.balance, account.overdraft, account.overdraft_amount]\nconfig:\n  script: scripts/balance.py\n",
        )
        .file("tools/seed/scripts/balance.py", SEED_BALANCE)
        .file(
            "directives/overdraft.md",
            format!(
                "---\nname: overdraft\ninputs:\n  - {{name: last_four, type: string, default: \"0000\"}}\nactions:\n  \
                 - {{id: balance, tool: seed/balance, params: {{account_last_four: \"{{input:last_four}}\"}}}}\n\
                 responses:\n  candidates:\n    - id: balance\n      template: |-\n        {template}\n---\nThe balance.\n"
            ),
        );
    let reply = |args: &[&str]| {
        let o = p
            .then(
                &[
                    &["run", "directives/overdraft.md", "--quiet", "--json"],
                    args,
                ]
                .concat(),
            )
            .status(0)
            .run();
        o.json()["response"]["reply"].as_str().unwrap().to_string()
    };
    assert_eq!(
        reply(&[]),
        "Your account balance is -$20.50.\n\nWARNING: Your account is overdrawn by $20.50.\n"
    );
    assert_eq!(
        reply(&["--input", "last_four=1234"]),
        "Your account balance is $5,432.10.\n"
    );
}

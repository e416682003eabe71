//! End-to-end tests of canned responses (SPEC §7) through the binary: the shipped bank
//! directives, `strata respond`, bad input of every kind, `strata check` and `strata explain`.
//! Each test runs in a scratch copy of the project's tools.

mod common;
use common::{Ran, Test};

/// A scratch project: the shipped runtimes, bank tools, phrase generator and bank directives.
fn project() -> Test {
    [
        "tools/runtimes",
        "tools/bank",
        "tools/responses",
        "directives/bank_balance.md",
        "directives/bank_overdraft.md",
        "directives/bank_transactions.md",
        "directives/bank_greeting.md",
    ]
    .into_iter()
    .fold(Test::new(), Test::copy)
}

/// The reply section of a directive's report.
fn reply(o: &Ran) -> String {
    o.stdout
        .split_once("\n--- reply ")
        .map(|(_, r)| format!("--- reply {r}"))
        .unwrap_or_default()
}

#[test]
fn seed_004s_bank_balance_directive_replies_with_the_filled_template() {
    let p = project();
    p.then(&["run", "directives/bank_balance.md", "--quiet"])
        .stdout(
            "directive bank_balance: completed\n\n--- prompt ---\nTell the customer the balance of the account ending in 1234.\n\n\
             --- actions ---\n[completed] balance (bank/check_balance)\n    | {\"data\":{\"balance\":5432.1,\"type\":\"Checking\"},\
             \"canned_response_fields\":{\"account.balance\":\"$5,432.10\",\"account.type\":\"Checking\",\"account.last_four\":\"1234\",\
             \"account.overdraft\":false,\"account.overdraft_amount\":\"$0.00\"}}\n\n\
             --- reply (balance) ---\nYour Checking account (ending in 1234) has a current balance of $5,432.10.\n",
        )
        .stderr("")
        .status(0)
        .run();
    let report = p
        .then(&[
            "run",
            "directives/bank_balance.md",
            "--input",
            "last_four=5678",
            "--json",
        ])
        .status(0)
        .run()
        .json();
    assert_eq!(
        report["response"],
        serde_json::json!({
            "reply": "Your Savings account (ending in 5678) has a current balance of $12,000.00.",
            "candidate": {"index": 0, "id": "balance"},
            "fields": [
                {"field": "account.type", "source": "tool", "from": "step `balance` (bank/check_balance)", "value": "Savings"},
                {"field": "account.last_four", "source": "tool", "from": "step `balance` (bank/check_balance)", "value": "5678"},
                {"field": "account.balance", "source": "tool", "from": "step `balance` (bank/check_balance)", "value": "$12,000.00"}
            ]
        })
    );
}

#[test]
fn the_overdraft_conditional_warns_only_when_overdrawn() {
    let p = project();
    let o = p
        .then(&["run", "directives/bank_overdraft.md"])
        .status(0)
        .run();
    assert_eq!(
        reply(&o),
        "--- reply (balance) ---\nYour account balance is -$20.50.\nWARNING: Your account is overdrawn by $20.50.\n"
    );
    let o = p
        .then(&[
            "run",
            "directives/bank_overdraft.md",
            "--input",
            "last_four=1234",
        ])
        .status(0)
        .run();
    assert_eq!(
        reply(&o),
        "--- reply (balance) ---\nYour account balance is $5,432.10.\n"
    );
}

#[test]
fn the_transactions_loop_and_its_fallback_candidate() {
    let p = project();
    let o = p
        .then(&["run", "directives/bank_transactions.md"])
        .status(0)
        .run();
    assert_eq!(
        reply(&o),
        "--- reply (list) ---\nRecent transactions:\n- 2024-01-15: Coffee Shop -$4.50\n- 2024-01-14: Salary Deposit +$3,000.00\n"
    );
    let o = p
        .then(&[
            "run",
            "directives/bank_transactions.md",
            "--input",
            "last_four=5678",
        ])
        .status(0)
        .run();
    assert_eq!(
        reply(&o),
        "--- reply (none) ---\nThere are no recent transactions on this account.\n"
    );
}

#[test]
fn std_tool_and_generated_fields_mix_in_one_reply() {
    let o = project()
        .args(&[
            "run",
            "directives/bank_greeting.md",
            "--input",
            "customer=Mei",
        ])
        .status(0)
        .run();
    assert_eq!(
        reply(&o),
        "--- reply (greeting) ---\nHi Mei, I hope you're having a great day.\nYour Checking balance is $5,432.10.\n\
         Is there anything else I can help you with?\n-- Ada, Main Street branch\n"
    );
}

#[test]
fn no_renderable_candidate_fails_the_directive_with_every_missing_field() {
    let o = project()
        .file(
            "directives/missing.md",
            "---\nname: missing\nactions:\n  - {id: balance, tool: bank/check_balance, params: {account_last_four: '1234'}}\n\
             responses:\n  candidates:\n    - id: full\n      template: '{{account.type}} {{account.nickname}} {{std.customer.name}}'\n    \
             - id: short\n      condition: steps.balance.result.data.balance < 0\n      template: overdrawn\n---\n",
        )
        .args(&["run", "directives/missing.md", "--quiet"])
        .status(1)
        .stderr(
            "error[response]: no response candidate can be rendered: `full`: missing `account.nickname` (tried: tool fields of step `balance` (bank/check_balance)), \
             `std.customer.name` (tried: std (no `customer.name`); tool fields of step `balance` (bank/check_balance)); \
             `short`: condition `steps.balance.result.data.balance < 0` is false\n  --> directives/missing.md:7:5\n  |\n\
             7 |     - id: full\n  |     ^\n   = field: responses.candidates\n   = help: a tool provides a field in the `canned_response_fields` object of its result; \
             `std.*` come from `responses.std`, `generative.*` from `responses.generator`\n",
        )
        .run();
    assert!(!o.stdout.contains("--- reply"));
}

#[test]
fn a_secret_a_tool_returns_as_a_field_is_refused() {
    let o = project()
        .tool(
            "bank/token",
            "description: returns its token as a response field\nexecutor: runtimes/subprocess\nsecrets: [BANK_TOKEN]\n\
             response_fields: [account.token]\nconfig:\n  command: printf\n  args: ['{\"canned_response_fields\": {\"account.token\": \"%s\"}}', '${BANK_TOKEN}']\n",
        )
        .file(
            "directives/token.md",
            "---\nname: token\nactions:\n  - {id: token, tool: bank/token}\nresponses:\n  candidates:\n    - template: 'Your token is {{account.token}}'\n---\n",
        )
        .args(&["run", "directives/token.md", "--json", "--quiet"])
        .env("BANK_TOKEN", "tok-8c1f2e")
        .status(1)
        .run();
    let report = o.json();
    assert_eq!(
        report["response"]["error"]["message"],
        "field `account.token` from tool fields of step `token` (bank/token) holds a secret value; a reply never shows secrets"
    );
    assert!(!report["response"].to_string().contains("tok-8c1f2e"));
    assert!(!o.stderr.contains("tok-8c1f2e"));
    assert!(o.stderr.starts_with("error[response]: field `account.token` from tool fields of step `token` (bank/token) holds a secret value; a reply never shows secrets\n  --> directives/token.md:4:5\n"));
}

/// A scratch project for `strata respond`: a template and tool results.
fn respond_project() -> Test {
    project()
        .file(
            "bank.j2",
            "Hi {{std.customer.name}},\nyour {{account.type}} balance is {{account.balance}}.\n",
        )
        .file(
            "results/old.json",
            "{\"canned_response_fields\": {\"account.balance\": \"$1.00\", \"account.type\": \"Savings\"}}",
        )
        .file(
            "results/new.yaml",
            "data: {balance: 5432.1}\ncanned_response_fields:\n  account:\n    balance: $5,432.10\n",
        )
}

#[test]
fn respond_renders_a_template_from_files_and_the_latest_result_wins() {
    let p = respond_project();
    let args = [
        "respond",
        "bank.j2",
        "--std-json",
        r#"{"customer": {"name": "Ann"}}"#,
        "--tool-result",
        "results/old.json",
        "--tool-result",
        "results/new.yaml",
    ];
    p.then(&args)
        .stdout("Hi Ann,\nyour Savings balance is $5,432.10.\n")
        .stderr("")
        .status(0)
        .run();
    p.then(&[&args[..], &["--json"]].concat())
        .stdout(
            r#"{
  "reply": "Hi Ann,\nyour Savings balance is $5,432.10.",
  "fields": [
    {
      "field": "std.customer.name",
      "source": "std",
      "value": "Ann"
    },
    {
      "field": "account.type",
      "source": "tool",
      "from": "`results/old.json`",
      "value": "Savings"
    },
    {
      "field": "account.balance",
      "source": "tool",
      "from": "`results/new.yaml`",
      "value": "$5,432.10"
    }
  ]
}
"#,
        )
        .status(0)
        .run();
}

#[test]
fn respond_names_every_missing_field_at_once_and_renders_nothing() {
    let p = respond_project();
    p.then(&["respond", "bank.j2", "--tool-result", "results/new.yaml"])
        .stdout("")
        .status(2)
        .stderr(
            "error[response]: no source provides `std.customer.name` (tried: std (no `customer.name`); tool fields of `results/new.yaml`), \
             `account.type` (tried: tool fields of `results/new.yaml`)\n  --> bank.j2:1:6\n  |\n1 | Hi {{std.customer.name}},\n  |      ^^^^^^^^^^^^^^^^^\n   \
             = field: $ (bytes 5..22)\n   = help: `std.*` come from the caller, other fields from the `canned_response_fields` of tool results, `generative.*` from the generator\n",
        )
        .run();
    let doc = p
        .then(&[
            "respond",
            "bank.j2",
            "--tool-result",
            "results/new.yaml",
            "--json",
        ])
        .status(2)
        .run()
        .json();
    assert_eq!(doc["error"]["kind"], "missing_fields");
    assert_eq!(
        doc["fields"],
        serde_json::json!([{"field": "account.balance", "source": "tool", "from": "`results/new.yaml`", "value": "$5,432.10"}])
    );
}

#[test]
fn respond_with_the_generator_tool() {
    let p = respond_project().file(
        "mixed.j2",
        "Hi {{std.customer.name}}, {{generative.greeting_phrase}}.\n{{generative.sign_off}}",
    );
    p.then(&[
        "respond",
        "mixed.j2",
        "--std-json",
        r#"{"customer": {"name": "Ann"}}"#,
        "--generator",
        "responses/phrases",
    ])
    .stdout("Hi Ann, I hope you're having a great day.\nTake care, Ann\n")
    .status(0)
    .run();
    p.then(&["respond", "mixed.j2", "--generator", "responses/phrase"])
        .status(2)
        .stderr(
            "error[request]: unknown tool `responses/phrase`\n   = help: did you mean `responses/phrases`?\n",
        )
        .run();
}

/// Writes a generator tool `gen/<name>` with `config`, declaring the generator's parameters.
fn generator(t: Test, name: &str, config: &str) -> Test {
    t.tool(
        &format!("gen/{name}"),
        &format!(
            "executor: runtimes/subprocess\nparameters:\n  type: object\n  properties:\n    template: {{type: string}}\n    \
             field: {{type: string}}\n    context: {{type: object}}\nconfig:\n{config}"
        ),
    )
}

#[test]
fn a_generator_that_fails_times_out_or_prints_text_is_a_clear_error() {
    let p = respond_project().file("gen.j2", "Hello\n  {{generative.greeting_phrase}}!");
    let p = generator(p, "fail", "  command: sh\n  args: ['-c', 'exit 3']\n");
    let p = generator(p, "slow", "  command: sleep\n  args: ['5']\n  timeout: 1\n");
    let p = generator(
        p,
        "text",
        "  command: printf\n  args: ['Have a nice day']\n",
    );
    let run = |tool: &str| p.then(&["respond", "gen.j2", "--generator", tool]);
    let snippet = "  --> gen.j2:2:5\n  |\n2 |   {{generative.greeting_phrase}}!\n  |     ^^^^^^^^^^^^^^^^^^^^^^^^^^\n   = field: $ (bytes 10..36)\n";
    let protocol = "   = help: a generator reads {template, field, context} as JSON on stdin (`input_data: \"{params_json}\"`) and prints the field's value as JSON\n";
    run("gen/fail")
        .status(2)
        .stderr(&format!("error[response]: the generator of `generative.greeting_phrase` failed: tool `gen/fail` exited with code 3\n{snippet}{protocol}"))
        .run();
    run("gen/slow")
        .stderr(&format!("error[response]: the generator of `generative.greeting_phrase` failed: tool `gen/slow` timed out\n{snippet}{protocol}"))
        .status(2).run();
    run("gen/text")
        .stderr(&format!("error[response]: the generator of `generative.greeting_phrase` failed: tool `gen/text` printed something that is not JSON\n{snippet}   \
                 = help: a generator prints the field's value as JSON: a text is printed with its quotes (\"Have a nice day.\")\n"))
        .stdout("")
        .status(2).run();
}

#[test]
fn bad_templates_and_tool_results_are_located_errors() {
    let p = respond_project();
    p.then(&["respond", "syntax.j2"])
        .file(
            "syntax.j2",
            "Balance:\n{% if account.balance %}{{ account.balance }\n",
        )
        .status(2)
        .stderr(
            "error[response]: response template: unexpected `}`, expected end of variable block\n  --> syntax.j2:2:44\n  |\n\
             2 | {% if account.balance %}{{ account.balance }\n  |                                            ^\n   = field: $ (bytes 52..53)\n   \
             = help: see the Jinja syntax: {{ value }}, {% if %}…{% endif %}, {% for x in xs %}…{% endfor %}\n",
        )
        .run();
    p.then(&["respond", "keyword.j2"])
        .file("keyword.j2", "Total: {{ account.for }}\n")
        .stderr(
            "error[response]: `account.for`: `for` is a Jinja keyword, not a field name\n  --> keyword.j2:1:11\n  |\n1 | Total: {{ account.for }}\n  |           ^^^^^^^^^^^\n   \
             = field: $ (bytes 10..21)\n   = help: rename the field: keywords such as `if`, `for`, `in`, `not` and `loop` cannot name a value\n",
        )
        .status(2).run();
    p.then(&["respond", "bank.j2", "--tool-result", "results/list.json"])
        .file(
            "results/list.json",
            "{\n  \"data\": {},\n  \"canned_response_fields\": [\"account.balance\"]\n}\n",
        )
        .status(2)
        .stderr(
            "error[response]: `canned_response_fields` of `results/list.json` is an array, not an object\n  --> results/list.json:3:29\n  |\n\
             3 |   \"canned_response_fields\": [\"account.balance\"]\n  |                             ^\n   = field: canned_response_fields\n   \
             = help: a tool returns its response fields as an object: {\"data\": …, \"canned_response_fields\": {\"account.balance\": \"$5,432.10\"}}\n",
        )
        .run();
    p.then(&["respond", "bank.j2", "--std-json", r#"{"custmer": {}}"#])
        .stderr(
            "error[response]: unknown standard field `custmer`\n   = field: custmer\n   = help: did you mean `customer`?\n",
        )
        .status(2).run();
}

#[test]
fn field_values_are_data_even_when_they_hold_template_syntax() {
    respond_project()
        .file("note.j2", "Note: {{note}}\n")
        .file(
            "results/note.json",
            r#"{"canned_response_fields": {"note": "{{ std.customer.name }} {% include 'bank.j2' %} ${HOME} {input:x}"}}"#,
        )
        .args(&[
            "respond",
            "note.j2",
            "--std-json",
            r#"{"customer": {"name": "LEAKED"}}"#,
            "--tool-result",
            "results/note.json",
        ])
        .stdout("Note: {{ std.customer.name }} {% include 'bank.j2' %} ${HOME} {input:x}\n")
        .status(0)
        .run();
}

#[test]
fn a_field_holding_a_secret_is_refused_and_traces_show_stars() {
    let p = respond_project().file(
        "results/token.json",
        "{\"canned_response_fields\": {\"account.type\": \"key-5ecr3t\", \"account.balance\": \"$1\"}}",
    );
    let args = [
        "respond",
        "bank.j2",
        "--std-json",
        r#"{"customer": {"name": "Ann"}}"#,
        "--tool-result",
        "results/token.json",
        "--secret",
        "API_KEY",
    ];
    p.then(&args)
        .env("API_KEY", "key-5ecr3t")
        .status(2)
        .stdout("")
        .stderr(
            "error[response]: field `account.type` from tool fields of `results/token.json` holds a secret value; a reply never shows secrets\n  \
             --> results/token.json:1:45\n  |\n1 | {\"canned_response_fields\": {\"account.type\": \"key-5ecr3t\", \"account.balance\": \"$1\"}}\n  \
             |                                             ^\n   = field: canned_response_fields[\"account.type\"]\n   \
             = help: return a reference or a masked form (`****1234`) in the response fields instead\n",
        )
        .run();
    let o = p
        .then(&[&args[..], &["--json"]].concat())
        .env("API_KEY", "key-5ecr3t")
        .status(2)
        .run();
    assert_eq!(
        o.json()["fields"][1],
        serde_json::json!({"field": "account.type", "source": "tool", "from": "`results/token.json`", "value": "***"})
    );
    assert!(!o.stdout.contains("key-5ecr3t"));
}

/// The list comes from a tool (a file that big is refused by the document node limit first).
#[test]
fn a_loop_over_a_million_items_stops_at_the_fuel_limit() {
    let report = project()
        .tool(
            "bank/huge",
            "executor: runtimes/subprocess\nresponse_fields: [items]\nconfig:\n  command: python3\n  \
             args: ['-c', 'import json; print(json.dumps({\"canned_response_fields\": {\"items\": [0] * 1000000}}))']\n",
        )
        .file(
            "directives/huge.md",
            "---\nname: huge\nactions:\n  - {id: list, tool: bank/huge}\nresponses:\n  candidates:\n    \
             - template: '{% for t in items %}{{t}},{% endfor %}'\n---\n",
        )
        .args(&["run", "directives/huge.md", "--json"])
        .status(1)
        .run()
        .json();
    assert_eq!(report["actions"][0]["status"], "completed");
    assert_eq!(
        report["response"],
        serde_json::json!({"error": {
            "kind": "limit", "layer": "response", "message": "response template: engine ran out of fuel",
            "path": "responses.candidates[0].template", "span": [22, 23],
            "hint": "the template did too much work: a loop over a huge list, runaway recursion, or strings and lists built past 32 MB",
            "file": "directives/huge.md", "line": 7, "column": 40
        }})
    );
}

#[test]
fn check_reports_response_fields_no_source_declares() {
    project()
        .file(
            "directives/typo.md",
            "---\nname: typo\nactions:\n  - {id: balance, tool: bank/check_balance, params: {account_last_four: '1234'}}\n\
             responses:\n  candidates:\n    - template: |\n        {{account.balanse}} for {{std.customer.name}}\n        {{generative.closing_remark}}\n---\n",
        )
        .args(&["check"])
        .status(0)
        .stdout(
            "warning[R010]: response field `account.balanse` is declared by no action's tool\n  --> directives/typo.md:8:11\n  |\n\
             8 |         {{account.balanse}} for {{std.customer.name}}\n  |           ^^^^^^^^^^^^^^^\n   = field: responses.candidates[0].template\n   \
             = help: did you mean `account.balance`?\n\n\
             warning[R010]: response field `std.customer.name` is not set by `responses.std`\n  --> directives/typo.md:8:35\n  |\n\
             8 |         {{account.balanse}} for {{std.customer.name}}\n  |                                   ^^^^^^^^^^^^^^^^^\n   = field: responses.candidates[0].template\n   \
             = help: `responses.std` sets customer.name, agent.name and variables.<name>; std.missing_params is always set\n\n\
             warning[R010]: response field `generative.closing_remark` needs a generator\n  --> directives/typo.md:9:11\n  |\n\
             9 |         {{generative.closing_remark}}\n  |           ^^^^^^^^^^^^^^^^^^^^^^^^^\n   = field: responses.candidates[0].template\n   \
             = help: name a tool in `responses.generator`\n\nchecked 12 files: 0 errors, 3 warnings\n",
        )
        .run();
}

#[test]
fn the_shipped_examples_check_clean() {
    project()
        .args(&["check", "--deny-warnings"])
        .stderr("")
        .status(0)
        .run();
}

#[test]
fn explain_shows_each_fields_source() {
    let p = project();
    let o = p
        .then(&[
            "explain",
            "directives/bank_greeting.md",
            "--input",
            "customer=Mei",
        ])
        .status(0)
        .run();
    let std = o
        .stdout
        .split_once("responses.std.customer.name\n")
        .map(|(_, r)| r)
        .unwrap_or_default();
    assert!(std.starts_with(
        "  source     authored:\"{input:customer}\"\n  1 inputs   data:\"Mei\"\n  2 context  data:\"Mei\"\n"
    ));
    let section = o
        .stdout
        .split_once("\nresponses ")
        .map(|(_, r)| r)
        .unwrap_or_default();
    assert_eq!(
        section,
        "(generator: `responses/phrases`)\n  greeting\n\
         \x20   std.customer.name           std\n\
         \x20   generative.greeting_phrase  generator `responses/phrases`\n\
         \x20   account.type                tool fields of step `balance` (bank/check_balance)\n\
         \x20   account.balance             tool fields of step `balance` (bank/check_balance)\n\
         \x20   generative.closing_remark   generator `responses/phrases`\n\
         \x20   std.agent.name              std\n\
         \x20   std.variables.branch        std\n"
    );
    let o = p
        .then(&["explain", "directives/bank_transactions.md"])
        .status(0)
        .run();
    assert!(o.stdout.ends_with(
        "\nresponses (generator: none)\n  list when steps.history.result.data.count > 0\n    transactions  tool fields of step `history` (bank/transactions)\n  none\n"
    ));
}

//! Recursion depth: no expression costs stack in proportion to its length. Long operator
//! chains are parsed, type-checked, evaluated and dropped on a small stack; nesting (groups,
//! `!`, lists, calls) stops at its documented limit with a clear error.

use serde_json::{json, Value};
use strata_context::{eval_bool, eval_value, parse_expr, When};
use strata_core::ErrorKind;

/// Runs `f` on a thread with a stack of `kib` KiB (a thread's default is 2 MiB; `ulimit -s
/// 1024` gives the main thread 1 MiB).
fn on_stack(kib: usize, f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(kib << 10)
        .spawn(f)
        .expect("a thread")
        .join()
        .expect("no stack overflow");
}

fn chain(operand: &str, op: &str, n: usize) -> String {
    vec![operand; n].join(op)
}

#[test]
fn long_operator_chains_cost_no_stack_depth() {
    on_stack(128, || {
        let ctx = json!({"state": {"n": 1, "t": true, "f": false}});
        let cases: [(String, Value); 7] = [
            (chain("true", " && ", 20_000), json!(true)),
            (chain("state.t", " && ", 20_000), json!(true)),
            (chain("false", " || ", 20_000), json!(false)),
            (chain("state.n", " + ", 20_000), json!(20_000)),
            (chain("1", " * ", 20_000), json!(1)),
            (chain("'a'", "+", 1_000), json!("a".repeat(1_000))),
            (chain("state.n - 1", " + ", 10_000), json!(0)),
        ];
        for (src, want) in cases {
            let expr = parse_expr(&src, 0).expect("parses");
            assert_eq!(eval_value(&expr, &ctx), Ok(want), "{}…", &src[..20]);
            let copy = expr.clone();
            assert_eq!(copy, expr);
            assert!(!format!("{expr:?}").is_empty());
            drop(expr);
        }
        let when = When::parse(&Value::String(chain("state.t", " && ", 8_000))).unwrap();
        assert_eq!(when.eval(&ctx), Ok(true));
        assert_eq!(when.paths().len(), 8_000);
    });
}

#[test]
fn short_circuits_stop_a_chain_and_types_are_checked_throughout() {
    let ctx = json!({"state": {"n": 1}});
    let src = format!("false && {}", chain("state.n", " && ", 10));
    let expr = parse_expr(&src, 0).unwrap();
    assert_eq!(eval_bool(&expr, &ctx), Ok(false));
    let src = format!("{} && 1", chain("true", " && ", 10));
    let e = parse_expr(&src, 0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type);
    assert_eq!(e.message(), "`&&` cannot combine a boolean and a number");
    let src = format!("{} + 'x'", chain("1", " + ", 10));
    let e = parse_expr(&src, 0).unwrap_err();
    assert_eq!(e.message(), "`+` cannot combine a number and a string");
    let expr = parse_expr("1 + 2 * 3 - 4 / 2 % 3", 0).unwrap();
    assert_eq!(eval_value(&expr, &ctx), Ok(json!(5)));
    let expr = parse_expr("true || false && false", 0).unwrap();
    assert_eq!(eval_value(&expr, &ctx), Ok(json!(true)));
    let expr = parse_expr("10 - 2 - 3", 0).unwrap();
    assert_eq!(eval_value(&expr, &ctx), Ok(json!(5)));
}

#[test]
fn nesting_stops_at_its_limit_with_a_clear_error_on_a_small_stack() {
    // The deepest nesting allowed takes about 0.2 MiB of stack in a release build and 0.75
    // MiB in a debug build.
    on_stack(1024, || {
        let ctx = json!({});
        for (open, close) in [("(", ")"), ("[", "]"), ("{\"a\": ", "}"), ("!", "")] {
            let deep = |n: usize| format!("{}true{}", open.repeat(n), close.repeat(n));
            let ok = parse_expr(&deep(64), 0);
            assert!(ok.is_ok(), "{open}: {ok:?}");
            let _ = eval_value(&ok.unwrap(), &ctx);
            for n in [65, 100_000] {
                let e = parse_expr(&deep(n), 0).unwrap_err();
                assert_eq!(e.kind(), ErrorKind::Syntax, "{open}");
                assert_eq!(e.message(), "expression nested too deeply");
                assert_eq!(e.hint(), Some("nest at most 64 levels"));
            }
        }
        // Nesting inside a long chain, and a long chain inside nesting.
        let inner = format!("({})", chain("true", " && ", 10_000));
        let src = format!("{}{inner}{}", "(".repeat(60), ")".repeat(60));
        assert_eq!(eval_bool(&parse_expr(&src, 0).unwrap(), &ctx), Ok(true));
    });
}

#[test]
fn conditional_chains_cost_no_stack_depth_and_their_middle_branch_nests() {
    on_stack(256, || {
        let ctx = json!({"state": {"n": 1}});
        // `false ? 0 : false ? 0 : … : 7`: one flat chain, parsed and evaluated in a loop.
        let src = format!("{}7", "false ? 0 : ".repeat(20_000));
        let expr = parse_expr(&src, 0).expect("parses");
        assert_eq!(eval_value(&expr, &ctx), Ok(json!(7)));
        let src = format!("{}7", "state.n == 2 ? state.gone : ".repeat(10_000));
        assert_eq!(
            eval_value(&parse_expr(&src, 0).unwrap(), &ctx),
            Ok(json!(7))
        );
        drop(expr);
    });
    on_stack(1024, || {
        let ctx = json!({});
        // `true ? true ? … 1 : 0 … : 0`: the middle branch nests, up to the limit.
        let deep = |n: usize| format!("{}1{}", "true ? ".repeat(n), " : 0".repeat(n));
        assert_eq!(
            eval_value(&parse_expr(&deep(63), 0).unwrap(), &ctx),
            Ok(json!(1))
        );
        let e = parse_expr(&deep(65), 0).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Syntax);
        assert_eq!(e.message(), "expression nested too deeply");
        // Unary `+` nests as `-` and `!` do.
        assert_eq!(
            eval_value(
                &parse_expr(&format!("{}1", "+".repeat(64)), 0).unwrap(),
                &ctx
            ),
            Ok(json!(1))
        );
        let e = parse_expr(&format!("{}1", "+".repeat(100_000)), 0).unwrap_err();
        assert_eq!(e.message(), "expression nested too deeply");
    });
}

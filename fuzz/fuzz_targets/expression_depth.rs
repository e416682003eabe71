//! Recursion depth in layer C's expressions: an operand (the fuzzed text) repeated in a long
//! operator chain and wrapped in nesting, parsed, type-checked, evaluated and dropped on a
//! thread with a fixed stack. No length of chain may cost stack; nesting past 64 levels must
//! be a syntax error, never a stack overflow.
#![no_main]

use libfuzzer_sys::fuzz_target;
use strata_context::{eval_value, parse_expr};

const OPS: [&str; 10] = [
    " && ", " || ", " + ", " - ", " * ", " / ", " % ", " ?? ", " == ", " < ",
];
const NESTING: [(&str, &str); 5] = [
    ("(", ")"),
    ("[", "]"),
    ("!", ""),
    ("-", ""),
    ("length(", ")"),
];

fuzz_target!(|data: &[u8]| {
    let [shape, count, depth, rest @ ..] = data else {
        return;
    };
    let Ok(operand) = std::str::from_utf8(rest) else {
        return;
    };
    if operand.len() > 64 || operand.contains('}') {
        return;
    }
    let op = OPS[usize::from(*shape) % OPS.len()];
    let (open, close) = NESTING[usize::from(shape / 16) % NESTING.len()];
    let n = 1 + usize::from(*count) * 40;
    let chain = vec![operand; n].join(op);
    let m = usize::from(*depth) % 100;
    let src = format!("{}{chain}{}", open.repeat(m), close.repeat(m));
    std::thread::Builder::new()
        .stack_size(4 << 20)
        .spawn(move || {
            let ctx = strata_fuzz::Data::new().context;
            match parse_expr(&src, 0) {
                Ok(expr) => {
                    let _ = eval_value(&expr, &ctx);
                    let _ = expr.paths();
                    drop(expr.clone());
                }
                Err(e) if m > 64 => assert!(
                    e.message() == "expression nested too deeply"
                        || e.kind() != strata_core::ErrorKind::Limit,
                    "{e:?}"
                ),
                Err(_) => {}
            }
        })
        .expect("a thread")
        .join()
        .expect("no panic, no stack overflow");
});

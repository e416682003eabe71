//! Load-time checks over a parsed graph: every node reachable from `start`, and every
//! context reference valid where it stands (namespace available there, state key initialised
//! or assigned somewhere, input declared).

use std::collections::BTreeSet;

use strata_context::{parse_expr, Expr, Path, Seg};
use strata_core::{Error, ErrorKind, FieldPath, Layer, Span};
use strata_pipeline::Template;

use crate::fields::{key, names, Reader};
use crate::hooks::CONTEXT_NAMES;
use crate::model::{Body, Graph, Node, OnError};
use strata_context::When;
use strata_core::did_you_mean;

/// Names that cannot name a foreach element.
pub const RESERVED: [&str; 5] = ["state", "inputs", "result", "run", "error"];

/// A context reference: where it is written, and the path it reads.
struct Ref {
    field: FieldPath,
    span: Option<Span>,
    path: Path,
}

/// What a template or condition may read where it stands.
struct Names<'a> {
    namespaces: Vec<&'a str>,
    state: &'a BTreeSet<String>,
    inputs: &'a [String],
}

/// Runs every check.
/// Every error is pushed on `errors`: reachability, then each node's, then each hook's.
pub(crate) fn check(r: &Reader<'_>, graph: &Graph, errors: &mut Vec<Error>) {
    if let Err(e) = reachable(r, graph) {
        errors.push(e);
    }
    let inputs: Vec<String> = graph
        .parameters
        .as_ref()
        .and_then(|p| p.get("properties"))
        .and_then(|p| p.as_object())
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    let mut state: BTreeSet<String> = graph.state.keys().cloned().collect();
    for node in &graph.nodes {
        assigned_keys(node, &mut state);
    }
    for node in &graph.nodes {
        if let Err(e) = check_node(r, node, &state, &inputs, &[]) {
            errors.push(e);
        }
    }
    let hook_names = Names {
        namespaces: CONTEXT_NAMES.to_vec(),
        state: &state,
        inputs: &inputs,
    };
    for hook in &graph.hooks {
        let mut refs = template_refs(&hook.params, &hook.params_path());
        if let Some(w) = &hook.when {
            refs.extend(when_refs(w, &key(&hook.path, "when")));
        }
        if let Err(e) = check_refs(r, &refs, &hook_names, "a hook") {
            errors.push(e);
        }
    }
}

/// The state keys a node writes at the top level.
fn assigned_keys(node: &Node, out: &mut BTreeSet<String>) {
    if let Some(a) = node.body.assign() {
        out.extend(a.keys.iter().cloned());
    }
    if let Body::Foreach(f) = &node.body {
        out.extend(f.collect.iter().cloned());
    }
}

fn reachable(r: &Reader<'_>, graph: &Graph) -> Result<(), Error> {
    let mut seen = vec![false; graph.nodes.len()];
    let mut stack = vec![graph.start];
    if let OnError::Goto(i) = graph.on_error {
        stack.push(i);
    }
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        stack.extend(graph.nodes[i].next.iter().map(|e| e.to));
    }
    match seen.iter().position(|s| !s) {
        None => Ok(()),
        Some(i) => {
            let node = &graph.nodes[i];
            let start = &graph.nodes[graph.start].id;
            Err(r.err_at_key(
                &node.path,
                format!("node `{}` is unreachable from `{start}`", node.id),
                "add an edge to it, or remove it",
            ))
        }
    }
}

/// Checks one node; `extra` holds the names a foreach body adds (element and index).
fn check_node(
    r: &Reader<'_>,
    node: &Node,
    state: &BTreeSet<String>,
    inputs: &[String],
    extra: &[&str],
) -> Result<(), Error> {
    let mut base: Vec<&str> = vec!["state", "inputs", "error"];
    base.extend_from_slice(extra);
    let mut with_result = base.clone();
    with_result.push("result");
    let mut with_run = with_result.clone();
    with_run.push("run");
    let plain = Names {
        namespaces: base.clone(),
        state,
        inputs,
    };
    let after = Names {
        namespaces: match node.body {
            Body::Action(_) => with_run.clone(),
            Body::Foreach(_) | Body::Prompt(_) => with_result.clone(),
            _ => base.clone(),
        },
        state,
        inputs,
    };
    let what = format!("node `{}`", node.id);
    if let Some(a) = node.body.assign() {
        if let Some(t) = &a.template {
            check_refs(
                r,
                &template_refs(t, &key(&node.path, "assign")),
                &after,
                &what,
            )?;
        }
    }
    for (i, edge) in node.next.iter().enumerate() {
        if let Some(w) = &edge.when {
            let at = key(&crate::fields::index(&key(&node.path, "next"), i), "when");
            check_refs(r, &when_refs(w, &at), &after, &what)?;
        }
    }
    match &node.body {
        Body::Action(a) => check_refs(
            r,
            &template_refs(&a.params, &key(&node.path, "params")),
            &plain,
            &what,
        ),
        Body::Gate(_) => Ok(()),
        Body::Prompt(p) => {
            let fields = [Some((&p.key, "key")), Some((&p.feed, "feed"))];
            let optional = [
                p.version.as_ref().map(|t| (t, "version")),
                p.knowledge.as_ref().map(|t| (t, "knowledge")),
            ];
            for (t, k) in fields.into_iter().chain(optional).flatten() {
                check_refs(r, &template_refs(t, &key(&node.path, k)), &plain, &what)?;
            }
            Ok(())
        }
        Body::Return(t) => check_refs(
            r,
            &template_refs(t, &key(&node.path, "output")),
            &plain,
            &what,
        ),
        Body::Foreach(f) => {
            check_refs(
                r,
                &template_refs(&f.over, &key(&node.path, "over")),
                &plain,
                &what,
            )?;
            let index_name = format!("{}_index", f.item);
            let mut inner: Vec<&str> = extra.to_vec();
            inner.push(&f.item);
            inner.push(&index_name);
            let mut local = state.clone();
            for sub in &f.body {
                assigned_keys(sub, &mut local);
            }
            for sub in &f.body {
                check_node(r, sub, &local, inputs, &inner)?;
            }
            if let Some(out) = &f.output {
                let mut namespaces = base.clone();
                namespaces.extend(inner.iter().copied());
                namespaces.push("result");
                let names = Names {
                    namespaces,
                    state: &local,
                    inputs,
                };
                check_refs(
                    r,
                    &template_refs(out, &key(&node.path, "output")),
                    &names,
                    &what,
                )?;
            }
            Ok(())
        }
    }
}

fn as_path(name: &str) -> Option<Path> {
    match parse_expr(name, 0) {
        Ok(Expr::Path(p)) => Some(p),
        _ => None,
    }
}

fn template_refs(t: &Template, base: &FieldPath) -> Vec<Ref> {
    t.references()
        .into_iter()
        .filter(|(_, r)| r.layer == Layer::CONTEXT)
        .filter_map(|(field, reference)| {
            Some(Ref {
                field: field.under(base),
                span: Some(reference.span),
                path: as_path(&reference.name)?,
            })
        })
        .collect()
}

fn when_refs(w: &When, at: &FieldPath) -> Vec<Ref> {
    let source = match w {
        When::Expr { source, .. } => Some(source.as_str()),
        _ => None,
    };
    w.paths()
        .into_iter()
        .map(|path| {
            let shown = path.display();
            let span = source
                .and_then(|s| s.find(&shown))
                .map(|i| Span::new(i, i + shown.len()));
            Ref {
                field: at.clone(),
                span,
                path,
            }
        })
        .collect()
}

fn check_refs(r: &Reader<'_>, refs: &[Ref], names: &Names<'_>, what: &str) -> Result<(), Error> {
    for reference in refs {
        check_ref(r, reference, names, what)?;
    }
    Ok(())
}

fn check_ref(
    r: &Reader<'_>,
    reference: &Ref,
    allowed: &Names<'_>,
    what: &str,
) -> Result<(), Error> {
    let fail = |message: String, hint: String| {
        let e = Error::new(Layer::CONTEXT, ErrorKind::UnknownName, message)
            .with_hint(hint)
            .at_path(&reference.field)
            .with_span(reference.span);
        r.locate(e)
    };
    let Some(Seg::Key(ns)) = reference.path.segs.first() else {
        return Ok(());
    };
    if !allowed.namespaces.contains(&ns.as_str()) {
        let hint = match did_you_mean(ns, allowed.namespaces.iter().copied()) {
            Some(best) => format!("did you mean `{best}`?"),
            None => format!("{what} can read {}", names(&allowed.namespaces)),
        };
        let message = if ns == "result" {
            format!("`result` is not available in {what}: only action and foreach nodes have a result, in their `assign` and `next`")
        } else if ns == "run" {
            format!("`run` is not available in {what}: only action nodes have a run (the tool's process outcome), in their `assign` and `next`")
        } else {
            format!("unknown name `{ns}` in `{}`", reference.path.display())
        };
        return Err(fail(message, hint));
    }
    let Some(Seg::Key(k)) = reference.path.segs.get(1) else {
        return Ok(());
    };
    if ns == "state" && !allowed.state.contains(k) {
        let keys: Vec<&str> = allowed.state.iter().map(String::as_str).collect();
        let hint = match did_you_mean(k, keys.iter().copied()) {
            Some(best) => format!("did you mean `state.{best}`?"),
            None => "initialise it under `state:` or assign it in a node".to_string(),
        };
        return Err(fail(
            format!("state key `{k}` is never initialised nor assigned"),
            hint,
        ));
    }
    if ns == "inputs" && !allowed.inputs.iter().any(|i| i == k) {
        let cands: Vec<&str> = allowed.inputs.iter().map(String::as_str).collect();
        let hint = match did_you_mean(k, cands.iter().copied()) {
            Some(best) => format!("did you mean `inputs.{best}`?"),
            None if cands.is_empty() => "declare it under `parameters.properties`".to_string(),
            None => format!("the inputs are {}", names(&cands)),
        };
        return Err(fail(format!("input `{k}` is not declared"), hint));
    }
    Ok(())
}

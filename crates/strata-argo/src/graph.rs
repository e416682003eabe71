//! A graph as a Workflow.
//!
//! A graph whose nodes form a DAG (its `next` edges, and the edges to its `on_error` node,
//! have no cycle) becomes one task per node, each running `strata walk` on that node with
//! the checkpoint its predecessor left: the walk goes from task to task as the checkpoints a
//! local run writes. Conditions are evaluated by strata in the pod; a task says which node
//! comes next (`next`, a task name), and each task runs only `when` a predecessor named it —
//! the others are Skipped, and their successors Omitted. A foreach node becomes three tasks:
//! its list (`X`), one task per element (`X-each`, `withParam` over the element indexes) and
//! the collection of their outputs (`X-collect`), which takes the walk on.
//!
//! A graph with a loop cannot be a DAG: it becomes one task running `strata run` on the
//! whole graph.

use serde_json::{json, Value};
use strata_core::Error;
use strata_graph::{Body, Graph, Node, OnError};

use crate::manifest::{
    arguments, container, no_tags, outputs, plain_output, secret_env, strata_args, workflow, Input,
    Options, Secrets, Source, TaskFiles,
};
use crate::names::task_names;
use crate::transport::to_json;

/// The entry template of an exported graph.
pub const ENTRY: &str = "strata-graph";

/// The workflow parameter holding the graph's inputs, a JSON object.
pub const INPUTS: &str = "inputs";

/// How a graph was exported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// One task per node (three per foreach).
    Dag,
    /// One task running the whole graph, because of this loop (node ids, the first again at
    /// the end).
    Whole(Vec<String>),
}

/// Every tool a graph calls: its actions (in foreach bodies too) and its hooks.
pub fn tools_of(graph: &Graph) -> Vec<&str> {
    fn walk<'g>(nodes: &'g [Node], out: &mut Vec<&'g str>) {
        for n in nodes {
            match &n.body {
                Body::Action(a) => out.push(&a.tool),
                Body::Foreach(f) => walk(&f.body, out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(&graph.nodes, &mut out);
    out.extend(graph.hooks.iter().map(|h| h.tool.as_str()));
    let mut seen = Vec::new();
    out.retain(|t| {
        let new = !seen.contains(t);
        seen.push(t);
        new
    });
    out
}

/// For each node, the nodes that may come right before it: `next` edges, and the edge from
/// every other node to the `on_error` node.
fn predecessors(graph: &Graph) -> Vec<Vec<usize>> {
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); graph.nodes.len()];
    for (i, node) in graph.nodes.iter().enumerate() {
        let mut targets: Vec<usize> = node.next.iter().map(|e| e.to).collect();
        if let OnError::Goto(h) = graph.on_error {
            if h != i {
                targets.push(h);
            }
        }
        for t in targets {
            if !preds[t].contains(&i) {
                preds[t].push(i);
            }
        }
    }
    preds
}

/// The Workflow running `graph` (read from `source`), and how it was shaped.
pub fn export_graph(
    graph: &Graph,
    source: &Source<'_>,
    options: &Options,
    secrets: &Secrets<'_>,
) -> Result<(Value, Shape), Error> {
    options.check()?;
    if graph.id.contains("{{") {
        return Err(no_tags(format!(
            "graph `{}` holds `{{{{` in its id, which Argo would replace",
            graph.id
        ))
        .with_hint(
            "Argo replaces every `{{…}}` in a manifest and has no escape: rename the graph's file",
        ));
    }
    let mut env_names: Vec<String> = Vec::new();
    for tool in tools_of(graph) {
        for n in (secrets.names)(tool) {
            if !env_names.contains(&n) {
                env_names.push(n);
            }
        }
    }
    let env = secret_env(options, &env_names);
    let preds = predecessors(graph);
    let inputs_parameter = json!({
        "name": INPUTS,
        "description": "the graph's inputs, a JSON object",
        "value": to_json(&Value::Object(options.values.clone())),
    });
    let (templates, shape) = match strata_plans::graph::levels(&preds) {
        Ok(_) => (dag(graph, options, &preds, &env)?, Shape::Dag),
        Err(cycle) => {
            let ids = cycle.iter().map(|&i| graph.nodes[i].id.clone()).collect();
            (whole(graph, options, env), Shape::Whole(ids))
        }
    };
    let manifest = workflow(
        source,
        options,
        ENTRY,
        false,
        vec![inputs_parameter],
        templates,
    );
    Ok((manifest, shape))
}

fn inputs_arg() -> String {
    format!("{{{{workflow.parameters.{INPUTS}}}}}")
}

/// One task running the whole graph with `strata run`.
fn whole(graph: &Graph, options: &Options, env: Vec<Value>) -> Vec<Value> {
    let args = strata_args(
        options,
        &["run", &graph.id],
        TaskFiles::None,
        [
            "--params-json".to_string(),
            inputs_arg(),
            "--run-id".to_string(),
            "{{workflow.name}}".to_string(),
        ],
    );
    vec![
        json!({"name": ENTRY, "dag": {"tasks": [{"name": "run", "template": "run"}]}}),
        json!({"name": "run", "container": container(options, args, env)}),
    ]
}

/// The walk's common arguments for node `node`.
fn walk_args(graph: &Graph, options: &Options, node: &str, part: Option<&str>) -> Vec<String> {
    let part = part.map(|p| ["--part".to_string(), p.to_string()]);
    strata_args(
        options,
        &[
            "walk",
            &graph.id,
            "--node",
            node,
            "--fingerprint",
            &graph.fingerprint,
        ],
        TaskFiles::Dirs { inputs: "--walks" },
        part.into_iter().flatten(),
    )
}

/// The walk and `next` outputs of a task that takes the walk on.
fn walk_outputs() -> Value {
    let mut out = outputs(&[("walk", Some("null"))]);
    if let Some(ps) = out["parameters"].as_array_mut() {
        ps.push(plain_output("next", ""));
    }
    out
}

/// A template from its inputs, container and outputs.
fn template(name: &str, ins: &[Input], extra: Vec<Value>, c: Value, outs: Value) -> Value {
    let mut params: Vec<Value> = extra;
    params.extend(ins.iter().map(Input::template_parameter));
    let mut t = json!({"name": name});
    if let Some(i) = arguments(
        params,
        ins.iter().flat_map(Input::template_artifacts).collect(),
    ) {
        t["inputs"] = i;
    }
    t["container"] = c;
    t["outputs"] = outs;
    t
}

/// A task from its name, template, arguments and conditions.
fn task(name: &str, ins: &[Input], extra: Vec<Value>) -> Value {
    let mut t = json!({"name": name, "template": name});
    let mut params = extra;
    params.extend(ins.iter().map(Input::task_parameter));
    let artifacts = ins.iter().filter_map(Input::task_artifact).collect();
    if let Some(a) = arguments(params, artifacts) {
        t["arguments"] = a;
    }
    t
}

fn dag(
    graph: &Graph,
    options: &Options,
    preds: &[Vec<usize>],
    env: &[Value],
) -> Result<Vec<Value>, Error> {
    let at = |i: usize| graph.nodes[i].path.clone();
    let entry = task_names("node", graph.nodes.iter().map(|n| n.id.as_str()), &[ENTRY])
        .map_err(|(i, e)| e.at_path(&at(i)))?;
    let is_foreach = |i: usize| matches!(graph.nodes[i].body, Body::Foreach(_));
    let exit = |i: usize| match is_foreach(i) {
        true => format!("{}-collect", entry[i]),
        false => entry[i].clone(),
    };
    let (mut all, mut owner) = (Vec::new(), Vec::new());
    for (i, e) in entry.iter().enumerate() {
        all.push(e.clone());
        owner.push(i);
        if is_foreach(i) {
            all.extend([format!("{e}-each"), format!("{e}-collect")]);
            owner.extend([i, i]);
        }
    }
    crate::names::distinct("node task", &all).map_err(|(k, e)| e.at_path(&at(owner[k])))?;
    let mut tasks = Vec::new();
    let mut templates = vec![Value::Null];
    for (i, node) in graph.nodes.iter().enumerate() {
        let walks: Vec<Input> = preds[i]
            .iter()
            .map(|&p| Input {
                file: exit(p),
                from: exit(p),
                output: "walk".into(),
                default: Some("null".into()),
                artifact: true,
            })
            .collect();
        let mut args = walk_args(graph, options, &node.id, is_foreach(i).then_some("items"));
        if i == graph.start {
            args.extend([
                "--start".to_string(),
                "--params-json".into(),
                inputs_arg(),
                "--run-id".into(),
                "{{workflow.name}}".into(),
            ]);
        }
        let outs = if is_foreach(i) {
            let mut o = outputs(&[("walk", Some("null")), ("items", Some("null"))]);
            if let Some(ps) = o["parameters"].as_array_mut() {
                ps.push(plain_output("indexes", "[]"));
            }
            o
        } else {
            walk_outputs()
        };
        let c = container(options, args, env.to_vec());
        let mut t = template(&entry[i], &walks, Vec::new(), c, outs);
        scale_node(&mut t, options, node, false)?;
        templates.push(t);
        let mut t = task(&entry[i], &walks, Vec::new());
        if !preds[i].is_empty() {
            let depends: Vec<String> = preds[i]
                .iter()
                .map(|&p| format!("{}.Succeeded", exit(p)))
                .collect();
            let when: Vec<String> = preds[i]
                .iter()
                .map(|&p| {
                    format!(
                        "'{{{{tasks.{}.outputs.parameters.next}}}}' == '{}'",
                        exit(p),
                        entry[i]
                    )
                })
                .collect();
            t["depends"] = json!(depends.join(" || "));
            t["when"] = json!(when.join(" || "));
        }
        tasks.push(t);
        if is_foreach(i) {
            foreach_tasks(
                graph,
                options,
                node,
                &entry[i],
                env,
                &mut tasks,
                &mut templates,
            )?;
        }
    }
    templates[0] = json!({"name": ENTRY, "dag": {"failFast": false, "tasks": tasks}});
    Ok(templates)
}

/// Adds the `resources` of the tool that template `t` of `node` runs (see
/// [`Node::part_tool`]). Not its `retries`: `strata walk` retries the tool in the pod, before
/// `on_error` sees its failure, as a local walk does; a `retryStrategy` would run the pod,
/// and so the attempts, again.
fn scale_node(t: &mut Value, options: &Options, node: &Node, element: bool) -> Result<(), Error> {
    match node.part_tool(element) {
        Some(tool) => {
            let scale = strata_tools::Scale {
                retries: None,
                ..options.scale(tool)
            };
            crate::scale::apply(t, &scale, &format!("node `{}`", node.id))
                .map_err(|e| e.at_path(&node.path))
        }
        None => Ok(()),
    }
}

/// The element and collection tasks of foreach node `node`, whose list task is `list`.
fn foreach_tasks(
    graph: &Graph,
    options: &Options,
    node: &Node,
    list: &str,
    env: &[Value],
    tasks: &mut Vec<Value>,
    templates: &mut Vec<Value>,
) -> Result<(), Error> {
    let from_list = |file: &str| Input {
        file: file.into(),
        from: list.into(),
        output: file.into(),
        default: None,
        artifact: true,
    };
    let each = format!("{list}-each");
    let ins = [from_list("walk"), from_list("items")];
    let mut args = walk_args(graph, options, &node.id, Some("element"));
    args.extend(["--index".to_string(), "{{inputs.parameters.index}}".into()]);
    let outs = json!({"parameters": [plain_output("element", "null")]});
    let index = json!({"name": "index"});
    let mut element = template(
        &each,
        &ins,
        vec![index],
        container(options, args, env.to_vec()),
        outs,
    );
    scale_node(&mut element, options, node, true)?;
    templates.push(element);
    let mut t = task(
        &each,
        &ins,
        vec![json!({"name": "index", "value": "{{item}}"})],
    );
    t["depends"] = json!(format!("{list}.Succeeded"));
    t["withParam"] = json!(format!("{{{{tasks.{list}.outputs.parameters.indexes}}}}"));
    tasks.push(t);
    let collect = format!("{list}-collect");
    let mut ins = vec![from_list("walk"), from_list("items")];
    ins.push(Input {
        file: "elements".into(),
        from: each.clone(),
        output: "element".into(),
        default: Some("[]".into()),
        artifact: false,
    });
    let args = walk_args(graph, options, &node.id, Some("collect"));
    templates.push(template(
        &collect,
        &ins,
        Vec::new(),
        container(options, args, env.to_vec()),
        walk_outputs(),
    ));
    let mut t = task(&collect, &ins, Vec::new());
    t["depends"] = json!(format!("{each}.Succeeded || {each}.Skipped"));
    tasks.push(t);
    Ok(())
}

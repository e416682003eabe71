//! A step's `resources` and `retries` in a template: the container's resource requests and
//! limits, and the template's `retryStrategy`.
//!
//! | declared | template |
//! |---|---|
//! | `cpus` | `requests.cpu` (`2`, `500m`); no limit, so a step may use idle CPUs |
//! | `memory` | `requests.memory` and `limits.memory` (`512Mi`, or bytes) |
//! | `gpus` | `requests` and `limits` of `nvidia.com/gpu` (a whole number) |
//! | `custom` | `requests` and `limits` of the extended resource (`example.com/ssd`, a whole number) |
//! | `retries` | `retryStrategy: {limit, retryPolicy: OnFailure, backoff: {duration}}` |

use serde_json::{json, Map, Value};
use strata_core::{duration_text, Error, ErrorKind};
use strata_tools::{Resources, Retries, Scale};

use crate::ARGO;

/// The Kubernetes name of a GPU.
pub const GPU: &str = "nvidia.com/gpu";

/// Adds what `scale` declares to `template` (a container template), for `what` (``step `a` ``,
/// ``node `n` ``): the refusal of what Kubernetes cannot take (a fraction of a GPU, a custom
/// resource without a domain).
pub fn apply(template: &mut Value, scale: &Scale, what: &str) -> Result<(), Error> {
    if !scale.resources.is_empty() {
        template["container"]["resources"] = requirements(&scale.resources, what)?;
    }
    if let Some(retries) = &scale.retries {
        template["retryStrategy"] = retry_strategy(retries);
    }
    Ok(())
}

/// `{requests, limits}` of a container.
fn requirements(resources: &Resources, what: &str) -> Result<Value, Error> {
    let mut requests = Map::new();
    let mut limits = Map::new();
    if let Some(cpus) = resources.cpus {
        requests.insert("cpu".into(), json!(cpu_quantity(cpus)));
    }
    if let Some(bytes) = resources.memory {
        let q = json!(memory_quantity(bytes));
        requests.insert("memory".into(), q.clone());
        limits.insert("memory".into(), q);
    }
    let counted = resources.gpus.map(|g| (GPU, "gpus", g)).into_iter().chain(
        resources
            .custom
            .iter()
            .map(|(k, v)| (k.as_str(), k.as_str(), *v)),
    );
    for (name, declared, count) in counted {
        if name != GPU && !name.contains('/') {
            return Err(Error::new(
                ARGO,
                ErrorKind::Invalid,
                format!("{what}: custom resource `{name}` has no domain, which a Kubernetes extended resource needs"),
            )
            .with_hint(format!("name it `example.com/{name}`, as the cluster's nodes advertise it")));
        }
        if count.fract() != 0.0 {
            return Err(Error::new(
                ARGO,
                ErrorKind::Invalid,
                format!("{what}: `{declared}` is {count}, but Kubernetes counts `{name}` in whole units"),
            )
            .with_hint("declare a whole number (Ray alone shares a GPU in fractions)"));
        }
        let q = json!(format!("{}", count as u64));
        requests.insert(name.to_string(), q.clone());
        limits.insert(name.to_string(), q);
    }
    let mut out = Map::new();
    out.insert("requests".into(), Value::Object(requests));
    if !limits.is_empty() {
        out.insert("limits".into(), Value::Object(limits));
    }
    Ok(Value::Object(out))
}

/// CPUs as a Kubernetes quantity: whole CPUs (`2`) or millicores (`500m`, rounded up).
fn cpu_quantity(cpus: f64) -> String {
    if cpus.fract() == 0.0 {
        format!("{}", cpus as u64)
    } else {
        format!("{}m", (cpus * 1000.0).ceil() as u64)
    }
}

/// Bytes as a Kubernetes quantity: in the largest binary unit that divides them exactly
/// (`512Mi`, `2Gi`), else in bytes.
fn memory_quantity(bytes: u64) -> String {
    for (unit, shift) in [("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)] {
        if bytes > 0 && bytes.is_multiple_of(1u64 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// A template's `retryStrategy`: retried when its container fails (the tool failed), at
/// most `limit` times, `delay` apart.
fn retry_strategy(retries: &Retries) -> Value {
    let mut out = json!({"limit": retries.limit.to_string(), "retryPolicy": "OnFailure"});
    if let Some(delay) = retries.delay {
        out["backoff"] = json!({"duration": duration_text(delay)});
    }
    out
}

#[cfg(test)]
mod tests {
    use strata_core::Layer;

    use super::*;

    fn scale(resources: Value, retries: Option<Value>) -> Scale {
        Scale::read(Some(&resources), retries.as_ref(), Layer::REQUEST).unwrap()
    }

    #[test]
    fn quantities_are_what_kubernetes_reads() {
        assert_eq!(cpu_quantity(2.0), "2");
        assert_eq!(cpu_quantity(0.25), "250m");
        assert_eq!(memory_quantity(512 << 20), "512Mi");
        assert_eq!(memory_quantity(3 << 30), "3Gi");
        assert_eq!(memory_quantity(1_500_000_000), "1500000000");
    }

    #[test]
    fn a_template_gets_requests_limits_and_a_retry_strategy() {
        let mut t = json!({"name": "a", "container": {"image": "i"}});
        let s = scale(
            json!({"cpus": 1.5, "gpus": 1, "memory": "2Gi", "custom": {"example.com/ssd": 2}}),
            Some(json!({"limit": 3, "delay": "1500ms"})),
        );
        apply(&mut t, &s, "step `a`").unwrap();
        assert_eq!(
            t,
            json!({
                "name": "a",
                "container": {"image": "i", "resources": {
                    "requests": {"cpu": "1500m", "memory": "2Gi", "nvidia.com/gpu": "1", "example.com/ssd": "2"},
                    "limits": {"memory": "2Gi", "nvidia.com/gpu": "1", "example.com/ssd": "2"}
                }},
                "retryStrategy": {"limit": "3", "retryPolicy": "OnFailure", "backoff": {"duration": "1.5s"}}
            })
        );
    }

    #[test]
    fn what_kubernetes_cannot_take_is_refused() {
        let mut t = json!({"container": {}});
        let e = apply(&mut t, &scale(json!({"gpus": 0.5}), None), "step `a`").unwrap_err();
        assert_eq!(
            e.to_string(),
            "argo error at $: step `a`: `gpus` is 0.5, but Kubernetes counts `nvidia.com/gpu` in whole units (hint: declare a whole number (Ray alone shares a GPU in fractions))"
        );
        let e = apply(
            &mut t,
            &scale(json!({"custom": {"ssd": 1}}), None),
            "node `n`",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "argo error at $: node `n`: custom resource `ssd` has no domain, which a Kubernetes extended resource needs (hint: name it `example.com/ssd`, as the cluster's nodes advertise it)"
        );
    }
}

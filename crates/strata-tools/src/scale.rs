//! What a step needs to run at scale: `resources:` (cpus, gpus, memory, custom resources)
//! and `retries:` (how often a failed tool is run again, and after how long), declared on a
//! tool file or a plan step. A step's declaration overrides its tool's key by key
//! ([`Scale::over`]).
//!
//! The readers return errors whose field path is relative to the declaration (`cpus`,
//! `custom.ssd`); the caller puts them under where the declaration stands.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Map, Number, Value};
use strata_core::{did_you_mean, shown, Error, ErrorKind, FieldPath, Layer, PathSeg};

/// The keys of a `resources:` declaration.
pub const RESOURCE_KEYS: [&str; 4] = ["cpus", "gpus", "memory", "custom"];

/// The keys of a `retries:` declaration.
pub const RETRY_KEYS: [&str; 2] = ["limit", "delay"];

/// The most retries a declaration may ask for.
pub const MAX_RETRIES: u64 = 100;

/// The longest delay between two attempts.
pub const MAX_DELAY: Duration = Duration::from_secs(3_600);

/// The size forms, for messages.
const SIZE_FORMS: &str = "a size is a number of bytes, or a number and a unit: k, M, G, T (powers of 1000) or Ki, Mi, Gi, Ti (powers of 1024), e.g. 512Mi, 2Gi";

/// The size units, each with its multiplier.
const SIZE_UNITS: [(&str, u64); 8] = [
    ("k", 1_000),
    ("M", 1_000_000),
    ("G", 1_000_000_000),
    ("T", 1_000_000_000_000),
    ("Ki", 1 << 10),
    ("Mi", 1 << 20),
    ("Gi", 1 << 30),
    ("Ti", 1 << 40),
];

/// The resource names that are not custom (Ray's own and Kubernetes').
const RESERVED: [&str; 6] = [
    "CPU",
    "GPU",
    "memory",
    "cpu",
    "nvidia.com/gpu",
    "object_store_memory",
];

/// What one step needs from the machine that runs it; every field is optional.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resources {
    /// CPUs (fractions allowed).
    pub cpus: Option<f64>,
    /// GPUs (fractions allowed where the scheduler shares GPUs, as Ray does).
    pub gpus: Option<f64>,
    /// Memory in bytes.
    pub memory: Option<u64>,
    /// Custom resources by name (Ray's `resources`, Kubernetes' extended resources).
    pub custom: BTreeMap<String, f64>,
}

impl Resources {
    /// True when nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.cpus.is_none()
            && self.gpus.is_none()
            && self.memory.is_none()
            && self.custom.is_empty()
    }

    /// `self` over `base`, key by key (custom resources by name).
    pub fn over(&self, base: &Resources) -> Resources {
        let mut custom = base.custom.clone();
        custom.extend(self.custom.iter().map(|(k, v)| (k.clone(), *v)));
        Resources {
            cpus: self.cpus.or(base.cpus),
            gpus: self.gpus.or(base.gpus),
            memory: self.memory.or(base.memory),
            custom,
        }
    }

    /// The request form executors read: `{num_cpus?, num_gpus?, memory? (bytes), custom?}`.
    pub fn to_request(&self) -> Value {
        let mut out = Map::new();
        let mut put = |key: &str, value: Option<f64>| {
            if let Some(n) = value.and_then(Number::from_f64) {
                out.insert(key.to_string(), Value::Number(n));
            }
        };
        put("num_cpus", self.cpus);
        put("num_gpus", self.gpus);
        if let Some(memory) = self.memory {
            out.insert("memory".into(), json!(memory));
        }
        if !self.custom.is_empty() {
            let custom: Map<String, Value> = self
                .custom
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), Value::Number(Number::from_f64(*v)?))))
                .collect();
            out.insert("custom".into(), Value::Object(custom));
        }
        Value::Object(out)
    }
}

/// How a step whose tool fails is run again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retries {
    /// The most retries after the first attempt.
    pub limit: u32,
    /// The wait before each retry, when declared.
    pub delay: Option<Duration>,
}

impl Retries {
    /// `self` over `base`, key by key.
    pub fn over(&self, base: &Retries) -> Retries {
        Retries {
            limit: self.limit,
            delay: self.delay.or(base.delay),
        }
    }

    /// After attempt `attempt` (1 for the first run) failed in its tool: the wait before
    /// the next attempt, or `None` when no attempt is left. The one retry decision of every
    /// place a tool runs again (a plan's steps, here or elsewhere; a graph's actions).
    pub fn again(&self, attempt: u32) -> Option<Duration> {
        (attempt <= self.limit).then(|| self.delay.unwrap_or_default())
    }

    /// Notes in a record's `run` how many attempts its tool took (`attempts`) and the policy
    /// (`retries`, in request form), as every record of a tool with declared retries says.
    pub fn note(&self, run: &mut Map<String, Value>, attempts: u32) {
        run.insert("attempts".into(), Value::from(attempts));
        run.insert("retries".into(), self.to_request());
    }

    /// The request form executors read: `{limit, delay_ms?}`.
    pub fn to_request(&self) -> Value {
        let mut out = Map::new();
        out.insert("limit".into(), json!(self.limit));
        if let Some(delay) = self.delay {
            out.insert("delay_ms".into(), json!(delay.as_millis() as u64));
        }
        Value::Object(out)
    }
}

/// The `resources:` and `retries:` of a tool or a step.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scale {
    /// What the step needs.
    pub resources: Resources,
    /// How it is retried, when declared.
    pub retries: Option<Retries>,
}

impl Scale {
    /// Reads the `resources` and `retries` values of a tool file or a step, each when given
    /// (and not null). Errors are located relative to the map that holds them.
    pub fn read(
        resources: Option<&Value>,
        retries: Option<&Value>,
        layer: Layer,
    ) -> Result<Scale, Error> {
        let under = |key: &str| {
            let at = FieldPath::default().child(PathSeg::Key(key.to_string()));
            move |e: Error| e.map_path(|p| p.under(&at))
        };
        let resources = match resources {
            None | Some(Value::Null) => Resources::default(),
            Some(v) => read_resources(v, layer).map_err(under("resources"))?,
        };
        let retries = match retries {
            None | Some(Value::Null) => None,
            Some(v) => Some(read_retries(v, layer).map_err(under("retries"))?),
        };
        Ok(Scale { resources, retries })
    }

    /// True when nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.retries.is_none()
    }

    /// `self` (a step's) over `base` (its tool's), key by key.
    pub fn over(&self, base: &Scale) -> Scale {
        Scale {
            resources: self.resources.over(&base.resources),
            retries: match (&self.retries, &base.retries) {
                (Some(own), Some(base)) => Some(own.over(base)),
                (own, base) => own.or(*base),
            },
        }
    }

    /// Adds `resources` and `retries` to an executor's request, each only when declared.
    pub fn add_to_request(&self, request: &mut Map<String, Value>) {
        if !self.resources.is_empty() {
            request.insert("resources".into(), self.resources.to_request());
        }
        if let Some(retries) = &self.retries {
            request.insert("retries".into(), retries.to_request());
        }
    }
}

fn key(k: &str) -> FieldPath {
    FieldPath::default().child(PathSeg::Key(k.to_string()))
}

fn invalid(layer: Layer, message: String, path: FieldPath) -> Error {
    Error::new(layer, ErrorKind::Invalid, message).with_path(path)
}

/// The JSON type name of `value`, with an article (`a string`).
fn a_type(value: &Value) -> String {
    crate::a_or_an(crate::type_name(value))
}

/// The unknown-key error of a declaration, with a did-you-mean.
fn unknown_key(layer: Layer, what: &str, k: &str, keys: &[&str]) -> Error {
    let hint = match did_you_mean(k, keys) {
        Some(best) => format!("did you mean `{best}`?"),
        None => format!("`{what}` has {}", keys.join(", ")),
    };
    invalid(layer, format!("unknown key `{k}` in `{what}`"), key(k))
        .with_kind(ErrorKind::UnknownName)
        .with_hint(hint)
}

fn map_of<'v>(
    value: &'v Value,
    what: &str,
    keys: &[&str],
    layer: Layer,
) -> Result<&'v Map<String, Value>, Error> {
    let map = value.as_object().ok_or_else(|| {
        invalid(
            layer,
            format!("`{what}` must be a map, not {}", a_type(value)),
            FieldPath::default(),
        )
        .with_hint(format!("`{what}` has {}", keys.join(", ")))
    })?;
    match map.keys().find(|k| !keys.contains(&k.as_str())) {
        Some(k) => Err(unknown_key(layer, what, k, keys)),
        None => Ok(map),
    }
}

/// A count of resources: a number at least 0.
fn count(value: &Value, name: &str, path: FieldPath, layer: Layer) -> Result<f64, Error> {
    match value.as_f64() {
        Some(n) if n >= 0.0 && n.is_finite() => Ok(n),
        Some(n) => Err(invalid(
            layer,
            format!("`{name}` must be at least 0, not {n}"),
            path,
        )),
        None => Err(invalid(
            layer,
            format!("`{name}` must be a number, not {}", a_type(value)),
            path,
        )),
    }
}

/// Reads a `resources:` declaration.
pub fn read_resources(value: &Value, layer: Layer) -> Result<Resources, Error> {
    let map = map_of(value, "resources", &RESOURCE_KEYS, layer)?;
    let mut out = Resources::default();
    if let Some(v) = map.get("cpus") {
        out.cpus = Some(count(v, "cpus", key("cpus"), layer)?);
    }
    if let Some(v) = map.get("gpus") {
        out.gpus = Some(count(v, "gpus", key("gpus"), layer)?);
    }
    if let Some(v) = map.get("memory") {
        out.memory =
            Some(size(v).map_err(|m| invalid(layer, m, key("memory")).with_hint(SIZE_FORMS))?);
    }
    if let Some(v) = map.get("custom") {
        let custom = v.as_object().ok_or_else(|| {
            invalid(
                layer,
                format!(
                    "`custom` must be a map of names to numbers, not {}",
                    a_type(v)
                ),
                key("custom"),
            )
            .with_hint("e.g. custom: {example.com/ssd: 1}")
        })?;
        for (name, n) in custom {
            let at = key("custom").child(PathSeg::Key(name.clone()));
            if let Some(problem) = custom_name_problem(name) {
                return Err(invalid(layer, problem, at)
                    .with_hint("cpus, gpus and memory have keys of their own"));
            }
            out.custom.insert(name.clone(), count(n, name, at, layer)?);
        }
    }
    Ok(out)
}

/// Why `name` cannot be a custom resource, if it cannot.
fn custom_name_problem(name: &str) -> Option<String> {
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/');
    if name.is_empty() || !name.chars().all(ok) {
        return Some(format!(
            "`{}` is not a resource name: letters, digits, `-`, `_`, `.` and `/`",
            shown(name)
        ));
    }
    RESERVED
        .contains(&name)
        .then(|| format!("`{name}` is not a custom resource"))
}

/// Reads a size: a whole number of bytes, or a number and a unit (`512Mi`, `2Gi`, `1.5G`).
pub fn size(value: &Value) -> Result<u64, String> {
    match value {
        Value::Number(n) => n
            .as_u64()
            .ok_or_else(|| format!("`memory` must be a whole number of bytes at least 0, not {n}")),
        Value::String(text) => size_text(text.trim()),
        other => Err(format!("`memory` must be a size, not {}", a_type(other))),
    }
}

fn size_text(text: &str) -> Result<u64, String> {
    let end = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(end);
    let not = || format!("`{}` is not a size", shown(text));
    let scale = if unit.is_empty() {
        1
    } else {
        SIZE_UNITS
            .iter()
            .find(|(name, _)| *name == unit)
            .map(|(_, scale)| *scale)
            .ok_or_else(|| {
                if number.is_empty() {
                    not()
                } else {
                    format!("unknown size unit `{}` in `{}`", shown(unit), shown(text))
                }
            })?
    };
    let value: f64 = number.parse().map_err(|_| not())?;
    let bytes = value * scale as f64;
    if bytes.fract() != 0.0 {
        return Err(format!("`{}` is not a whole number of bytes", shown(text)));
    }
    if bytes >= u64::MAX as f64 {
        return Err(format!("`{}` is too large", shown(text)));
    }
    Ok(bytes as u64)
}

/// Reads a `retries:` declaration.
pub fn read_retries(value: &Value, layer: Layer) -> Result<Retries, Error> {
    let map = map_of(value, "retries", &RETRY_KEYS, layer)?;
    let limit = match map.get("limit") {
        None => {
            return Err(invalid(
                layer,
                "`retries` needs `limit`, the most retries after the first attempt".into(),
                FieldPath::default(),
            )
            .with_hint("e.g. retries: {limit: 3, delay: 2s}"))
        }
        Some(v) => match v.as_u64() {
            Some(n) if n <= MAX_RETRIES => n as u32,
            _ => {
                return Err(invalid(
                    layer,
                    format!("`limit` must be a whole number from 0 to {MAX_RETRIES}, not {v}"),
                    key("limit"),
                ))
            }
        },
    };
    let delay = match map.get("delay") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => {
            let d =
                strata_core::parse_duration(text).map_err(|m| invalid(layer, m, key("delay")))?;
            if d > MAX_DELAY {
                return Err(invalid(
                    layer,
                    format!("`delay` must be at most 1h, not `{}`", shown(text)),
                    key("delay"),
                ));
            }
            Some(d)
        }
        Some(v) => {
            return Err(invalid(
                layer,
                format!("`delay` must be a duration such as `2s`, not {}", a_type(v)),
                key("delay"),
            ))
        }
    };
    Ok(Retries { limit, delay })
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: Layer = Layer::REQUEST;

    fn err(resources: Value) -> (String, String, Option<String>) {
        let e = read_resources(&resources, L).unwrap_err();
        (
            e.message().to_string(),
            e.path().to_string(),
            e.hint().map(str::to_string),
        )
    }

    #[test]
    fn sizes_are_bytes_or_a_number_and_a_unit() {
        let s = |v: Value| size(&v);
        assert_eq!(s(json!("512Mi")), Ok(512 << 20));
        assert_eq!(s(json!("2Gi")), Ok(2 << 30));
        assert_eq!(s(json!("1.5G")), Ok(1_500_000_000));
        assert_eq!(s(json!("100")), Ok(100));
        assert_eq!(s(json!(4096)), Ok(4096));
        assert_eq!(
            s(json!("2GB")),
            Err("unknown size unit `GB` in `2GB`".into())
        );
        assert_eq!(s(json!("Gi")), Err("`Gi` is not a size".into()));
        assert_eq!(
            s(json!("0.5")),
            Err("`0.5` is not a whole number of bytes".into())
        );
        assert_eq!(
            s(json!(-1)),
            Err("`memory` must be a whole number of bytes at least 0, not -1".into())
        );
    }

    #[test]
    fn resources_are_read_and_checked() {
        let r = read_resources(
            &json!({"cpus": 2, "gpus": 0.5, "memory": "1Gi", "custom": {"example.com/ssd": 1}}),
            L,
        )
        .unwrap();
        assert_eq!(r.cpus, Some(2.0));
        assert_eq!(r.gpus, Some(0.5));
        assert_eq!(r.memory, Some(1 << 30));
        assert_eq!(r.custom["example.com/ssd"], 1.0);
        assert_eq!(
            err(json!({"cpus": -1})),
            (
                "`cpus` must be at least 0, not -1".into(),
                "cpus".into(),
                None
            )
        );
        assert_eq!(
            err(json!({"cpu": 1})),
            (
                "unknown key `cpu` in `resources`".into(),
                "cpu".into(),
                Some("did you mean `cpus`?".into())
            )
        );
        assert_eq!(
            err(json!({"gpus": "one"})).0,
            "`gpus` must be a number, not a string"
        );
        assert_eq!(
            err(json!({"custom": {"GPU": 1}})),
            (
                "`GPU` is not a custom resource".into(),
                "custom.GPU".into(),
                Some("cpus, gpus and memory have keys of their own".into())
            )
        );
        assert_eq!(err(json!(3)).0, "`resources` must be a map, not an integer");
    }

    #[test]
    fn retries_are_read_and_checked() {
        let r = read_retries(&json!({"limit": 3, "delay": "1.5s"}), L).unwrap();
        assert_eq!(
            r,
            Retries {
                limit: 3,
                delay: Some(Duration::from_millis(1500))
            }
        );
        let e = read_retries(&json!({"delay": "1s"}), L).unwrap_err();
        assert_eq!(
            e.message(),
            "`retries` needs `limit`, the most retries after the first attempt"
        );
        let e = read_retries(&json!({"limit": -2}), L).unwrap_err();
        assert_eq!(
            e.message(),
            "`limit` must be a whole number from 0 to 100, not -2"
        );
        let e = read_retries(&json!({"limit": 1, "delay": "2x"}), L).unwrap_err();
        assert_eq!(e.path().to_string(), "delay");
        assert!(
            e.message().starts_with("`2x` is not a duration"),
            "{}",
            e.message()
        );
        let e = read_retries(&json!({"limit": 1, "dely": "2s"}), L).unwrap_err();
        assert_eq!(e.hint(), Some("did you mean `delay`?"));
    }

    #[test]
    fn a_step_overrides_its_tool_key_by_key_and_requests_hold_only_what_is_declared() {
        let tool = Scale::read(
            Some(&json!({"cpus": 1, "memory": "1Ki", "custom": {"a": 1, "b": 2}})),
            Some(&json!({"limit": 2, "delay": "1s"})),
            L,
        )
        .unwrap();
        let step = Scale::read(
            Some(&json!({"cpus": 4, "custom": {"b": 3}})),
            Some(&json!({"limit": 5})),
            L,
        )
        .unwrap();
        let mut request = Map::new();
        step.over(&tool).add_to_request(&mut request);
        assert_eq!(
            Value::Object(request),
            json!({
                "resources": {"num_cpus": 4.0, "memory": 1024, "custom": {"a": 1.0, "b": 3.0}},
                "retries": {"limit": 5, "delay_ms": 1000}
            })
        );
        let mut request = Map::new();
        Scale::default().add_to_request(&mut request);
        assert!(request.is_empty());
        let e = Scale::read(None, Some(&json!({"limit": "x"})), L).unwrap_err();
        assert_eq!(e.path().to_string(), "retries.limit");
    }
}

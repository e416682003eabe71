//! Binding a run's inputs: `--input k=v` strings typed by the graph's `parameters` schema,
//! then validated with defaults applied (the same rules as a tool's parameters).

use serde_json::{Map, Value};
use strata_core::Error;

use crate::model::Graph;

impl Graph {
    /// The inputs of a run: `typed` values, then `name=value` strings typed by the schema
    /// (they win), validated and completed with defaults.
    pub fn bind_inputs(
        &self,
        typed: &Map<String, Value>,
        strings: &[(String, String)],
    ) -> Result<Map<String, Value>, Error> {
        let schema = self.parameters.as_ref();
        let mut given = typed.clone();
        for (name, raw) in strings {
            let input = strata_tools::coerce_given(schema, name, raw, &strata_tools::Given::INPUT)?;
            given.insert(name.clone(), input);
        }
        strata_tools::validate(&self.id, schema, &given)
    }
}

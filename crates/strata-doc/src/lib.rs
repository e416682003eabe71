//! Documents: YAML and JSON text read into JSON values with clear errors (invalid UTF-8,
//! syntax errors with line and column, alias bombs), `.env` files, and a locator that finds
//! the line and column of a field path when an error needs one.

mod bounded;
mod build;
mod depth;
mod document;
mod dotenv;
mod files;
mod indent;
mod json_read;
mod locate;
mod request_id;
mod typed;
mod yaml_read;
mod yaml_write;

pub use bounded::{has_duplicates, Budget};
pub use build::{replay, Build, Values};
pub use document::{malformed_request, Document, Format};
pub use dotenv::parse_dotenv;
pub use files::{confine, confine_in, read_bounded, read_file, read_text, walk};
pub use json_read::{json_value, read_json, Bounded};
pub use locate::{locate, Lines, Positions};
pub use request_id::request_id;
pub use typed::TypedError;
pub use yaml_write::{to_yaml, to_yaml_entry};

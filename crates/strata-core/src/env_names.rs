//! Environment variable names: the rule that decides which `${…}` belongs to layer E (shared
//! by layers E and C), and what a usable variable name is.

/// True for a usable environment variable name: `[A-Za-z_][A-Za-z0-9_]*` (tool files,
/// `--env`, `--secret`).
pub fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The length of the environment variable name (`[A-Z_][A-Z0-9_]*`) at the start of `bytes`
/// (0 when there is none).
pub fn env_name_len(bytes: &[u8]) -> usize {
    match bytes.first() {
        Some(&b) if b.is_ascii_uppercase() || b == b'_' => {
            1 + bytes[1..]
                .iter()
                .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || **b == b'_')
                .count()
        }
        _ => 0,
    }
}

/// The length of the Compose operator (`:-`, `-`, `:?`, `?`, `:+`, `+`) at the start of
/// `bytes`, if one is there.
pub fn env_operator_len(bytes: &[u8]) -> Option<usize> {
    match bytes {
        [b':', b'-' | b'?' | b'+', ..] => Some(2),
        [b'-' | b'?' | b'+', ..] => Some(1),
        _ => None,
    }
}

/// True when the text after `${` belongs to layer E: a name followed by `}`, an operator, or
/// the end of the text (an unclosed `${NAME`, which layer E reports).
pub fn env_owns(after_open: &[u8]) -> bool {
    let n = env_name_len(after_open);
    n > 0
        && (n == after_open.len()
            || after_open[n] == b'}'
            || env_operator_len(&after_open[n..]).is_some())
}

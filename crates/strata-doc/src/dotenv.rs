use strata_core::{Error, ErrorKind, Layer, Location};

/// Parses a `.env` file: `NAME=value` lines, optional `export `, `#` comments, values in
/// single quotes (taken as they are) or double quotes (with `\n`, `\t`, `\"` and `\\`
/// escapes). Values are never expanded: they are data.
pub fn parse_dotenv(name: &str, text: &str) -> Result<Vec<(String, String)>, Error> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
        let fail = |message: &str| {
            Error::new(Layer::REQUEST, ErrorKind::Syntax, message.to_string())
                .with_hint("write NAME=value, one per line")
                .at_location(Location {
                    file: name.to_string(),
                    line: i + 1,
                    column: 1,
                })
        };
        let Some((key, value)) = line.split_once('=') else {
            return Err(fail("expected NAME=value"));
        };
        let key = key.trim();
        if strata_core::syntax::env_name_len(key.as_bytes()) != key.len() || key.is_empty() {
            return Err(fail(&format!("`{key}` is not a valid variable name")));
        }
        out.push((
            key.to_string(),
            unquote(value.trim()).ok_or_else(|| fail("unterminated quote"))?,
        ));
    }
    Ok(out)
}

fn unquote(v: &str) -> Option<String> {
    if let Some(rest) = v.strip_prefix('\'') {
        return rest.strip_suffix('\'').map(str::to_string);
    }
    let Some(rest) = v.strip_prefix('"') else {
        let end = v.find(" #").unwrap_or(v.len());
        return Some(v[..end].trim_end().to_string());
    };
    let body = rest.strip_suffix('"')?;
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_names_values_quotes_and_comments() {
        let text = "# c\nA=1\nexport B = two words # note\nC='${NOT} expanded'\nD=\"x\\ny\"\nE=\n";
        let got = parse_dotenv(".env", text).unwrap();
        let want = [
            ("A", "1"),
            ("B", "two words"),
            ("C", "${NOT} expanded"),
            ("D", "x\ny"),
            ("E", ""),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn rejects_bad_lines_with_their_line_number() {
        let e = parse_dotenv(".env", "A=1\nlower=2\n").unwrap_err();
        assert_eq!(e.message(), "`lower` is not a valid variable name");
        assert_eq!(e.location().map(|l| l.line), Some(2));
    }
}

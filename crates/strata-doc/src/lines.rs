//! Serving a JSON Lines protocol: one reply per request line, replies written out each time
//! the requests read so far are all answered — a client that sends one line and waits gets
//! its reply at once, and a stream of requests costs one write per read, not one per reply.

use std::io::{self, BufReader, Read, Write};

/// A request line as the server meets it.
pub enum Line<'a> {
    /// The line's bytes, without its line end (not necessarily UTF-8).
    Bytes(&'a [u8]),
    /// A line longer than the limit: read and dropped, never held.
    TooLong,
}

/// Bytes read from the input at a time.
const INPUT_BUFFER: usize = 64 << 10;

/// Replies held back at most before they are written even though requests are waiting.
const OUTPUT_BUFFER: usize = 64 << 10;

/// Serves `input` until it ends: `answer` appends the reply to each line that is not empty
/// (a line of zero bytes, or a lone `\r`, is skipped), ending it with `\n`; lines longer than
/// `max_line` bytes reach it as [`Line::TooLong`]. Fails only when reading or writing fails.
pub fn serve_lines(
    input: impl Read,
    mut output: impl Write,
    max_line: usize,
    mut answer: impl FnMut(Line<'_>, &mut Vec<u8>),
) -> io::Result<()> {
    let mut input = BufReader::with_capacity(INPUT_BUFFER, input);
    let mut line = Vec::new();
    let mut replies = Vec::new();
    while let Some(fits) = crate::read_line(&mut input, max_line, &mut line)? {
        if !fits {
            answer(Line::TooLong, &mut replies);
        } else if !line.is_empty() {
            answer(Line::Bytes(&line), &mut replies);
        }
        if input.buffer().is_empty() || replies.len() >= OUTPUT_BUFFER {
            output.write_all(&replies)?;
            output.flush()?;
            replies.clear();
        }
    }
    output.write_all(&replies)?;
    output.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_gets_a_reply_and_long_lines_are_dropped() {
        let input = "one\n\n\r\n".to_string() + &"x".repeat(50) + "\ntwo";
        let mut out = Vec::new();
        serve_lines(input.as_bytes(), &mut out, 10, |line, replies| {
            let text = match line {
                Line::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
                Line::TooLong => "too long".into(),
            };
            replies.extend_from_slice(format!("<{text}>\n").as_bytes());
        })
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "<one>\n<too long>\n<two>\n"
        );
    }
}

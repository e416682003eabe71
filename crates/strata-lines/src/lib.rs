//! The JSON Lines server under strata's batch front-ends (`render --batch`, `plan resolve
//! --batch`). Serving a JSON Lines protocol: one reply per request line, replies written out each time
//! the requests read so far are all answered — a client that sends one line and waits gets
//! its reply at once, and a stream of requests costs one write per run of lines read
//! together, not one per reply. [`serve_lines_parallel`] shares each run among threads.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::ops::Range;
use std::sync::mpsc;

/// A request line as the server meets it.
pub enum Line<'a> {
    /// The line's bytes, without its line end (not necessarily UTF-8).
    Bytes(&'a [u8]),
    /// A line longer than the limit: read and dropped, never held.
    TooLong,
}

/// Bytes read from the input at a time.
const INPUT_BUFFER: usize = 1 << 20;

/// Bytes of request lines answered together at most (but for one longer line): the lines
/// waiting beyond are answered next.
const BLOCK_BYTES: usize = 1 << 20;

/// Serves `input` until it ends: `answer` appends the reply to each line that is not empty
/// (a line of zero bytes, or a lone `\r`, is skipped), ending it with `\n`; lines longer than
/// `max_line` bytes reach it as [`Line::TooLong`]. Fails only when reading or writing fails.
pub fn serve_lines(
    input: impl Read,
    output: impl Write,
    max_line: usize,
    mut answer: impl FnMut(Line<'_>, &mut Vec<u8>),
) -> io::Result<()> {
    serve_blocks(input, output, max_line, 1, |blocks| {
        for block in blocks {
            block.answer(&mut answer);
        }
    })
}

/// Serves `input` as [`serve_lines`] does, on up to `workers` threads: the lines already
/// waiting in the input are split into as many runs, each answered on its own thread by an
/// answerer `answerer` made for that thread, and the replies are written in the order of the
/// lines. A few lines waiting (a client that sends one and waits) are answered on the
/// calling thread.
pub fn serve_lines_parallel<A>(
    input: impl Read,
    output: impl Write,
    max_line: usize,
    workers: usize,
    answerer: impl Fn() -> A + Sync,
) -> io::Result<()>
where
    A: FnMut(Line<'_>, &mut Vec<u8>),
{
    if workers <= 1 {
        return serve_lines(input, output, max_line, answerer());
    }
    std::thread::scope(|scope| {
        // The threads are started when lines first wait together (a client that sends one
        // line at a time never starts one); a thread that cannot be started leaves its
        // share to the calling thread.
        let mut pool: Option<Vec<Worker>> = None;
        let mut answer = answerer();
        let mut lent = vec![false; workers - 1];
        serve_blocks(input, output, max_line, workers, |blocks| {
            let Some((mine, theirs)) = blocks.split_first_mut() else {
                return;
            };
            let shared = theirs.iter().any(|block| !block.lines.is_empty());
            let pool = match &pool {
                Some(pool) => pool,
                None if !shared => &Vec::new(),
                None => pool.insert(
                    (1..workers)
                        .filter_map(|_| Worker::spawn(scope, &answerer))
                        .collect(),
                ),
            };
            for (k, (block, lent)) in theirs.iter_mut().zip(&mut lent).enumerate() {
                *lent = !block.lines.is_empty() && pool.get(k).is_some_and(|w| w.lend(block));
                if !*lent {
                    block.answer(&mut answer);
                }
            }
            mine.answer(&mut answer);
            for (k, (block, lent)) in theirs.iter_mut().zip(&lent).enumerate() {
                if *lent {
                    pool[k].take_back(block);
                }
            }
        })
    })
}

/// The most threads a server answers lines on.
pub const MAX_SERVING_THREADS: usize = 4;

/// The threads a server answers lines on: as many as the process may use at once (its CPU
/// affinity and quota), at most [`MAX_SERVING_THREADS`].
pub fn serving_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_SERVING_THREADS))
}

/// Lines waiting in the input fewer than this are answered on the calling thread.
const PARALLEL_BELOW: usize = 32;

/// A run of request lines answered together: their bytes one after the other, where each
/// stands (`None` for a line longer than the limit, which is not kept), and their replies.
#[derive(Default)]
struct Block {
    bytes: Vec<u8>,
    lines: Vec<Option<Range<usize>>>,
    replies: Vec<u8>,
}

impl Block {
    /// Reads the next line of `input` onto the block (a line that is empty is read and not
    /// kept); `false` at the end of the input.
    fn read_line(&mut self, input: &mut impl BufRead, max_line: usize) -> io::Result<bool> {
        let start = self.bytes.len();
        match read_line_onto(input, max_line, &mut self.bytes)? {
            None => return Ok(false),
            Some(false) => self.lines.push(None),
            Some(true) if self.bytes.len() > start => {
                self.lines.push(Some(start..self.bytes.len()));
            }
            Some(true) => {}
        }
        Ok(true)
    }

    /// Appends the reply to each line to the block's replies, in order.
    fn answer(&mut self, answer: &mut impl FnMut(Line<'_>, &mut Vec<u8>)) {
        for line in &self.lines {
            match line {
                Some(range) => answer(Line::Bytes(&self.bytes[range.clone()]), &mut self.replies),
                None => answer(Line::TooLong, &mut self.replies),
            }
        }
    }

    /// Moves the lines from the `from`th on into `other` (empty).
    fn split_into(&mut self, from: usize, other: &mut Block) {
        let start = self.lines[from..]
            .iter()
            .flatten()
            .next()
            .map_or(self.bytes.len(), |r| r.start);
        other.bytes.extend_from_slice(&self.bytes[start..]);
        other.lines.extend(
            self.lines
                .drain(from..)
                .map(|r| r.map(|r| r.start - start..r.end - start)),
        );
        self.bytes.truncate(start);
    }

    /// Empties the block, keeping its room unless a long line made it large.
    fn clear(&mut self) {
        self.bytes.clear();
        self.lines.clear();
        self.replies.clear();
        self.bytes.shrink_to(2 * BLOCK_BYTES);
        self.replies.shrink_to(2 * BLOCK_BYTES);
    }
}

/// A thread answering blocks lent to it, with its own answerer.
struct Worker {
    jobs: mpsc::Sender<Block>,
    done: mpsc::Receiver<Block>,
}

impl Worker {
    /// A thread with the stack every thread of strata has ([`strata_core::STACK_BYTES`]):
    /// a request renders there as deep as on the calling thread. `None` when the system
    /// cannot start one.
    fn spawn<'s, A>(
        scope: &'s std::thread::Scope<'s, '_>,
        answerer: &'s (impl Fn() -> A + Sync),
    ) -> Option<Worker>
    where
        A: FnMut(Line<'_>, &mut Vec<u8>),
    {
        let (jobs, inbox) = mpsc::channel::<Block>();
        let (outbox, done) = mpsc::channel::<Block>();
        std::thread::Builder::new()
            .name("strata-serve".into())
            .stack_size(strata_core::STACK_BYTES)
            .spawn_scoped(scope, move || {
                let mut answer = answerer();
                for mut block in inbox {
                    block.answer(&mut answer);
                    if outbox.send(block).is_err() {
                        break;
                    }
                }
            })
            .ok()?;
        Some(Worker { jobs, done })
    }

    /// Hands `block` to the thread (leaving an empty one in its place); false when the
    /// thread is gone, `block` untouched.
    fn lend(&self, block: &mut Block) -> bool {
        match self.jobs.send(std::mem::take(block)) {
            Ok(()) => true,
            Err(mpsc::SendError(back)) => {
                *block = back;
                false
            }
        }
    }

    /// The block lent, answered. (A thread that panicked keeps its lines: the scope raises
    /// its panic when serving ends.)
    fn take_back(&self, block: &mut Block) {
        if let Ok(answered) = self.done.recv() {
            *block = answered;
        }
    }
}

/// The loop of [`serve_lines`]: reads the lines waiting in the input (those already read
/// into its buffer, up to [`BLOCK_BYTES`]) into `runs` blocks (one while they are fewer than
/// [`PARALLEL_BELOW`]), has `answer` answer them, and writes their replies out in order.
fn serve_blocks(
    input: impl Read,
    mut output: impl Write,
    max_line: usize,
    runs: usize,
    mut answer: impl FnMut(&mut [Block]),
) -> io::Result<()> {
    let mut input = BufReader::with_capacity(INPUT_BUFFER, input);
    let mut blocks: Vec<Block> = (0..runs.max(1)).map(|_| Block::default()).collect();
    loop {
        for block in &mut blocks {
            block.clear();
        }
        // The lines already read into the buffer (up to `BLOCK_BYTES` of them), and at least
        // one: their replies are written out before the server waits for more.
        let mut ended = false;
        loop {
            if !blocks[0].read_line(&mut input, max_line)? {
                ended = true;
                break;
            }
            if input.buffer().is_empty() || blocks[0].bytes.len() >= BLOCK_BYTES {
                break;
            }
        }
        // A block holding a line longer than a block is answered whole (its line never
        // copied into another).
        let count = blocks[0].lines.len();
        let shared = count >= PARALLEL_BELOW && blocks[0].bytes.len() <= 2 * BLOCK_BYTES;
        if let Some((first, rest)) = blocks.split_first_mut().filter(|_| shared) {
            let share = count.div_ceil(runs);
            for (k, block) in rest.iter_mut().enumerate().rev() {
                let from = share * (k + 1);
                if from < first.lines.len() {
                    first.split_into(from, block);
                }
            }
        }
        answer(&mut blocks);
        for block in &blocks {
            output.write_all(&block.replies)?;
        }
        output.flush()?;
        if ended {
            return Ok(());
        }
    }
}

/// Reads the next line of `input` into `line` (without its `\n` or `\r\n`), never holding
/// more than `cap` bytes of it. `None` at the end of the
/// input; `Some(false)` when the line was longer than `cap` bytes (read and dropped, `line`
/// left empty).
pub fn read_line(
    input: &mut impl BufRead,
    cap: usize,
    line: &mut Vec<u8>,
) -> io::Result<Option<bool>> {
    line.clear();
    read_line_onto(input, cap, line)
}

/// [`read_line`], appending the line to what `buf` holds (a line longer than `cap` bytes
/// leaves `buf` as it was): lines read one after another into one buffer.
pub(crate) fn read_line_onto(
    input: &mut impl BufRead,
    cap: usize,
    buf: &mut Vec<u8>,
) -> io::Result<Option<bool>> {
    let start = buf.len();
    let mut fits = true;
    let mut read_any = false;
    loop {
        let chunk = match input.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            if !read_any {
                return Ok(None);
            }
            break;
        }
        read_any = true;
        let newline = memchr::memchr(b'\n', chunk);
        let part = &chunk[..newline.unwrap_or(chunk.len())];
        if fits && buf.len() - start + part.len() <= cap {
            buf.extend_from_slice(part);
        } else {
            fits = false;
            buf.truncate(start);
        }
        let used = newline.map_or(chunk.len(), |i| i + 1);
        input.consume(used);
        if newline.is_some() {
            break;
        }
    }
    if buf.len() > start && buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(Some(fits))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;
    use std::sync::Mutex;
    use std::thread::ThreadId;

    /// The reply of the tests' server: the line in angle brackets.
    fn echo(line: Line<'_>, replies: &mut Vec<u8>) {
        let text = match line {
            Line::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            Line::TooLong => "too long".into(),
        };
        replies.extend_from_slice(format!("<{text}>\n").as_bytes());
    }

    /// Input handed over in reads of the given sizes, in turn.
    struct Pieces<'a> {
        data: &'a [u8],
        sizes: Vec<usize>,
        next: usize,
    }

    impl Read for Pieces<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let size = self.sizes[self.next % self.sizes.len()];
            self.next += 1;
            let n = size.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn each_line_gets_a_reply_and_long_lines_are_dropped() {
        let input = "one\n\n\r\n".to_string() + &"x".repeat(50) + "\ntwo";
        let mut out = Vec::new();
        serve_lines(input.as_bytes(), &mut out, 10, echo).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "<one>\n<too long>\n<two>\n"
        );
    }

    /// Lines waiting together are answered on several threads, each with its own answerer,
    /// and their replies come in the order of the lines.
    #[test]
    fn waiting_lines_are_shared_among_the_threads_in_order() {
        let input: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let threads = Mutex::new(HashSet::<ThreadId>::new());
        let made = Mutex::new(0);
        let mut out = Vec::new();
        serve_lines_parallel(input.as_bytes(), &mut out, 100, 3, || {
            *made.lock().unwrap() += 1;
            |line: Line<'_>, replies: &mut Vec<u8>| {
                threads.lock().unwrap().insert(std::thread::current().id());
                echo(line, replies)
            }
        })
        .unwrap();
        let expected: String = (0..1000).map(|i| format!("<line {i}>\n")).collect();
        assert_eq!(String::from_utf8(out).unwrap(), expected);
        assert_eq!(*made.lock().unwrap(), 3);
        assert_eq!(threads.lock().unwrap().len(), 3);
    }

    /// Lines that never wait together (a client that sends one and waits) start no thread.
    #[test]
    fn a_few_lines_start_no_thread() {
        let made = Mutex::new(0);
        let mut out = Vec::new();
        serve_lines_parallel("one\ntwo\n".as_bytes(), &mut out, 100, 4, || {
            *made.lock().unwrap() += 1;
            echo
        })
        .unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "<one>\n<two>\n");
        assert_eq!(*made.lock().unwrap(), 1);
    }

    /// A line longer than a block is never copied into another thread's block: the lines
    /// read with it are answered on the calling thread.
    #[test]
    fn a_line_longer_than_a_block_is_answered_where_it_was_read() {
        let long = "x".repeat(3 * BLOCK_BYTES);
        let input = format!("{}{long}\n{}", "a\n".repeat(40), "b\n".repeat(40));
        let here = std::thread::current().id();
        let long_on = Mutex::new(None);
        let mut out = Vec::new();
        serve_lines_parallel(input.as_bytes(), &mut out, usize::MAX, 2, || {
            |line: Line<'_>, replies: &mut Vec<u8>| {
                if let Line::Bytes(b) = line {
                    if b.len() > BLOCK_BYTES {
                        *long_on.lock().unwrap() = Some(std::thread::current().id());
                        replies.extend_from_slice(b"<long>\n");
                        return;
                    }
                }
                echo(line, replies)
            }
        })
        .unwrap();
        let expected = format!("{}<long>\n{}", "<a>\n".repeat(40), "<b>\n".repeat(40));
        assert_eq!(String::from_utf8(out).unwrap(), expected);
        assert_eq!(*long_on.lock().unwrap(), Some(here));
    }

    #[test]
    fn lines_are_read_one_after_another_into_one_buffer() {
        let mut input = BufReader::with_capacity(4, "ab\r\ntoo long\n\ncd".as_bytes());
        let mut buf = b"x".to_vec();
        let read = |input: &mut _, buf: &mut _| read_line_onto(input, 4, buf);
        assert_eq!(read(&mut input, &mut buf).unwrap(), Some(true));
        assert_eq!(buf, b"xab");
        assert_eq!(read(&mut input, &mut buf).unwrap(), Some(false));
        assert_eq!(buf, b"xab");
        assert_eq!(read(&mut input, &mut buf).unwrap(), Some(true));
        assert_eq!(buf, b"xab");
        assert_eq!(read(&mut input, &mut buf).unwrap(), Some(true));
        assert_eq!(buf, b"xabcd");
        assert_eq!(read(&mut input, &mut buf).unwrap(), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig { failure_persistence: None, cases: 64, ..ProptestConfig::default() })]

        /// However the input arrives and however many threads serve it, the replies are
        /// those of one thread answering each line in turn.
        #[test]
        fn the_replies_do_not_depend_on_the_threads(
            lines in prop::collection::vec(prop::sample::select(vec![
                "a", "", "\r", "bb", "a much longer line than the limit", "ccc\r", "d e",
            ]), 0..300),
            sizes in prop::collection::vec(1usize..4000, 1..5),
            workers in 1usize..5,
            ends_with_newline: bool,
        ) {
            let mut input = lines.join("\n");
            if ends_with_newline {
                input.push('\n');
            }
            let mut one = Vec::new();
            serve_lines(input.as_bytes(), &mut one, 20, echo).unwrap();
            let mut many = Vec::new();
            let pieces = Pieces { data: input.as_bytes(), sizes, next: 0 };
            serve_lines_parallel(pieces, &mut many, 20, workers, || echo).unwrap();
            prop_assert_eq!(String::from_utf8(many).unwrap(), String::from_utf8(one).unwrap());
        }
    }
}

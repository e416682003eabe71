//! A small timing harness: warm-up, calibrated samples, median nanoseconds per iteration.
//!
//! Each sample runs the closure a fixed number of times (chosen during warm-up so that one
//! sample lasts about [`Settings::sample_time`]) and records the mean time of one call in
//! that sample. The reported figure is the median over the samples, which is robust against
//! the odd sample disturbed by the scheduler. Results go through [`black_box`] so the
//! optimiser cannot drop the work.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long and how often to measure.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Time spent running the closure before any sample is taken.
    pub warmup: Duration,
    /// Number of samples; the median of them is reported.
    pub samples: usize,
    /// Target duration of one sample (a slow closure runs once per sample regardless).
    pub sample_time: Duration,
    /// When set: no warm-up and one sample of exactly this many calls (for profilers, whose
    /// counts are then per known number of iterations).
    pub fixed_iters: Option<u64>,
    /// Smoke mode (`--smoke`): every closure runs once, the workloads shrink their inputs,
    /// and only their self-checks count (no figure is a measurement).
    pub smoke: bool,
}

impl Settings {
    /// The `--quick` settings: enough to see the shape in a few seconds.
    pub fn quick() -> Settings {
        Settings {
            warmup: Duration::from_millis(50),
            samples: 7,
            sample_time: Duration::from_millis(15),
            fixed_iters: None,
            smoke: false,
        }
    }

    /// The default settings: more warm-up and more, longer samples.
    pub fn full() -> Settings {
        Settings {
            warmup: Duration::from_millis(300),
            samples: 31,
            sample_time: Duration::from_millis(60),
            fixed_iters: None,
            smoke: false,
        }
    }

    /// The `--smoke` settings: no warm-up, one sample of one call per closure, and the
    /// workloads' small inputs. For CI: it runs every self-check and measures nothing.
    pub fn smoke() -> Settings {
        Settings {
            warmup: Duration::ZERO,
            samples: 1,
            sample_time: Duration::ZERO,
            fixed_iters: Some(1),
            smoke: true,
        }
    }

    /// `full` in full mode, `quick` in quick mode (fewer samples, as `--quick` has), `smoke`
    /// in smoke mode: how much of some input or repetition a workload uses.
    pub fn pick<T>(&self, full: T, quick: T, smoke: T) -> T {
        if self.smoke {
            smoke
        } else if self.samples <= Settings::quick().samples {
            quick
        } else {
            full
        }
    }
}

impl Settings {
    /// Samples to take: one in fixed-iteration mode, otherwise `samples` (at least one).
    fn sample_count(&self) -> usize {
        match self.fixed_iters {
            Some(_) => 1,
            None => self.samples.max(1),
        }
    }
}

/// The result of measuring one closure.
#[derive(Debug, Clone, Copy)]
pub struct Measurement {
    /// Median over the samples of the mean time per call, in nanoseconds.
    pub median_ns: f64,
    /// Fastest sample's time per call, in nanoseconds.
    pub min_ns: f64,
    /// Slowest sample's time per call, in nanoseconds.
    pub max_ns: f64,
    /// Calls per sample.
    pub iters: u64,
}

/// Work that can be run `n` times in a row, reporting how long those runs took.
trait Timed {
    /// Runs the work `n` times; the time they took.
    fn run(&mut self, n: u64) -> Duration;
}

/// A closure timed over a whole batch of calls (one clock reading per batch), its results
/// dropped inside the timing.
struct Plain<F>(F);

impl<T, F: FnMut() -> T> Timed for Plain<F> {
    fn run(&mut self, n: u64) -> Duration {
        let start = Instant::now();
        for _ in 0..n {
            black_box((self.0)());
        }
        start.elapsed()
    }
}

/// A closure that consumes a fresh input on every call: each call is timed on its own; making
/// the input (`setup`) and dropping what the closure returns are not. A closure that keeps its
/// input alive by returning it (a template compiled from a document it took over) thus leaves
/// the input's allocation and its release both out of the timing. For calls of microseconds
/// and more, where reading the clock twice per call is negligible.
struct Consuming<S, F> {
    setup: S,
    f: F,
}

impl<I, T, S: FnMut() -> I, F: FnMut(I) -> T> Timed for Consuming<S, F> {
    fn run(&mut self, n: u64) -> Duration {
        (0..n)
            .map(|_| {
                let input = (self.setup)();
                let start = Instant::now();
                let result = black_box((self.f)(input));
                let spent = start.elapsed();
                drop(result);
                spent
            })
            .sum()
    }
}

/// Work under measurement, with its calibrated calls per sample.
struct Subject<W> {
    work: W,
    iters: u64,
    per_call: Vec<f64>,
}

impl<W: Timed> Subject<W> {
    /// Warms the work up for `settings.warmup` (in batches that double, so that reading the
    /// clock does not weigh on short calls) and picks the calls per sample.
    fn warm(mut work: W, settings: &Settings) -> Subject<W> {
        let iters = match settings.fixed_iters {
            Some(iters) => iters.max(1),
            None => {
                let (mut spent, mut calls, mut batch) = (Duration::ZERO, 0u64, 1u64);
                while calls == 0 || spent < settings.warmup {
                    spent += work.run(batch);
                    calls += batch;
                    batch *= 2;
                }
                let per_call = spent.as_secs_f64() / calls as f64;
                (settings.sample_time.as_secs_f64() / per_call).max(1.0) as u64
            }
        };
        Subject {
            work,
            iters,
            per_call: Vec::with_capacity(settings.sample_count()),
        }
    }

    /// Takes one sample.
    fn sample(&mut self) {
        let spent = self.work.run(self.iters);
        self.per_call
            .push(spent.as_nanos() as f64 / self.iters as f64);
    }

    fn finish(self) -> Measurement {
        summarize(self.per_call, self.iters)
    }
}

/// Samples two pieces of work alternately (`a b a b …`), so that a change of machine state
/// during the run affects both alike.
fn interleave(settings: &Settings, a: impl Timed, b: impl Timed) -> (Measurement, Measurement) {
    let mut a = Subject::warm(a, settings);
    let mut b = Subject::warm(b, settings);
    for _ in 0..settings.sample_count() {
        a.sample();
        b.sample();
    }
    (a.finish(), b.finish())
}

/// The measurement of samples of `iters` calls each (`per_call`: each sample's time per call).
fn summarize(mut per_call: Vec<f64>, iters: u64) -> Measurement {
    per_call.sort_by(f64::total_cmp);
    let n = per_call.len();
    let median_ns = if n % 2 == 1 {
        per_call[n / 2]
    } else {
        (per_call[n / 2 - 1] + per_call[n / 2]) / 2.0
    };
    Measurement {
        median_ns,
        min_ns: per_call[0],
        max_ns: per_call[n - 1],
        iters,
    }
}

/// The measurement of calls timed one by one (runs of a process, slow calls): their median,
/// fastest and slowest.
pub fn of_calls(times: impl IntoIterator<Item = Duration>) -> Measurement {
    summarize(times.into_iter().map(|d| d.as_nanos() as f64).collect(), 1)
}

/// The `strata` binary next to this one (`target/release/strata`), when it was built: what
/// the workloads that measure what a user runs start.
pub fn strata_binary() -> Option<PathBuf> {
    let me = std::env::current_exe().ok()?;
    let bin = me.parent()?.join("strata");
    bin.is_file().then_some(bin)
}

/// One run of `strata args…` in `dir`, its output dropped; panics unless it exits with `code`.
pub fn run_strata(bin: &Path, dir: &Path, args: &[&str], code: i32) {
    let status = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("strata runs");
    assert_eq!(status.code(), Some(code), "strata {args:?}");
}

/// One run of `strata args…` in `dir` with a cleared environment but for `env`, output
/// dropped: its wall time and its peak resident memory in bytes (from `wait4`). Panics unless
/// it exits with 0.
pub fn run_strata_rss(
    bin: &Path,
    dir: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Duration, u64) {
    run_rss(bin, dir, args, env, None)
}

/// GNU time, which reports the peak memory of the program it starts.
const GNU_TIME: &str = "/usr/bin/time";

/// One run of `program args…` in `dir` as [`run_strata_rss`] runs strata, its standard
/// input the file `stdin` when given (else `/dev/null`): its wall time and peak resident
/// memory in bytes. Panics unless it exits with 0.
///
/// The peak is GNU time's report when it is installed (`/usr/bin/time -f %M`): a child's peak
/// as `wait4` reports it is never below the memory of the process it was started from (the
/// kernel counts the starting process's pages until the exec), and this bench holds its
/// inputs; GNU time, a small process, starts the program instead. Without it, `wait4`'s
/// figure is used.
pub fn run_rss(
    program: &Path,
    dir: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    stdin: Option<&Path>,
) -> (Duration, u64) {
    if !Path::new(GNU_TIME).is_file() {
        return run_rss_wait4(program, dir, args, env, stdin);
    }
    let (spent, peak, code) = run_rss_code(program, dir, args, env, stdin);
    assert_eq!(code, Some(0), "{} {args:?} failed", program.display());
    (spent, peak)
}

/// [`run_rss`] for a run that may fail: its wall time, peak memory in bytes (GNU time's
/// report; `wait4`'s without it) and exit code.
pub fn run_rss_code(
    program: &Path,
    dir: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    stdin: Option<&Path>,
) -> (Duration, u64, Option<i32>) {
    if !Path::new(GNU_TIME).is_file() {
        let (spent, peak) = run_rss_wait4(program, dir, args, env, stdin);
        return (spent, peak, Some(0));
    }
    let report = tempfile::NamedTempFile::new().expect("a file for the peak");
    let input = match stdin {
        Some(path) => Stdio::from(std::fs::File::open(path).expect("the input file")),
        None => Stdio::null(),
    };
    let start = Instant::now();
    let status = Command::new(GNU_TIME)
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(report.path())
        .arg(program)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .envs(env.iter().copied())
        .stdin(input)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("the program runs");
    let spent = start.elapsed();
    let text = std::fs::read_to_string(report.path()).expect("GNU time's report");
    // The last line is the peak in KiB (a line about the exit status may come first).
    let kib: u64 = text
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .expect("a peak in KiB");
    (spent, kib * 1024, status.code())
}

/// [`run_rss`] without GNU time: the peak from `wait4`.
#[allow(clippy::zombie_processes)] // reaped by `wait4`, which std's `wait` cannot replace
fn run_rss_wait4(
    program: &Path,
    dir: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    stdin: Option<&Path>,
) -> (Duration, u64) {
    let input = match stdin {
        Some(path) => Stdio::from(std::fs::File::open(path).expect("the input file")),
        None => Stdio::null(),
    };
    let start = Instant::now();
    let child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .envs(env.iter().copied())
        .stdin(input)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the program runs");
    let pid = libc::pid_t::try_from(child.id()).expect("a pid");
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child (std has not reaped it: `child` is never waited on).
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let spent = start.elapsed();
    assert_eq!(reaped, pid, "wait4");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{} {args:?} failed",
        program.display()
    );
    (spent, u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024)
}

/// Measures one closure.
pub fn measure<T>(settings: &Settings, f: impl FnMut() -> T) -> Measurement {
    let mut subject = Subject::warm(Plain(f), settings);
    for _ in 0..settings.sample_count() {
        subject.sample();
    }
    subject.finish()
}

/// Measures two closures side by side, alternating their samples (`a b a b …`) so that a
/// change of machine state during the run affects both alike.
pub fn compare<A, B>(
    settings: &Settings,
    a: impl FnMut() -> A,
    b: impl FnMut() -> B,
) -> (Measurement, Measurement) {
    interleave(settings, Plain(a), Plain(b))
}

/// Measures `a` and `b` side by side, each consuming a fresh input from `setup` on every call
/// (making the input is not timed), alternating their samples like [`compare`]: both start
/// from an input in the same state (just made, as a program that has just read it has it).
pub fn compare_consuming<I, A, B>(
    settings: &Settings,
    setup: impl Fn() -> I,
    a: impl FnMut(I) -> A,
    b: impl FnMut(I) -> B,
) -> (Measurement, Measurement) {
    interleave(
        settings,
        Consuming {
            setup: &setup,
            f: a,
        },
        Consuming {
            setup: &setup,
            f: b,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Settings {
        Settings {
            warmup: Duration::from_millis(1),
            samples: 3,
            sample_time: Duration::from_millis(1),
            fixed_iters: None,
            smoke: false,
        }
    }

    #[test]
    fn measures_something_positive() {
        let m = measure(&tiny(), || (0..100u64).map(black_box).sum::<u64>());
        assert!(m.median_ns > 0.0);
        assert!(m.min_ns <= m.median_ns && m.median_ns <= m.max_ns);
        assert!(m.iters >= 1);
    }

    #[test]
    fn making_the_input_is_not_timed() {
        let heavy = |n: u64| (0..n).map(black_box).sum::<u64>();
        let settings = Settings {
            fixed_iters: Some(20),
            ..tiny()
        };
        // Were the input's making timed, consuming it would cost ten times the reference.
        let (consume, _) = compare_consuming(&settings, || heavy(100_000), |x| x + 1, |x| x);
        let reference = measure(&settings, || heavy(10_000));
        assert!(consume.median_ns < reference.median_ns);
    }

    #[test]
    fn slower_closure_measures_slower() {
        let (fast, slow) = compare(
            &tiny(),
            || (0..10u64).map(black_box).sum::<u64>(),
            || (0..10_000u64).map(black_box).sum::<u64>(),
        );
        assert!(slow.median_ns > fast.median_ns);
    }
}

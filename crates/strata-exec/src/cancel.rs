//! [`Cancel`]: a request to stop one run — its tool processes killed, no new one started —
//! that another thread (a front-end that serves many callers) makes while the run goes on.
//! Unlike a signal, it stops one run and leaves every other run of the process alone.

use std::fmt;
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use strata_core::{Error, ErrorKind, Layer};

/// A shared flag that stops a run: clones share it. A spawn waiting for a child wakes as
/// soon as it is set (its read end becomes readable), kills the child's process group and
/// returns [`ErrorKind::Cancelled`]; a spawn asked for after it is set starts nothing.
#[derive(Clone)]
pub struct Cancel {
    inner: Arc<Inner>,
}

struct Inner {
    cancelled: AtomicBool,
    /// Readable once cancelled (one byte written, never read): what a spawn polls.
    wake: os_pipe::PipeReader,
    writer: Mutex<Option<os_pipe::PipeWriter>>,
}

impl Cancel {
    /// A new flag, not set.
    pub fn new() -> std::io::Result<Cancel> {
        let (wake, writer) = os_pipe::pipe()?;
        Ok(Cancel {
            inner: Arc::new(Inner {
                cancelled: AtomicBool::new(false),
                wake,
                writer: Mutex::new(Some(writer)),
            }),
        })
    }

    /// Sets the flag: running spawns kill their children, later ones start nothing.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        let mut writer = self.inner.writer.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(mut w) = writer.take() {
            // One byte makes the read end readable for good; a full pipe cannot happen.
            let _ = w.write_all(&[1]);
        }
    }

    /// True once [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// The descriptor that becomes readable when the flag is set.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.inner.wake.as_fd()
    }

    /// The error of a call stopped by this flag (`what` names it: a tool's program).
    pub fn error(what: &str) -> Error {
        Error::new(
            Layer::REQUEST,
            ErrorKind::Cancelled,
            format!("`{what}` was cancelled"),
        )
    }
}

impl fmt::Debug for Cancel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cancel")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag_and_cancelling_twice_is_harmless() {
        let a = Cancel::new().unwrap();
        let b = a.clone();
        assert!(!b.is_cancelled());
        a.cancel();
        a.cancel();
        assert!(b.is_cancelled());
        let mut fds = [nix::poll::PollFd::new(b.fd(), nix::poll::PollFlags::POLLIN)];
        assert_eq!(nix::poll::poll(&mut fds, 0u16).unwrap(), 1);
    }
}

//! Logs: `tracing` to standard error, as text or JSON, and lines held back until a save.

use super::settings::{LogFilter, Logs};
use std::io::Write;
use std::sync::{Arc, Mutex};
use tracing_subscriber::EnvFilter;

impl Logs {
    /// Sets up the process's logger.
    pub fn init(&self) {
        use tracing_subscriber::util::SubscriberInitExt;
        self.subscriber(std::io::stderr).init();
    }

    /// The one log format, for stderr and for lines held back until a save (see `Held`).
    pub fn subscriber<W>(&self, writer: W) -> Box<dyn tracing::Subscriber + Send + Sync>
    where
        W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
    {
        let filter = match &self.filter {
            LogFilter::Flag(f) => EnvFilter::new(f),
            LogFilter::Env(v) => EnvFilter::try_new(v).unwrap_or_else(|_| EnvFilter::new("info")),
            LogFilter::Default => EnvFilter::new("info"),
            // Every executor line of an admin command is said again by the command itself: its
            // change on standard output, its failure as the error (a RAPI refusal was printed
            // twice, as an ERROR line and as the error).
            LogFilter::AdminDefault => EnvFilter::new("info,autorepair_engine::exec=off"),
        };
        let builder = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(Escaping {
                inner: writer,
                colour: self.colour,
            })
            .with_ansi(self.colour);
        if self.json {
            Box::new(builder.json().finish())
        } else {
            Box::new(builder.finish())
        }
    }
}

/// A log writer that escapes every control character of a record but its closing newline:
/// field values are names and messages from the fleet, and a newline in a name forged a log
/// line of its own, an escape sequence reached the terminal. With colour on, ESC is the
/// formatter's own and is kept.
struct Escaping<W> {
    inner: W,
    colour: bool,
}

impl<'a, W: tracing_subscriber::fmt::MakeWriter<'a>> tracing_subscriber::fmt::MakeWriter<'a>
    for Escaping<W>
{
    type Writer = Escaping<W::Writer>;
    fn make_writer(&'a self) -> Self::Writer {
        Escaping {
            inner: self.inner.make_writer(),
            colour: self.colour,
        }
    }
}

impl<W: Write> Write for Escaping<W> {
    /// The formatter writes one whole record a call.
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let (body, end) = match text.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (&*text, ""),
        };
        let kept = |c: char| !c.is_control() || (self.colour && c == '\u{1b}');
        if body.chars().all(kept) {
            self.inner.write_all(buf)?;
        } else {
            let mut out = String::with_capacity(buf.len() + 8);
            for c in body.chars() {
                if kept(c) {
                    out.push(c);
                } else {
                    out.extend(c.escape_default());
                }
            }
            out.push_str(end);
            self.inner.write_all(out.as_bytes())?;
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Log lines held in memory, then written to stderr at once.
#[derive(Clone, Default)]
pub struct Held(Arc<Mutex<Vec<u8>>>);

impl Held {
    /// Writes the lines held so far to stderr.
    pub fn release(&self) {
        let lines = std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()));
        // Nowhere to report a failed write to stderr.
        let _ = std::io::stderr().lock().write_all(&lines);
    }
}

impl Write for Held {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

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
            LogFilter::AdminDefault => EnvFilter::new("info,autorepair_engine::exec=warn"),
        };
        let builder = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(writer)
            .with_ansi(self.colour);
        if self.json {
            Box::new(builder.json().finish())
        } else {
            Box::new(builder.finish())
        }
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

//! The printer: the one owner of standard output. Every line a command prints for a person or
//! a program goes through it, and it knows whether the command asked for JSON. The few notes for
//! a person that are not the command's output (and the final error line) go to standard error
//! through it too; logs do not: they go through `tracing`.
//!
//! A failed write to standard output (a reader gone, as `| head -1`; a full disk) stops the
//! printing only, never the work nor its exit status: a pass that is not read still repairs,
//! and a lint that is cut short still says by its exit that it found problems. Standard error
//! says so once (not for a reader that stopped reading, which is no failure). A failed write
//! to standard error has nowhere to be reported and is dropped.

use serde::Serialize;
use std::fmt::Display;
use std::io::{self, Write};

/// How the command's own output (stdout) is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Output {
    /// The command's `--json` (or `-o json`).
    pub json: bool,
    /// `-o yaml`: documents as YAML.
    pub yaml: bool,
    /// Standard output is a terminal and NO_COLOR does not forbid colour.
    pub colour: bool,
}

pub struct Printer {
    out: Dropping<Box<dyn Write>>,
    err: Box<dyn Write>,
    /// Whether standard error said that standard output failed.
    said_dropped: bool,
    json: bool,
    yaml: bool,
    colour: bool,
    /// Standard error is a terminal: [`Printer::progress`] shows.
    progress_shown: bool,
}

impl Printer {
    /// The process's standard output and standard error. Standard output stays line-buffered,
    /// so a looping run's lines go out as they are printed.
    pub fn standard(output: Output) -> Printer {
        let mut printer = Printer::new(Box::new(io::stdout()), Box::new(io::stderr()), output);
        printer.progress_shown = std::io::IsTerminal::is_terminal(&io::stderr());
        printer
    }

    pub fn new(out: Box<dyn Write>, err: Box<dyn Write>, output: Output) -> Printer {
        Printer {
            out: Dropping::new(out),
            err,
            said_dropped: false,
            json: output.json,
            yaml: output.yaml,
            colour: output.colour,
            progress_shown: false,
        }
    }

    /// Whether the command asked for JSON.
    pub fn json(&self) -> bool {
        self.json
    }

    /// Whether standard output may carry colour (a terminal, and NO_COLOR unset or empty).
    pub fn colour(&self) -> bool {
        self.colour
    }

    /// Says once on standard error that standard output failed, if it did.
    fn say_dropped(&mut self) {
        if self.said_dropped {
            return;
        }
        let Some(e) = &self.out.failed else {
            return;
        };
        self.said_dropped = true;
        if let Some(note) = dropped_note(e) {
            let _ = writeln!(self.err, "{note}");
        }
    }

    /// Text as it is: it carries its own line ends.
    pub fn text(&mut self, text: impl Display) -> io::Result<()> {
        let written = write!(self.out, "{text}");
        self.say_dropped();
        written
    }

    /// One line of text.
    pub fn line(&mut self, line: impl Display) -> io::Result<()> {
        let written = writeln!(self.out, "{line}");
        self.say_dropped();
        written
    }

    /// One JSON value on one line (buffered: a generated fleet is large). An error is one of
    /// serialising, never of standard output.
    pub fn json_line<T: Serialize + ?Sized>(&mut self, value: &T) -> io::Result<()> {
        let mut w = io::BufWriter::new(&mut self.out);
        let written = serde_json::to_writer(&mut w, value)
            .map_err(io::Error::from)
            .and_then(|()| w.write_all(b"\n"))
            .and_then(|()| w.flush());
        drop(w);
        self.say_dropped();
        written
    }

    /// One JSON document, indented for a person, and a line end.
    pub fn json_document<T: Serialize + ?Sized>(&mut self, value: &T) -> io::Result<()> {
        let mut w = io::BufWriter::new(&mut self.out);
        let written = serde_json::to_writer_pretty(&mut w, value)
            .map_err(io::Error::from)
            .and_then(|()| w.write_all(b"\n"))
            .and_then(|()| w.flush());
        drop(w);
        self.say_dropped();
        written
    }

    /// One YAML document (`-o yaml`), as kubectl prints one (quoted for YAML 1.1 readers too).
    pub fn yaml_document<T: Serialize + ?Sized>(&mut self, value: &T) -> io::Result<()> {
        let text = crate::yaml::to_string(value).map_err(io::Error::other)?;
        self.text(text)
    }

    /// A whole answer (status, explain, simulate): with `--json` (or `-o yaml`) the document;
    /// else the text, which carries its own line ends. Only the one asked for is made.
    pub fn document<T: Serialize>(
        &mut self,
        json: impl FnOnce() -> T,
        text: impl FnOnce() -> String,
    ) -> io::Result<()> {
        if self.yaml {
            self.yaml_document(&json())
        } else if self.json {
            self.json_document(&json())
        } else {
            self.text(text())
        }
    }

    /// One item of a list (a tag, a lint problem): with `--json` one JSON value per line; else
    /// one line of text. Only the one asked for is made.
    pub fn item<T: Serialize, D: Display>(
        &mut self,
        json: impl FnOnce() -> T,
        text: impl FnOnce() -> D,
    ) -> io::Result<()> {
        if self.json {
            self.json_line(&json())
        } else {
            self.line(text())
        }
    }

    /// A note for a person on standard error (a count, where a file was saved).
    pub fn note(&mut self, line: impl Display) {
        let _ = writeln!(self.err, "{line}");
    }

    /// How far a long command got, on standard error when it is a terminal: one line,
    /// rewritten in place (`done` ends it). Nothing where standard error is a file or a pipe,
    /// whose reader wants whole lines.
    pub fn progress(&mut self, line: impl Display, done: bool) {
        if !self.progress_shown {
            return;
        }
        let end = if done { "\n" } else { "" };
        let _ = write!(self.err, "\r\x1b[2K{line}{end}");
        let _ = self.err.flush();
    }

    /// The line that says why the command failed, on standard error.
    pub fn error(&mut self, error: impl Display) {
        let _ = writeln!(self.err, "autorepair: error: {error}");
    }
}

/// What standard error says when standard output failed with `e`: nothing for a reader that
/// stopped reading (`| head -1`), which is no failure.
pub fn dropped_note(e: &io::Error) -> Option<String> {
    (e.kind() != io::ErrorKind::BrokenPipe).then(|| {
        format!(
            "autorepair: warning: cannot write to standard output: {e}: the rest of the output is dropped; the command went on, and its exit status says how its work went"
        )
    })
}

/// A writer that keeps the first error of the one it wraps and drops every write from then on,
/// reporting it done: what a command prints never decides what it does. The one error kept is
/// an interrupted write's, which the writer's callers retry.
pub struct Dropping<W> {
    inner: W,
    /// The error that stopped the writes.
    pub failed: Option<io::Error>,
}

impl<W: Write> Dropping<W> {
    pub fn new(inner: W) -> Self {
        Dropping {
            inner,
            failed: None,
        }
    }

    fn keep<T>(&mut self, done: io::Result<T>, dropped: T) -> io::Result<T> {
        match done {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => {
                self.failed = Some(e);
                Ok(dropped)
            }
            ok => ok,
        }
    }
}

impl<W: Write> Write for Dropping<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.failed.is_some() {
            return Ok(buf.len());
        }
        let done = match self.inner.write(buf) {
            Ok(0) if !buf.is_empty() => Err(io::ErrorKind::WriteZero.into()),
            done => done,
        };
        self.keep(done, buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.failed.is_some() {
            return Ok(());
        }
        let done = self.inner.flush();
        self.keep(done, ())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer whose bytes the test reads afterwards.
    #[derive(Clone, Default)]
    pub(crate) struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Captured {
        pub(crate) fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    /// A printer whose standard output and error the test reads.
    pub(crate) fn printer(json: bool) -> (Printer, Captured, Captured) {
        let (out, err) = (Captured::default(), Captured::default());
        let p = Printer::new(
            Box::new(out.clone()),
            Box::new(err.clone()),
            Output {
                json,
                yaml: false,
                colour: false,
            },
        );
        (p, out, err)
    }

    #[test]
    fn json_and_text_go_their_own_way() {
        let doc = serde_json::json!({"a": [1, 2]});
        // (json, what is printed, stdout wanted)
        type Print = fn(&mut Printer, &serde_json::Value) -> io::Result<()>;
        let cases: [(bool, Print, &str); 6] = [
            (
                true,
                |p, v| p.document(|| v, || "table\n".into()),
                "{\n  \"a\": [\n    1,\n    2\n  ]\n}\n",
            ),
            (
                false,
                |p, v| p.document(|| v, || "table\n".into()),
                "table\n",
            ),
            (true, |p, v| p.item(|| v, || "a line"), "{\"a\":[1,2]}\n"),
            (false, |p, v| p.item(|| v, || "a line"), "a line\n"),
            // Text and JSON printed as such whatever was asked for.
            (
                true,
                |p, _| p.line("pass 1: 0 action(s)"),
                "pass 1: 0 action(s)\n",
            ),
            (false, |p, v| p.json_line(v), "{\"a\":[1,2]}\n"),
        ];
        for (i, (json, print, want)) in cases.into_iter().enumerate() {
            let (mut p, out, err) = printer(json);
            assert_eq!(p.json(), json);
            print(&mut p, &doc).unwrap();
            assert_eq!(out.text(), want, "case {i}");
            assert_eq!(err.text(), "", "case {i}");
        }
    }

    #[test]
    fn only_the_form_asked_for_is_made() {
        for json in [false, true] {
            let (mut p, _, _) = printer(json);
            p.document(
                || {
                    assert!(json, "JSON made for text");
                    1
                },
                || {
                    assert!(!json, "text made for JSON");
                    String::new()
                },
            )
            .unwrap();
        }
    }

    #[test]
    fn notes_and_errors_go_to_stderr() {
        let (mut p, out, err) = printer(true);
        p.note("3 tag problem(s)");
        p.error("no fleet to work on");
        assert_eq!(out.text(), "");
        assert_eq!(
            err.text(),
            "3 tag problem(s)\nautorepair: error: no fleet to work on\n"
        );
    }

    #[test]
    fn text_is_printed_as_it_is() {
        let (mut p, out, _) = printer(false);
        p.text("a\nb").unwrap();
        p.text("\n").unwrap();
        assert_eq!(out.text(), "a\nb\n");
    }
}

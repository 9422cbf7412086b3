//! The printer: the one owner of standard output. Every line a command prints for a person or
//! a program goes through it, and it knows whether the command asked for JSON. The few notes for
//! a person that are not the command's output (and the final error line) go to standard error
//! through it too; logs do not: they go through `tracing`.
//!
//! A failed write to standard output is returned (the caller exits 2, naming standard output);
//! a failed write to standard error has nowhere to be reported and is dropped.

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
    out: Box<dyn Write>,
    err: Box<dyn Write>,
    json: bool,
    yaml: bool,
    colour: bool,
}

impl Printer {
    /// The process's standard output and standard error. Standard output stays line-buffered,
    /// so a looping run's lines go out as they are printed.
    pub fn standard(output: Output) -> Printer {
        Printer::new(Box::new(io::stdout()), Box::new(io::stderr()), output)
    }

    pub fn new(out: Box<dyn Write>, err: Box<dyn Write>, output: Output) -> Printer {
        Printer {
            out,
            err,
            json: output.json,
            yaml: output.yaml,
            colour: output.colour,
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

    /// Text as it is: it carries its own line ends.
    pub fn text(&mut self, text: impl Display) -> io::Result<()> {
        write!(self.out, "{text}")
    }

    /// One line of text.
    pub fn line(&mut self, line: impl Display) -> io::Result<()> {
        writeln!(self.out, "{line}")
    }

    /// One JSON value on one line (buffered: a generated fleet is large).
    pub fn json_line<T: Serialize + ?Sized>(&mut self, value: &T) -> io::Result<()> {
        let mut w = io::BufWriter::new(&mut self.out);
        serde_json::to_writer(&mut w, value)?;
        w.write_all(b"\n")?;
        w.flush()
    }

    /// One JSON document, indented for a person, and a line end.
    pub fn json_document<T: Serialize + ?Sized>(&mut self, value: &T) -> io::Result<()> {
        let mut w = io::BufWriter::new(&mut self.out);
        serde_json::to_writer_pretty(&mut w, value)?;
        w.write_all(b"\n")?;
        w.flush()
    }

    /// One YAML document (`-o yaml`), as kubectl prints one.
    pub fn yaml_document<T: Serialize + ?Sized>(&mut self, value: &T) -> io::Result<()> {
        let text = serde_yaml_ng::to_string(value).map_err(io::Error::other)?;
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

    /// The line that says why the command failed, on standard error.
    pub fn error(&mut self, error: impl Display) {
        let _ = writeln!(self.err, "autorepair: error: {error}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer whose bytes the test reads afterwards.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

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
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    fn printer(json: bool) -> (Printer, Captured, Captured) {
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

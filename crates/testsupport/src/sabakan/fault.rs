//! Fault injection: the next N matching requests get an error status, a garbage body, a
//! delay, or a closed connection instead of (or before) sabakan's answer.

use crate::serve::Filter;
use std::time::Duration;

#[derive(Clone, Debug)]
pub(crate) enum Action {
    Respond {
        status: u16,
        content_type: &'static str,
        body: String,
    },
    Delay(Duration),
    /// Close the connection without an answer.
    Hangup,
}

/// A fault for [`crate::sabakan::FakeSabakan::fault`]: what happens ([`Fault::status`],
/// [`Fault::garbage`], [`Fault::delay`], [`Fault::hangup`]), narrowed by
/// [`Fault::on_path`] and [`Fault::method`], for [`Fault::times`] requests (default 1).
///
/// ```ignore
/// sabakan.fault(Fault::status(503).on_path("/api/v1/labels/*").method("PUT").times(2));
/// ```
#[derive(Clone, Debug)]
pub struct Fault {
    filter: Filter,
    pub(crate) times: usize,
    pub(crate) action: Action,
}

impl Fault {
    fn new(action: Action) -> Fault {
        Fault {
            filter: Filter::default(),
            times: 1,
            action,
        }
    }

    /// Answer `code` with a body shaped like sabakan's errors (`{"status":…,"error":…}`).
    pub fn status(code: u16) -> Fault {
        Fault::new(Action::Respond {
            status: code,
            content_type: "application/json",
            body: format!(r#"{{"status":{code},"error":"injected by the fake"}}"#),
        })
    }

    /// Answer 200 with this body, whatever it is (not JSON, truncated, the wrong shape).
    pub fn garbage(body: &str) -> Fault {
        Fault::new(Action::Respond {
            status: 200,
            content_type: "application/json",
            body: body.to_owned(),
        })
    }

    /// This answer body instead of the default one of [`Fault::status`].
    pub fn body(mut self, text: &str) -> Fault {
        if let Action::Respond { body, .. } = &mut self.action {
            *body = text.to_owned();
        }
        self
    }

    /// Serve the request normally after `d`.
    pub fn delay(d: Duration) -> Fault {
        Fault::new(Action::Delay(d))
    }

    /// Close the connection without answering.
    pub fn hangup() -> Fault {
        Fault::new(Action::Hangup)
    }

    /// Only requests whose path is `path` (a trailing `*` matches a prefix).
    pub fn on_path(mut self, path: &str) -> Fault {
        self.filter.set_path(path);
        self
    }

    /// Only requests with this method (`GET`, `PUT`, …).
    pub fn method(mut self, m: &str) -> Fault {
        self.filter.set_method(m);
        self
    }

    /// The next `n` matching requests.
    pub fn times(mut self, n: usize) -> Fault {
        self.times = n;
        self
    }

    pub(crate) fn matches(&self, method: &str, path: &str) -> bool {
        self.filter.matches(method, path)
    }
}

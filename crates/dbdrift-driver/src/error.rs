// The driver's one error type: a class from protocol.md plus message and SQL context.
// Converted to the `fatal` NDJSON line exactly once, in `cli`.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    Connect,
    Sql,
    Protocol,
    Spec,
    Io,
}

impl ErrorClass {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Connect => "connect",
            ErrorClass::Sql => "sql",
            ErrorClass::Protocol => "protocol",
            ErrorClass::Spec => "spec",
            ErrorClass::Io => "io",
        }
    }
}

#[derive(Debug, Clone)]
pub struct DriverError {
    pub class: ErrorClass,
    pub message: String,
    pub sqlstate: Option<String>,
    pub sql: Option<String>,
    pub phase: Option<usize>,
    pub job: Option<usize>,
}

impl DriverError {
    pub fn new(class: ErrorClass, message: impl Into<String>) -> Self {
        DriverError {
            class,
            message: message.into(),
            sqlstate: None,
            sql: None,
            phase: None,
            job: None,
        }
    }

    pub fn spec(message: impl Into<String>) -> Self {
        Self::new(ErrorClass::Spec, message)
    }

    pub fn sql(sqlstate: &str, message: impl Into<String>, sql: &str) -> Self {
        let mut e = Self::new(ErrorClass::Sql, message);
        e.sqlstate = Some(sqlstate.to_string());
        e.sql = Some(sql.to_string());
        e
    }

    pub fn at_job(mut self, phase: usize, job: usize) -> Self {
        self.phase = Some(phase);
        self.job = Some(job);
        self
    }

    /// Exit status for this error: 2 for a bad spec or usage, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        if self.class == ErrorClass::Spec {
            2
        } else {
            1
        }
    }
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.class.as_str(), self.message)
    }
}

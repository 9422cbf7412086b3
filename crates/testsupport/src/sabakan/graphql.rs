//! sabakan's GraphQL endpoint, small: a parser for executable documents without fragments
//! or directives, variable coercion with the declared defaults (omitted differs from `null`),
//! sabakan's schema for selections, and its three root fields (`searchMachines`, `machine`,
//! `setMachineState`). HTTP statuses as gqlgen sends them: 400 for a body that is not JSON,
//! 422 for parse and validation errors (`extensions.code` GRAPHQL_PARSE_FAILED /
//! GRAPHQL_VALIDATION_FAILED), 200 with `errors` for resolver errors.

use crate::sabakan::World;
use crate::sabakan::machine::State;
use crate::sabakan::params::{MachineParams, matches};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// A GraphQL value literal (or a variable's JSON value).
#[derive(Debug, Clone, PartialEq)]
enum Lit {
    Var(String),
    Null,
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
    Enum(String),
    List(Vec<Lit>),
    Object(Vec<(String, Lit)>),
}

#[derive(Debug, Clone, PartialEq)]
enum Type {
    Named(String, bool),
    List(Box<Type>, bool),
}

impl Type {
    fn non_null(&self) -> bool {
        match self {
            Type::Named(_, n) | Type::List(_, n) => *n,
        }
    }
    fn nullable(&self) -> Type {
        match self {
            Type::Named(s, _) => Type::Named(s.clone(), false),
            Type::List(t, _) => Type::List(t.clone(), false),
        }
    }
    fn base(&self) -> &str {
        match self {
            Type::Named(s, _) => s,
            Type::List(t, _) => t.base(),
        }
    }
    fn shape(&self) -> String {
        match self {
            Type::Named(s, _) => s.clone(),
            Type::List(t, _) => format!("[{}]", t.shape()),
        }
    }
}

impl std::fmt::Display for Type {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Type::Named(s, n) => write!(f, "{s}{}", if *n { "!" } else { "" }),
            Type::List(t, n) => write!(f, "[{t}]{}", if *n { "!" } else { "" }),
        }
    }
}

#[derive(Debug, Clone)]
struct Field {
    alias: Option<String>,
    name: String,
    args: Vec<(String, Lit)>,
    selection: Option<Vec<Field>>,
}

impl Field {
    fn key(&self) -> &str {
        self.alias.as_deref().unwrap_or(&self.name)
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Query,
    Mutation,
    Subscription,
}

#[derive(Debug)]
struct Operation {
    kind: Kind,
    name: Option<String>,
    vars: Vec<(String, Type, Option<Lit>)>,
    selection: Vec<Field>,
}

// ---- lexing and parsing ----

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Punct(&'static str),
    Name(String),
    Int(i64),
    Float(f64),
    Str(String),
}

// The lexer's and the parser's errors stay text: each is graphql-go's message, sent verbatim.
fn lex(src: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\n' | '\r' | ',' | '\u{feff}' => i += 1,
            '#' => {
                while i < chars.len() && chars[i] != '\n' && chars[i] != '\r' {
                    i += 1;
                }
            }
            '.' => {
                if chars.get(i..i + 3) == Some(&['.', '.', '.']) {
                    out.push(Tok::Punct("..."));
                    i += 3;
                } else {
                    return Err("Unexpected \".\"".into());
                }
            }
            '!' | '$' | '(' | ')' | ':' | '=' | '@' | '[' | ']' | '{' | '}' | '|' | '&' => {
                const P: [&str; 13] = [
                    "!", "$", "(", ")", ":", "=", "@", "[", "]", "{", "}", "|", "&",
                ];
                let p = P
                    .into_iter()
                    .find(|p| p.starts_with(c))
                    .expect("a listed punctuator");
                out.push(Tok::Punct(p));
                i += 1;
            }
            '"' => {
                if chars.get(i..i + 3) == Some(&['"', '"', '"']) {
                    let start = i + 3;
                    let mut j = start;
                    while j + 2 < chars.len() && chars[j..j + 3] != ['"', '"', '"'] {
                        j += 1;
                    }
                    if j + 2 >= chars.len() {
                        return Err("Unterminated string.".into());
                    }
                    out.push(Tok::Str(chars[start..j].iter().collect()));
                    i = j + 3;
                    continue;
                }
                let mut s = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None | Some('\n') | Some('\r') => {
                            return Err("Unterminated string.".into());
                        }
                        Some('"') => {
                            i += 1;
                            break;
                        }
                        Some('\\') => {
                            let e = chars.get(i + 1).copied();
                            let simple = match e {
                                Some('"') => Some('"'),
                                Some('\\') => Some('\\'),
                                Some('/') => Some('/'),
                                Some('b') => Some('\u{8}'),
                                Some('f') => Some('\u{c}'),
                                Some('n') => Some('\n'),
                                Some('r') => Some('\r'),
                                Some('t') => Some('\t'),
                                _ => None,
                            };
                            if let Some(ch) = simple {
                                s.push(ch);
                                i += 2;
                            } else if e == Some('u') {
                                let hex: String =
                                    chars.get(i + 2..i + 6).unwrap_or_default().iter().collect();
                                let ch = u32::from_str_radix(&hex, 16)
                                    .ok()
                                    .and_then(char::from_u32)
                                    .ok_or("Invalid character escape sequence.")?;
                                s.push(ch);
                                i += 6;
                            } else {
                                return Err("Invalid character escape sequence.".into());
                            }
                        }
                        Some(ch) => {
                            s.push(*ch);
                            i += 1;
                        }
                    }
                }
                out.push(Tok::Str(s));
            }
            c if c == '-' || c.is_ascii_digit() => {
                let start = i;
                i += 1;
                while i < chars.len()
                    && (chars[i].is_ascii_digit() || matches!(chars[i], '.' | 'e' | 'E' | '+'))
                {
                    i += 1;
                }
                let text: String = chars[start..i].iter().collect();
                if text.contains(['.', 'e', 'E']) {
                    out.push(Tok::Float(
                        text.parse()
                            .map_err(|_| format!("Invalid number {text:?}."))?,
                    ));
                } else {
                    out.push(Tok::Int(
                        text.parse()
                            .map_err(|_| format!("Invalid number {text:?}."))?,
                    ));
                }
            }
            c if c == '_' || c.is_ascii_alphabetic() => {
                let start = i;
                while i < chars.len() && (chars[i] == '_' || chars[i].is_ascii_alphanumeric()) {
                    i += 1;
                }
                out.push(Tok::Name(chars[start..i].iter().collect()));
            }
            other => return Err(format!("Unexpected character {other:?}.")),
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }
    fn eat(&mut self, p: &str) -> bool {
        let yes = self.is(p);
        if yes {
            self.pos += 1;
        }
        yes
    }
    fn expect(&mut self, p: &str) -> Result<(), String> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(format!("Expected {p}, found {}", self.found()))
        }
    }
    fn found(&self) -> String {
        match self.peek() {
            None => "<EOF>".into(),
            Some(Tok::Punct(p)) => (*p).into(),
            Some(Tok::Name(n)) => format!("Name {n:?}"),
            Some(Tok::Int(n)) => format!("Int {n}"),
            Some(Tok::Float(n)) => format!("Float {n}"),
            Some(Tok::Str(s)) => format!("String {s:?}"),
        }
    }
    fn name(&mut self) -> Result<String, String> {
        match self.peek() {
            Some(Tok::Name(n)) => {
                let n = n.clone();
                self.pos += 1;
                Ok(n)
            }
            _ => Err(format!("Expected Name, found {}", self.found())),
        }
    }

    fn document(&mut self) -> Result<Vec<Operation>, String> {
        let mut ops = Vec::new();
        while self.peek().is_some() {
            ops.push(self.operation()?);
        }
        if ops.is_empty() {
            return Err("Unexpected <EOF>".into());
        }
        Ok(ops)
    }

    fn operation(&mut self) -> Result<Operation, String> {
        if self.is("{") {
            return Ok(Operation {
                kind: Kind::Query,
                name: None,
                vars: Vec::new(),
                selection: self.selection_set()?,
            });
        }
        let kind = match self.name()?.as_str() {
            "query" => Kind::Query,
            "mutation" => Kind::Mutation,
            "subscription" => Kind::Subscription,
            "fragment" => return Err("fragments are not supported by the fake sabakan".into()),
            other => return Err(format!("Unexpected Name {other:?}")),
        };
        let name = match self.peek() {
            Some(Tok::Name(_)) => Some(self.name()?),
            _ => None,
        };
        let mut vars = Vec::new();
        if self.eat("(") {
            while !self.eat(")") {
                self.expect("$")?;
                let v = self.name()?;
                self.expect(":")?;
                let ty = self.ty()?;
                let default = if self.eat("=") {
                    Some(self.value(true)?)
                } else {
                    None
                };
                vars.push((v, ty, default));
            }
        }
        if self.is("@") {
            return Err("directives are not supported by the fake sabakan".into());
        }
        Ok(Operation {
            kind,
            name,
            vars,
            selection: self.selection_set()?,
        })
    }

    fn ty(&mut self) -> Result<Type, String> {
        let t = if self.eat("[") {
            let inner = self.ty()?;
            self.expect("]")?;
            Type::List(Box::new(inner), false)
        } else {
            Type::Named(self.name()?, false)
        };
        Ok(if self.eat("!") {
            match t {
                Type::Named(n, _) => Type::Named(n, true),
                Type::List(t, _) => Type::List(t, true),
            }
        } else {
            t
        })
    }

    fn selection_set(&mut self) -> Result<Vec<Field>, String> {
        self.expect("{")?;
        let mut fields = Vec::new();
        while !self.eat("}") {
            if self.is("...") {
                return Err("fragments are not supported by the fake sabakan".into());
            }
            let first = self.name()?;
            let (alias, name) = if self.eat(":") {
                (Some(first), self.name()?)
            } else {
                (None, first)
            };
            let mut args = Vec::new();
            if self.eat("(") {
                while !self.eat(")") {
                    let a = self.name()?;
                    self.expect(":")?;
                    args.push((a, self.value(false)?));
                }
            }
            if self.is("@") {
                return Err("directives are not supported by the fake sabakan".into());
            }
            let selection = if self.is("{") {
                Some(self.selection_set()?)
            } else {
                None
            };
            fields.push(Field {
                alias,
                name,
                args,
                selection,
            });
        }
        if fields.is_empty() {
            return Err("Expected Name, found }".into());
        }
        Ok(fields)
    }

    fn value(&mut self, constant: bool) -> Result<Lit, String> {
        let tok = self.peek().cloned();
        match tok {
            Some(Tok::Punct("$")) if !constant => {
                self.pos += 1;
                Ok(Lit::Var(self.name()?))
            }
            Some(Tok::Punct("[")) => {
                self.pos += 1;
                let mut items = Vec::new();
                while !self.eat("]") {
                    items.push(self.value(constant)?);
                }
                Ok(Lit::List(items))
            }
            Some(Tok::Punct("{")) => {
                self.pos += 1;
                let mut fields = Vec::new();
                while !self.eat("}") {
                    let n = self.name()?;
                    self.expect(":")?;
                    fields.push((n, self.value(constant)?));
                }
                Ok(Lit::Object(fields))
            }
            Some(Tok::Int(n)) => {
                self.pos += 1;
                Ok(Lit::Int(n))
            }
            Some(Tok::Float(n)) => {
                self.pos += 1;
                Ok(Lit::Float(n))
            }
            Some(Tok::Str(s)) => {
                self.pos += 1;
                Ok(Lit::Str(s))
            }
            Some(Tok::Name(n)) => {
                self.pos += 1;
                Ok(match n.as_str() {
                    "null" => Lit::Null,
                    "true" => Lit::Bool(true),
                    "false" => Lit::Bool(false),
                    _ => Lit::Enum(n),
                })
            }
            _ => Err(format!("Unexpected {}", self.found())),
        }
    }
}

// ---- the schema and value coercion ----

/// Input object types: field, type (all of sabakan's input fields default to null).
fn input_fields(ty: &str) -> Option<Vec<(&'static str, Type)>> {
    let named = |s: &str, nn| Type::Named(s.into(), nn);
    let list_of = |s: &str| Type::List(Box::new(Type::Named(s.into(), true)), false);
    match ty {
        "MachineParams" => Some(vec![
            ("labels", list_of("LabelInput")),
            ("racks", list_of("Int")),
            ("roles", list_of("String")),
            ("states", list_of("MachineState")),
            ("minDaysBeforeRetire", named("Int", false)),
        ]),
        "LabelInput" => Some(vec![
            ("name", named("String", true)),
            ("value", named("String", true)),
        ]),
        _ => None,
    }
}

const SCALARS: [&str; 8] = [
    "Int",
    "Float",
    "String",
    "Boolean",
    "ID",
    "MachineState",
    "DateTime",
    "IPAddress",
];

fn is_input_type(t: &str) -> bool {
    SCALARS.contains(&t) || input_fields(t).is_some()
}

/// Coerced variables: `None` when omitted and without a default.
type Vars = HashMap<String, (Type, Option<Value>)>;

/// Coerces an input value to `ty`: a variable's JSON (`literal` false: enums arrive as
/// strings) or a literal of the document (enums must be enum tokens).
// Validation errors (here and in validate_selection) stay text too: graphql-go's, sent verbatim.
fn coerce(v: &Lit, ty: &Type, vars: &Vars, literal: bool, at: &str) -> Result<Value, String> {
    if let Lit::Var(name) = v {
        let (vty, val) = vars
            .get(name)
            .ok_or_else(|| format!("Variable \"${name}\" is not defined."))?;
        if vty.shape() != ty.shape() || (ty.non_null() && !vty.non_null() && val.is_none()) {
            return Err(format!(
                "Variable \"${name}\" of type \"{vty}\" used in position expecting type \"{ty}\"."
            ));
        }
        return match val {
            Some(Value::Null) | None if ty.non_null() => {
                Err(format!("{at}: must not be null (variable ${name})"))
            }
            Some(v) => Ok(v.clone()),
            None => Ok(Value::Null),
        };
    }
    if *v == Lit::Null {
        return if ty.non_null() {
            Err(format!("{at}: must not be null"))
        } else {
            Ok(Value::Null)
        };
    }
    match ty {
        Type::List(inner, _) => match v {
            Lit::List(items) => items
                .iter()
                .enumerate()
                .map(|(i, x)| coerce(x, inner, vars, literal, &format!("{at}[{i}]")))
                .collect(),
            // Input coercion turns a single value into a list of one.
            one => Ok(Value::Array(vec![coerce(one, inner, vars, literal, at)?])),
        },
        Type::Named(name, _) => {
            let wrong = || format!("{at}: {} is not a valid {name}", show(v));
            match (name.as_str(), v) {
                ("Int", Lit::Int(n)) => Ok(json!(n)),
                ("Float", Lit::Int(n)) => Ok(json!(*n as f64)),
                ("Float", Lit::Float(n)) => Ok(json!(n)),
                ("String" | "DateTime" | "IPAddress", Lit::Str(s)) => Ok(json!(s)),
                ("ID", Lit::Str(s)) => Ok(json!(s)),
                ("ID", Lit::Int(n)) => Ok(json!(n.to_string())),
                ("Boolean", Lit::Bool(b)) => Ok(json!(b)),
                ("MachineState", Lit::Enum(s)) if literal => {
                    State::from_gql(s).map(|st| json!(st.gql())).ok_or_else(|| {
                        format!("{at}: Value \"{s}\" does not exist in \"MachineState\" enum.")
                    })
                }
                ("MachineState", Lit::Str(s)) if !literal => {
                    State::from_gql(s).map(|st| json!(st.gql())).ok_or_else(|| {
                        format!("{at}: Value \"{s}\" does not exist in \"MachineState\" enum.")
                    })
                }
                (obj, Lit::Object(given)) => {
                    let fields = input_fields(obj).ok_or_else(wrong)?;
                    if let Some((unknown, _)) = given
                        .iter()
                        .find(|(k, _)| !fields.iter().any(|(f, _)| f == k))
                    {
                        return Err(format!("{at}.{unknown}: unknown field for {obj}"));
                    }
                    let mut out = Map::new();
                    for (f, fty) in fields {
                        let here = format!("{at}.{f}");
                        let val = match given.iter().find(|(k, _)| k == f) {
                            Some((_, x)) => coerce(x, &fty, vars, literal, &here)?,
                            None if fty.non_null() => {
                                return Err(format!("{here}: must be defined"));
                            }
                            None => Value::Null,
                        };
                        out.insert(f.to_owned(), val);
                    }
                    Ok(Value::Object(out))
                }
                _ => Err(wrong()),
            }
        }
    }
}

fn show(v: &Lit) -> String {
    match v {
        Lit::Str(s) => format!("{s:?}"),
        Lit::Enum(s) => s.clone(),
        Lit::Int(n) => n.to_string(),
        Lit::Float(n) => n.to_string(),
        Lit::Bool(b) => b.to_string(),
        Lit::List(_) => "a list".into(),
        Lit::Object(_) => "an object".into(),
        Lit::Null => "null".into(),
        Lit::Var(v) => format!("${v}"),
    }
}

/// A variable's JSON value as a literal (strings stay strings; `literal` false later).
fn from_json(v: &Value) -> Lit {
    match v {
        Value::Null => Lit::Null,
        Value::Bool(b) => Lit::Bool(*b),
        Value::Number(n) => n
            .as_i64()
            .map(Lit::Int)
            .unwrap_or_else(|| Lit::Float(n.as_f64().unwrap_or_default())),
        Value::String(s) => Lit::Str(s.clone()),
        Value::Array(a) => Lit::List(a.iter().map(from_json).collect()),
        Value::Object(o) => Lit::Object(o.iter().map(|(k, v)| (k.clone(), from_json(v))).collect()),
    }
}

/// What a field of an output type holds: a scalar or an object type.
fn output_field(ty: &str, field: &str) -> Option<Option<&'static str>> {
    let obj = |t: &'static str| Some(Some(t));
    let scalar = Some(None);
    match (ty, field) {
        (_, "__typename") => scalar,
        ("Machine", "spec") => obj("MachineSpec"),
        ("Machine", "status") => obj("MachineStatus"),
        ("Machine", "info") => obj("MachineInfo"),
        ("MachineSpec", "labels") => obj("Label"),
        ("MachineSpec", "bmc") => obj("BMC"),
        (
            "MachineSpec",
            "serial" | "rack" | "indexInRack" | "role" | "ipv4" | "registerDate" | "retireDate",
        ) => scalar,
        ("Label", "name" | "value") => scalar,
        ("BMC", "bmcType" | "ipv4") => scalar,
        ("MachineStatus", "state" | "timestamp" | "duration") => scalar,
        ("MachineInfo", "network") => obj("NetworkInfo"),
        ("MachineInfo", "bmc") => obj("BMCInfo"),
        ("NetworkInfo" | "BMCInfo", "ipv4") => obj("NICConfig"),
        ("NICConfig", "address" | "netmask" | "maskbits" | "gateway") => scalar,
        _ => None,
    }
}

fn validate_selection(ty: &str, sel: &[Field]) -> Result<(), String> {
    for f in sel {
        let kind = output_field(ty, &f.name)
            .ok_or_else(|| format!("Cannot query field \"{}\" on type \"{ty}\".", f.name))?;
        if let Some((a, _)) = f.args.first() {
            return Err(format!(
                "Unknown argument \"{a}\" on field \"{ty}.{}\".",
                f.name
            ));
        }
        match (kind, &f.selection) {
            (Some(child), Some(s)) => validate_selection(child, s)?,
            (Some(child), None) => {
                return Err(format!(
                    "Field \"{}\" of type \"{child}\" must have a selection of subfields.",
                    f.name
                ));
            }
            (None, Some(_)) => {
                return Err(format!(
                    "Field \"{}\" must not have a selection since it is a scalar.",
                    f.name
                ));
            }
            (None, None) => {}
        }
    }
    Ok(())
}

/// Picks the selected fields (validated before) out of a full value.
fn project(v: &Value, ty: &str, sel: &[Field]) -> Value {
    match v {
        Value::Array(items) => Value::Array(items.iter().map(|x| project(x, ty, sel)).collect()),
        Value::Object(obj) => {
            let mut out = Map::new();
            for f in sel {
                let val = if f.name == "__typename" {
                    json!(ty)
                } else {
                    let inner = obj.get(&f.name).cloned().unwrap_or(Value::Null);
                    match (output_field(ty, &f.name).flatten(), &f.selection) {
                        (Some(child), Some(s)) => project(&inner, child, s),
                        _ => inner,
                    }
                };
                out.insert(f.key().to_owned(), val);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

// ---- requests ----

fn protocol_error(message: &str, code: &str) -> (u16, Value) {
    (
        422,
        json!({"errors": [{"message": message, "extensions": {"code": code}}], "data": null}),
    )
}

fn invalid(message: String) -> (u16, Value) {
    protocol_error(&message, "GRAPHQL_VALIDATION_FAILED")
}

/// Answers one POST /graphql body: the HTTP status and the JSON to send.
pub(crate) fn execute(world: &mut World, body: &[u8]) -> (u16, Value) {
    let req: Value = match serde_json::from_slice(body) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => {
            return (
                400,
                json!({"errors": [{"message": "json body could not be decoded: not an object"}], "data": null}),
            );
        }
        Err(e) => {
            return (
                400,
                json!({"errors": [{"message": format!("json body could not be decoded: {e}")}], "data": null}),
            );
        }
    };
    let Some(query) = req.get("query").and_then(Value::as_str) else {
        return protocol_error("no operation provided", "GRAPHQL_VALIDATION_FAILED");
    };
    let ops = match lex(query).and_then(|toks| Parser { toks, pos: 0 }.document()) {
        Ok(ops) => ops,
        Err(e) => return protocol_error(&e, "GRAPHQL_PARSE_FAILED"),
    };
    let wanted = req.get("operationName").and_then(Value::as_str);
    let op = match (wanted, ops.as_slice()) {
        (None, [only]) => only,
        (None, _) => return invalid("operation name is required: the document has several".into()),
        (Some(n), _) => match ops.iter().find(|o| o.name.as_deref() == Some(n)) {
            Some(o) => o,
            None => return invalid(format!("operation {n} not found")),
        },
    };
    let given = match req.get("variables") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return invalid("variables must be an object".into()),
    };
    let mut vars: Vars = HashMap::new();
    for (name, ty, default) in &op.vars {
        if !is_input_type(ty.base()) {
            return invalid(format!(
                "Variable \"${name}\" cannot be non-input type \"{ty}\"."
            ));
        }
        let at = format!("variable.{name}");
        let value = match given.get(name) {
            // An explicit null is a value: it replaces the default.
            Some(v) => Some(coerce(&from_json(v), ty, &vars, false, &at)),
            None => default
                .as_ref()
                .map(|d| coerce(d, &ty.nullable(), &vars, true, &at)),
        };
        let value = match value {
            Some(Ok(v)) => Some(v),
            Some(Err(e)) => return invalid(e),
            None if ty.non_null() => return invalid(format!("{at}: must be defined")),
            None => None,
        };
        if ty.non_null() && value == Some(Value::Null) {
            return invalid(format!("{at}: must not be null"));
        }
        vars.insert(name.clone(), (ty.clone(), value));
    }
    let root = match op.kind {
        Kind::Query => "Query",
        Kind::Mutation => "Mutation",
        Kind::Subscription => {
            return invalid("the fake sabakan, like sabakan, has no subscriptions".into());
        }
    };
    // Validate everything before running anything, as GraphQL does.
    let mut plan = Vec::new();
    for f in &op.selection {
        let (args, out_ty): (&[(&str, Type)], Option<&str>) = match (root, f.name.as_str()) {
            ("Query", "searchMachines") => (
                &[
                    ("having", Type::Named("MachineParams".into(), false)),
                    ("notHaving", Type::Named("MachineParams".into(), false)),
                ],
                Some("Machine"),
            ),
            ("Query", "machine") => (
                &[("serial", Type::Named("ID".into(), true))],
                Some("Machine"),
            ),
            ("Mutation", "setMachineState") => (
                &[
                    ("serial", Type::Named("ID".into(), true)),
                    ("state", Type::Named("MachineState".into(), true)),
                ],
                Some("MachineStatus"),
            ),
            (_, "__typename") => (&[], None),
            _ => {
                return invalid(format!(
                    "Cannot query field \"{}\" on type \"{root}\".",
                    f.name
                ));
            }
        };
        let mut values: HashMap<&str, Value> = HashMap::new();
        for (a, lit) in &f.args {
            let Some((_, ty)) = args.iter().find(|(n, _)| n == a) else {
                return invalid(format!(
                    "Unknown argument \"{a}\" on field \"{root}.{}\".",
                    f.name
                ));
            };
            match coerce(lit, ty, &vars, true, &format!("{}.{a}", f.name)) {
                Ok(v) => values.insert(a.as_str(), v),
                Err(e) => return invalid(e),
            };
        }
        if let Some((missing, _)) = args
            .iter()
            .find(|(n, ty)| ty.non_null() && values.get(*n).is_none_or(Value::is_null))
        {
            return invalid(format!(
                "Field \"{}\" argument \"{missing}\" is required.",
                f.name
            ));
        }
        match (out_ty, &f.selection) {
            (Some(t), Some(s)) => {
                if let Err(e) = validate_selection(t, s) {
                    return invalid(e);
                }
            }
            (Some(t), None) => {
                return invalid(format!(
                    "Field \"{}\" of type \"{t}\" must have a selection of subfields.",
                    f.name
                ));
            }
            (None, _) => {}
        }
        plan.push((f, out_ty, values));
    }

    let now = world.now();
    let mut data = Map::new();
    let mut errors = Vec::new();
    for (f, out_ty, args) in plan {
        let sel = f.selection.as_deref().unwrap_or_default();
        let resolved: Result<Value, Value> = match f.name.as_str() {
            "__typename" => Ok(json!(root)),
            "searchMachines" => {
                let h = args.get("having").and_then(params);
                let n = args.get("notHaving").and_then(params);
                Ok(world
                    .machines
                    .values()
                    .filter(|m| matches(m, h.as_ref(), n.as_ref(), now))
                    .map(|m| m.gql_json(now))
                    .collect())
            }
            "machine" => {
                let serial = args["serial"].as_str().unwrap_or_default();
                world
                    .machines
                    .get(serial)
                    .map(|m| m.gql_json(now))
                    .ok_or_else(|| json!({"message": "not found", "path": [f.key()]}))
            }
            "setMachineState" => {
                let serial = args["serial"].as_str().unwrap_or_default().to_owned();
                let to = State::from_gql(args["state"].as_str().unwrap_or_default())
                    .expect("coerced to a state");
                match world.machines.get_mut(&serial) {
                    None => Err(json!({"message": "not found", "path": [f.key()],
                        "extensions": {"serial": serial, "type": "MACHINE_NOT_FOUND"}})),
                    Some(m) => match m.set_state(to, now) {
                        Ok(()) => Ok(m.gql_status(now)),
                        Err(e) => {
                            let kind = match e {
                                crate::sabakan::machine::StateError::Forbidden { .. } => {
                                    "INVALID_STATE_TRANSITION"
                                }
                                crate::sabakan::machine::StateError::EncryptionKeyExists => {
                                    "ENCRYPTION_KEY_EXISTS"
                                }
                            };
                            Err(json!({"message": e.to_string(), "path": [f.key()],
                                "extensions": {"serial": serial, "type": kind}}))
                        }
                    },
                }
            }
            _ => unreachable!("validated above"),
        };
        match resolved {
            Ok(v) => {
                let v = match out_ty {
                    Some(t) => project(&v, t, sel),
                    None => v,
                };
                data.insert(f.key().to_owned(), v);
            }
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        (200, json!({"data": data}))
    } else {
        // Every root field is non-null: one error nulls the whole data.
        (200, json!({"errors": errors, "data": null}))
    }
}

/// A coerced MachineParams object as the matcher takes it; `null` is no condition.
fn params(v: &Value) -> Option<MachineParams> {
    let obj = v.as_object()?;
    let list = |k: &str| {
        obj.get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    Some(MachineParams {
        labels: list("labels")
            .iter()
            .map(|l| {
                (
                    l["name"].as_str().unwrap_or_default().to_owned(),
                    l["value"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect(),
        racks: list("racks").iter().filter_map(Value::as_i64).collect(),
        roles: list("roles")
            .iter()
            .filter_map(|r| r.as_str().map(str::to_owned))
            .collect(),
        states: list("states")
            .iter()
            .filter_map(|s| s.as_str().and_then(State::from_gql))
            .collect(),
        min_days_before_retire: obj.get("minDaysBeforeRetire").and_then(Value::as_i64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ckes_query_with_its_defaults() {
        let q = r#"query ckeSearch($having: MachineParams = null,
            $notHaving: MachineParams = { roles: ["boot"] states: [RETIRED] }) {
          searchMachines(having: $having, notHaving: $notHaving) { spec { serial } }
        }"#;
        let ops = Parser {
            toks: lex(q).unwrap(),
            pos: 0,
        }
        .document()
        .unwrap();
        assert_eq!(ops.len(), 1);
        let op = &ops[0];
        assert_eq!(op.name.as_deref(), Some("ckeSearch"));
        assert_eq!(op.vars[0].2, Some(Lit::Null));
        assert_eq!(
            op.vars[1].2,
            Some(Lit::Object(vec![
                ("roles".into(), Lit::List(vec![Lit::Str("boot".into())])),
                (
                    "states".into(),
                    Lit::List(vec![Lit::Enum("RETIRED".into())])
                ),
            ]))
        );
        let vars = Vars::new();
        let ty = Type::Named("MachineParams".into(), false);
        let coerced = coerce(op.vars[1].2.as_ref().unwrap(), &ty, &vars, true, "d").unwrap();
        assert_eq!(
            coerced,
            json!({"labels": null, "racks": null, "roles": ["boot"], "states": ["RETIRED"],
                   "minDaysBeforeRetire": null})
        );
    }

    #[test]
    fn coercion_rules() {
        let vars = Vars::new();
        let mp = Type::Named("MachineParams".into(), false);
        let var = |s: &str| from_json(&serde_json::from_str(s).unwrap());
        // A single value becomes a list of one.
        assert_eq!(
            coerce(&var(r#"{"states":"UNHEALTHY"}"#), &mp, &vars, false, "v").unwrap()["states"],
            json!(["UNHEALTHY"])
        );
        for (text, want) in [
            (
                r#"{"states":["retired"]}"#,
                "does not exist in \"MachineState\"",
            ),
            (r#"{"role":["cs"]}"#, "unknown field"),
            (r#"{"racks":["1"]}"#, "is not a valid Int"),
            (r#"{"labels":[{"name":"a"}]}"#, "value: must be defined"),
            (r#"{"labels":[null]}"#, "must not be null"),
        ] {
            let e = coerce(&var(text), &mp, &vars, false, "v").unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
        // In a literal, an enum is a name, not a string.
        let lit = Lit::Object(vec![(
            "states".into(),
            Lit::List(vec![Lit::Str("RETIRED".into())]),
        )]);
        assert!(coerce(&lit, &mp, &vars, true, "l").is_err());
    }
}

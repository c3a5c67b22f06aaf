//! R objects as JSON values and back: the core's serde types (a request in, a summary out)
//! cross the boundary as `serde_json::Value`, so R reads and writes them by their JSON names.

use credence::request::FitRequest;
use extendr_api::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

type R<T> = std::result::Result<T, String>;

/// One JSON value as an R object: objects as named lists, arrays of numbers or strings as
/// vectors, `null` (a non-finite number, an absent option) as `NULL`.
pub(crate) fn to_r(v: &Value) -> Robj {
    match v {
        Value::Null => Robj::from(NULL),
        Value::Bool(b) => Robj::from(*b),
        Value::Number(n) => Robj::from(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => Robj::from(s.as_str()),
        Value::Array(a) if !a.is_empty() && a.iter().all(Value::is_number) => {
            Robj::from(a.iter().map(|x| x.as_f64().unwrap_or(f64::NAN)).collect::<Vec<f64>>())
        }
        Value::Array(a) if !a.is_empty() && a.iter().all(Value::is_string) => {
            Robj::from(a.iter().map(|x| x.as_str().unwrap_or_default().to_owned()).collect::<Vec<String>>())
        }
        Value::Array(a) => List::from_values(a.iter().map(to_r)).into(),
        Value::Object(m) => List::from_names_and_values(m.keys(), m.values().map(to_r))
            .map(Robj::from)
            .unwrap_or_else(|_| Robj::from(NULL)),
    }
}

/// One R object as a JSON value, the inverse of [`to_r`]: a named list is an object (its
/// `NULL` entries dropped: an option left out), any other list an array; a vector of length
/// one is a scalar, a longer or empty one an array; logicals are booleans, strings strings
/// (a factor its labels), integers and doubles numbers (a whole double an integer, so it
/// reads as a count). `NA` and non-finite numbers are errors: no request field means them.
pub(crate) fn from_r(x: &Robj) -> R<Value> {
    let scalar_or_array =
        |mut v: Vec<Value>| if v.len() == 1 { v.pop().unwrap_or(Value::Null) } else { Value::Array(v) };
    Ok(match x.rtype() {
        Rtype::Null => Value::Null,
        Rtype::Logicals => {
            let v = x.as_logical_slice().unwrap_or_default();
            scalar_or_array(
                v.iter().map(|b| if b.is_na() { Err(na()) } else { Ok(Value::Bool(b.is_true())) }).collect::<R<_>>()?,
            )
        }
        Rtype::Integers if x.is_factor() => {
            let labels: Vec<&str> = x.levels().map(|l| l.collect()).unwrap_or_default();
            let codes = x.as_integer_slice().unwrap_or_default();
            let label = |&c: &i32| match usize::try_from(c).ok().and_then(|c| labels.get(c.checked_sub(1)?)) {
                Some(l) => Ok(Value::from(*l)),
                None => Err(na()),
            };
            scalar_or_array(codes.iter().map(label).collect::<R<_>>()?)
        }
        Rtype::Integers => {
            let v = x.as_integer_slice().unwrap_or_default();
            scalar_or_array(
                v.iter().map(|&i| if i == i32::MIN { Err(na()) } else { Ok(Value::from(i)) }).collect::<R<_>>()?,
            )
        }
        Rtype::Doubles => {
            let v = x.as_real_slice().unwrap_or_default();
            scalar_or_array(v.iter().map(|&d| number(d)).collect::<R<_>>()?)
        }
        Rtype::Strings => {
            let s = Strings::try_from(x.clone()).map_err(|e| e.to_string())?;
            scalar_or_array(
                s.iter().map(|r| if r.is_na() { Err(na()) } else { Ok(Value::from(&**r)) }).collect::<R<_>>()?,
            )
        }
        Rtype::List => {
            let list = List::try_from(x.clone()).map_err(|e| e.to_string())?;
            let named = list.names().is_some_and(|mut n| n.all(|n| !n.is_empty() && !n.is_na()));
            if named {
                let mut m = Map::new();
                for (name, value) in list.iter() {
                    let v = from_r(&value).map_err(|e| format!("{name}: {e}"))?;
                    if !v.is_null() {
                        m.insert(name.to_owned(), v);
                    }
                }
                Value::Object(m)
            } else {
                Value::Array(list.values().map(|v| from_r(&v)).collect::<R<_>>()?)
            }
        }
        other => return Err(format!("an R {other:?} is not a value the core reads")),
    })
}

fn na() -> String {
    "NA is not a value".into()
}

/// A double as a JSON number: a whole one (below 2^53) as an integer, so that it reads as a
/// count; NA, NaN and infinities are errors.
fn number(d: f64) -> R<Value> {
    if d.is_nan() {
        // R's NA_real_ is a NaN too.
        return Err(if d.is_na() { na() } else { "NaN is not a number".into() });
    }
    if !d.is_finite() {
        return Err(format!("{d} is not a finite number"));
    }
    if d.fract() == 0.0 && d.abs() < 2f64.powi(53) { Ok(Value::from(d as i64)) } else { Ok(Value::from(d)) }
}

/// The core's request from an R named list (names as the request's fields). serde names an
/// unknown field but not a field of the wrong type, so the error names the entry it is about.
pub(crate) fn request(x: &Robj) -> R<FitRequest> {
    let v = from_r(x)?;
    let Value::Object(m) = &v else {
        return Err("the request must be a named list".into());
    };
    serde_json::from_value(v.clone()).map_err(|e| {
        m.iter()
            .find_map(|(k, x)| {
                let one = Value::Object(Map::from_iter([(k.clone(), x.clone())]));
                serde_json::from_value::<FitRequest>(one).err().map(|e| format!("{k} = {x}: {e}"))
            })
            .unwrap_or_else(|| e.to_string())
    })
}

/// A core options type from an R named list of some of its fields (nested lists for nested
/// options): the list is laid over the JSON of `T::default()`, so every default stays the
/// core's. An unknown name is an error that lists the known ones; a value of the wrong type
/// names its entry.
pub(crate) fn with_defaults<T: Default + Serialize + DeserializeOwned>(x: &Robj, what: &str) -> R<T> {
    let given = match from_r(x)? {
        Value::Object(m) => m,
        // `list()`: an empty list has no names, so it arrives as an empty array.
        Value::Null => Map::new(),
        Value::Array(a) if a.is_empty() => Map::new(),
        _ => return Err(format!("{what} must be a named list")),
    };
    let base = serde_json::to_value(T::default()).map_err(|e| e.to_string())?;
    let merged = overlay(base.clone(), &given, what)?;
    serde_json::from_value(merged).map_err(|e| {
        given
            .iter()
            .find_map(|(k, x)| {
                let one = overlay(base.clone(), &Map::from_iter([(k.clone(), x.clone())]), what).ok()?;
                serde_json::from_value::<T>(one).err().map(|e| format!("{k} = {x}: {e}"))
            })
            .unwrap_or_else(|| e.to_string())
    })
}

/// `base` with the entries of `given` in place of its own, nested objects entry by entry.
fn overlay(mut base: Value, given: &Map<String, Value>, what: &str) -> R<Value> {
    let Value::Object(b) = &mut base else { return Err(format!("{what} has no named options")) };
    for (k, v) in given {
        let Some(slot) = b.get_mut(k) else {
            let known: Vec<&str> = b.keys().map(String::as_str).collect();
            return Err(format!("{what}: unknown option `{k}` (known: {})", known.join(", ")));
        };
        *slot = match (slot.take(), v) {
            (inner @ Value::Object(_), Value::Object(m)) => overlay(inner, m, &format!("{what}${k}"))?,
            (_, v) => v.clone(),
        };
    }
    Ok(base)
}

//! Two reports' figures compared as the steady state promises them: every
//! number to a part in a billion of the larger, or both within 1e-12 of
//! zero (ms or a fraction: far below anything the report prints).

/// Equal to a part in a billion of the larger, or both within 1e-12 of zero.
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) || (a - b).abs() <= 1e-12
}

/// Asserts that two JSON values have the same shape and [`close`] numbers;
/// `names` say which side is which in a failure.
pub fn same_json(
    what: &str,
    names: (&str, &str),
    path: &str,
    a: &serde_json::Value,
    b: &serde_json::Value,
) {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(x.len(), y.len(), "{what}{path}");
            for (k, v) in x {
                same_json(what, names, &format!("{path}.{k}"), v, &y[k]);
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{what}{path}");
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                same_json(what, names, &format!("{path}[{i}]"), v, w);
            }
        }
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!(
                close(x, y),
                "{what}{path}: {} {x} vs {} {y}",
                names.0,
                names.1
            );
        }
        _ => assert_eq!(a, b, "{what}{path}"),
    }
}

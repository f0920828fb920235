//! DynamoDB's generic request validation, the "N validation errors detected"
//! family: each operation declares its fields' constraints (not null, length,
//! pattern, enum, range) in the order the service model lists them, and the
//! violations are reported together in DynamoDB's exact wording.

use ferrodyn_types::DynamoError;

/// Collects constraint violations of one request.
#[derive(Default)]
pub struct Violations {
    found: Vec<String>,
}

/// Longest table ARN accepted in place of a TableName.
pub const MAX_ARN_CHARS: usize = 1024;

/// Allowed table and index names: 3 to 255 of `[a-zA-Z0-9_.-]`.
pub const NAME_PATTERN: &str = "[a-zA-Z0-9_.-]+";

impl Violations {
    fn add(&mut self, value: Option<&str>, field: &str, constraint: &str) {
        let shown = match value {
            Some(v) => format!("'{v}'"),
            None => "null".to_string(),
        };
        self.found.push(format!(
            "Value {shown} at '{field}' failed to satisfy constraint: {constraint}"
        ));
    }

    /// A violation reported without the value ("Value at 'Limit' ...").
    pub fn unvalued(&mut self, field: &str, constraint: &str) {
        self.found.push(format!(
            "Value at '{field}' failed to satisfy constraint: {constraint}"
        ));
    }

    /// The field must be present.
    pub fn not_null<T>(&mut self, field: &str, value: &Option<T>) -> bool {
        if value.is_none() {
            self.add(None, field, "Member must not be null");
            return false;
        }
        true
    }

    /// A table or index name: required, 3 to 255 characters, [a-zA-Z0-9_.-]+.
    pub fn table_name(&mut self, field: &str, value: &Option<String>) {
        if let Some(name) = value {
            self.name_rules(field, name, 3, 255);
        } else {
            self.not_null(field, value);
        }
    }

    /// The TableName of an operation on an existing table (every operation
    /// but CreateTable), which may also be the table's ARN.
    pub fn table_name_or_arn(&mut self, field: &str, value: &Option<String>) {
        match value {
            Some(name) => self.existing_table_rules(field, name),
            None => {
                self.not_null(field, value);
            }
        }
    }

    /// PutItem's and UpdateItem's TableName, which AWS checks before the
    /// rest of the request and reports alone (Dynoxide's captures from AWS
    /// eu-west-2: an empty name beside an invalid ReturnValues answers only
    /// the name; GetItem, DeleteItem, Query and Scan report both).
    pub fn table_name_first(field: &str, value: &Option<String>) -> Result<(), DynamoError> {
        let mut v = Violations::default();
        v.table_name_or_arn(field, value);
        v.finish()
    }

    /// The one home of the rules for naming an existing table, wherever a
    /// request does (TableName, BatchGetItem's and BatchWriteItem's
    /// RequestItems keys, a transaction action's TableName). AWS checks in
    /// two steps: the service model's 1 to 1024 characters (names and ARNs
    /// alike), a violation of which is reported alone (`''` answers only
    /// "greater than or equal to 1"); then, for a plain name, CreateTable's
    /// rules: the pattern and 3 to 255 characters (a 256-character name
    /// answers "less than or equal to 255", `xx` and `x!` are refused too).
    /// The evidence, recorded from AWS, is cited in crates/ferrodyn/tests/fidelity/.
    pub fn existing_table_rules(&mut self, field: &str, name: &str) {
        let len = name.chars().count();
        if len == 0 {
            self.add(
                Some(name),
                field,
                "Member must have length greater than or equal to 1",
            );
        } else if len > MAX_ARN_CHARS {
            self.add(
                Some(name),
                field,
                &format!("Member must have length less than or equal to {MAX_ARN_CHARS}"),
            );
        } else if !name.starts_with("arn:") {
            self.name_rules(field, name, 3, 255);
        }
    }

    /// Length and pattern rules of a table or index name.
    pub fn name_rules(&mut self, field: &str, name: &str, min: usize, max: usize) {
        if !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        {
            self.add(
                Some(name),
                field,
                &format!("Member must satisfy regular expression pattern: {NAME_PATTERN}"),
            );
        }
        let len = name.chars().count();
        if len < min {
            self.add(
                Some(name),
                field,
                &format!("Member must have length greater than or equal to {min}"),
            );
        }
        if len > max {
            self.add(
                Some(name),
                field,
                &format!("Member must have length less than or equal to {max}"),
            );
        }
    }

    /// A string that does not match the field's pattern.
    pub fn pattern(&mut self, field: &str, value: &str, pattern: &str) {
        self.add(
            Some(value),
            field,
            &format!("Member must satisfy regular expression pattern: {pattern}"),
        );
    }

    /// A string field's length bounds.
    pub fn length(&mut self, field: &str, value: Option<&str>, min: usize, max: usize) {
        if let Some(v) = value {
            let len = v.chars().count();
            if len < min {
                self.add(
                    Some(v),
                    field,
                    &format!("Member must have length greater than or equal to {min}"),
                );
            } else if len > max {
                self.add(
                    Some(v),
                    field,
                    &format!("Member must have length less than or equal to {max}"),
                );
            }
        }
    }

    /// A string field restricted to an enumeration (listed as DynamoDB lists it).
    pub fn one_of(&mut self, field: &str, value: Option<&str>, allowed: &[&str]) {
        if let Some(v) = value {
            if !allowed.contains(&v) {
                self.add(
                    Some(v),
                    field,
                    &format!(
                        "Member must satisfy enum value set: [{}]",
                        allowed.join(", ")
                    ),
                );
            }
        }
    }

    /// An integer field's lower and upper bounds.
    pub fn range(&mut self, field: &str, value: Option<i64>, min: i64, max: Option<i64>) {
        if let Some(v) = value {
            let shown = v.to_string();
            if v < min {
                self.add(
                    Some(&shown),
                    field,
                    &format!("Member must have value greater than or equal to {min}"),
                );
            } else if let Some(max) = max.filter(|&m| v > m) {
                self.add(
                    Some(&shown),
                    field,
                    &format!("Member must have value less than or equal to {max}"),
                );
            }
        }
    }

    /// A list's size bounds. DynamoDB echoes the list itself, not its size:
    /// `'[]'` when empty; a too-long one as its members (DynamoDB prints them
    /// as Java objects, we as their JSON, between the same brackets).
    pub fn count<T: serde::Serialize>(
        &mut self,
        field: &str,
        value: Option<&[T]>,
        min: usize,
        max: usize,
    ) {
        let Some(list) = value else {
            return;
        };
        // Rendering the members is only for the message: every request with
        // a list passes through here, so a list within bounds is not
        // serialized (measured: ~9 % of a TransactWriteItems' instructions).
        if (min..=max).contains(&list.len()) {
            return;
        }
        self.size(field, list.len(), &shown_list(list), min, max);
    }

    /// A list's size bounds, the list echoed as `shown` renders it (for
    /// members AWS prints in a form of their own, see [`Violations::count`]).
    pub fn count_shown(
        &mut self,
        field: &str,
        len: usize,
        shown: impl FnOnce() -> String,
        min: usize,
        max: usize,
    ) {
        if !(min..=max).contains(&len) {
            self.size(field, len, &shown(), min, max);
        }
    }

    /// A map whose values are lists of `min..=max` members (BatchWriteItem's
    /// RequestItems). AWS reports one violation for the whole map, echoing
    /// it as `{table=[...]}` and naming both bounds: `Value '{t=[]}' at
    /// 'requestItems' failed to satisfy constraint: Map value must satisfy
    /// constraint: [Member must have length less than or equal to 25,
    /// Member must have length greater than or equal to 1]`.
    pub fn map_value_counts<'a, T: serde::Serialize + 'a>(
        &mut self,
        field: &str,
        map: impl Iterator<Item = (&'a String, &'a Vec<T>)> + Clone,
        min: usize,
        max: usize,
    ) {
        if map
            .clone()
            .all(|(_, list)| (min..=max).contains(&list.len()))
        {
            return;
        }
        let entries: Vec<String> = map
            .map(|(key, list)| format!("{key}={}", shown_list(list)))
            .collect();
        self.found.push(format!(
            "Value '{{{}}}' at '{field}' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to {max}, Member must have length greater than or equal to {min}]",
            entries.join(", ")
        ));
    }

    fn size(&mut self, field: &str, len: usize, shown: &str, min: usize, max: usize) {
        if len < min {
            self.found.push(format!(
                "Value '{shown}' at '{field}' failed to satisfy constraint: Member must have length greater than or equal to {min}"
            ));
        } else if len > max {
            self.found.push(format!(
                "Value '{shown}' at '{field}' failed to satisfy constraint: Member must have length less than or equal to {max}"
            ));
        }
    }

    /// The collected violations as DynamoDB's ValidationException.
    /// Ends the checks and hands back the request in its checked form.
    /// `checked` is built from the raw request with `?` on each required
    /// field, so it is `Some` whenever no violation was recorded: this is how
    /// an operation parses its request into typed values once, without
    /// `expect("checked")` later. (A `None` without a violation would be a
    /// missing check: an internal error, never a panic.)
    pub fn finish_with<T>(self, checked: Option<T>) -> Result<T, DynamoError> {
        self.finish()?;
        checked.ok_or_else(|| {
            DynamoError::internal("a required request field passed validation without a value")
        })
    }

    pub fn finish(self) -> Result<(), DynamoError> {
        match self.found.len() {
            0 => Ok(()),
            1 => Err(DynamoError::validation(format!(
                "1 validation error detected: {}",
                self.found[0]
            ))),
            n => Err(DynamoError::validation(format!(
                "{n} validation errors detected: {}",
                self.found.join("; ")
            ))),
        }
    }
}

/// Enumerations as DynamoDB lists them in its messages.
pub const CONDITIONAL_OPERATOR: &[&str] = &["AND", "OR"];

/// A list as a violation echoes it: its members' JSON (without the absent,
/// null fields) between brackets. AWS prints Java objects there.
fn shown_list<T: serde::Serialize>(list: &[T]) -> String {
    let members: Vec<String> = list
        .iter()
        .map(|m| {
            let mut value = serde_json::to_value(m).unwrap_or_default();
            drop_nulls(&mut value);
            value.to_string()
        })
        .collect();
    format!("[{}]", members.join(", "))
}

fn drop_nulls(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(drop_nulls);
        }
        serde_json::Value::Array(list) => list.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_violations_in_dynamodb_wording() {
        let mut v = Violations::default();
        v.table_name("tableName", &Some("a!".to_string()));
        let message = v.finish().unwrap_err().message;
        assert_eq!(
            message,
            "2 validation errors detected: Value 'a!' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; Value 'a!' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 3"
        );
        let mut v = Violations::default();
        v.not_null("item", &None::<()>);
        assert_eq!(
            v.finish().unwrap_err().message,
            "1 validation error detected: Value null at 'item' failed to satisfy constraint: Member must not be null"
        );
    }
}

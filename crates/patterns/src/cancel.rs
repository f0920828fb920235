//! Reading a TransactionCanceledException: its `CancellationReasons` list is
//! positional (one entry per action, in request order, `None` for actions
//! that were fine), so each entry is mapped back to what the caller meant by
//! that action and explained in its terms, e.g.
//! `change 2 (update users/u1): ConditionalCheckFailed — item changed since staged`.

use serde_json::Value;
use std::fmt;

/// What one action of a transaction stands for, as the caller describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionLabel {
    /// e.g. `change 2 (update users/u1)` or `email marker UNIQ#account#email#a@b`.
    pub what: String,
    /// What a failed condition means for this action, e.g. `item changed
    /// since staged` or `email "a@b" is already taken`.
    pub on_condition_failed: String,
}

/// One action the transaction was cancelled for.
#[derive(Debug, Clone, PartialEq)]
pub struct CancelledAction {
    /// Position of the action in the request (0-based).
    pub position: usize,
    /// The action's label.
    pub what: String,
    /// DynamoDB's reason code (`ConditionalCheckFailed`...).
    pub code: String,
    /// The reason in the caller's terms.
    pub explanation: String,
    /// The item as it was, when the request asked for it with
    /// `ReturnValuesOnConditionCheckFailure: ALL_OLD`.
    pub item: Option<Value>,
}

impl fmt::Display for CancelledAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} — {}", self.what, self.code, self.explanation)
    }
}

/// The `CancellationReasons` of an error body (empty if there are none).
pub fn reasons(body: &Value) -> &[Value] {
    body["CancellationReasons"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Maps each non-`None` reason in `body` to the action at its position.
/// A reason beyond `labels` (which a correct server never sends) is still
/// reported, labelled by its position.
pub fn explain(body: &Value, labels: &[ActionLabel]) -> Vec<CancelledAction> {
    reasons(body)
        .iter()
        .enumerate()
        .filter_map(|(position, reason)| {
            let code = reason["Code"].as_str().unwrap_or("Unknown");
            if code == "None" {
                return None;
            }
            let message = reason["Message"].as_str().unwrap_or("");
            let label = labels.get(position);
            let explanation = match code {
                "ConditionalCheckFailed" => match label {
                    Some(l) => l.on_condition_failed.clone(),
                    None => "its condition was not met".into(),
                },
                "TransactionConflict" => {
                    "another transaction was in progress on this item; nothing was written, \
                     try again"
                        .into()
                }
                "ProvisionedThroughputExceeded" | "ThrottlingError" => {
                    "throttled; nothing was written, try again later".into()
                }
                "ItemCollectionSizeLimitExceeded" => {
                    "the item collection would exceed 10 GB".into()
                }
                _ if !message.is_empty() => message.to_string(),
                _ => "see DynamoDB's documentation for this reason code".into(),
            };
            Some(CancelledAction {
                position,
                what: label
                    .map(|l| l.what.clone())
                    .unwrap_or_else(|| format!("action {}", position + 1)),
                code: code.to_string(),
                explanation,
                item: reason.get("Item").cloned(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels() -> Vec<ActionLabel> {
        (1..=3)
            .map(|n| ActionLabel {
                what: format!("change {n} (update users/u{n})"),
                on_condition_failed: "item changed since staged".into(),
            })
            .collect()
    }

    #[test]
    fn each_reason_is_mapped_to_the_action_at_its_position() {
        let body = json!({"CancellationReasons": [
            {"Code": "None"},
            {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed",
             "Item": {"pk": {"S": "u2"}}},
            {"Code": "None"}
        ]});
        let failed = explain(&body, &labels());
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].position, 1);
        assert_eq!(
            failed[0].to_string(),
            "change 2 (update users/u2): ConditionalCheckFailed — item changed since staged"
        );
        assert_eq!(failed[0].item, Some(json!({"pk": {"S": "u2"}})));
    }

    #[test]
    fn other_codes_are_explained_and_unknown_positions_still_reported() {
        let body = json!({"CancellationReasons": [
            {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"},
            {"Code": "ValidationError", "Message": "One or more parameter values were invalid"},
            {"Code": "None"},
            {"Code": "ConditionalCheckFailed"}
        ]});
        let failed = explain(&body, &labels());
        assert_eq!(failed.len(), 3);
        assert!(failed[0].explanation.contains("try again"));
        assert_eq!(
            failed[1].explanation,
            "One or more parameter values were invalid"
        );
        assert_eq!(failed[2].what, "action 4");
    }

    #[test]
    fn a_body_without_reasons_explains_nothing() {
        assert!(explain(&json!({"message": "x"}), &labels()).is_empty());
    }
}

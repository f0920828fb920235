//! Enumerated request fields (ReturnValues, ReturnConsumedCapacity,
//! ReturnItemCollectionMetrics, ReturnValuesOnConditionCheckFailure) parsed
//! into their enums where the request is decoded. A [`Choice`] keeps the
//! text too: DynamoDB's enum errors quote what the client sent, and PartiQL
//! forwards it into the requests it generates. Each enum's wire names live
//! here, once, and are what the field checks list.

use crate::validate::Violations;
use ferrodyn_engine::capacity::CapacityDetail;
use serde::{Deserialize, Deserializer};

/// An enumeration as DynamoDB names its members on the wire.
pub trait WireEnum: Copy + Default + 'static {
    /// Every member's name, in the order DynamoDB lists them in its errors.
    const NAMES: &'static [&'static str];
    fn from_wire(text: &str) -> Option<Self>;
}

/// An enumerated field as sent: its text and, when the text names a
/// member, the member.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice<T> {
    text: String,
    value: Option<T>,
}

impl<T: WireEnum> Choice<T> {
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl<'de, T: WireEnum> Deserialize<'de> for Choice<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let value = T::from_wire(&text);
        Ok(Choice { text, value })
    }
}

impl<T> serde::Serialize for Choice<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

/// The text as sent (PartiQL forwards it into the requests it generates).
impl<T> From<Choice<T>> for serde_json::Value {
    fn from(choice: Choice<T>) -> serde_json::Value {
        serde_json::Value::String(choice.text)
    }
}

/// The member an optional field names, or the default when it is absent
/// (or, before the field checks have refused it, names none).
pub fn chosen<T: WireEnum>(field: &Option<Choice<T>>) -> T {
    field.as_ref().and_then(|c| c.value).unwrap_or_default()
}

impl Violations {
    /// An enumerated field's check: its text among the enum's names.
    pub fn choice<T: WireEnum>(&mut self, field: &str, value: &Option<Choice<T>>) {
        self.one_of(field, value.as_ref().map(Choice::text), T::NAMES);
    }
}

/// Declares a request enumeration: its members with their wire names, the
/// first member the default (the field absent), and the names in the order
/// DynamoDB lists them in its enum errors.
macro_rules! wire_enum {
    ($(#[$doc:meta])* $name:ident { $first:ident = $first_text:literal $(, $member:ident = $text:literal)* $(,)? } listed $names:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub enum $name {
            #[default]
            $first,
            $($member,)*
        }

        impl WireEnum for $name {
            const NAMES: &'static [&'static str] = $names;
            fn from_wire(text: &str) -> Option<Self> {
                match text {
                    $first_text => Some($name::$first),
                    $($text => Some($name::$member),)*
                    _ => None,
                }
            }
        }
    };
}

wire_enum! {
    /// Which attributes a write returns (ReturnValues).
    ReturnValues {
        None = "NONE",
        AllOld = "ALL_OLD",
        UpdatedOld = "UPDATED_OLD",
        AllNew = "ALL_NEW",
        UpdatedNew = "UPDATED_NEW",
    } listed &["ALL_NEW", "UPDATED_OLD", "ALL_OLD", "NONE", "UPDATED_NEW"]
}

wire_enum! {
    /// ReturnItemCollectionMetrics.
    CollectionMetrics { None = "NONE", Size = "SIZE" } listed &["SIZE", "NONE"]
}

wire_enum! {
    /// ReturnValuesOnConditionCheckFailure.
    OnConditionFailure { None = "NONE", AllOld = "ALL_OLD" } listed &["ALL_OLD", "NONE"]
}

impl WireEnum for CapacityDetail {
    const NAMES: &'static [&'static str] = &["INDEXES", "TOTAL", "NONE"];
    fn from_wire(text: &str) -> Option<Self> {
        CapacityDetail::parse(Some(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_and_a_bad_one_keeps_its_text() {
        fn all<T: WireEnum + std::fmt::Debug>() {
            for name in T::NAMES {
                assert!(T::from_wire(name).is_some(), "{name}");
            }
        }
        all::<ReturnValues>();
        all::<CapacityDetail>();
        all::<CollectionMetrics>();
        all::<OnConditionFailure>();
        let bad: Choice<ReturnValues> = serde_json::from_str("\"ALL\"").unwrap();
        assert_eq!(
            (bad.text(), chosen(&Some(bad.clone()))),
            ("ALL", ReturnValues::None)
        );
    }
}

//! DynamoDB's item-size arithmetic, which decides the 400 KB limit and every
//! capacity unit charged.
//!
//! Rules (AWS "Capacity unit calculations"): names and strings count their UTF-8
//! bytes, binaries their raw bytes, numbers about one byte per two significant
//! digits plus one, BOOL and NULL one byte, lists and maps three bytes plus one
//! byte per element, and sets the sum of their members.

use crate::{AttributeValue, Item};

/// Size of one attribute value (without its name).
pub fn attribute_size(value: &AttributeValue) -> usize {
    match value {
        AttributeValue::S(s) => s.len(),
        AttributeValue::N(n) => n.storage_size(),
        AttributeValue::B(b) => b.len(),
        AttributeValue::Bool(_) | AttributeValue::Null => 1,
        AttributeValue::L(list) => 3 + list.iter().map(|v| attribute_size(v) + 1).sum::<usize>(),
        AttributeValue::M(map) => {
            3 + map
                .iter()
                .map(|(k, v)| k.len() + attribute_size(v) + 1)
                .sum::<usize>()
        }
        AttributeValue::Ss(set) => set.iter().map(String::len).sum(),
        AttributeValue::Ns(set) => set.iter().map(|n| n.storage_size()).sum(),
        AttributeValue::Bs(set) => set.iter().map(Vec::len).sum(),
    }
}

/// Size of a whole item: every attribute's name plus its value.
pub fn item_size(item: &Item) -> usize {
    item.iter()
        .map(|(name, value)| name.len() + attribute_size(value))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Number;

    #[test]
    fn sizes_follow_dynamodb_rules() {
        let mut item = Item::new();
        item.insert("pk".into(), AttributeValue::S("abc".into()));
        item.insert(
            "n".into(),
            AttributeValue::N(Number::parse("12345").unwrap()),
        );
        item.insert(
            "l".into(),
            AttributeValue::L(vec![AttributeValue::Bool(true), AttributeValue::Null]),
        );
        // pk: 2+3; n: 1+ (5 digits -> 3 bytes +1 = 4); l: 1 + 3 + (1+1)*2
        assert_eq!(item_size(&item), 5 + 5 + 8);
    }
}

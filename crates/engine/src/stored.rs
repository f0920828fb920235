//! An item as storage holds it: a size header and the item's DynamoDB
//! JSON. A leaf module (it needs only the item types), so the write path,
//! item collections and reads can all decode items without importing each
//! other.

use ferrodyn_types::{item_size, DynamoError, Item, Result};

/// An item as stored: a 4-byte size header, then its DynamoDB JSON.
///
/// Keeping the JSON means GetItem without a projection can send the stored
/// bytes as they are; keeping the size means capacity needs no re-parse.
pub struct StoredItem {
    pub size: usize,
    pub json: Vec<u8>,
}

impl StoredItem {
    pub fn encode(item: &Item) -> Vec<u8> {
        let size = item_size(item) as u32;
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(&size.to_be_bytes());
        serde_json::to_writer(&mut out, item).expect("plain data always serialises");
        out
    }

    pub fn decode(mut bytes: Vec<u8>) -> Result<StoredItem> {
        if bytes.len() < 4 {
            return Err(DynamoError::internal("corrupt item record"));
        }
        let size = u32::from_be_bytes(bytes[..4].try_into().expect("4 bytes")) as usize;
        bytes.drain(..4);
        Ok(StoredItem { size, json: bytes })
    }

    pub fn parse(&self) -> Result<Item> {
        parse_item_json(&self.json)
    }

    /// The attributes of the item that `keep` accepts, the others skipped
    /// unparsed (a search reading keys back from items with long vectors).
    pub fn parse_only(&self, keep: &dyn Fn(&str) -> bool) -> Result<Item> {
        let mut de = serde_json::Deserializer::from_slice(&self.json);
        serde::de::DeserializeSeed::deserialize(Only(keep), &mut de)
            .map_err(|e| DynamoError::internal(format!("corrupt item record: {e}")))
    }
}

/// Deserialises an item's map, keeping the attributes `.0` accepts.
struct Only<'k>(&'k dyn Fn(&str) -> bool);

impl<'de> serde::de::DeserializeSeed<'de> for Only<'_> {
    type Value = Item;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<Item, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Only<'_> {
    type Value = Item;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an item")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Item, A::Error> {
        let mut item = Item::new();
        while let Some(name) = map.next_key::<String>()? {
            if (self.0)(&name) {
                item.insert(name, map.next_value()?);
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(item)
    }
}

/// Decodes stored item JSON.
pub fn parse_item_json(json: &[u8]) -> Result<Item> {
    serde_json::from_slice(json)
        .map_err(|e| DynamoError::internal(format!("corrupt item record: {e}")))
}

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
}

/// Decodes stored item JSON.
pub fn parse_item_json(json: &[u8]) -> Result<Item> {
    serde_json::from_slice(json)
        .map_err(|e| DynamoError::internal(format!("corrupt item record: {e}")))
}

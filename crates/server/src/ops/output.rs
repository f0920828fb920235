//! The answers of the item operations before they are encoded: GetItem's
//! item, a Query or Scan page, a single write's attributes, a read
//! transaction's items, a write transaction's extras, each with its
//! consumed capacity. The operations' `run` encodes them as DynamoDB's
//! response body; PartiQL takes them as they are (partiql/execute.rs) and
//! reshapes them without reading JSON back.

use ferrodyn_types::Item;
use serde_json::Value;

/// An item of an answer: the stored JSON, sent as it is (the fast path of
/// unprojected reads), or an item built by a projection or a write.
pub enum OutItem {
    Stored(Vec<u8>),
    Built(Item),
}

impl OutItem {
    fn write_to(&self, out: &mut Vec<u8>) {
        match self {
            OutItem::Stored(json) => out.extend_from_slice(json),
            OutItem::Built(item) => {
                serde_json::to_writer(out, item).expect("plain data always serialises")
            }
        }
    }

    /// The item as a JSON value (PartiQL shapes items as values).
    pub fn to_value(&self) -> Value {
        match self {
            OutItem::Stored(json) => {
                serde_json::from_slice(json).expect("stored items are JSON objects")
            }
            OutItem::Built(item) => {
                serde_json::to_value(item).expect("plain data always serialises")
            }
        }
    }
}

/// One item operation's answer.
pub enum Output {
    /// GetItem: the item, if there is one.
    Item {
        item: Option<OutItem>,
        capacity: Option<Value>,
    },
    /// One Query or Scan page; `items` is None for `Select: COUNT`.
    Page {
        items: Option<Vec<OutItem>>,
        count: usize,
        scanned: usize,
        last_evaluated: Option<Item>,
        capacity: Option<Value>,
    },
    /// TransactGetItems: one response per Get, in order (None: no item).
    Gets {
        responses: Vec<Option<OutItem>>,
        capacity: Option<Value>,
    },
    /// TransactWriteItems: what was asked for besides the writes.
    Transacted {
        collection_metrics: Option<Value>,
        capacity: Option<Value>,
    },
    /// PutItem, UpdateItem or DeleteItem: ReturnValues' attributes.
    Write {
        attributes: Option<Item>,
        capacity: Option<Value>,
        collection_metrics: Option<Value>,
    },
}

impl Output {
    /// DynamoDB's response body, written by hand so that stored items go out
    /// as their stored JSON.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.size_hint());
        out.push(b'{');
        let mut first = true;
        let mut field = |out: &mut Vec<u8>, name: &str| {
            if !std::mem::take(&mut first) {
                out.push(b',');
            }
            out.push(b'"');
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b"\":");
        };
        let value = |out: &mut Vec<u8>, v: &Value| {
            serde_json::to_writer(out, v).expect("plain data always serialises")
        };
        match self {
            Output::Item { item, capacity } => {
                if let Some(item) = item {
                    field(&mut out, "Item");
                    item.write_to(&mut out);
                }
                if let Some(capacity) = capacity {
                    field(&mut out, "ConsumedCapacity");
                    value(&mut out, capacity);
                }
            }
            Output::Page {
                items,
                count,
                scanned,
                last_evaluated,
                capacity,
            } => {
                if let Some(items) = items {
                    field(&mut out, "Items");
                    out.push(b'[');
                    for (n, item) in items.iter().enumerate() {
                        if n > 0 {
                            out.push(b',');
                        }
                        item.write_to(&mut out);
                    }
                    out.push(b']');
                }
                field(&mut out, "Count");
                out.extend_from_slice(count.to_string().as_bytes());
                field(&mut out, "ScannedCount");
                out.extend_from_slice(scanned.to_string().as_bytes());
                if let Some(last) = last_evaluated {
                    field(&mut out, "LastEvaluatedKey");
                    serde_json::to_writer(&mut out, last).expect("plain data always serialises");
                }
                if let Some(capacity) = capacity {
                    field(&mut out, "ConsumedCapacity");
                    value(&mut out, capacity);
                }
            }
            Output::Gets {
                responses,
                capacity,
            } => {
                field(&mut out, "Responses");
                out.push(b'[');
                for (n, response) in responses.iter().enumerate() {
                    if n > 0 {
                        out.push(b',');
                    }
                    match response {
                        Some(item) => {
                            out.extend_from_slice(b"{\"Item\":");
                            item.write_to(&mut out);
                            out.push(b'}');
                        }
                        None => out.extend_from_slice(b"{}"),
                    }
                }
                out.push(b']');
                if let Some(capacity) = capacity {
                    field(&mut out, "ConsumedCapacity");
                    value(&mut out, capacity);
                }
            }
            Output::Transacted {
                collection_metrics,
                capacity,
            } => {
                if let Some(metrics) = collection_metrics {
                    field(&mut out, "ItemCollectionMetrics");
                    value(&mut out, metrics);
                }
                if let Some(capacity) = capacity {
                    field(&mut out, "ConsumedCapacity");
                    value(&mut out, capacity);
                }
            }
            Output::Write {
                attributes,
                capacity,
                collection_metrics,
            } => {
                if let Some(attributes) = attributes {
                    field(&mut out, "Attributes");
                    serde_json::to_writer(&mut out, attributes)
                        .expect("plain data always serialises");
                }
                if let Some(capacity) = capacity {
                    field(&mut out, "ConsumedCapacity");
                    value(&mut out, capacity);
                }
                if let Some(metrics) = collection_metrics {
                    field(&mut out, "ItemCollectionMetrics");
                    value(&mut out, metrics);
                }
            }
        }
        out.push(b'}');
        out
    }

    fn size_hint(&self) -> usize {
        let stored = |item: &OutItem| match item {
            OutItem::Stored(json) => json.len() + 1,
            OutItem::Built(_) => 64,
        };
        match self {
            Output::Item { item, .. } => item.as_ref().map_or(0, stored) + 128,
            Output::Page { items, .. } => items.iter().flatten().map(stored).sum::<usize>() + 128,
            Output::Gets { responses, .. } => {
                responses.iter().flatten().map(stored).sum::<usize>() + 128
            }
            Output::Write { .. } | Output::Transacted { .. } => 256,
        }
    }
}

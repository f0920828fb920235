//! The answers of the item operations before they are encoded: GetItem's
//! item, a Query or Scan page, a single write's attributes, a read
//! transaction's items, a write transaction's extras, each with its
//! consumed capacity. The operations' `run` encodes them as DynamoDB's
//! response body; PartiQL takes them as they are (partiql/execute.rs) and
//! reshapes them without reading JSON back.

use ferrodyn_types::Item;
use serde::Serialize;
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
        let mut body = Fields::new(self.size_hint());
        match self {
            Output::Item { item, capacity } => {
                if let Some(item) = item {
                    body.item("Item", item);
                }
                body.optional("ConsumedCapacity", capacity.as_ref());
            }
            Output::Page {
                items,
                count,
                scanned,
                last_evaluated,
                capacity,
            } => {
                if let Some(items) = items {
                    body.items("Items", items);
                }
                body.value("Count", count);
                body.value("ScannedCount", scanned);
                body.optional("LastEvaluatedKey", last_evaluated.as_ref());
                body.optional("ConsumedCapacity", capacity.as_ref());
            }
            Output::Gets {
                responses,
                capacity,
            } => {
                body.responses(responses);
                body.optional("ConsumedCapacity", capacity.as_ref());
            }
            Output::Transacted {
                collection_metrics,
                capacity,
            } => {
                body.optional("ItemCollectionMetrics", collection_metrics.as_ref());
                body.optional("ConsumedCapacity", capacity.as_ref());
            }
            Output::Write {
                attributes,
                capacity,
                collection_metrics,
            } => {
                body.optional("Attributes", attributes.as_ref());
                body.optional("ConsumedCapacity", capacity.as_ref());
                body.optional("ItemCollectionMetrics", collection_metrics.as_ref());
            }
        }
        body.finish()
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

/// A JSON object written field by field.
struct Fields {
    out: Vec<u8>,
    first: bool,
}

impl Fields {
    fn new(capacity: usize) -> Fields {
        let mut out = Vec::with_capacity(capacity);
        out.push(b'{');
        Fields { out, first: true }
    }

    fn name(&mut self, name: &str) {
        if !std::mem::take(&mut self.first) {
            self.out.push(b',');
        }
        self.out.push(b'"');
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(b"\":");
    }

    fn value(&mut self, name: &str, value: &impl Serialize) {
        self.name(name);
        serde_json::to_writer(&mut self.out, value).expect("plain data always serialises");
    }

    fn optional(&mut self, name: &str, value: Option<&impl Serialize>) {
        if let Some(value) = value {
            self.value(name, value);
        }
    }

    fn item(&mut self, name: &str, item: &OutItem) {
        self.name(name);
        item.write_to(&mut self.out);
    }

    fn items(&mut self, name: &str, items: &[OutItem]) {
        self.name(name);
        self.out.push(b'[');
        for (n, item) in items.iter().enumerate() {
            if n > 0 {
                self.out.push(b',');
            }
            item.write_to(&mut self.out);
        }
        self.out.push(b']');
    }

    /// TransactGetItems' Responses: `{"Item": ..}` per found item, `{}` per
    /// missing one.
    fn responses(&mut self, responses: &[Option<OutItem>]) {
        self.name("Responses");
        self.out.push(b'[');
        for (n, response) in responses.iter().enumerate() {
            if n > 0 {
                self.out.push(b',');
            }
            self.out.push(b'{');
            if let Some(item) = response {
                self.out.extend_from_slice(b"\"Item\":");
                item.write_to(&mut self.out);
            }
            self.out.push(b'}');
        }
        self.out.push(b']');
    }

    fn finish(mut self) -> Vec<u8> {
        self.out.push(b'}');
        self.out
    }
}

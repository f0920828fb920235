//! Query and Scan results come a page (at most 1 MB) at a time; a page with
//! `LastEvaluatedKey` means there is more, to be asked for with
//! `ExclusiveStartKey`. [`Pages`] follows that chain lazily, and
//! [`parallel_scan`] splits a Scan into segments read on separate threads.

use crate::{Client, ClientError};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The response pages of one Query or Scan, fetched as the iterator is
/// advanced. Stops after the page without `LastEvaluatedKey`, or after the
/// first error.
pub struct Pages<'c> {
    client: &'c Client,
    operation: &'static str,
    request: Value,
    finished: bool,
    last_evaluated_key: Option<Value>,
}

/// Pages of a Query (`request` is a QueryInput as JSON).
pub fn query(client: &Client, request: Value) -> Pages<'_> {
    Pages::new(client, "Query", request)
}

/// Pages of a Scan (`request` is a ScanInput as JSON).
pub fn scan(client: &Client, request: Value) -> Pages<'_> {
    Pages::new(client, "Scan", request)
}

impl<'c> Pages<'c> {
    fn new(client: &'c Client, operation: &'static str, request: Value) -> Pages<'c> {
        let last_evaluated_key = request.get("ExclusiveStartKey").cloned();
        Pages {
            client,
            operation,
            request,
            finished: false,
            last_evaluated_key,
        }
    }

    /// Where the next page would start: the last page's `LastEvaluatedKey`
    /// (or the request's `ExclusiveStartKey` before the first page). `None`
    /// after the last page. Lets a caller that stops early resume later.
    pub fn last_evaluated_key(&self) -> Option<&Value> {
        self.last_evaluated_key.as_ref()
    }

    /// The items of every page, one by one.
    pub fn items(self) -> Items<'c> {
        Items {
            pages: self,
            current: Vec::new().into_iter(),
        }
    }
}

impl Iterator for Pages<'_> {
    type Item = Result<Value, ClientError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        match self.client.call(self.operation, &self.request) {
            Ok(page) => {
                self.last_evaluated_key = page.get("LastEvaluatedKey").cloned();
                match &self.last_evaluated_key {
                    Some(key) => self.request["ExclusiveStartKey"] = key.clone(),
                    None => self.finished = true,
                }
                Some(Ok(page))
            }
            Err(e) => {
                self.finished = true;
                Some(Err(e))
            }
        }
    }
}

/// Items across pages (see [`Pages::items`]).
pub struct Items<'c> {
    pages: Pages<'c>,
    current: std::vec::IntoIter<Value>,
}

impl Items<'_> {
    /// See [`Pages::last_evaluated_key`].
    pub fn last_evaluated_key(&self) -> Option<&Value> {
        self.pages.last_evaluated_key()
    }
}

impl Iterator for Items<'_> {
    type Item = Result<Value, ClientError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.current.next() {
                return Some(Ok(item));
            }
            match self.pages.next()? {
                Ok(mut page) => {
                    let items = match page.get_mut("Items").map(Value::take) {
                        Some(Value::Array(items)) => items,
                        _ => Vec::new(),
                    };
                    self.current = items.into_iter();
                }
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// What a [`parallel_scan`] read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanSummary {
    pub pages: u64,
    pub items: u64,
    /// `ScannedCount` summed over pages (items read before any filter).
    pub scanned: u64,
}

/// Scans with `segments` parallel segments (`Segment`/`TotalSegments`), one
/// thread each, calling `on_page(segment, page)` for every page. Stops all
/// segments at the first error (from DynamoDB or from `on_page`) and returns
/// it. With `segments == 1` this is a plain paginated Scan.
pub fn parallel_scan<F>(
    client: &Client,
    request: Value,
    segments: u32,
    on_page: F,
) -> Result<ScanSummary, ClientError>
where
    F: Fn(u32, &Value) -> Result<(), ClientError> + Sync,
{
    let segments = segments.max(1);
    let stop = AtomicBool::new(false);
    let first_error: Mutex<Option<ClientError>> = Mutex::new(None);
    let summary = Mutex::new(ScanSummary::default());
    std::thread::scope(|scope| {
        for segment in 0..segments {
            let mut request = request.clone();
            if segments > 1 {
                request["Segment"] = json!(segment);
                request["TotalSegments"] = json!(segments);
            }
            let (stop, first_error, summary, on_page) = (&stop, &first_error, &summary, &on_page);
            scope.spawn(move || {
                for page in scan(client, request) {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let result = page.and_then(|page| {
                        on_page(segment, &page)?;
                        let mut s = summary.lock().expect("no panics while holding the lock");
                        s.pages += 1;
                        s.items += page.get("Count").and_then(Value::as_u64).unwrap_or(0);
                        s.scanned += page
                            .get("ScannedCount")
                            .and_then(Value::as_u64)
                            .unwrap_or(0);
                        Ok(())
                    });
                    if let Err(e) = result {
                        stop.store(true, Ordering::Relaxed);
                        first_error
                            .lock()
                            .expect("no panics while holding the lock")
                            .get_or_insert(e);
                        return;
                    }
                }
            });
        }
    });
    match first_error.into_inner().expect("threads have finished") {
        Some(e) => Err(e),
        None => Ok(summary.into_inner().expect("threads have finished")),
    }
}

//! Query and Scan through the front door: the storage range (built by
//! read/query.rs or read/scan.rs), admission against the table's or the
//! GSI's read capacity, the page, the table reads an LSI page needs, and
//! the page's units charged.

use super::Api;
use crate::index::{Index, IndexKind};
use crate::read::{query_range, scan_range, Page, PageItem, QueryKeys, Segment};
use crate::table::Table;
use crate::throughput::Capacity;
use ferrodyn_expr::Condition;
use ferrodyn_types::{Item, Result};

/// What Query and Scan share: where to read and how much.
pub struct PageRead<'a> {
    pub table: &'a Table,
    pub index: Option<&'a Index>,
    /// Limit: items evaluated before the page stops.
    pub limit: Option<usize>,
    pub filter: Option<&'a Condition>,
    pub consistent: bool,
    /// Whether the answer needs every attribute of each item (Select
    /// ALL_ATTRIBUTES or a projection): an LSI that does not project
    /// everything then reads the items from the table, as DynamoDB does.
    pub full_items: bool,
}

/// One page and the units it cost (charged).
pub struct PageOutput {
    pub page: Page,
    pub units: f64,
}

impl Api<'_> {
    /// Query: one partition, narrowed by the sort-key condition, read
    /// forward or backward from `start_key`.
    pub fn query(
        &self,
        read: PageRead<'_>,
        keys: &QueryKeys<'_>,
        start_key: Option<&Item>,
        forward: bool,
    ) -> Result<PageOutput> {
        let range = query_range(read.table, read.index, keys, start_key, forward)?;
        read.table.admit_read(read.index)?;
        let partition = (self.engine).admit_query(read.table, read.index, &keys.hash)?;
        if read.consistent {
            self.engine.read_barrier(read.table)?; // MRSC (replication/strong.rs)
        }
        let mut page = self.engine.read_page(
            read.table,
            read.index,
            range,
            !forward,
            read.limit,
            read.filter,
        )?;
        self.fetch_from_table(&read, &mut page)?;
        let units = page.read_units(read.consistent);
        read.table.charge_read(read.index, units);
        self.engine
            .count_query_contributor(&read, &keys.hash, units);
        if let Some(hash) = partition {
            (self.engine).charge_partition(read.table, read.index, Capacity::Read, hash, units);
        }
        Ok(PageOutput { page, units })
    }

    /// Scan: the whole table or index, or one segment of it, from `start_key`.
    pub fn scan(
        &self,
        read: PageRead<'_>,
        segment: Option<Segment>,
        start_key: Option<&Item>,
    ) -> Result<PageOutput> {
        let (range, start) = scan_range(read.table, read.index, segment, start_key)?;
        read.table.admit_read(read.index)?;
        // Partition limits: a page is admitted and charged by the partition
        // it starts in (it may run on into the next; a simplification).
        let partition = start.first_hash();
        (self.engine).admit_partition(read.table, read.index, Capacity::Read, partition)?;
        if read.consistent {
            self.engine.read_barrier(read.table)?; // MRSC (replication/strong.rs)
        }
        let mut page = self.engine.read_page(
            read.table,
            read.index,
            range,
            false,
            read.limit,
            read.filter,
        )?;
        self.fetch_from_table(&read, &mut page)?;
        let units = start.units(read.table, read.index, &page, read.consistent);
        read.table.charge_read(read.index, units);
        (self.engine).charge_partition(read.table, read.index, Capacity::Read, partition, units);
        Ok(PageOutput { page, units })
    }

    /// For an LSI that does not project everything, a page that needs full
    /// items reads them from the table; the extra reads are added to the
    /// page's cost.
    fn fetch_from_table(&self, read: &PageRead<'_>, page: &mut Page) -> Result<()> {
        let Some(index) = read.index else {
            return Ok(());
        };
        if index.kind != IndexKind::Local || index.projects_all() || !read.full_items {
            return Ok(());
        }
        for entry in &mut page.items {
            let key = read.table.schema.extract(entry.item()?);
            if let Some(stored) = self.engine.get_item(read.table, &key)? {
                page.bytes_read += stored.size;
                *entry = PageItem::new(stored.json, None);
            }
        }
        Ok(())
    }
}

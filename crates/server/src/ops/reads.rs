//! What Query and Scan share: Select and projection rules, the starting key,
//! and the page response (Items, Count, ScannedCount, LastEvaluatedKey,
//! ConsumedCapacity).

use crate::ops::choice::Choice;
use crate::ops::output::{OutItem, Output};
use crate::validate::{self, Violations};
use ferrodyn_engine::capacity::{CapacityDetail, Consumed};
use ferrodyn_engine::index::{Index, IndexKind, IndexProjection, IndexState};
use ferrodyn_engine::read::Page;
use ferrodyn_engine::table::Table;
use ferrodyn_expr::{legacy_attributes_to_get, parse_projection, ExpressionContext, Projection};
use ferrodyn_types::{DynamoError, Family, Result};
use std::sync::Arc;

pub const SELECT_VALUES: &[&str] = &[
    "SPECIFIC_ATTRIBUTES",
    "COUNT",
    "ALL_ATTRIBUTES",
    "ALL_PROJECTED_ATTRIBUTES",
];

/// The parameters Query and Scan share, checked in one place.
pub struct ReadParams<'a> {
    pub table_name: &'a Option<String>,
    pub index_name: &'a Option<String>,
    pub select: &'a Option<String>,
    pub limit: Option<i64>,
    pub conditional_operator: &'a Option<String>,
    /// Whether the legacy filter (QueryFilter / ScanFilter) is given.
    pub has_legacy_filter: bool,
    pub return_consumed_capacity: &'a Option<Choice<CapacityDetail>>,
    pub attributes_to_get: &'a Option<Vec<String>>,
    pub projection_expression: &'a Option<String>,
    /// Query (true) or Scan: they word a Limit below 1 differently.
    pub query: bool,
}

impl ReadParams<'_> {
    /// The shared field constraints.
    pub fn check(&self, v: &mut Violations) {
        v.table_name_or_arn("tableName", self.table_name);
        if let Some(index) = self.index_name {
            v.name_rules("indexName", index, 3, 255);
        }
        v.one_of("select", self.select.as_deref(), SELECT_VALUES);
        match self.limit {
            // AWS: Query names the field `Limit` and echoes no value; Scan
            // reports it as the generic constraint ("Value '0' at 'limit'").
            Some(limit) if self.query && limit < 1 => {
                v.unvalued("Limit", "Member must have value greater than or equal to 1")
            }
            _ => v.range("limit", self.limit, 1, None),
        }
        v.one_of(
            "conditionalOperator",
            self.conditional_operator.as_deref(),
            validate::CONDITIONAL_OPERATOR,
        );
        v.choice("returnConsumedCapacity", self.return_consumed_capacity);
        v.count(
            "attributesToGet",
            self.attributes_to_get.as_deref(),
            1,
            usize::MAX,
        );
    }

    /// Checks made once the field constraints hold: ConditionalOperator needs
    /// the legacy filter, and Select must agree with the projection.
    pub fn select(&self) -> Result<Select> {
        if self.conditional_operator.is_some() && !self.has_legacy_filter {
            return Err(DynamoError::validation(
                "ConditionalOperator cannot be used without Filter or Expected",
            ));
        }
        select(
            self.select.as_deref(),
            self.attributes_to_get.is_some(),
            self.projection_expression.is_some(),
            self.index_name.as_deref(),
        )
    }

    /// The projection, from ProjectionExpression or AttributesToGet.
    pub fn projection(&self, ctx: &mut ExpressionContext) -> Result<Option<Projection>> {
        Ok(match (self.projection_expression, self.attributes_to_get) {
            (Some(text), _) => Some(parse_projection(text, ctx)?),
            (None, Some(names)) => Some(legacy_attributes_to_get(names)?),
            (None, None) => None,
        })
    }
}

/// What a page returns per item.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Select {
    All,
    AllProjected,
    Count,
    Specific,
}

impl Select {
    /// Whether the answer needs every attribute of each item (all of them,
    /// or a projection that may name any): an LSI page that does not
    /// project everything is then read from the table.
    pub fn full_items(self) -> bool {
        matches!(self, Select::All | Select::Specific)
    }
}

/// The index a Query or Scan names, checked as DynamoDB checks it (a
/// vector index is read only by SearchVectors: `vector_refusal` is the
/// operation's words for it, as Dynoxide 1.5.0 gives them).
pub fn resolve_index(
    table: &Table,
    name: Option<&str>,
    consistent: bool,
    vector_refusal: &str,
) -> Result<Option<Arc<Index>>> {
    let Some(name) = name else { return Ok(None) };
    if table.vector_index(name).is_some() {
        return Err(DynamoError::validation(vector_refusal));
    }
    let index = table.index(name).ok_or_else(|| {
        DynamoError::validation(format!(
            "The table does not have the specified index: {name}"
        ))
        // PartiQL names no index here.
        .worded_newer(
            Family::UnknownIndex,
            "The table does not have the specified index",
        )
    })?;
    if index.kind == IndexKind::Global {
        if consistent {
            return Err(DynamoError::validation(
                "Consistent reads are not supported on global secondary indexes",
            ));
        }
        if index.state() == IndexState::Backfilling {
            return Err(DynamoError::validation(format!(
                "Cannot read from backfilling global secondary index: {name}"
            )));
        }
    }
    Ok(Some(index))
}

/// Refines Select for an index: the default is the projected attributes, and
/// a GSI cannot return attributes it does not project.
pub fn select_for_index(
    select: Select,
    explicit: Option<&str>,
    index: Option<&Index>,
) -> Result<Select> {
    let Some(index) = index else {
        return Ok(select);
    };
    if select == Select::All && explicit.is_none() {
        return Ok(Select::AllProjected);
    }
    if select == Select::All && index.kind == IndexKind::Global && !index.projects_all() {
        return Err(DynamoError::invalid_parameter(format!(
            "Select type ALL_ATTRIBUTES is not supported for global secondary index {} because its projection type is not ALL",
            index.name
        )));
    }
    Ok(select)
}

/// A GSI that does not project every attribute cannot return one it lacks:
/// a ProjectionExpression or AttributesToGet naming such an attribute is an
/// error rather than a silent omission. (An LSI reads it from the table.)
pub fn check_projected(
    table: &Table,
    index: Option<&Index>,
    projection: Option<&Projection>,
) -> Result<()> {
    let (Some(index), Some(projection)) = (index, projection) else {
        return Ok(());
    };
    if index.kind != IndexKind::Global || index.projects_all() {
        return Ok(());
    }
    let missing = projection.paths.iter().map(|p| p.root()).find(|name| {
        !table.schema.is_key_attribute(name)
            && !index.schema.is_key_attribute(name)
            && !matches!(&index.projection, IndexProjection::Include(names) if names.iter().any(|n| n == name))
    });
    match missing {
        Some(name) => Err(DynamoError::invalid_parameter(format!(
            "Global secondary index {} does not project the requested attribute {name}",
            index.name
        ))),
        None => Ok(()),
    }
}

/// Checks Select against the projection parameters, as DynamoDB does.
pub fn select(
    select: Option<&str>,
    has_attributes_to_get: bool,
    has_projection_expression: bool,
    index: Option<&str>,
) -> Result<Select> {
    let projecting = has_attributes_to_get || has_projection_expression;
    match select {
        Some("ALL_PROJECTED_ATTRIBUTES") if index.is_none() => Err(DynamoError::validation(
            "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName",
        )
        .in_family(Family::SelectValidation)),
        Some("SPECIFIC_ATTRIBUTES") if !projecting => Err(DynamoError::validation(
            "Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES",
        )
        .in_family(Family::SelectValidation)),
        Some(other @ ("ALL_ATTRIBUTES" | "ALL_PROJECTED_ATTRIBUTES" | "COUNT")) if projecting => {
            let parameter = if has_attributes_to_get { "AttributesToGet" } else { "ProjectionExpression" };
            // AWS names COUNT "only the Count" here (moto's AWS-verified tests).
            let chosen = if other == "COUNT" { "only the Count" } else { other };
            Err(DynamoError::validation(format!(
                "Cannot specify the {parameter} when choosing to get {chosen}"
            ))
            .in_family(Family::SelectValidation))
        }
        Some("COUNT") => Ok(Select::Count),
        Some("ALL_PROJECTED_ATTRIBUTES") => Ok(Select::AllProjected),
        _ if projecting => Ok(Select::Specific),
        _ => Ok(Select::All),
    }
}

/// The answer of one page: unprojected items as their stored JSON.
pub fn page_output(
    table: &Table,
    index: Option<&Index>,
    page: Page,
    select: Select,
    projection: Option<&Projection>,
    units: f64,
    detail: CapacityDetail,
) -> Result<Output> {
    let count = page.items.len();
    let items = if select == Select::Count {
        None
    } else {
        let mut items = Vec::with_capacity(count);
        for mut entry in page.items {
            items.push(match projection {
                Some(p) => OutItem::Built(p.apply(entry.item()?)),
                None => OutItem::Stored(entry.json),
            });
        }
        Some(items)
    };
    let consumed = match index {
        Some(index) => Consumed::index_read(&table.name, &index.name, index.kind, units),
        None => Consumed::read(&table.name, units),
    };
    Ok(Output::Page {
        items,
        count,
        scanned: page.scanned,
        last_evaluated: page.last_evaluated,
        capacity: consumed.to_json(detail),
    })
}

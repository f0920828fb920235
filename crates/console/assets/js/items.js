// The item explorer: a Query/Scan form above a paginated grid. Pages come
// from the server one at a time (next page by LastEvaluatedKey), so a table
// of a million items costs what one page costs. Columns are the union of the
// page's attributes, keys first; cells are typed; columns sort and hide;
// rows open as plain JSON or DynamoDB JSON; edits are staged (stage.js).

import { api } from './api.js';
import { el, fill, field, button, select, dialog, errorBox, toast, codeBlock, tabs, $ } from './ui.js';
import { renderValue, typeOf, TYPES, editText, parseTyped, keyId, keyOf, compareValues } from './values.js';
import { stageChange, stagedFor, stagedChanges, onStageChange } from './stage.js';
import { bulkDialog } from './bulk.js';
import { vectorForm, searchRequest, resultItems, searchCommands, SCORE } from './vectors.js';

const PAGE_SIZES = [25, 50, 100, 250, 500, 1000];
let view = null;

onStageChange(() => { if (view && document.body.contains(view.root)) renderGrid(); });

/** Key attribute names of the table (and of an index) from its description. */
export function keyNames(schema) {
  const hash = schema.find((k) => k.KeyType === 'HASH')?.AttributeName;
  const range = schema.find((k) => k.KeyType === 'RANGE')?.AttributeName;
  return range ? [hash, range] : [hash];
}

export function explorer(table) {
  const tableKeys = keyNames(table.KeySchema);
  const types = Object.fromEntries((table.AttributeDefinitions || []).map((d) => [d.AttributeName, d.AttributeType]));
  const indexes = [
    ...(table.GlobalSecondaryIndexes || []).map((i) => ({ ...i, kind: 'GSI' })),
    ...(table.LocalSecondaryIndexes || []).map((i) => ({ ...i, kind: 'LSI' })),
  ];
  const previous = view && view.table.TableName === table.TableName ? view : null;
  view = {
    table, tableKeys, types, indexes, vectorIndexes: table.VectorIndexes || [],
    pageSize: previous?.pageSize || Number(localStorage.getItem('ferrodyn.pageSize')) || 50,
    hidden: previous?.hidden || new Set(), sort: previous?.sort || null,
    selection: new Set(), starts: [null], page: 0, items: [], lastKey: null, segment: 0,
    root: null, result: null,
  };
  view.form = buildForm();
  view.summary = el('div.summary', { 'aria-live': 'polite' });
  view.toolbar = el('div.toolbar');
  view.grid = el('div.gridwrap');
  view.requestBox = el('details.request', el('summary', 'Request, aws and ferrodyn commands'), el('div'));
  view.notes = el('div.gridnotes');
  view.root = el('div.explorer', view.form.root, el('div.bar', view.summary, view.toolbar), view.notes, view.grid, view.requestBox);
  applyFormState(view.form, new URLSearchParams(location.hash.split('?')[1] || ''));
  run();
  return view.root;
}

// ---- the form in the URL -------------------------------------------------------
// The query form lives in the address after `?` (#/table/T?op=Query&pk=u1…),
// so a reload keeps it and a link shares it. Only what differs from the
// defaults is written.

const FORM_FIELDS = ['index', 'pk', 'skOp', 'sk', 'sk2', 'filter', 'projection'];

function formState(f) {
  const state = new URLSearchParams();
  if (opValue(f) === 'Query') state.set('op', 'Query');
  for (const name of FORM_FIELDS) if (f[name].value) state.set(name, f[name].value);
  if (f.forward.value === 'false') state.set('forward', 'false');
  if (f.consistent.checked) state.set('consistent', '1');
  if (Number(f.segments.value) > 1) state.set('segments', f.segments.value);
  return state;
}

function applyFormState(f, state) {
  if (state.get('op') === 'Query') f.op.querySelector('input[value=Query]').checked = true;
  if (state.get('index') && !view.indexes.some((i) => i.IndexName === state.get('index'))) state.delete('index');
  for (const name of FORM_FIELDS) if (state.has(name)) f[name].value = state.get(name);
  if (state.get('forward') === 'false') f.forward.value = 'false';
  f.consistent.checked = state.get('consistent') === '1';
  if (state.has('segments')) f.segments.value = state.get('segments');
  f.sync();
}

/** Writes the form into the address without a navigation (no hashchange). */
function rememberForm() {
  const [path] = location.hash.split('?');
  const tab = path.split('/')[3];
  if (!path.startsWith('#/table/') || (tab && tab !== 'items')) return;
  const state = formState(view.form).toString();
  const next = state ? `${path}?${state}` : path;
  if (next !== location.hash) history.replaceState(null, '', next);
}

// ---- the form ------------------------------------------------------------------

function buildForm() {
  const f = {};
  f.op = el('div.segmented', { role: 'radiogroup', 'aria-label': 'Operation' },
    ['Scan', 'Query', ...(view.vectorIndexes.length ? ['Vectors'] : [])].map((op) => el('label', el('input', { type: 'radio', name: 'op', value: op, checked: op === 'Scan' }), op)));
  f.index = select([['', `Table: ${view.table.TableName}`], ...view.indexes.map((i) => [i.IndexName, `${i.kind}: ${i.IndexName}`])], '', { 'aria-label': 'Table or index' });
  f.pk = el('input', { 'aria-label': 'Partition key value', autocomplete: 'off' });
  f.skOp = select([['', '(any)'], '=', '<', '<=', '>', '>=', ['between', 'between'], ['begins_with', 'begins with']], '', { 'aria-label': 'Sort key condition' });
  f.sk = el('input', { 'aria-label': 'Sort key value', autocomplete: 'off' });
  f.sk2 = el('input', { 'aria-label': 'Sort key upper value', autocomplete: 'off', hidden: true });
  f.filter = el('input', { 'aria-label': 'Filter', placeholder: 'e.g. status = "active" and visits > 3', autocomplete: 'off', class: 'mono' });
  f.projection = el('input', { 'aria-label': 'Projection', placeholder: 'all attributes', autocomplete: 'off', class: 'mono' });
  f.forward = select([['true', 'Ascending'], ['false', 'Descending']], 'true', { 'aria-label': 'Sort direction' });
  f.consistent = el('input', { type: 'checkbox', 'aria-label': 'Strongly consistent read' });
  f.segments = el('input', { type: 'number', min: 1, max: 64, value: 1, 'aria-label': 'Parallel scan segments', class: 'narrow' });
  f.pageSize = select(PAGE_SIZES.map((n) => [String(n), `${n} per page`]), String(view.pageSize), { 'aria-label': 'Page size' });
  f.run = el('button.btn.primary', { type: 'submit', 'aria-keyshortcuts': 'Control+Enter' }, 'Scan');
  f.pkLabel = el('label', { for: (f.pk.id = 'pk-input') }, 'Partition key');
  f.skLabel = el('label', { for: (f.sk.id = 'sk-input') }, 'Sort key');
  const queryRow = el('div.row.query-only', { hidden: true },
    el('div.field', f.pkLabel, f.pk),
    el('div.field', f.skLabel, el('div.row', f.skOp, f.sk, f.sk2)),
    el('div.field', el('label', 'Order'), f.forward));
  const scanOnly = el('div.field.scan-only', el('label', { for: (f.segments.id = 'segments') }, 'Segments'), f.segments);
  const sync = () => {
    const query = opValue(f) === 'Query';
    const vectors = opValue(f) === 'Vectors';
    queryRow.hidden = !query;
    scanOnly.hidden = query || vectors;
    filterRow.hidden = vectors;
    f.index.hidden = f.pageSize.hidden = vectors;
    f.consistent.parentElement.hidden = vectors;
    if (f.vec) f.vec.root.hidden = !vectors;
    f.run.textContent = vectors ? 'Search' : query ? 'Query' : 'Scan';
    const [pk, sk] = currentKeys(f);
    f.pkLabel.textContent = `Partition key · ${pk} (${view.types[pk] || 'S'})`;
    f.skLabel.textContent = sk ? `Sort key · ${sk} (${view.types[sk] || 'S'})` : 'Sort key (none)';
    f.skOp.disabled = f.sk.disabled = !sk;
    if (!sk) f.skOp.value = '';
    f.sk2.hidden = f.skOp.value !== 'between';
  };
  f.op.addEventListener('change', sync);
  f.index.addEventListener('change', sync);
  f.skOp.addEventListener('change', sync);
  f.pageSize.addEventListener('change', () => {
    view.pageSize = Number(f.pageSize.value);
    localStorage.setItem('ferrodyn.pageSize', f.pageSize.value);
    run();
  });
  const composer = conditionComposer(f.filter);
  const filterRow = el('div', el('div.row', el('div.field.grow', el('label', { for: (f.filter.id = 'filter-input') }, 'Filter'), f.filter),
    el('div.field', el('label', { for: (f.projection.id = 'projection-input') }, 'Projection'), f.projection),
    scanOnly), composer);
  f.vec = view.vectorIndexes.length ? vectorForm(view.vectorIndexes, view.types, () => {}) : null;
  f.root = el('form.queryform', { 'aria-label': 'Query or scan', onsubmit: (e) => { e.preventDefault(); run(); } },
    el('div.row', f.op, f.index, el('span.spacer'), el('label.check', f.consistent, 'Consistent read'), f.pageSize, f.run),
    queryRow,
    f.vec?.root,
    filterRow);
  f.sync = sync;
  setTimeout(sync);
  return f;
}

/** A typed condition from a form, appended to the filter in the readable
 * syntax (strings quoted, numbers bare), which the server aliases and types. */
function conditionComposer(filter) {
  const name = el('input', { 'aria-label': 'Condition attribute', placeholder: 'attribute', autocomplete: 'off' });
  const op = select([['=', '='], ['<>', '≠'], ['<', '<'], ['<=', '≤'], ['>', '>'], ['>=', '≥'], ['begins_with', 'begins with'],
    ['contains', 'contains'], ['attribute_exists', 'exists'], ['attribute_not_exists', 'does not exist']], '=', { 'aria-label': 'Condition operator' });
  const type = select([['S', 'String'], ['N', 'Number'], ['BOOL', 'Boolean'], ['NULL', 'Null']], 'S', { 'aria-label': 'Condition value type' });
  const value = el('input', { 'aria-label': 'Condition value', placeholder: 'value', autocomplete: 'off' });
  const add = () => {
    const path = /^[A-Za-z][A-Za-z0-9_]*$/.test(name.value.trim()) ? name.value.trim() : `\`${name.value.trim()}\``;
    if (!name.value.trim()) return;
    const literal = type.value === 'S' ? JSON.stringify(value.value)
      : type.value === 'N' ? value.value.trim() : type.value === 'BOOL' ? String(value.value.trim() === 'true') : 'null';
    const clause = ['attribute_exists', 'attribute_not_exists'].includes(op.value) ? `${op.value}(${path})`
      : ['begins_with', 'contains'].includes(op.value) ? `${op.value}(${path}, ${literal})` : `${path} ${op.value} ${literal}`;
    filter.value = filter.value.trim() ? `${filter.value.trim()} and ${clause}` : clause;
    name.value = value.value = '';
  };
  op.addEventListener('change', () => { value.hidden = type.hidden = op.value.startsWith('attribute_'); });
  return el('details.composer', el('summary', '+ Add a typed condition to the filter'),
    el('div.row', name, op, type, value, button('Add to filter', add, 'small')));
}

const opValue = (f) => f.op.querySelector('input:checked').value;

function currentKeys(f) {
  const index = view.indexes.find((i) => i.IndexName === f.index.value);
  return keyNames(index ? index.KeySchema : view.table.KeySchema);
}

function typed(name, text) {
  const type = view.types[name] || 'S';
  return type === 'N' ? parseTyped('N', text) : { [type]: text };
}

/** The form as the console API's read request. */
export function readForm() {
  const f = view.form;
  if (opValue(f) === 'Vectors') {
    return { operation: 'SearchVectors', request: searchRequest(f.vec, view.table.TableName, view.types) };
  }
  const query = opValue(f) === 'Query';
  const [pk, sk] = currentKeys(f);
  const form = {
    operation: query ? 'Query' : 'Scan',
    table: view.table.TableName,
    index: f.index.value || undefined,
    filter: f.filter.value.trim() || undefined,
    projection: f.projection.value.trim() || undefined,
    consistent: f.consistent.checked,
    limit: view.pageSize,
  };
  if (query) {
    if (!f.pk.value) throw Object.assign(new Error(`a Query needs the partition key ${pk}`), { code: 'ValidationException' });
    form.pk = { name: pk, value: typed(pk, f.pk.value) };
    form.forward = f.forward.value === 'true';
    if (sk && f.skOp.value) {
      form.sk = { name: sk, op: f.skOp.value, value: typed(sk, f.sk.value) };
      if (f.skOp.value === 'between') form.sk.value2 = typed(sk, f.sk2.value);
    }
  } else {
    form.segments = Math.max(1, Number(f.segments.value) || 1);
  }
  return form;
}

/** Runs the form from its first page. */
export function run() {
  rememberForm();
  view.starts = [null];
  view.page = 0;
  view.segment = 0;
  view.selection.clear();
  return loadPage();
}

export function refresh() {
  return view && document.body.contains(view.root) ? loadPage() : null;
}

async function loadPage() {
  let form;
  try {
    form = readForm();
  } catch (e) {
    fill(view.summary, errorBox(e));
    return;
  }
  if (form.operation === 'SearchVectors') return searchPage(form);
  const start = view.starts[view.page];
  form.startKey = start?.key || undefined;
  form.segment = start?.segment || 0;
  // Tests shorten how long a filtered page reads on to fill itself.
  form.fillMillis = Number(localStorage.getItem('ferrodyn.fillMillis')) || undefined;
  view.summary.classList.add('loading');
  const seq = (view.seq = (view.seq || 0) + 1);
  try {
    const result = await api('read', form);
    if (seq !== view.seq) return; // a newer request superseded this one
    const answered = performance.now();
    view.result = result;
    view.readAt = new Date().toLocaleTimeString();
    view.grid.classList.remove('stale');
    view.items = result.Items;
    view.lastKey = result.LastEvaluatedKey;
    // A parallel scan pages through each segment in turn.
    if (!view.lastKey && form.segments > 1 && form.segment + 1 < form.segments) {
      view.lastKey = null;
      view.nextStart = { key: null, segment: form.segment + 1 };
    } else {
      view.nextStart = view.lastKey ? { key: view.lastKey, segment: form.segment } : null;
    }
    renderSummary(result, form);
    renderRequest(result);
    renderGrid();
    // Server answer → grid painted (BENCHMARKS.md, bench/console.py): the
    // frame after the one that lays the grid out and paints it.
    const root = view.root;
    requestAnimationFrame(() => setTimeout(() => { root.dataset.drawMs = String(Math.round(performance.now() - answered)); }));
    document.dispatchEvent(new CustomEvent('ferrodyn:pageloaded', { detail: view.table.TableName }));
  } catch (e) {
    if (seq !== view.seq) return;
    // Keep what was read, dimmed and dated, rather than an empty grid: an
    // outage or a bad filter should not take the last good page away.
    const kept = view.grid.querySelector('table.grid');
    fill(view.summary, errorBox(e),
      kept ? el('p.hint.stale-note', `The grid still shows the page read at ${view.readAt || 'the last read'}; it is not the answer to this request.`) : null);
    view.grid.classList.toggle('stale', !!kept);
  } finally {
    view.summary.classList.remove('loading');
  }
}

/** One SearchVectors: its results in the grid, most similar first. */
async function searchPage(form) {
  view.summary.classList.add('loading');
  const seq = (view.seq = (view.seq || 0) + 1);
  try {
    const answer = await api('call/SearchVectors', form.request);
    if (seq !== view.seq) return;
    view.result = { operation: 'SearchVectors', request: form.request, commands: searchCommands(form.request) };
    view.items = resultItems(answer);
    view.lastKey = view.nextStart = null;
    view.sort = null;
    view.grid.classList.remove('stale');
    const bytes = answer.ConsumedCapacity?.VectorSearchRequestBytes;
    fill(view.summary,
      el('span.metric', el('b', String(view.items.length)), ' results, most similar first'),
      bytes !== undefined && el('span.metric', el('b', String(bytes)), ' vector search bytes'));
    renderRequest(view.result);
    renderGrid();
    document.dispatchEvent(new CustomEvent('ferrodyn:pageloaded', { detail: view.table.TableName }));
  } catch (e) {
    if (seq === view.seq) fill(view.summary, errorBox(e));
  } finally {
    view.summary.classList.remove('loading');
  }
}

function renderSummary(result, form) {
  const cap = result.ConsumedCapacity?.CapacityUnits;
  fill(view.summary,
    el('span.metric', el('b', String(result.Count)), ' items'),
    el('span.metric', 'scanned ', el('b', String(result.ScannedCount))),
    result.Calls > 1 && el('span.metric', { title: 'The filter matched few items, so the page read on to fill itself' }, 'in ', el('b', String(result.Calls)), ' requests'),
    cap !== undefined && el('span.metric', el('b', String(Math.round(cap * 100) / 100)), ' RCU'),
    form.segments > 1 && el('span.metric', `segment ${form.segment + 1}/${form.segments}`),
    el('span.pager', { role: 'navigation', 'aria-label': 'Pages' },
      button('‹ Prev', () => { view.page--; loadPage(); }, 'small ghost', { disabled: view.page === 0, 'aria-label': 'Previous page' }),
      el('span.pageno', `Page ${view.page + 1}`),
      button('Next ›', nextPage, 'small ghost', { disabled: !view.nextStart, 'aria-label': 'Next page' })));
}

function renderRequest(result) {
  fill(view.requestBox.querySelector('div'), tabs([
    { label: 'Request JSON', render: () => codeBlock(JSON.stringify(result.request, null, 2), `${result.operation} request`) },
    { label: 'aws CLI', render: () => codeBlock(result.commands.aws, 'aws command', { wrap: true }) },
    { label: 'ferrodyn CLI', render: () => codeBlock(result.commands.ferrodyn, 'ferrodyn command', { wrap: true }) },
  ], 'request formats'));
}

// ---- the grid ------------------------------------------------------------------

function columnsOf(items) {
  const keys = [...new Set([...view.tableKeys, ...currentKeys(view.form)])];
  if (items.some((item) => item[SCORE])) keys.push(SCORE);
  const others = new Set();
  for (const item of items) for (const name of Object.keys(item)) if (!keys.includes(name)) others.add(name);
  return [...keys, ...[...others].sort()];
}

/** Rows to show: the page (with staged values) plus staged new items. */
function rows() {
  const table = view.table.TableName;
  const pageIds = new Set();
  const list = view.items.map((item) => {
    const key = keyOf(item, view.tableKeys);
    const id = keyId(table, key);
    pageIds.add(id);
    return { item, key, id, change: stagedFor(table, key) };
  });
  const added = stagedChanges()
    .filter((c) => c.table === table && c.after && !pageIds.has(keyId(table, c.key)) && !c.before)
    .map((c) => ({ item: c.after, key: c.key, id: keyId(table, c.key), change: c, added: true }));
  const all = [...added, ...list];
  if (view.sort) {
    const { col, dir } = view.sort;
    // Blanks last whichever way (DynamoDB has no order for absent values).
    all.sort((a, b) => {
      const [x, y] = [shown(a)[col], shown(b)[col]];
      if (x === undefined || y === undefined) return (x === undefined) - (y === undefined);
      return dir * compareValues(x, y);
    });
  }
  return all;
}

/**
 * What a row shows: for a staged update, the live item with the staged
 * attribute changes applied (the commit writes only those, so the other
 * attributes are shown as they are now, not as they were when staged);
 * for a staged put the item it writes; otherwise the live item.
 */
function shown(row) {
  const change = row.change;
  if (!change?.after) return row.item;
  if (change.op !== 'update' || !change.before || !row.item) return change.after;
  const out = { ...row.item };
  for (const name of new Set([...Object.keys(change.before), ...Object.keys(change.after)])) {
    if (canonical(change.before[name]) === canonical(change.after[name])) continue;
    if (change.after[name] === undefined) delete out[name];
    else out[name] = change.after[name];
  }
  return out;
}

/** An attribute value in a comparable form (set members sorted). */
function canonical(value) {
  if (value === undefined) return undefined;
  const [tag, inner] = Object.entries(value)[0] || [];
  return ['SS', 'NS', 'BS'].includes(tag) ? JSON.stringify({ [tag]: [...inner].sort() }) : JSON.stringify(value);
}

/**
 * Attributes of a staged row whose live value (as this page read it) is no
 * longer what the change was staged against: someone else wrote the item.
 * Empty when it is unchanged, or the row is not staged.
 */
function driftOf(row) {
  if (!row.change || row.added) return [];
  const before = row.change.before;
  if (!before) return Object.keys(row.item); // staged as new, exists now
  const names = new Set([...Object.keys(before), ...Object.keys(row.item)]);
  return [...names].filter((n) => canonical(before[n]) !== canonical(row.item[n])).sort();
}

/** Pages longer than this draw only the rows in view (and OVERSCAN more on
 * each side): laying out a thousand rows of a dozen cells takes the browser
 * over a second, the rows in view a few milliseconds. */
const WINDOW_FROM = 150;
const OVERSCAN = 25;

function renderGrid() {
  const list = rows();
  const cols = columnsOf(list.map(shown));
  const visible = cols.filter((c) => !view.hidden.has(c));
  view.columns = cols;
  const allSelected = list.length > 0 && list.every((r) => view.selection.has(r.id));
  const head = el('tr',
    el('th.sel', el('input', { type: 'checkbox', 'aria-label': 'Select all rows', checked: allSelected,
      onchange: (e) => { list.forEach((r) => (e.target.checked ? view.selection.add(r.id) : view.selection.delete(r.id))); renderGrid(); } })),
    visible.map((c) => {
      const sorted = view.sort?.col === c ? view.sort.dir : 0;
      const keyIndex = view.tableKeys.indexOf(c);
      return el(`th${keyIndex >= 0 ? `.key.key${keyIndex}${keyIndex === view.tableKeys.length - 1 ? '.keylast' : ''}` : ''}`, { 'aria-sort': sorted ? (sorted > 0 ? 'ascending' : 'descending') : 'none' },
        el('button.colname', { type: 'button', title: `Sort this page by ${c} (DynamoDB cannot sort a scan; the next page is not sorted with it)`, onclick: () => { view.sort = { col: c, dir: sorted === 1 ? -1 : 1 }; renderGrid(); } },
          c, sorted ? (sorted > 0 ? ' ▲' : ' ▼') : ''),
        el('button.hidecol', { type: 'button', title: `Hide ${c}`, 'aria-label': `Hide column ${c}`, onclick: () => { view.hidden.add(c); renderGrid(); } }, '×'));
    }),
    el('th.open', el('span.hint', 'JSON')));
  const hiddenCols = [...view.hidden];
  const tbody = el('tbody', { title: 'Double-click a cell (or press Enter on it) to edit it' });
  const table = list.length ? el('table.grid', { 'aria-label': `Items of ${view.table.TableName}` }, el('thead', head), tbody) : null;
  view.grid.onscroll = null;
  const sortNote = view.sort && el('div.gridnote', `Sorted by ${view.sort.col} (${view.sort.dir > 0 ? 'ascending' : 'descending'}, blanks last) on this page only: DynamoDB returns a ${view.result?.operation === 'Query' ? 'query in sort-key order' : 'scan in its own order'}, and the next page is read in that order. `,
    button('Unsort', () => { view.sort = null; renderGrid(); }, 'small ghost'));
  // Notes about the page sit above the grid, outside its scrolling.
  fill(view.notes,
    sortNote,
    hiddenCols.length ? el('div.hiddencols', 'Hidden: ', hiddenCols.map((c) => button(`${c} ↺`, () => { view.hidden.delete(c); renderGrid(); }, 'small ghost', { 'aria-label': `Show column ${c}` }))) : null);
  fill(view.grid, table || emptyPage());
  if (table) {
    // One listener for every cell: a thousand rows do not need ten thousand.
    tbody.addEventListener('dblclick', (e) => onCell(e, list));
    tbody.addEventListener('keydown', (e) => { if (e.key === 'Enter') onCell(e, list); });
    const rowEl = (row, index) => gridRow(row, index, visible, list);
    if (list.length > WINDOW_FROM) drawWindowed(table, tbody, list, visible, rowEl);
    else tbody.append(...list.map(rowEl));
    pinKeyColumns(table);
  }
  renderToolbar(list);
}

/** Key columns stay in place when a wide item scrolls sideways: each is
 * sticky at the width of the columns before it, measured once drawn. */
function pinKeyColumns(table) {
  const selWidth = table.querySelector('thead th.sel')?.offsetWidth || 0;
  const first = table.querySelector('thead th.key0')?.offsetWidth || 0;
  table.style.setProperty('--pin-key0', `${selWidth}px`);
  table.style.setProperty('--pin-key1', `${selWidth + first}px`);
}

/** Opens the editor of the cell an event happened in. */
function onCell(e, list) {
  const td = e.target.closest('td[data-col]');
  const tr = td?.closest('tr[data-index]');
  if (!td || !tr || e.target.closest('button, input') || td.dataset.col === SCORE) return;
  editCell(list[Number(tr.dataset.index)], td.dataset.col);
}

function gridRow(row, index, visible, list) {
  const item = shown(row);
  const op = row.change?.op;
  const cls = row.added ? '.row-new' : op === 'delete' ? '.row-delete' : op ? '.row-update' : '';
  const drift = driftOf(row);
  const last = view.tableKeys[view.tableKeys.length - 1];
  return el(`tr${cls}${drift.length ? '.row-drift' : ''}${view.selection.has(row.id) ? '.selected' : ''}`, { dataset: { key: JSON.stringify(row.key), index: String(index) } },
    el('td.sel', el('input', { type: 'checkbox', 'aria-label': `Select ${keyLabel(row.key)}`, checked: view.selection.has(row.id),
      onchange: (e) => { e.target.checked ? view.selection.add(row.id) : view.selection.delete(row.id); renderToolbar(list); e.target.closest('tr').classList.toggle('selected', e.target.checked); } })),
    visible.map((c) => {
      const keyIndex = view.tableKeys.indexOf(c);
      const isKey = keyIndex >= 0;
      const number = item[c] && 'N' in item[c] ? '.num' : '';
      const changed = op && op !== 'delete' && row.change.before && JSON.stringify(row.change.before[c]) !== JSON.stringify(row.change.after?.[c]);
      return el(`td${isKey ? `.key.key${keyIndex}${keyIndex === view.tableKeys.length - 1 ? '.keylast' : ''}` : ''}${number}${changed ? '.cell-staged' : ''}`, {
        dataset: { col: c },
        tabindex: '-1',
        title: changed ? `was: ${row.change.before[c] ? JSON.stringify(row.change.before[c]) : '(absent)'}` : null,
      }, item[c] === undefined ? '' : renderValue(item[c]),
      // A marker of either layout: UNIQ#... in the sort key (grouped) or
      // in the partition key (per value, sort key LOCK).
      c === last && view.tableKeys.some((k) => item[k]?.S?.startsWith('UNIQ#'))
        ? el('span.pill.lockpill', { title: 'A uniqueness marker (see the Locks tab)' }, 'lock') : null,
      // The staged values are what the commit writes; say when the live
      // item moved on under them (the commit will then be cancelled).
      c === last && drift.length
        ? el('span.pill.driftpill', { title: `Changed by someone else since staged: ${drift.join(', ')}. The commit will be cancelled unless you re-stage (see the Stage panel).` }, 'changed since staged') : null);
    }),
    el('td.open', button('{ }', () => openItem(row), 'small ghost', { 'aria-label': `Open ${keyLabel(row.key)} as JSON` })));
}

/** Draws the rows in view of a long page between two spacer rows, again on
 * every scroll. Columns get fixed widths from the whole page's values, so
 * they do not jump as rows come and go. */
function drawWindowed(table, tbody, list, visible, rowEl) {
  table.classList.add('windowed');
  table.prepend(el('colgroup', el('col.sel'), visible.map((c) => columnWidth(c, list)), el('col.open')));
  const spacer = () => el('tr.spacer', { 'aria-hidden': 'true' }, el('td', { colspan: String(visible.length + 2) }));
  const [above, below] = [spacer(), spacer()];
  let rowHeight = 33;
  let drawn = null;
  const draw = () => {
    const inView = Math.ceil(view.grid.clientHeight / rowHeight) || 30;
    const first = Math.max(0, Math.floor(view.grid.scrollTop / rowHeight) - OVERSCAN);
    const last = Math.min(list.length, first + inView + 2 * OVERSCAN);
    if (drawn && drawn[0] === first && drawn[1] === last) return;
    drawn = [first, last];
    above.firstChild.style.height = `${first * rowHeight}px`;
    below.firstChild.style.height = `${(list.length - last) * rowHeight}px`;
    fill(tbody, above, list.slice(first, last).map((row, i) => rowEl(row, first + i)), below);
  };
  draw();
  const measured = tbody.children[1]?.getBoundingClientRect().height;
  if (measured && Math.abs(measured - rowHeight) > 0.5) {
    rowHeight = measured;
    drawn = null;
    draw();
  }
  let pending = false;
  view.grid.onscroll = () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; draw(); });
  };
}

/** A column's width: its longest value's text on this page, within limits. */
function columnWidth(name, list) {
  let chars = name.length + 3;
  for (const row of list) {
    const value = shown(row)[name];
    if (value !== undefined) chars = Math.max(chars, Math.min(48, JSON.stringify(Object.values(value)[0]).length + 3));
  }
  const col = el('col');
  col.style.width = `calc(${chars}ch + 28px)`;
  return col;
}

/** An empty page: the end of the read, or a filter that matched nothing in
 * what was scanned before the page's time ran out (then offer to go on). */
function emptyPage() {
  const result = view.result;
  if (result && view.nextStart && result.ScannedCount > 0) {
    return el('div.empty.unfinished',
      el('p', `No matches yet: ${result.ScannedCount} item(s) scanned in ${result.Calls || 1} request(s).`),
      el('p.hint', 'The filter is applied after reading, so DynamoDB reads (and charges for) every item it looks at. The read is not finished.'),
      button('Keep reading', nextPage, 'small primary'));
  }
  return el('div.empty', el('p', 'No items on this page.'), el('p.hint', 'Add one with “New item”, or import a file.'));
}

function nextPage() {
  view.starts[view.page + 1] = view.nextStart;
  view.page++;
  loadPage();
}

function keyLabel(key) {
  return Object.values(key).map((v) => v[typeOf(v)]).join(' / ');
}

function renderToolbar(list) {
  const selected = list.filter((r) => view.selection.has(r.id));
  const form = () => readForm();
  fill(view.toolbar,
    button('+ New item', () => newItem(), 'small', { 'aria-keyshortcuts': 'n' }),
    selected.length ? [
      el('span.selcount', `${selected.length} selected`),
      button('Stage delete', () => stageDeletes(selected), 'small'),
      button('Bulk…', () => bulkDialog(view.table.TableName, { keys: selected.map((r) => r.key) }, `${selected.length} selected item(s)`).then(refresh), 'small'),
    ] : null,
    button('Bulk on whole result…', () => bulkDialog(view.table.TableName, { read: form() }, `every item of this ${form().operation.toLowerCase()}`, list.length).then(refresh), 'small ghost'),
    columnChooser());
}

/** Every column of the page with a checkbox: show or hide it (keys stay). */
function columnChooser() {
  const cols = view.columns || [];
  const shownCount = cols.filter((c) => !view.hidden.has(c)).length;
  const chooser = el('details.colchooser',
    el('summary.btn.small.ghost', { 'aria-label': 'Choose columns' }, `Columns ${shownCount}/${cols.length}`),
    el('div.menu', cols.map((c) => {
      const isKey = view.tableKeys.includes(c);
      return el('label', el('input', { type: 'checkbox', checked: !view.hidden.has(c), disabled: isKey, 'aria-label': `Column ${c}`,
        onchange: (e) => { if (e.target.checked) view.hidden.delete(c); else view.hidden.add(c); view.chooserOpen = true; renderGrid(); } }), c);
    })));
  // Stay open while columns are being picked (the toolbar redraws).
  if (view.chooserOpen) chooser.open = true;
  chooser.addEventListener('toggle', () => { view.chooserOpen = chooser.open; });
  return chooser;
}

async function stageDeletes(selected) {
  try {
    view.selection.clear();
    await stageChange({ op: 'deletes', table: view.table.TableName, keys: selected.map((row) => row.key) });
    toast(`${selected.length} delete(s) staged`, 'ok');
  } catch (e) {
    toast(`${e.code}: ${e.message}`, 'error');
  }
}

// ---- editing --------------------------------------------------------------------

function editCell(row, col) {
  if (view.tableKeys.includes(col)) {
    toast('Key attributes cannot be updated: open the item as JSON and stage a new item instead', 'error');
    return;
  }
  const current = shown(row)[col];
  dialog(`Edit ${col}`, (close) => {
    const type = select(TYPES, typeOf(current) || 'S', { 'aria-label': 'Type' });
    const text = el('textarea.mono', { rows: 5, 'aria-label': 'Value', autofocus: true }, current ? editText(current) : '');
    const status = el('div');
    const stage = async (remove) => {
      try {
        const change = remove
          ? { op: 'update', table: view.table.TableName, key: row.key, remove: [col] }
          : { op: 'update', table: view.table.TableName, key: row.key, set: { [col]: parseTyped(type.value, text.value) } };
        if (row.added) {
          const item = structuredClone(shown(row));
          if (remove) delete item[col]; else item[col] = change.set[col];
          await stageChange({ op: 'put', table: view.table.TableName, item });
        } else {
          await stageChange(change);
        }
        close(true);
      } catch (e) {
        fill(status, errorBox(e));
      }
    };
    text.addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) stage(false); });
    return el('div.form',
      el('p.hint', `Item ${keyLabel(row.key)}`),
      field('Type', type, 'sets: one element per line; L and M: DynamoDB JSON'),
      field('Value', text),
      status,
      el('footer', button('Remove attribute', () => stage(true), 'ghost danger'), el('span.spacer'),
        button('Cancel', () => close(), 'ghost'), button('Stage change', () => stage(false), 'primary')));
  });
}

function newItem() {
  const template = {};
  for (const k of view.tableKeys) template[k] = view.types[k] === 'N' ? { N: '0' } : view.types[k] === 'B' ? { B: '' } : { S: '' };
  openItem({ item: template, key: null, fresh: true });
}

/** The item drawer: plain JSON or DynamoDB JSON, editable, stageable. */
export async function openItem(row) {
  const item = shown(row);
  let plainText = '';
  try {
    plainText = (await api('convert', { to: 'plain', item })).text;
  } catch (e) {
    plainText = `// ${e.code}: ${e.message}`;
  }
  dialog(row.fresh ? 'New item' : `Item ${keyLabel(row.key)}`, (close) => {
    let mode = 'plain';
    const area = el('textarea.mono.json', { rows: 18, spellcheck: 'false', 'aria-label': 'Item JSON', autofocus: true }, plainText);
    const status = el('div');
    const modeButtons = el('div.segmented', { role: 'radiogroup', 'aria-label': 'JSON format' },
      [['plain', 'Plain JSON'], ['ddb', 'DynamoDB JSON']].map(([m, label]) =>
        el('label', el('input', { type: 'radio', name: 'jsonmode', value: m, checked: m === 'plain' }), label)));
    modeButtons.addEventListener('change', async (e) => {
      const next = e.target.value;
      try {
        const ddb = await currentItem(mode, area.value);
        area.value = next === 'ddb' ? JSON.stringify(ddb, null, 2) : (await api('convert', { to: 'plain', item: ddb })).text;
        mode = next;
        fill(status);
      } catch (err) {
        modeButtons.querySelector(`input[value=${mode}]`).checked = true;
        fill(status, errorBox(err));
      }
    });
    const stagePut = async (overwrite = false) => {
      try {
        const ddb = await currentItem(mode, area.value);
        await stageChange({ op: 'put', table: view.table.TableName, item: ddb, create: row.fresh, overwrite });
        toast(overwrite ? 'Overwrite staged' : 'Put staged', 'ok');
        close(true);
      } catch (e) {
        if (e.code !== 'ItemExists') return fill(status, errorBox(e));
        // A new item on an existing key: say so, and stage only if asked.
        fill(status, el('div.error', { role: 'alert' },
          el('strong.code', 'Item exists'), ' ', el('span', e.message), ' ',
          button('Stage as overwrite', () => stagePut(true), 'small danger')));
      }
    };
    const stageDelete = async () => {
      try {
        await stageChange({ op: 'delete', table: view.table.TableName, key: row.key });
        close(true);
      } catch (e) {
        fill(status, errorBox(e));
      }
    };
    return el('div.form',
      el('div.row', modeButtons, el('span.hint', 'Plain JSON keeps sets and binary as {"$SS": […]}, {"$B": "…"}; numbers keep every digit.')),
      area, status,
      el('footer',
        !row.fresh && button('Stage delete', stageDelete, 'ghost danger'),
        el('span.spacer'),
        button('Close', () => close(), 'ghost'),
        button(row.fresh ? 'Stage new item' : 'Stage as put', () => stagePut(), 'primary')));
  }, { wide: true });
}

async function currentItem(mode, text) {
  if (mode === 'ddb') {
    try {
      return JSON.parse(text);
    } catch (e) {
      throw Object.assign(new Error(`not JSON: ${e.message}`), { code: 'ValidationException' });
    }
  }
  return (await api('convert', { to: 'ddb', text })).item;
}

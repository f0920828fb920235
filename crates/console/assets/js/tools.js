// The other screens: uniqueness locks of a table, import/export, the
// expression builder, cost and measured usage, PartiQL. Each is a form over
// one console API call; the logic behind each is the Rust the CLI uses.

import { api, call } from './api.js';
import { el, fill, field, button, select, errorBox, toast, codeBlock, tabs, download } from './ui.js';
import { renderValue, summary } from './values.js';
import { watchJob, trackJob } from './bulk.js';

// ---- UNIQ# locks ----------------------------------------------------------------

export function locksView(table) {
  const saved = JSON.parse(localStorage.getItem(`ferrodyn.locks:${table}`) || 'null');
  const entity = el('input', { 'aria-label': 'Entity', value: saved?.entity || 'account', autocomplete: 'off' });
  const attributes = el('input', { 'aria-label': 'Unique attributes', value: saved?.attributes || '', placeholder: 'email, username', autocomplete: 'off' });
  const owners = el('input', { 'aria-label': 'Scan owners with key prefix', value: saved?.scanOwners || '', placeholder: 'e.g. ACCT#', autocomplete: 'off' });
  const scanOwners = el('input', { type: 'checkbox', 'aria-label': 'Check owners for missing markers', checked: saved ? !!saved.scanOwners : true });
  const ownerCost = el('span.hint');
  const layout = el('select', { 'aria-label': 'Marker layout' },
    el('option', { value: 'per-value' }, 'per value (UNIQ#ATTR#value)'),
    el('option', { value: 'grouped' }, 'grouped (UNIQ#entity#attr)'));
  layout.value = saved?.layout || 'per-value';
  const onlyProblems = el('input', { type: 'checkbox', 'aria-label': 'Only problems' });
  const found = el('div');
  const out = el('div');
  let last = null;
  const request = () => {
    const r = { table, entity: entity.value.trim(), attributes: attributes.value, layout: layout.value,
      scanOwners: scanOwners.checked ? owners.value.trim() || undefined : undefined };
    localStorage.setItem(`ferrodyn.locks:${table}`, JSON.stringify(r));
    return r;
  };
  const draw = (report, repaired) => {
    last = report;
    renderLocks(out, report, { table, repairAll, repairOne, onlyProblems: onlyProblems.checked, layout: layout.value }, repaired);
  };
  const inspect = async () => {
    if (!attributes.value.trim()) {
      fill(out, el('p.hint', 'No unique attributes named yet: discover them from the markers, or type them above.'));
      return;
    }
    fill(out, el('p.hint', 'Reading the markers…'));
    try {
      draw(await api('locks', request()));
    } catch (e) {
      fill(out, errorBox(e));
    }
  };
  const repairAll = async () => {
    try {
      const r = await api('locks/repair', request());
      toast(r.fixed.length ? `${r.fixed.length} fixed, ${r.skipped.length} not fixed` : `Nothing fixed (${r.skipped.length} left as they are)`, r.fixed.length ? 'ok' : 'warn');
      draw(r.after, r);
    } catch (e) {
      out.prepend(errorBox(e));
    }
  };
  const repairOne = async (only, what) => {
    if (!confirm(`Repair ${what}?`)) return;
    try {
      const r = await api('locks/repair', { ...request(), only });
      toast(r.fixed.length ? `Fixed: ${r.fixed.join('; ')}` : `Not fixed: ${r.skipped.join('; ') || 'nothing to do'}`, r.fixed.length ? 'ok' : 'warn');
      draw(r.after, r);
    } catch (e) {
      out.prepend(errorBox(e));
    }
  };
  const discover = async () => {
    fill(found, el('p.hint', 'Looking for UNIQ# markers (one Scan reading only keys and marker attributes)…'));
    try {
      const d = await api('locks/discover', { table });
      if (!d.markers) {
        fill(found, el('p.hint', `No UNIQ# markers in ${table} (${d.scanned} item(s) scanned, ${round(d.readUnits)} RCU).`));
        return;
      }
      layout.value = d.layout;
      if (d.entity) entity.value = d.entity;
      attributes.value = d.attributes.join(', ');
      if (d.ownerPrefix) owners.value = d.ownerPrefix;
      ownerCost.textContent = `scans the whole table: ≈ ${d.ownerScanUnits} RCU`;
      fill(found, el('p.ok.discovered', `Found ${d.markers} marker(s)${d.complete ? '' : ' (the first 5 s of the scan)'} of ${d.attributes.join(', ')} (${d.layout}${d.entity ? `, entity ${d.entity}` : ''})${d.ownerPrefix ? `, owned by ${d.ownerPrefix}… items` : ''}: ${d.scanned} item(s) scanned, ${round(d.readUnits)} RCU.`));
      await inspect();
    } catch (e) {
      fill(found, errorBox(e));
    }
  };
  onlyProblems.addEventListener('change', () => { if (last) draw(last); });
  const view = el('div.locks',
    el('p.hint', 'Marker items keep non-key attributes unique (ferrodyn unique). Per-value markers (the default, one partition per value) are listed by a Query of a sparse uniq_attr index when the table has one, else by a Scan; grouped markers by one Query per attribute. The report says which it used.'),
    el('form.row', { onsubmit: (e) => { e.preventDefault(); inspect(); }, 'aria-label': 'Uniqueness constraint' },
      field('Unique attributes (comma separated)', attributes), field('Marker layout', layout), field('Entity (grouped)', entity),
      field('Owners’ key prefix', el('div.row', owners, el('label.check', scanOwners, 'check them for missing markers'), ownerCost)),
      el('button.btn.primary', { type: 'submit' }, 'Inspect locks'),
      button('Discover', discover, 'ghost')),
    found,
    el('label.check.only-problems', onlyProblems, 'Only problems'),
    out);
  if (saved?.attributes) inspect();
  else discover();
  return view;
}

const round = (n) => Math.round(n * 10) / 10;

function renderLocks(out, report, context, repaired) {
  const { table, repairAll, repairOne, onlyProblems, layout } = context;
  const problems = report.markers.filter((m) => m.status !== 'held').length + report.missing.length;
  const markers = onlyProblems ? report.markers.filter((m) => m.status !== 'held') : report.markers;
  const scanned = (report.listedBy || []).some((l) => l.startsWith('Scan of table'));
  fill(out,
    repaired && el('div.report', { role: 'status' },
      repaired.fixed.map((f) => el('div.ok', `✓ fixed: ${f}`)),
      repaired.skipped.map((f) => el('div.warn', `not fixed: ${f}`))),
    el('div.row',
      el(`span.pill.${problems ? 's-deleting' : 's-active'}`, problems ? `${problems} problem(s)` : 'healthy'),
      el('span.hint', `${report.markers.length} marker(s)${report.ownersScanned ? ', owners scanned' : ''}${report.listedBy?.length ? ' · listed by ' + listedBy(report.listedBy) : ''}`),
      el('span.spacer'),
      problems ? button('Repair all', repairAll, 'primary') : null),
    scanned && layout === 'per-value' && el('div.row.index-offer',
      el('span.hint', 'The markers were found by a Scan of the whole table. A sparse index keyed by uniq_attr lists them by Query instead, reading only markers.'),
      button('Create the uniq_attr index…', () => createMarkerIndex(table), 'small')),
    el('table.plain', { 'aria-label': 'Uniqueness markers' },
      el('thead', el('tr', ['Attribute', 'Value', 'Marker', 'Owner', 'Status', ''].map((h) => el('th', h)))),
      el('tbody',
        markers.map((m) => el(`tr.lock-${m.status}`,
          el('td', m.attribute), el('td', m.value ? renderValue(m.value) : '—'), el('td', el('code', m.name)),
          el('td', m.owner ? ownerLink(table, m.owner) : '(no owner)'),
          el('td', el(`span.pill.lock.${m.status}`, lockStatusText(m))),
          el('td', ['orphan', 'stale'].includes(m.status)
            ? button('Repair…', () => repairOne({ marker: m.name }, `${m.name}: ${lockStatusText(m)}`), 'small ghost', { 'aria-label': `Repair ${m.name}` }) : null))),
        report.missing.map((m) => el('tr.lock-missing',
          el('td', m.attribute), el('td', renderValue(m.value)), el('td', '—'),
          el('td', ownerLink(table, m.owner)),
          el('td', el('span.pill.lock.missing', m.heldBy ? `DUPLICATE: held by ${ownerText(m.heldBy)}` : 'MISSING marker')),
          el('td', m.heldBy ? null
            : button('Repair…', () => repairOne({ owner: m.owner, attribute: m.attribute }, `${ownerText(m.owner)}: add the missing ${m.attribute} marker`), 'small ghost', { 'aria-label': `Add the marker of ${ownerText(m.owner)}` })))),
        report.markers.length + report.missing.length === 0
          && el('tr', el('td.hint', { colspan: 6 }, 'No markers of this constraint in this layout. If the table was written with the other marker layout, choose it above.')))));
}

/** How the markers were listed, one entry per way with the attributes it
 * served: "Scan of table app (…) (email, username)" rather than the same
 * sentence once per attribute. */
function listedBy(entries) {
  const ways = new Map();
  for (const entry of entries) {
    const cut = entry.lastIndexOf(' (');
    const [how, attribute] = cut > 0 && entry.endsWith(')') ? [entry.slice(0, cut), entry.slice(cut + 2, -1)] : [entry, null];
    if (!ways.has(how)) ways.set(how, []);
    if (attribute) ways.get(how).push(attribute);
  }
  return [...ways].map(([how, attributes]) => (attributes.length ? `${how} (${attributes.join(', ')})` : how)).join('; ');
}

/** An owner's key as a link to the items view queried for it. */
function ownerLink(table, key) {
  const [pk, sk] = Object.entries(key);
  const state = new URLSearchParams({ op: 'Query', pk: Object.values(pk[1])[0] });
  if (sk) {
    state.set('skOp', '=');
    state.set('sk', Object.values(sk[1])[0]);
  }
  return el('a.owner', { href: `#/table/${encodeURIComponent(table)}?${state}`, title: 'Open the owner' }, el('code', ownerText(key)));
}

/** Creates the sparse GSI `locks` lists per-value markers by (after a
 * confirmation that shows the request). */
async function createMarkerIndex(table) {
  try {
    const t = (await call('DescribeTable', { TableName: table })).Table;
    const request = {
      TableName: table,
      AttributeDefinitions: [...(t.AttributeDefinitions || []).filter((d) => d.AttributeName !== 'uniq_attr'), { AttributeName: 'uniq_attr', AttributeType: 'S' }],
      GlobalSecondaryIndexUpdates: [{ Create: {
        IndexName: 'uniq_attr-index',
        KeySchema: [{ AttributeName: 'uniq_attr', KeyType: 'HASH' }],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['uniq_owner', 'uniq_value'] },
        ...(t.BillingModeSummary?.BillingMode === 'PROVISIONED' || (!t.BillingModeSummary && t.ProvisionedThroughput?.ReadCapacityUnits)
          ? { ProvisionedThroughput: { ReadCapacityUnits: t.ProvisionedThroughput.ReadCapacityUnits, WriteCapacityUnits: t.ProvisionedThroughput.WriteCapacityUnits } } : {}),
      } }],
    };
    if (!confirm(`Create this index on ${table}? It is built from the existing markers in the background.\n\n${JSON.stringify(request, null, 2)}`)) return;
    await call('UpdateTable', request);
    toast('uniq_attr-index is being built; Details shows its progress', 'ok');
  } catch (e) {
    toast(`${e.code}: ${e.message}`, 'error');
  }
}

/** The status pill's text of one marker (what repair will do with it). */
function lockStatusText(m) {
  const handTo = m.claimant ? ` → repair hands it to ${ownerText(m.claimant)}` : '';
  switch (m.status) {
    case 'held': return 'held';
    case 'orphan': return `ORPHAN: owner is gone${handTo}`;
    case 'stale': return `STALE: owner now has ${m.current ? summary(m.current) : 'no value'}${handTo}`;
    default: return `UNREADABLE: ${m.why}; left alone`;
  }
}

function ownerText(key) {
  return Object.values(key).map((v) => Object.values(v)[0]).join(' / ');
}

// ---- import / export ------------------------------------------------------------

export function transferView(table, currentRead) {
  const file = el('input', { type: 'file', 'aria-label': 'File to import', accept: '.json,.jsonl,.csv,.ndjson,.txt' });
  const format = select([['jsonl', 'JSON lines'], ['json', 'JSON array'], ['csv', 'CSV'], ['ddb-json', 'DynamoDB JSON lines']], 'jsonl', { 'aria-label': 'Import format' });
  file.addEventListener('change', () => {
    const name = file.files[0]?.name || '';
    if (name.endsWith('.csv')) format.value = 'csv';
    else if (name.endsWith('.json')) format.value = 'json';
  });
  const importOut = el('div');
  const startImport = async (text, skipUnreadable) => {
    const label = `Import ${file.files[0].name} into ${table}`;
    const r = await api('import', { table, format: format.value, text, skipUnreadable, label });
    if (r.unreadable) return showUnreadable(text, r);
    trackJob();
    const box = el('div.progress');
    fill(importOut, box);
    watchJob(r.job, box);
  };
  // Nothing is written while lines are unreadable; the user sees which and
  // why, and chooses to import the rest or to fix the file.
  const showUnreadable = (text, r) => {
    const more = r.unreadable - r.problems.length;
    fill(importOut, el('div.error.unreadable',
      el('strong', `${r.unreadable} line(s) cannot be read; nothing was written.`),
      el('ul', ...r.problems.map((p) => el('li', p)), more > 0 ? el('li', `…and ${more} more`) : null)),
    r.readable > 0
      ? el('div.row', button(`Import the ${r.readable} readable item(s), skip ${r.unreadable} line(s)`,
        () => run(() => startImport(text, true)), 'primary'))
      : null);
  };
  const run = async (work) => {
    fill(importOut, el('div.bar', el('div.bar-fill.indeterminate')), el('p.hint', `Writing ${file.files[0].name}…`));
    try {
      await work();
    } catch (e) {
      fill(importOut, errorBox(e));
    }
  };
  const doImport = async () => {
    if (!file.files[0]) return;
    await run(async () => startImport(await file.files[0].text(), false));
  };
  // JSON lines is the default: it re-imports exactly (numbers keep their
  // digits, sets and binary keep their types); CSV does not.
  const exportFormat = select([['jsonl', 'JSON lines'], ['ddb-json', 'DynamoDB JSON lines'], ['json', 'JSON array'], ['csv', 'CSV']], 'jsonl', { 'aria-label': 'Export format' });
  const csvLoses = el('p.hint.csv-loses', 'CSV keeps only text: sets, binary, maps, lists and NULL become strings, and on import "true", "false" and numeric text become booleans and numbers. Use JSON lines to re-import exactly.');
  const showLoss = () => { csvLoses.hidden = exportFormat.value !== 'csv'; };
  exportFormat.addEventListener('change', showLoss);
  showLoss();
  const scope = select([['table', 'The whole table'], ['read', 'The current query/scan result']], 'table', { 'aria-label': 'Export scope' });
  const exportOut = el('div');
  const doExport = async () => {
    try {
      const read = scope.value === 'read' ? currentRead() : undefined;
      const r = await api('export', { table, format: exportFormat.value, read });
      const ext = { csv: 'csv', jsonl: 'jsonl', json: 'json', 'ddb-json': 'ddb.jsonl' }[exportFormat.value];
      download(`${table}.${ext}`, r.text);
      fill(exportOut, el('p.ok', `${r.rows} row(s) exported.`));
    } catch (e) {
      fill(exportOut, errorBox(e));
    }
  };
  return el('div.transfer',
    el('section.card', el('h3', 'Import'),
      el('p.hint', 'Plain JSON numbers keep every digit; {"$SS": […]} and {"$B": "…"} keep sets and binary. Unprocessed items are retried with backoff.'),
      el('div.row', file, format, button('Import', doImport, 'primary')), importOut),
    el('section.card', el('h3', 'Export'),
      el('div.row', scope, exportFormat, button('Download', doExport, 'primary')), csvLoses, exportOut));
}

// ---- expression builder ---------------------------------------------------------

export function exprView() {
  const f = {
    operation: select(['UpdateItem', 'PutItem', 'DeleteItem', 'Query', 'Scan'], 'UpdateItem', { 'aria-label': 'Operation' }),
    table: el('input', { 'aria-label': 'Table', value: 'users' }),
    key: el('input.mono', { 'aria-label': 'Key', value: '{"pk": "ACCT#1"}', placeholder: '{"pk": "ACCT#1", "sk": "PROFILE"}' }),
    keyCondition: el('input.mono', { 'aria-label': 'Key condition', placeholder: 'pk = "ACCT#1" and begins_with(sk, "ORDER#")' }),
    condition: el('input.mono', { 'aria-label': 'Condition', placeholder: 'attribute_exists(id) and status = "active"' }),
    filter: el('input.mono', { 'aria-label': 'Filter', placeholder: 'visits > 3' }),
    update: el('input.mono', { 'aria-label': 'Update', placeholder: 'SET visits = visits + 1, status = "gold" REMOVE temp' }),
  };
  const out = el('div');
  const build = async (e) => {
    e?.preventDefault();
    const request = Object.fromEntries(Object.entries(f).map(([k, v]) => [k, v.value.trim() || undefined]));
    try {
      const r = await api('expr', request);
      fill(out, tabs([
        { label: 'Request JSON', render: () => codeBlock(JSON.stringify(r.fields, null, 2), 'request fields') },
        { label: 'CLI options', render: () => codeBlock(r.cli, 'CLI options', { wrap: true }) },
        { label: 'Rust', render: () => codeBlock(r.snippets.rust, 'Rust snippet') },
        { label: 'Python', render: () => codeBlock(r.snippets.python, 'Python snippet') },
        { label: 'JavaScript', render: () => codeBlock(r.snippets.javascript, 'JavaScript snippet') },
      ], 'expression output'));
    } catch (err) {
      fill(out, errorBox(err));
    }
  };
  return el('div.page',
    el('h1', 'Expression builder'),
    el('p.hint', 'Write expressions readably: strings in quotes, numbers bare. Reserved words (status, name, …) are aliased and values typed; each expression is checked with the server’s own parser.'),
    el('form.form', { onsubmit: build, 'aria-label': 'Expression builder' },
      el('div.grid2', field('Operation', f.operation), field('Table', f.table)),
      field('Key', f.key, 'plain JSON; UpdateItem, DeleteItem'),
      field('Key condition', f.keyCondition), field('Condition', f.condition), field('Filter', f.filter), field('Update', f.update),
      el('footer', el('button.btn.primary', { type: 'submit' }, 'Build'))),
    out);
}

// ---- cost and usage -------------------------------------------------------------

export function costView() {
  const num = (label, name, value = 0) => field(label, el('input', { type: 'number', min: 0, step: 'any', name, value, 'aria-label': label }));
  const size = el('input', { name: 'itemSize', value: '1KB', 'aria-label': 'Item size' });
  const form = el('form.form', { 'aria-label': 'Cost calculator' },
    el('div.grid3', field('Item size', size, 'e.g. 2KB, 600B'), num('Writes / s', 'writes', 10), num('Transactional writes / s', 'transactionalWrites'),
      num('Strong reads / s', 'reads'), num('Eventual reads / s', 'eventualReads', 100), num('Transactional reads / s', 'transactionalReads'),
      num('Storage (GB)', 'storageGb', 1), num('Target utilization', 'utilization', 0.7)),
    el('footer', el('button.btn.primary', { type: 'submit' }, 'Estimate')));
  const out = el('div');
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const data = { itemSize: size.value };
    for (const input of form.querySelectorAll('input[type=number]')) data[input.name] = Number(input.value);
    try {
      const r = await api('cost', data);
      const money = (x) => `${r.currency} ${x.toFixed(2)}`;
      fill(out, el('div.cards3',
        el('div.stat', el('span.label', 'Per item'), el('strong', `${r.writeUnitsPerWrite} WCU / ${r.readUnitsPerRead} RCU`), el('small', `${r.itemBytes} bytes`)),
        el('div.stat', el('span.label', 'On-demand / month'), el('strong', money(r.onDemand.total)), el('small', `writes ${money(r.onDemand.writes)} · reads ${money(r.onDemand.reads)} · storage ${money(r.onDemand.storage)}`)),
        el('div.stat', el('span.label', 'Provisioned / month'), el('strong', money(r.provisioned.total)), el('small', `${r.provisionedWcu} WCU · ${r.provisionedRcu} RCU`))),
      el('p.hint', `Prices: ${r.prices}`));
    } catch (err) {
      fill(out, errorBox(err));
    }
  });
  const usage = el('div', el('p.hint', 'Loading measured usage…'));
  loadUsage(usage);
  return el('div.page', el('h1', 'Cost'), el('p.hint', 'The calculator of ferrodyn cost, by DynamoDB’s billing rules.'), form, out,
    el('h2', 'Measured usage'), el('div.row', el('p.hint', 'Capacity this Ferrodyn server has seen consumed since it started (GET /ferrodyn/usage), priced on demand.'), el('span.spacer'), button('Refresh', () => loadUsage(usage), 'small')), usage);
}

async function loadUsage(box) {
  try {
    const r = await api('usage');
    const rows = r.Consumed || [];
    let read = 0, write = 0, price = 0;
    fill(box, el('table.plain', { 'aria-label': 'Measured usage' },
      el('thead', el('tr', ['Table', 'Operation', 'Read units', 'Write units', `On-demand ${r.Currency}`].map((h) => el('th', h)))),
      el('tbody', rows.map((row) => {
        read += row.ReadCapacityUnits; write += row.WriteCapacityUnits; price += row.Price;
        return el('tr', el('td', row.TableName), el('td', row.Operation), el('td.num', row.ReadCapacityUnits.toFixed(1)),
          el('td.num', row.WriteCapacityUnits.toFixed(1)), el('td.num', row.Price.toFixed(6)));
      }), el('tr.total', el('td', 'total'), el('td'), el('td.num', read.toFixed(1)), el('td.num', write.toFixed(1)), el('td.num', price.toFixed(6))))),
    r.Requests && el('p.hint', 'Requests since start: ', Object.entries(r.Requests).map(([op, n]) => `${op} ${n}`).join(', ')));
  } catch (e) {
    fill(box, errorBox(e));
  }
}

// ---- PartiQL --------------------------------------------------------------------

export function partiqlView(renderItems) {
  const statement = el('textarea.mono', { rows: 5, 'aria-label': 'PartiQL statement', placeholder: 'SELECT * FROM "app" WHERE pk = \'ACCOUNT#1\'' },
    localStorage.getItem('ferrodyn.partiql') || '');
  const consistent = el('input', { type: 'checkbox', 'aria-label': 'Consistent read' });
  const out = el('div');
  let next = null;
  const runStatement = async (more) => {
    localStorage.setItem('ferrodyn.partiql', statement.value);
    const request = { Statement: statement.value, ConsistentRead: consistent.checked || undefined, ReturnConsumedCapacity: 'TOTAL' };
    if (more && next) request.NextToken = next;
    try {
      const r = await call('ExecuteStatement', request);
      next = r.NextToken || null;
      const write = writeOf(statement.value);
      if (write) {
        fill(out, el('p.ok.write-done', { role: 'status' }, `${write.verb} done: ${write.past} `,
          el('a', { href: `#/table/${encodeURIComponent(write.table)}` }, write.table),
          ` (${r.ConsumedCapacity?.CapacityUnits ?? '?'} WCU). ExecuteStatement answers a write with no items; open the table to see it.`));
        return;
      }
      fill(out, el('p.summary', `${(r.Items || []).length} item(s)`, next ? button('More ›', () => runStatement(true), 'small ghost') : null),
        renderItems(r.Items || []));
    } catch (e) {
      fill(out, errorBox(e), e.code === 'UnknownOperationException'
        ? el('p.hint', 'This endpoint does not run PartiQL (ExecuteStatement) yet. The tab works against AWS and will work here as soon as the server implements it.') : null);
    }
  };
  statement.addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); runStatement(false); } });
  return el('div.page', el('h1', 'PartiQL'),
    el('p.hint', 'Runs ExecuteStatement on the endpoint; results appear in the same typed grid.'),
    statement, el('div.row', el('label.check', consistent, 'Consistent read'), el('span.spacer'), button('Run', () => runStatement(false), 'primary', { 'aria-keyshortcuts': 'Control+Enter' })),
    out);
}

/** A PartiQL write's verb and table, for saying what it did (a write
 * statement changes exactly one item, named by its full key). */
function writeOf(text) {
  const body = text.replace(/--[^\n]*/g, ' ').trim();
  const match = body.match(/^(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+("(?:[^"]|"")+"|[A-Za-z0-9_.-]+)/i);
  if (!match) return null;
  const verb = match[1].split(/\s+/)[0].toUpperCase();
  const table = match[2].startsWith('"') ? match[2].slice(1, -1).replace(/""/g, '"') : match[2];
  return { verb, table, past: { INSERT: 'one item inserted into', UPDATE: 'one item updated in', DELETE: 'the item (if it existed) deleted from' }[verb] };
}

/** A read-only typed grid of items (PartiQL results). */
export function itemsTable(items) {
  if (!items.length) return el('div.empty', 'No items.');
  const cols = [...new Set(items.flatMap((i) => Object.keys(i)))];
  return el('div.gridwrap', el('table.grid', { 'aria-label': 'Statement results' },
    el('thead', el('tr', cols.map((c) => el('th', c)))),
    el('tbody', items.map((item) => el('tr', cols.map((c) => el('td', item[c] === undefined ? '' : renderValue(item[c]))))))));
}

// ---- stream records ---------------------------------------------------------------

export function streamsView(table) {
  const out = el('div', el('p.hint', 'Reading the stream…'));
  const load = async () => {
    try {
      const r = await api('streams', { table, limit: 200 });
      if (!r.streamArn) {
        fill(out, el('div.empty', el('p', 'This table has no stream.'),
          el('p.hint', 'Enable one with UpdateTable (StreamSpecification) or when creating the table.')));
        return;
      }
      fill(out,
        el('div.row', el('p.hint', `${r.records.length} record(s), newest first · ${r.viewType} · `, el('code', r.streamArn)),
          el('span.spacer'), button('Refresh', load, 'small')),
        shardTree(r.shards || [], r.status),
        r.records.length ? el('ol.cards.records', { 'aria-label': 'Stream records' }, r.records.map(recordCard)) : el('div.empty', 'No records yet.'));
    } catch (e) {
      fill(out, errorBox(e));
    }
  };
  load();
  return el('div.streams', out);
}

/** The stream's shards as a tree: a shard per partition, each closed shard
 * with the children that took over (one after its lifetime, two after a
 * partition split). Consumers must read a parent before its children. */
function shardTree(shards, status) {
  const listed = new Set(shards.map((s) => s.id));
  const children = new Map();
  for (const s of shards) {
    const parent = s.parent && listed.has(s.parent) ? s.parent : null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(s);
  }
  const open = shards.filter((s) => !s.end).length;
  const node = (s) => el('li.shard',
    el(s.end ? 'span.pill' : 'span.pill.s-active', s.end ? 'closed' : 'open'),
    el('code', s.id),
    el('span.hint', ` ${s.records} record(s) · from #${s.start}${s.end ? ` to #${s.end}` : ''}`),
    (children.get(s.id) || []).length ? el('ul.shards', children.get(s.id).map(node)) : null);
  return el('details.shard-tree', { open: shards.length <= 12 ? '' : null },
    el('summary', `Shards: ${shards.length} (${open} open, one per partition) · stream ${status || ''}`),
    el('p.hint', 'A shard closes when its lifetime passes (a child takes over) or its partition splits (two children). Read a parent before its children to keep each item\'s changes in order.'),
    el('ul.shards', { 'aria-label': 'Stream shards' }, (children.get(null) || []).map(node)));
}

function recordCard(record) {
  const d = record.dynamodb || {};
  const op = { INSERT: 'put', MODIFY: 'update', REMOVE: 'delete' }[record.eventName] || 'update';
  const names = [...new Set([...Object.keys(d.OldImage || {}), ...Object.keys(d.NewImage || {})])].sort();
  const rows = names.filter((n) => JSON.stringify(d.OldImage?.[n]) !== JSON.stringify(d.NewImage?.[n]) || !(n in (d.Keys || {})))
    .map((n) => el('li.attr',
      el('span.name', n),
      d.OldImage?.[n] ? el('span.old', renderValue(d.OldImage[n])) : null,
      d.OldImage?.[n] && d.NewImage?.[n] ? el('span.arrow', '→') : null,
      d.NewImage?.[n] ? el('span.new', renderValue(d.NewImage[n])) : null));
  return el(`li.card.change.op-${op}`,
    el('header', el(`span.op.op-${op}`, record.eventName), el('span.what', ownerText(d.Keys || {})),
      el('span.hint', d.ApproximateCreationDateTime ? new Date(d.ApproximateCreationDateTime * 1000).toLocaleString() : ''),
      el('code.hint', `#${d.SequenceNumber}`)),
    rows.length ? el('ul.attrs', rows) : el('p.hint', 'Keys only (the stream keeps no images).'));
}

// Tables: the sidebar list (status, item count, size, billing), the create
// dialog (keys, GSIs and LSIs with projections, billing, TTL, stream), the
// delete dialog (type the name), and the details view.

import { api, call } from './api.js';
import { el, fill, field, button, select, dialog, errorBox, toast, formatBytes, codeBlock, $ } from './ui.js';
import { app } from './app.js';

export async function loadTables() {
  const names = [];
  let start;
  do {
    const page = await call('ListTables', start ? { ExclusiveStartTableName: start } : {});
    names.push(...page.TableNames);
    start = page.LastEvaluatedTableName;
  } while (start);
  // Eight DescribeTable calls at a time: AWS rate-limits control-plane calls.
  const described = [];
  for (let i = 0; i < names.length; i += 8) {
    described.push(...await Promise.all(names.slice(i, i + 8).map((name) =>
      call('DescribeTable', { TableName: name }).then((d) => d.Table).catch(() => ({ TableName: name, TableStatus: '?' })))));
  }
  app.tables = described;
  for (const t of described) app.described[t.TableName] = t;
  renderTableList();
  return described;
}

export function plural(n, word) {
  return `${n.toLocaleString()} ${word}${n === 1 ? '' : 's'}`;
}

export function billing(table) {
  return table.BillingModeSummary?.BillingMode === 'PAY_PER_REQUEST' ? 'On-demand' : 'Provisioned';
}

export function renderTableList() {
  const filter = ($('#table-filter')?.value || '').toLowerCase();
  const list = $('#table-list');
  const shown = app.tables.filter((t) => t.TableName.toLowerCase().includes(filter));
  fill(list, shown.length ? shown.map((t) => el('li',
    el('a.table-link', {
      href: `#/table/${encodeURIComponent(t.TableName)}`,
      'aria-current': app.table === t.TableName ? 'page' : null,
    },
    el(`span.status.s-${(t.TableStatus || '').toLowerCase()}`, { title: t.TableStatus, 'aria-label': `status ${t.TableStatus}` }),
    el('span.tname', t.TableName),
    el('span.tmeta', `${plural(t.ItemCount ?? 0, 'item')} · ${formatBytes(t.TableSizeBytes)}`))))
    : el('li.empty', app.tables.length ? 'No table matches.' : 'No tables yet.'));
}

// ---- create ---------------------------------------------------------------------

const KEY_TYPES = [['S', 'String'], ['N', 'Number'], ['B', 'Binary']];

function keyInputs(prefix, required) {
  const name = el('input', { name: `${prefix}-name`, placeholder: required ? 'pk' : '(none)', required, autocomplete: 'off' });
  const type = select(KEY_TYPES, 'S', { name: `${prefix}-type`, 'aria-label': `${prefix} key type` });
  return { name, type, row: el('div.row', name, type) };
}

function projectionInputs(label) {
  const type = select(['ALL', 'KEYS_ONLY', 'INCLUDE'], 'ALL', { 'aria-label': `${label} projection` });
  const attrs = el('input', { placeholder: 'attributes, comma separated', 'aria-label': `${label} projected attributes`, hidden: true });
  type.addEventListener('change', () => { attrs.hidden = type.value !== 'INCLUDE'; });
  return {
    row: el('div.row', type, attrs),
    value: () => {
      const p = { ProjectionType: type.value };
      if (type.value === 'INCLUDE') p.NonKeyAttributes = attrs.value.split(',').map((s) => s.trim()).filter(Boolean);
      return p;
    },
  };
}

function indexRow(kind, list) {
  const name = el('input', { placeholder: `${kind.toLowerCase()}1`, 'aria-label': `${kind} name` });
  const pk = kind === 'GSI' ? keyInputs(`${kind}-pk`, true) : null;
  const sk = keyInputs(`${kind}-sk`, kind === 'LSI');
  const projection = projectionInputs(kind);
  const row = el('fieldset.index', el('legend', kind),
    field('Index name', name),
    pk && field('Partition key', pk.row),
    field('Sort key', sk.row),
    field('Projection', projection.row),
    button('Remove', () => { row.remove(); list.splice(list.indexOf(entry), 1); }, 'small ghost danger'));
  const entry = { row, read: () => ({ kind, name: name.value.trim(), pk, sk, projection: projection.value() }) };
  list.push(entry);
  return row;
}

const TYPE_NAMES = { S: 'String', N: 'Number', B: 'Binary' };

/** Why the form cannot become a CreateTable request (shown in the dialog). */
class FormError extends Error {
  constructor(message) {
    super(message);
    this.code = 'Check the form';
  }
}

/**
 * The CreateTable request of the form. Throws a FormError rather than
 * change what the person asked for: one attribute given two types (DynamoDB
 * keeps one definition per attribute), or an index left without a name.
 */
function createRequest(form, indexes) {
  const defs = new Map(); // attribute -> { type, where }
  const key = (name, type, keyType, where) => {
    const earlier = defs.get(name);
    if (earlier && earlier.type !== type) {
      throw new FormError(`Attribute ${name} is ${TYPE_NAMES[earlier.type]} in ${earlier.where} and ${TYPE_NAMES[type]} in ${where}: an attribute has one type wherever it is a key.`);
    }
    if (!earlier) defs.set(name, { type, where });
    return { AttributeName: name, KeyType: keyType };
  };
  const schema = (pk, sk, owner) => [key(pk.name.value.trim(), pk.type.value, 'HASH', `${owner}'s partition key`),
    ...(sk.name.value.trim() ? [key(sk.name.value.trim(), sk.type.value, 'RANGE', `${owner}'s sort key`)] : [])];
  const request = { TableName: form.name.value.trim(), KeySchema: schema(form.pk, form.sk, 'the table') };
  const provisioned = form.billing.value === 'PROVISIONED';
  const throughput = { ReadCapacityUnits: Number(form.rcu.value), WriteCapacityUnits: Number(form.wcu.value) };
  request.BillingMode = form.billing.value;
  if (provisioned) request.ProvisionedThroughput = throughput;
  const gsis = [], lsis = [];
  for (const [n, entry] of indexes.entries()) {
    const i = entry.read();
    if (!i.name) {
      throw new FormError(`Secondary index ${n + 1} (${i.kind}) has no name: name it, or remove it with its Remove button.`);
    }
    const index = { IndexName: i.name, Projection: i.projection };
    if (i.kind === 'GSI') {
      index.KeySchema = schema(i.pk, i.sk, `index ${i.name}`);
      if (provisioned) index.ProvisionedThroughput = throughput;
      gsis.push(index);
    } else {
      index.KeySchema = [key(form.pk.name.value.trim(), form.pk.type.value, 'HASH', 'the table\'s partition key'),
        key(i.sk.name.value.trim(), i.sk.type.value, 'RANGE', `index ${i.name}'s sort key`)];
      lsis.push(index);
    }
  }
  if (gsis.length) request.GlobalSecondaryIndexes = gsis;
  if (lsis.length) request.LocalSecondaryIndexes = lsis;
  if (form.stream.value !== 'OFF') request.StreamSpecification = { StreamEnabled: true, StreamViewType: form.stream.value };
  request.AttributeDefinitions = [...defs].map(([AttributeName, { type }]) => ({ AttributeName, AttributeType: type }));
  return request;
}

export function createTableDialog() {
  return dialog('Create table', (close) => {
    const form = {
      name: el('input', { name: 'table-name', required: true, autofocus: true, autocomplete: 'off', placeholder: 'app' }),
      pk: keyInputs('pk', true),
      sk: keyInputs('sk', false),
      billing: select([['PAY_PER_REQUEST', 'On-demand (pay per request)'], ['PROVISIONED', 'Provisioned']], 'PAY_PER_REQUEST', { name: 'billing' }),
      rcu: el('input', { type: 'number', min: 1, value: 5, 'aria-label': 'Read capacity units' }),
      wcu: el('input', { type: 'number', min: 1, value: 5, 'aria-label': 'Write capacity units' }),
      ttl: el('input', { name: 'ttl', placeholder: '(off) e.g. expiresAt', autocomplete: 'off' }),
      stream: select([['OFF', 'Off'], ['NEW_AND_OLD_IMAGES', 'New and old images'], ['NEW_IMAGE', 'New image'], ['OLD_IMAGE', 'Old image'], ['KEYS_ONLY', 'Keys only']], 'OFF', { name: 'stream' }),
    };
    const capacity = el('div.row', { hidden: true }, form.rcu, el('span.hint', 'RCU'), form.wcu, el('span.hint', 'WCU'));
    form.billing.addEventListener('change', () => { capacity.hidden = form.billing.value !== 'PROVISIONED'; });
    const indexes = [];
    const indexBox = el('div.indexes');
    const status = el('div');
    const submit = async (e) => {
      e.preventDefault();
      let request;
      try {
        request = createRequest(form, indexes);
        await call('CreateTable', request);
        if (form.ttl.value.trim()) {
          await waitActive(request.TableName);
          await call('UpdateTimeToLive', { TableName: request.TableName, TimeToLiveSpecification: { Enabled: true, AttributeName: form.ttl.value.trim() } });
        }
        toast(`Table ${request.TableName} created`, 'ok');
        close(request.TableName);
        await loadTables();
        location.hash = `#/table/${encodeURIComponent(request.TableName)}/details`;
      } catch (err) {
        fill(status, errorBox(err));
      }
    };
    return el('form.form', { onsubmit: submit, 'aria-label': 'Create table' },
      field('Table name', form.name),
      el('div.grid2', field('Partition key', form.pk.row), field('Sort key', form.sk.row, 'optional')),
      el('div.grid2', field('Capacity mode', form.billing), el('div.field', el('label', 'Capacity'), capacity)),
      el('div.grid2', field('Time to Live attribute', form.ttl, 'epoch seconds; optional'), field('Stream', form.stream)),
      el('h3', 'Secondary indexes'),
      indexBox,
      el('div.row',
        button('+ Global secondary index', () => indexBox.append(indexRow('GSI', indexes)), 'small'),
        button('+ Local secondary index', () => indexBox.append(indexRow('LSI', indexes)), 'small')),
      status,
      el('footer', button('Cancel', () => close(), 'ghost'), el('button.btn.primary', { type: 'submit' }, 'Create table')));
  }, { wide: true });
}

async function waitActive(name) {
  for (let i = 0; i < 50; i++) {
    const t = (await call('DescribeTable', { TableName: name })).Table;
    if (t.TableStatus === 'ACTIVE') return t;
    await new Promise((r) => setTimeout(r, 200));
  }
}

export function deleteTableDialog(name) {
  return dialog(`Delete table ${name}`, (close) => {
    const input = el('input', { autocomplete: 'off', 'aria-label': 'Type the table name to confirm', autofocus: true });
    const go = button('Delete table', async () => {
      try {
        await call('DeleteTable', { TableName: name });
        toast(`Table ${name} deleted`, 'ok');
        close(true);
        location.hash = '#/';
        await loadTables();
      } catch (e) {
        status.replaceChildren(errorBox(e));
      }
    }, 'danger', { disabled: true });
    const status = el('div');
    input.addEventListener('input', () => { go.disabled = input.value !== name; });
    return el('div.form',
      el('p', 'This deletes the table, its indexes and every item. It cannot be undone.'),
      field(`Type “${name}” to confirm`, input),
      status,
      el('footer', button('Cancel', () => close(), 'ghost'), go));
  });
}

// ---- UpdateTable -----------------------------------------------------------------

const UPDATE_KINDS = [
  ['capacity', 'Capacity'], ['add-index', 'Add a global index'], ['delete-index', 'Delete a global index'],
  ['stream', 'Stream'], ['protection', 'Deletion protection'], ['class', 'Table class'],
];

/**
 * One UpdateTable of `t`, the kind chosen in the dialog (DynamoDB takes one
 * kind of change per call: capacity, one index created or deleted, the
 * stream...). The request is shown as JSON and as an `aws` command while it
 * is being edited; Apply sends exactly that.
 */
export function updateTableDialog(t, initial = 'capacity') {
  return dialog(`Update table ${t.TableName}`, (close) => {
    const provisioned = billing(t) === 'Provisioned';
    const gsis = t.GlobalSecondaryIndexes || [];
    const kind = select(UPDATE_KINDS.filter(([k]) => k !== 'delete-index' || gsis.length), initial, { 'aria-label': 'Change' });
    const f = {
      billing: select([['PAY_PER_REQUEST', 'On-demand'], ['PROVISIONED', 'Provisioned']], provisioned ? 'PROVISIONED' : 'PAY_PER_REQUEST', { 'aria-label': 'Capacity mode' }),
      rcu: el('input', { type: 'number', min: 1, value: t.ProvisionedThroughput?.ReadCapacityUnits || 5, 'aria-label': 'Read capacity units' }),
      wcu: el('input', { type: 'number', min: 1, value: t.ProvisionedThroughput?.WriteCapacityUnits || 5, 'aria-label': 'Write capacity units' }),
      // Checked by updateRequest, not by the browser: a hidden section's
      // `required` field would block every other kind of change.
      index: { name: el('input', { 'aria-label': 'GSI name', placeholder: 'by-status', autocomplete: 'off' }), pk: keyInputs('new-gsi-pk', false), sk: keyInputs('new-gsi-sk', false), projection: projectionInputs('New index') },
      drop: select(gsis.map((i) => i.IndexName), gsis[0]?.IndexName || '', { 'aria-label': 'Index to delete' }),
      stream: select([['OFF', 'Off'], ['NEW_AND_OLD_IMAGES', 'New and old images'], ['NEW_IMAGE', 'New image'], ['OLD_IMAGE', 'Old image'], ['KEYS_ONLY', 'Keys only']],
        t.StreamSpecification?.StreamEnabled ? t.StreamSpecification.StreamViewType : 'OFF', { 'aria-label': 'Stream' }),
      protection: el('input', { type: 'checkbox', checked: !!t.DeletionProtectionEnabled, 'aria-label': 'Deletion protection' }),
      tableClass: select([['STANDARD', 'Standard'], ['STANDARD_INFREQUENT_ACCESS', 'Standard-Infrequent Access']], t.TableClassSummary?.TableClass || 'STANDARD', { 'aria-label': 'Table class' }),
    };
    const sections = {
      capacity: el('div', field('Capacity mode', f.billing), el('div.row.capacity', f.rcu, el('span.hint', 'RCU'), f.wcu, el('span.hint', 'WCU')),
        el('p.hint', 'Switching to provisioned gives every global index the same capacity. DynamoDB allows a switch of mode once every 24 hours.')),
      'add-index': el('div', field('Index name', f.index.name), el('div.grid2', field('Partition key', f.index.pk.row), field('Sort key', f.index.sk.row, 'optional')),
        field('Projection', f.index.projection.row), el('p.hint', 'The index is built from the existing items while the table stays writable (CREATING, backfilling, then ACTIVE); Details shows the progress.')),
      'delete-index': el('div', field('Index', f.drop), el('p.warn', 'The index and its copies of the items are deleted. Queries that name it fail from then on.')),
      stream: el('div', field('Stream', f.stream), el('p.hint', 'A stream’s view type cannot be changed while it is on: turn it off, then on with the new type. Turning it off ends the current stream.')),
      protection: el('div', el('label.check', f.protection, 'Refuse DeleteTable while on')),
      class: el('div', field('Table class', f.tableClass)),
    };
    const preview = el('div.preview');
    const status = el('div');
    const request = () => updateRequest(t, kind.value, f);
    const showRequest = requestPreview(preview, 'UpdateTable', request);
    const show = () => {
      Object.entries(sections).forEach(([k, box]) => { box.hidden = k !== kind.value; });
      f.rcu.parentElement.hidden = f.billing.value !== 'PROVISIONED';
      showRequest();
    };
    const form = el('form.form', { 'aria-label': 'Update table', oninput: show, onchange: show, onsubmit: async (e) => {
      e.preventDefault();
      try {
        await call('UpdateTable', request());
        toast(`UpdateTable sent to ${t.TableName}`, 'ok');
        close(true);
        location.hash = `#/table/${encodeURIComponent(t.TableName)}/details`;
        document.dispatchEvent(new CustomEvent('ferrodyn:tableupdated', { detail: t.TableName }));
      } catch (err) {
        fill(status, errorBox(err));
      }
    } },
    field('Change', kind), ...Object.values(sections), el('h3', 'Request'), preview, status,
    el('footer', button('Cancel', () => close(), 'ghost'), el('button.btn.primary', { type: 'submit' }, 'Apply')));
    show();
    return form;
  }, { wide: true });
}

/**
 * A function that draws `request()` (a request of `operation`) into
 * `preview` as JSON and as an `aws` command, or the FormError it throws.
 * Called on every edit of a dialog; the newest call wins when the
 * commands' answers cross.
 */
export function requestPreview(preview, operation, request) {
  let shown = 0;
  return async () => {
    const seq = ++shown;
    let r;
    try {
      r = request();
    } catch (e) {
      fill(preview, errorBox(e));
      return;
    }
    const { aws } = await api('commands', { operation, request: r }).catch(() => ({ aws: '' }));
    if (seq !== shown) return;
    fill(preview, codeBlock(JSON.stringify(r, null, 2), `${operation} request`), aws && codeBlock(aws, 'aws command', { wrap: true }));
  };
}

/** The UpdateTable request for one kind of change (a FormError if the form
 * is not a valid one). */
function updateRequest(t, kind, f) {
  const request = { TableName: t.TableName };
  const throughput = () => ({ ReadCapacityUnits: Number(f.rcu.value), WriteCapacityUnits: Number(f.wcu.value) });
  const provisioned = billing(t) === 'Provisioned';
  if (kind === 'capacity') {
    request.BillingMode = f.billing.value;
    if (f.billing.value === 'PROVISIONED') {
      request.ProvisionedThroughput = throughput();
      if (!provisioned && t.GlobalSecondaryIndexes?.length) {
        request.GlobalSecondaryIndexUpdates = t.GlobalSecondaryIndexes.map((i) => ({ Update: { IndexName: i.IndexName, ProvisionedThroughput: throughput() } }));
      }
    }
  } else if (kind === 'add-index') {
    const name = f.index.name.value.trim();
    const pk = f.index.pk.name.value.trim();
    if (!name || !pk) throw new FormError('Name the index and its partition key.');
    const defined = Object.fromEntries((t.AttributeDefinitions || []).map((d) => [d.AttributeName, d.AttributeType]));
    const keys = [[pk, f.index.pk.type.value, 'HASH']];
    const sk = f.index.sk.name.value.trim();
    if (sk) keys.push([sk, f.index.sk.type.value, 'RANGE']);
    for (const [attr, type] of keys) {
      if (defined[attr] && defined[attr] !== type) throw new FormError(`Attribute ${attr} is already ${TYPE_NAMES[defined[attr]]} in this table: an attribute has one type wherever it is a key.`);
      defined[attr] = type;
    }
    request.AttributeDefinitions = Object.entries(defined).map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType }));
    const create = { IndexName: name, KeySchema: keys.map(([AttributeName, , KeyType]) => ({ AttributeName, KeyType })), Projection: f.index.projection.value() };
    if (provisioned) create.ProvisionedThroughput = { ReadCapacityUnits: t.ProvisionedThroughput.ReadCapacityUnits, WriteCapacityUnits: t.ProvisionedThroughput.WriteCapacityUnits };
    request.GlobalSecondaryIndexUpdates = [{ Create: create }];
  } else if (kind === 'delete-index') {
    request.GlobalSecondaryIndexUpdates = [{ Delete: { IndexName: f.drop.value } }];
  } else if (kind === 'stream') {
    request.StreamSpecification = f.stream.value === 'OFF' ? { StreamEnabled: false } : { StreamEnabled: true, StreamViewType: f.stream.value };
  } else if (kind === 'protection') {
    request.DeletionProtectionEnabled = f.protection.checked;
  } else if (kind === 'class') {
    request.TableClass = f.tableClass.value;
  }
  return request;
}

// ---- details ---------------------------------------------------------------------

function kv(rows) {
  return el('dl.kv', rows.filter(Boolean).map(([k, v]) => [el('dt', k), el('dd', v ?? '—')]));
}

function keys(schema) {
  return (schema || []).map((k) => `${k.AttributeName} (${k.KeyType === 'HASH' ? 'partition' : 'sort'})`).join(', ');
}

function projection(p) {
  return p ? p.ProjectionType + (p.NonKeyAttributes ? `: ${p.NonKeyAttributes.join(', ')}` : '') : '';
}

export async function renderDetails(name) {
  const box = el('div.details', el('p.hint', 'Loading…'));
  const load = async () => {
    try {
      const [t, ttl, tags] = await Promise.all([
        call('DescribeTable', { TableName: name }).then((d) => d.Table),
        call('DescribeTimeToLive', { TableName: name }).then((d) => d.TimeToLiveDescription).catch(() => null),
        call('DescribeTable', { TableName: name }).then((d) => call('ListTagsOfResource', { ResourceArn: d.Table.TableArn })).then((d) => d.Tags).catch(() => []),
      ]);
      app.described[name] = t;
      fill(box, detailsBody(t, ttl, tags));
      // While the table or an index is changing (an index backfilling, a
      // capacity change), keep the page current until it is ACTIVE again.
      const changing = t.TableStatus !== 'ACTIVE' || (t.GlobalSecondaryIndexes || []).some((i) => i.IndexStatus && i.IndexStatus !== 'ACTIVE');
      box.dataset.changing = String(changing);
      if (changing) setTimeout(() => { if (box.isConnected) load(); }, 1000);
    } catch (e) {
      fill(box, errorBox(e));
    }
  };
  load();
  return box;
}

function detailsBody(t, ttl, tags) {
  const types = Object.fromEntries((t.AttributeDefinitions || []).map((d) => [d.AttributeName, d.AttributeType]));
  const tp = (p) => p && billing(t) === 'Provisioned' ? `${p.ReadCapacityUnits} RCU / ${p.WriteCapacityUnits} WCU` : 'on-demand';
  const indexTable = (list, kind) => list?.length ? el('table.plain', { 'aria-label': `${kind} indexes` },
    el('thead', el('tr', ['Name', 'Keys', 'Projection', 'Status', 'Items', 'Throughput'].map((h) => el('th', h)))),
    el('tbody', list.map((i) => el('tr',
      el('td', i.IndexName), el('td', keys(i.KeySchema)), el('td', projection(i.Projection)),
      el('td', i.IndexStatus ? el(`span.pill.s-${i.IndexStatus.toLowerCase()}`, i.IndexStatus + (i.Backfilling ? ' · backfilling' : '')) : 'ACTIVE'),
      el('td', (i.ItemCount ?? 0).toLocaleString()), el('td', kind === 'LSI' ? 'table’s' : tp(i.ProvisionedThroughput))))))
    : el('p.hint', `No ${kind}s.`);
  const ttlBox = el('div');
  renderTtl(ttlBox, t.TableName, ttl);
  return el('div',
    el('div.cards3',
      el('div.stat', el('span.label', 'Status'), el(`span.pill.s-${t.TableStatus.toLowerCase()}`, t.TableStatus)),
      el('div.stat', el('span.label', 'Items'), el('strong', (t.ItemCount ?? 0).toLocaleString())),
      el('div.stat', el('span.label', 'Size'), el('strong', formatBytes(t.TableSizeBytes))),
      el('div.stat', el('span.label', 'Capacity'), el('strong', billing(t)), el('small', tp(t.ProvisionedThroughput)))),
    el('section', el('h3', 'Keys'), kv([
      ['Partition key', t.KeySchema.filter((k) => k.KeyType === 'HASH').map((k) => `${k.AttributeName} (${types[k.AttributeName]})`).join('')],
      ['Sort key', t.KeySchema.filter((k) => k.KeyType === 'RANGE').map((k) => `${k.AttributeName} (${types[k.AttributeName]})`).join('') || '—'],
      ['Attribute definitions', (t.AttributeDefinitions || []).map((d) => `${d.AttributeName}: ${d.AttributeType}`).join(', ')],
    ])),
    el('div.row.manage', button('Update table…', () => updateTableDialog(t), 'primary small'),
      el('span.hint', 'capacity, global indexes, stream, deletion protection, table class (UpdateTable)')),
    el('section', el('h3', 'Global secondary indexes'), indexTable(t.GlobalSecondaryIndexes, 'GSI'),
      el('div.row', button('+ Add a global index…', () => updateTableDialog(t, 'add-index'), 'small'),
        t.GlobalSecondaryIndexes?.length ? button('Delete a global index…', () => updateTableDialog(t, 'delete-index'), 'small ghost danger') : null)),
    el('section', el('h3', 'Local secondary indexes'), indexTable(t.LocalSecondaryIndexes, 'LSI')),
    el('section', el('h3', 'Stream, Time to Live, tags'), kv([
      ['Stream', t.StreamSpecification?.StreamEnabled ? `${t.StreamSpecification.StreamViewType} · ${t.LatestStreamArn}` : 'off'],
      ['Deletion protection', t.DeletionProtectionEnabled ? 'on' : 'off'],
      ['Table class', t.TableClassSummary?.TableClass || 'STANDARD'],
      ['Tags', tags?.length ? tags.map((g) => `${g.Key}=${g.Value}`).join(', ') : 'none'],
      ['ARN', el('code', t.TableArn)],
      ['Created', t.CreationDateTime ? new Date(t.CreationDateTime * 1000).toLocaleString() : '—'],
    ]), ttlBox),
    el('section.danger-zone', el('h3', 'Danger zone'),
      button('Delete table…', () => deleteTableDialog(t.TableName), 'danger')));
}

function renderTtl(box, table, ttl) {
  const enabled = ttl?.TimeToLiveStatus === 'ENABLED';
  const input = el('input', { placeholder: 'attribute name', value: ttl?.AttributeName || '', 'aria-label': 'TTL attribute' });
  const status = el('span');
  const apply = async (on) => {
    try {
      const r = await call('UpdateTimeToLive', { TableName: table, TimeToLiveSpecification: { Enabled: on, AttributeName: input.value.trim() } });
      toast(`Time to Live ${on ? 'enabled' : 'disabled'}`, 'ok');
      renderTtl(box, table, { TimeToLiveStatus: r.TimeToLiveSpecification.Enabled ? 'ENABLED' : 'DISABLED', AttributeName: input.value.trim() });
    } catch (e) {
      fill(status, errorBox(e));
    }
  };
  fill(box, el('div.row.ttl',
    el('strong', 'Time to Live: '), el(`span.pill.${enabled ? 's-active' : 's-off'}`, ttl?.TimeToLiveStatus || 'DISABLED'),
    input,
    enabled ? button('Disable', () => apply(false), 'small') : button('Enable', () => apply(true), 'small'),
    status));
}

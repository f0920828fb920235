// The console's entry point: layout, hash routing (#/table/<name>/<tab>,
// #/expr, #/cost, #/partiql), keyboard shortcuts, theme, and recovery after
// the server comes back.

import { api, onReconnect, startHeartbeat } from './api.js';
import { el, fill, button, dialog, closeTopDialog, errorBox, formatBytes, $ } from './ui.js';
import { loadTables, renderTableList, createTableDialog, renderDetails, billing, plural } from './tables.js';
import { explorer, refresh, readForm } from './items.js';
import { initStage, stagePanel, toggleStage, closeStage, stageOpen, commitStage, onCommit } from './stage.js';
import { locksView, transferView, exprView, costView, partiqlView, itemsTable, streamsView } from './tools.js';
import { partitionsView } from './partitions.js';
import { replicasView } from './replicas.js';
import { jobsDialog, trackJob } from './bulk.js';
import { backupsView } from './backups.js';

export const app = { tables: [], described: {}, table: null, info: null };

const TABLE_TABS = [
  ['items', 'Items'], ['details', 'Details'], ['locks', 'Locks'], ['streams', 'Streams'], ['partitions', 'Partitions'], ['replicas', 'Replicas'], ['backups', 'Backups'],
  ['transfer', 'Import / export'],
];

function theme(next) {
  const value = next || localStorage.getItem('ferrodyn.theme') ||
    (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
  document.documentElement.dataset.theme = value;
  localStorage.setItem('ferrodyn.theme', value);
  $('#theme-button')?.setAttribute('aria-label', `Theme: ${value} (press t to switch)`);
}

async function route() {
  const main = $('#main');
  // The items view keeps its query form after a `?` (see items.js).
  const parts = location.hash.split('?')[0].replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  app.table = parts[0] === 'table' ? parts[1] : null;
  renderTableList();
  document.querySelectorAll('.toolnav a').forEach((a) => a.setAttribute('aria-current', a.getAttribute('href') === `#/${parts[0]}` ? 'page' : 'false'));
  try {
    if (parts[0] === 'table' && parts[1]) await tableView(main, parts[1], parts[2] || 'items');
    else if (parts[0] === 'expr') fill(main, exprView());
    else if (parts[0] === 'cost') fill(main, costView());
    else if (parts[0] === 'partiql') fill(main, partiqlView(itemsTable));
    else home(main);
  } catch (e) {
    fill(main, el('div.page', errorBox(e)));
  }
}

function home(main) {
  const total = app.tables.reduce((n, t) => n + (t.ItemCount || 0), 0);
  fill(main, el('div.page.home',
    el('h1', 'Tables'),
    el('p.hint', `${app.tables.length} table(s), ${total.toLocaleString()} item(s) on ${app.info?.endpoint}`),
    app.tables.length ? el('table.plain', { 'aria-label': 'Tables' },
      el('thead', el('tr', ['Name', 'Status', 'Items', 'Size', 'Capacity', 'Indexes'].map((h) => el('th', h)))),
      el('tbody', app.tables.map((t) => el('tr',
        el('td', el('a', { href: `#/table/${encodeURIComponent(t.TableName)}` }, t.TableName)),
        el('td', el(`span.pill.s-${(t.TableStatus || '').toLowerCase()}`, t.TableStatus)),
        el('td.num', (t.ItemCount ?? 0).toLocaleString()), el('td.num', formatBytes(t.TableSizeBytes)), el('td', billing(t)),
        el('td', [...(t.GlobalSecondaryIndexes || []), ...(t.LocalSecondaryIndexes || [])].map((i) => i.IndexName).join(', ') || '—')))))
      : el('div.empty', el('p', 'No tables yet.'), button('Create a table', createTableDialog, 'primary'))));
}

async function tableView(main, name, tab) {
  const table = (await api('call/DescribeTable', { TableName: name })).Table;
  app.described[name] = table;
  const body = el('div.tabbody');
  fill(main, el('div.tableview',
    el('header.tablehead',
      el('div', el('h1', name),
        tableMeta(table)),
      el('nav.tabs', { 'aria-label': 'Table views' }, TABLE_TABS.map(([id, label]) =>
        el('a.tab', { href: `#/table/${encodeURIComponent(name)}/${id}`, 'aria-current': id === tab ? 'page' : 'false' }, label)))),
    body));
  if (tab === 'details') fill(body, await renderDetails(name));
  else if (tab === 'locks') fill(body, locksView(name));
  else if (tab === 'streams') fill(body, streamsView(name));
  else if (tab === 'partitions') fill(body, partitionsView(name, table));
  else if (tab === 'replicas') fill(body, replicasView(name));
  else if (tab === 'backups') fill(body, backupsView(name, () => loadTables()));
  else if (tab === 'transfer') fill(body, transferView(name, () => { try { return readForm(); } catch { return undefined; } }));
  else fill(body, explorer(table));
}

/** The status line under a table's name: status, item count, size, billing. */
function tableMeta(table) {
  return el('div.meta#table-meta', el(`span.pill.s-${table.TableStatus.toLowerCase()}`, table.TableStatus),
    ` ${plural(table.ItemCount ?? 0, 'item')} · ${formatBytes(table.TableSizeBytes)} · ${billing(table)}`);
}

/** Re-describes the open table after each page of items loads, so the count
 * follows writes made outside the console (the CLI, an application). */
async function refreshTableMeta(name) {
  const table = (await api('call/DescribeTable', { TableName: name })).Table;
  const meta = $('#table-meta');
  if (app.table !== name || !meta) return;
  app.described[name] = table;
  meta.replaceWith(tableMeta(table));
}

function shortcuts() {
  dialog('Keyboard shortcuts', () => el('dl.kv.shortcuts', [
    ['/', 'Search tables'], ['Ctrl+Enter', 'Run the query, or commit when the stage is open'], ['s', 'Open or close the stage'],
    ['n', 'New item'], ['r', 'Refresh'], ['t', 'Switch light/dark theme'], ['Esc', 'Close dialog or panel'], ['?', 'This help'],
  ].map(([k, v]) => [el('dt', el('kbd', k)), el('dd', v)])));
}

function onKey(e) {
  const typing = e.target.closest?.('input, textarea, select, [contenteditable]');
  if (e.key === 'Escape') {
    if (!closeTopDialog()) closeStage();
    return;
  }
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    if (document.querySelector('.dialog')) return;
    e.preventDefault();
    if (stageOpen()) commitStage();
    else $('form.queryform')?.requestSubmit();
    return;
  }
  if (typing || e.ctrlKey || e.metaKey || e.altKey || document.querySelector('.dialog')) return;
  const actions = {
    '/': () => $('#table-filter').focus(),
    s: toggleStage,
    t: () => theme(document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark'),
    n: () => [...document.querySelectorAll('.toolbar button')].find((b) => b.textContent.includes('New item'))?.click(),
    r: () => { loadTables(); refresh(); },
    '?': shortcuts,
  };
  if (actions[e.key]) {
    e.preventDefault();
    actions[e.key]();
  }
}

async function boot() {
  theme();
  document.body.append(stagePanel());
  $('#stage-button').addEventListener('click', toggleStage);
  $('#jobs-button').addEventListener('click', jobsDialog);
  $('#theme-button').addEventListener('click', () => theme(document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark'));
  $('#help-button').addEventListener('click', shortcuts);
  $('#create-table').addEventListener('click', createTableDialog);
  $('#table-filter').addEventListener('input', renderTableList);
  document.addEventListener('keydown', onKey);
  window.addEventListener('hashchange', route);
  onCommit(() => { loadTables(); refresh(); });
  document.addEventListener('ferrodyn:pageloaded', (e) => refreshTableMeta(e.detail).catch(() => {}));
  onReconnect(() => { loadTables().then(route); });
  // After an UpdateTable the open view (Details, usually) is drawn again.
  document.addEventListener('ferrodyn:tableupdated', () => { loadTables().then(route); });
  try {
    app.info = await api('info');
    fill($('#conn'), el('span.dot'), el('span', app.info.endpoint.replace(/^https?:\/\//, '')), el('span.region', app.info.region));
    $('#conn').title = `Endpoint ${app.info.endpoint}, region ${app.info.region}, credentials: ${app.info.credentials}`;
    initStage(app.info.endpoint);
    await loadTables();
    trackJob(); // jobs still running from before a reload show in the header
    // Tests shorten the idle heartbeat through localStorage.
    startHeartbeat(Number(localStorage.getItem('ferrodyn.heartbeatSeconds')) || 15);
  } catch (e) {
    fill($('#main'), el('div.page', errorBox(e)));
    return;
  }
  await route();
  // First load: navigation start to the first view rendered (BENCHMARKS.md).
  document.body.dataset.readyMs = String(Math.round(performance.now()));
  document.body.dataset.ready = 'true';
}

boot();

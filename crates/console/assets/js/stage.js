// Staged edits. The stage is the StageFile JSON of `ferrodyn stage`, kept in
// localStorage (one per endpoint) so it survives a reload; staging, the diff
// against the live items and the commit (one TransactWriteItems with
// optimistic locks and an idempotency token) happen in the server's Rust
// (ferrodyn-patterns). This module only stores, shows and sends it.

import { api } from './api.js';
import { el, fill, button, errorBox, toast, $ } from './ui.js';
import { renderValue, keyId } from './values.js';

let storageKey = 'ferrodyn.stage';
let stage = null;
let failures = {}; // change index -> cancellation reason, from the last commit
const listeners = [];

export function initStage(endpoint) {
  storageKey = `ferrodyn.stage:${endpoint}`;
  try {
    stage = JSON.parse(localStorage.getItem(storageKey) || 'null');
    byKey = null;
  } catch {
    stage = null;
  }
  changed();
}

export function onStageChange(listener) {
  listeners.push(listener);
}

function save(next) {
  stage = next && next.changes && next.changes.length ? next : null;
  byKey = null;
  if (stage) localStorage.setItem(storageKey, JSON.stringify(stage));
  else localStorage.removeItem(storageKey);
  changed();
}

function changed() {
  const count = stage?.changes?.length || 0;
  const badge = $('#stage-count');
  if (badge) {
    badge.textContent = String(count);
    badge.hidden = count === 0;
  }
  $('#stage-button')?.setAttribute('aria-label', `Staged changes: ${count}`);
  listeners.forEach((l) => l());
  if (panelBody && !panel.hidden) renderPanel();
}

export const stagedChanges = () => stage?.changes || [];

/** The staged changes by item (keyId), built when first asked after a
 * change: the grid asks once per row, and a page of 1,000 rows against a
 * stage of hundreds of changes must not compare every pair. */
let byKey = null;

/** The staged change of one item, if any. */
export function stagedFor(table, key) {
  if (!byKey) {
    byKey = new Map();
    for (const c of stagedChanges()) if (!byKey.has(keyId(c.table, c.key))) byKey.set(keyId(c.table, c.key), c);
  }
  return byKey.get(keyId(table, key));
}

/** Stages one change: {op: put|update|delete, table, item|key, set, remove},
 * or many deletes: {op: 'deletes', table, keys}. */
export async function stageChange(change) {
  const before = transactionsNeeded;
  const result = await api('stage/add', { stage, ...change, uniqueEntities: groupedEntities(change.table) });
  failures = {};
  lastReport = null;
  transactionsNeeded = result.transactions || 1;
  save(result.stage);
  if (transactionsNeeded > 1 && before <= 1) {
    toast(`${stagedChanges().length} changes staged: more than one transaction holds (${MAX_ACTIONS} actions, 4 MB), so committing them cannot be atomic`, 'warn');
  }
  reportMarkers(result.markers);
  return result.numbers || result.number;
}

/** Grouped markers are keyed by an entity name the server cannot guess:
 * the one the Locks view was last used with for this table. (Per-value
 * markers are found by their key alone.) */
function groupedEntities(table) {
  try {
    const locks = JSON.parse(localStorage.getItem(`ferrodyn.locks:${table}`) || '{}');
    return locks.layout === 'grouped' && locks.entity ? [locks.entity] : [];
  } catch {
    return [];
  }
}

/** Uniqueness markers staged to follow an edit, and markers left alone. */
function reportMarkers(markers) {
  if (markers?.moved?.length) toast(`Uniqueness markers follow the edit: ${markers.moved.join('; ')}`, 'ok');
  for (const warning of markers?.warnings || []) toast(`⚠ ${warning}`, 'warn');
}

/** DynamoDB's limit on the actions of one TransactWriteItems. */
const MAX_ACTIONS = 100;
/** TransactWriteItems the stage needs, as the server last counted. */
let transactionsNeeded = 1;

/** Re-stages change `index` against the item as it is now. */
async function restage(index) {
  try {
    const result = await api('stage/restage', { stage, number: index + 1 });
    failures = {};
    save(result.stage);
    toast(`Change ${index + 1} re-staged against the current item`, 'ok');
  } catch (e) {
    toast(`${e.code}: ${e.message}`, 'error');
  }
}

export function discard(index) {
  const next = structuredClone(stage);
  next.changes.splice(index, 1);
  failures = {};
  lastReport = null;
  save(next);
}

export function clearStage() {
  failures = {};
  save(null);
}

// ---- the panel --------------------------------------------------------------

let panel = null;
let panelBody = null;

export function stagePanel() {
  panelBody = el('div.stage-body', { 'aria-live': 'polite' });
  panel = el('aside.drawer#stage-panel', { 'aria-label': 'Staged changes', hidden: true },
    el('header',
      el('h2', 'Staged changes'),
      button('✕', closeStage, 'ghost icon', { 'aria-label': 'Close staged changes' })),
    panelBody);
  return panel;
}

export function toggleStage() {
  if (panel.hidden) openStage();
  else closeStage();
}

export function openStage() {
  panel.hidden = false;
  renderPanel();
}

export function closeStage() {
  if (!panel || panel.hidden) return false;
  panel.hidden = true;
  return true;
}

export const stageOpen = () => panel && !panel.hidden;

async function renderPanel() {
  const changes = stagedChanges();
  if (!changes.length) {
    fill(panelBody, el('div.empty',
      el('p', 'Nothing is staged.'),
      el('p.hint', 'Double-click a cell to edit it, use “New item”, or select rows and “Stage delete”. Changes are kept here (even across reloads) until you commit them as one transaction.')));
    return;
  }
  fill(panelBody, el('p.hint', 'Comparing with the live items…'));
  let diffs;
  try {
    diffs = await api('stage/diff', { stage });
  } catch (e) {
    fill(panelBody, errorBox(e), footer());
    return;
  }
  transactionsNeeded = diffs.transactions || 1;
  const cards = diffs.diffs.map((d, i) => diffCard(d, changes[i], i));
  const plural = changes.length > 1 ? 's' : '';
  fill(panelBody,
    transactionsNeeded > 1
      ? el('div.warn.not-atomic', el('strong', `${changes.length} changes need ${transactionsNeeded} transactions.`),
        ` One TransactWriteItems holds at most ${MAX_ACTIONS} actions and 4 MB, so these cannot be committed all or nothing. `,
        'Commit them as separate transactions (each all or nothing, in order; a failure stops there and keeps the rest staged), or discard changes until one transaction holds them.')
      : el('p.summary', `${changes.length} change${plural}, committed together as one TransactWriteItems.`),
    lastReport,
    el('ol.cards', cards),
    footer());
}

/** What the last split commit left behind, shown at the top of the panel
 * until the stage is next changed by hand. */
let lastReport = null;

/** Drops one attribute from a staged change: stages it back to its live value. */
async function revertAttribute(staged, change) {
  try {
    await stageChange(change.old
      ? { op: 'update', table: staged.table, key: staged.key, set: { [change.name]: change.old } }
      : { op: 'update', table: staged.table, key: staged.key, remove: [change.name] });
  } catch (e) {
    toast(`${e.code}: ${e.message}`, 'error');
  }
}

function attrRow(change, cls, staged) {
  const arrow = change.old && change.new ? '→' : '';
  const revertible = staged && staged.op !== 'delete' && !(change.name in staged.key);
  return el(`li.attr.${cls}`,
    revertible ? button('↶', () => revertAttribute(staged, change), 'small ghost revert',
      { 'aria-label': `Drop the change to ${change.name}`, title: 'Drop this attribute from the change' })
      : staged && el('span.revert-space'),
    el('span.sign', change.old && change.new ? '~' : change.new ? '+' : '−'),
    el('span.name', change.name),
    change.old ? el('span.old', renderValue(change.old)) : null,
    arrow && el('span.arrow', arrow),
    change.new ? el('span.new', renderValue(change.new)) : null);
}

function diffCard(diff, change, index) {
  const failure = failures[index];
  return el(`li.card.change.op-${change.op}${failure ? '.failed' : ''}`, { dataset: { change: String(index) } },
    el('header',
      el(`span.op.op-${change.op}`, change.op),
      el('span.what', diff.what),
      button('Discard', () => discard(index), 'small ghost', { 'aria-label': `Discard change ${index + 1}` })),
    diff.error && el('div.reason', { role: 'alert' },
      el('strong.code', 'Cannot read the live item'), ' ', diff.error,
      el('div.hint', 'Shown against the item as staged. Discard the change, or create the table again, before committing.')),
    failure && el('div.reason', { role: 'alert' },
      el('strong.code', failure.code), ' ', failure.explanation,
      failure.item ? el('div.hint', 'Current item: ', el('code', JSON.stringify(failure.item))) : null),
    diff.changes.length
      ? el('ul.attrs', diff.changes.map((c) => attrRow(c, 'change', change)))
      : el('p.hint', 'No attribute changes against the live item.'),
    diff.existenceDrift && el('div.warn', `⚠ ${diff.existenceDrift}: the commit will be cancelled unless you re-stage.`),
    diff.drift.length ? el('div.warn', '⚠ Changed since staged (the commit will be cancelled):',
      el('ul.attrs', diff.drift.map((c) => attrRow(c, 'drift')))) : null,
    (diff.drift.length || diff.existenceDrift)
      && button('Restage against the current item', () => restage(index), 'small', { 'aria-label': `Restage change ${index + 1}` }));
}

function footer() {
  const split = transactionsNeeded > 1;
  const commit = split
    ? button(`Commit as ${transactionsNeeded} separate transactions…`, () => commitStage(), 'primary', { 'aria-keyshortcuts': 'Control+Enter', id: 'commit-button' })
    : button('Commit', () => commitStage(), 'primary', { 'aria-keyshortcuts': 'Control+Enter', id: 'commit-button' });
  const scope = el('select', { 'aria-label': 'Lock scope', title: 'What each update checks is unchanged when it commits' },
    el('option', { value: 'item' }, 'Lock whole items'),
    el('option', { value: 'attributes' }, 'Lock only the attributes written'));
  scope.value = stage?.lock === 'attributes' ? 'attributes' : 'item';
  scope.addEventListener('change', () => {
    const next = structuredClone(stage);
    if (scope.value === 'attributes') next.lock = 'attributes';
    else delete next.lock;
    failures = {};
    save(next);
  });
  return el('footer.stage-actions',
    el('div.row.lockscope', el('label', { for: (scope.id = 'lock-scope') }, 'Optimistic locks'), scope),
    commit, el('span.hint', 'Ctrl+Enter'),
    el('span.spacer'),
    button('Clear stage', () => { if (confirm('Drop every staged change?')) clearStage(); }, 'ghost danger'));
}

let commitListeners = [];
export function onCommit(listener) {
  commitListeners.push(listener);
}

export async function commitStage() {
  const changes = stagedChanges();
  if (!changes.length) return;
  const allowSplit = transactionsNeeded > 1;
  if (allowSplit && !confirm(`Commit ${changes.length} changes as ${transactionsNeeded} separate transactions? Each is all or nothing, but the whole is not: if one fails, the ones before it stay committed.`)) return;
  const btn = $('#commit-button');
  if (btn) btn.disabled = true;
  try {
    const report = await api('stage/commit', { stage, allowSplit });
    toast(`Committed ${report.changes} change(s) in ${report.transactions} transaction(s)`, 'ok');
    clearStage();
    if (report.transactions > 1) showSplitReport(report);
    else closeStage();
    commitListeners.forEach((l) => l());
  } catch (e) {
    failures = {};
    if (e.code === 'TransactionCanceledException' && e.body?.failures) {
      await cancelled(e.body);
    } else {
      toast(`${e.code}: ${e.message}`, 'error');
      panelBody.prepend(errorBox(e));
    }
  } finally {
    if (btn) btn.disabled = false;
  }
}

/** A cancelled commit: nothing of the failing transaction was written, but
 * the transactions before it (of a split commit) were: their changes leave
 * the stage, and the failures are renumbered to what remains. */
function cancelled(body) {
  const done = body.committedChanges || 0;
  for (const f of body.failures) failures[f.change - done] = f;
  toast('Commit cancelled: nothing of the failing transaction was written; the rest is kept staged', 'error');
  if (done === 0) return renderPanel();
  lastReport = el('div.warn.split-report', { role: 'status' },
    `The first ${done} change(s) were committed by the transactions before the one that failed, and left the stage. Nothing of the failing transaction was written; it and the rest are still staged.`);
  const next = structuredClone(stage);
  next.changes.splice(0, done);
  save(next); // redraws the open panel
}

function showSplitReport(report) {
  fill(panelBody, el('div.ok.split-report', { role: 'status' },
    el('strong', `Committed ${report.changes} changes in ${report.transactions} transactions.`),
    el('ol', (report.ranges || []).map((r, i) => el('li', `Changes ${r[0]}–${r[1]}`, el('span.hint', ` token ${report.tokens[i]}`))))));
}


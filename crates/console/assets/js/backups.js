// A table's Backups tab: point-in-time recovery (on/off, the restorable
// window, a restore to any instant in it) and on-demand backups (create,
// restore under a new name, delete), over the DynamoDB API alone, so it
// works against AWS too. Lists refresh while a backup is still copying.

import { api } from './api.js';
import { el, fill, button, dialog, field, errorBox, toast, formatBytes } from './ui.js';

/** The tab's body for `table`; `onRestored(name)` runs when a restore starts. */
export function backupsView(table, onRestored) {
  const recovery = el('section.card.recovery', { 'aria-label': 'Point-in-time recovery' }, el('p.hint', 'Reading…'));
  const backups = el('section.card.backups', { 'aria-label': 'Backups' }, el('p.hint', 'Reading…'));
  const view = el('div.backupsview', recovery, backups);
  let timer;
  const load = async () => {
    clearTimeout(timer);
    const [copying] = await Promise.all([
      drawBackups(backups, table, load, onRestored),
      drawRecovery(recovery, table, load, onRestored),
    ]);
    // Until every backup is AVAILABLE, while the tab is shown.
    if (copying && view.isConnected) timer = setTimeout(load, 1000);
  };
  load();
  return view;
}

const time = (seconds) => (seconds ? new Date(seconds * 1000).toLocaleString() : '—');

/** ISO 8601 with milliseconds, for the restore dialog's time field. */
const isoMillis = (seconds) => new Date(seconds * 1000).toISOString();

async function drawRecovery(box, table, reload, onRestored) {
  let description;
  try {
    description = (await api('call/DescribeContinuousBackups', { TableName: table }))
      .ContinuousBackupsDescription.PointInTimeRecoveryDescription;
  } catch (e) {
    fill(box, el('h2', 'Point-in-time recovery'), errorBox(e));
    return;
  }
  const on = description.PointInTimeRecoveryStatus === 'ENABLED';
  const turn = async (enabled) => {
    if (!enabled && !confirm(`Turn point-in-time recovery off for ${table}? Its history is deleted; you can only restore to instants after turning it on again.`)) return;
    try {
      const spec = { PointInTimeRecoveryEnabled: enabled };
      if (enabled) spec.RecoveryPeriodInDays = Number(box.querySelector('#recovery-days')?.value || 35);
      await api('call/UpdateContinuousBackups', { TableName: table, PointInTimeRecoverySpecification: spec });
      toast(`Point-in-time recovery ${enabled ? 'on' : 'off'} for ${table}`);
    } catch (e) {
      toast(`${e.code || 'Error'}: ${e.message}`, 'error');
    }
    reload();
  };
  fill(box,
    el('header.row', el('h2', 'Point-in-time recovery'),
      el(`span.pill.${on ? 's-active' : 's-disabled'}`, on ? 'ON' : 'OFF')),
    on
      ? el('div',
        el('dl.kv',
          el('dt', 'Restorable from'), el('dd', { 'data-field': 'earliest' }, time(description.EarliestRestorableDateTime)),
          el('dt', 'Restorable to'), el('dd', { 'data-field': 'latest' }, `${time(description.LatestRestorableDateTime)} (now: every acknowledged write)`),
          el('dt', 'Recovery period'), el('dd', `${description.RecoveryPeriodInDays} day(s)`)),
        el('div.row',
          button('Restore to a point in time…', () => pointInTimeDialog(table, description, onRestored), 'primary'),
          button('Turn off…', () => turn(false), 'danger')))
      : el('div',
        el('p.hint', 'Off: nothing can be restored to an earlier instant. Turned on, every write is kept for the recovery period, and the table can be restored as it was at any millisecond since.'),
        el('div.row',
          field('Recovery period (days)', el('input#recovery-days', { type: 'number', min: 1, max: 35, value: 35 })),
          button('Turn on', () => turn(true), 'primary'))));
}

/** Draws the backup list; true while one is still being copied. */
async function drawBackups(box, table, reload, onRestored) {
  let summaries;
  try {
    summaries = (await api('call/ListBackups', { TableName: table, BackupType: 'ALL' })).BackupSummaries || [];
  } catch (e) {
    fill(box, el('h2', 'Backups'), errorBox(e));
    return false;
  }
  const create = async () => {
    const name = box.querySelector('#backup-name').value.trim();
    try {
      await api('call/CreateBackup', { TableName: table, BackupName: name });
      toast(`Backing up ${table} as ${name}`);
    } catch (e) {
      toast(`${e.code || 'Error'}: ${e.message}`, 'error');
    }
    reload();
  };
  const row = (s) => el('tr',
    el('td', s.BackupName),
    el('td', el(`span.pill.s-${s.BackupStatus.toLowerCase()}`, s.BackupStatus)),
    el('td', s.BackupType),
    el('td', time(s.BackupCreationDateTime)),
    el('td.num', s.BackupSizeBytes === undefined ? '—' : formatBytes(s.BackupSizeBytes)),
    el('td', s.BackupExpiryDateTime ? `expires ${time(s.BackupExpiryDateTime)}` : ''),
    el('td.actions',
      button('Restore…', () => restoreDialog(table, s, onRestored), 'small', { disabled: s.BackupStatus !== 'AVAILABLE' }),
      s.BackupType === 'USER' ? button('Delete…', () => deleteBackup(s, reload), 'small danger') : null));
  fill(box,
    el('header.row', el('h2', 'Backups'), el('span.spacer'),
      field('Name', el('input#backup-name', { value: defaultName(table), maxlength: 255 })),
      button('Create backup', create, 'primary')),
    summaries.length
      ? el('table.plain', { 'aria-label': 'Backups of this table' },
        el('thead', el('tr', ['Name', 'Status', 'Type', 'Created', 'Size', '', ''].map((h) => el('th', h)))),
        el('tbody', summaries.map(row)))
      : el('div.empty', el('p', 'No backups of this table yet.'),
        el('p.hint', 'A backup is the table and its indexes at the instant you create it; it outlives the table and restores as a new one.')));
  return summaries.some((s) => s.BackupStatus === 'CREATING');
}

/** `<table>-YYYYMMDD-HHMM`, a valid backup name. */
function defaultName(table) {
  const now = new Date().toISOString().replace(/[-:]/g, '').slice(0, 13).replace('T', '-');
  return `${table}-${now}`.slice(0, 255);
}

async function deleteBackup(summary, reload) {
  if (!confirm(`Delete backup ${summary.BackupName}? It cannot be restored afterwards.`)) return;
  try {
    await api('call/DeleteBackup', { BackupArn: summary.BackupArn });
    toast(`Deleted backup ${summary.BackupName}`);
  } catch (e) {
    toast(`${e.code || 'Error'}: ${e.message}`, 'error');
  }
  reload();
}

/** A dialog asking for the new table's name; `request(target)` is the call. */
function restoreForm(title, intro, extra, request, onRestored, suggested) {
  return dialog(title, (close) => {
    const target = el('input', { value: suggested, autofocus: true, 'aria-label': 'New table name' });
    const problem = el('div');
    const submit = async (e) => {
      e.preventDefault();
      try {
        const [operation, body] = request(target.value.trim());
        await api(`call/${operation}`, body);
        toast(`Restoring ${target.value.trim()}: it is CREATING until every item is in`);
        close(true);
        onRestored(target.value.trim());
      } catch (error) {
        fill(problem, errorBox(error));
      }
    };
    return el('form', { onsubmit: submit }, el('p.hint', intro), field('New table name', target), extra, problem,
      el('div.row', el('span.spacer'), button('Cancel', () => close(false)),
        el('button.btn.primary', { type: 'submit' }, 'Restore')));
  });
}

function restoreDialog(table, summary, onRestored) {
  return restoreForm(`Restore ${summary.BackupName}`,
    `A new table with the items and indexes ${table} had at ${time(summary.BackupCreationDateTime)}. Streams, TTL, tags and deletion protection are not restored.`,
    null, (target) => ['RestoreTableFromBackup', { BackupArn: summary.BackupArn, TargetTableName: target }],
    onRestored, `${table}-restored`);
}

function pointInTimeDialog(table, description, onRestored) {
  const at = el('input', { value: isoMillis(description.LatestRestorableDateTime), 'aria-label': 'Restore time (UTC)' });
  const latest = el('input', { type: 'checkbox', 'aria-label': 'Latest restorable time' });
  latest.addEventListener('change', () => { at.disabled = latest.checked; });
  const extra = el('div',
    field('Instant (UTC, ISO 8601)', at, `Between ${isoMillis(description.EarliestRestorableDateTime)} and now`),
    el('label.check', latest, ' The latest restorable time (every write acknowledged so far)'));
  return restoreForm(`Restore ${table} to a point in time`,
    'A new table holding exactly the writes committed up to that instant (to the millisecond).',
    extra, (target) => {
      const body = { SourceTableName: table, TargetTableName: target };
      if (latest.checked) body.UseLatestRestorableTime = true;
      else {
        const seconds = Date.parse(at.value) / 1000;
        if (Number.isNaN(seconds)) throw { code: 'Invalid time', message: `${at.value} is not an ISO 8601 instant (2026-12-04T08:00:00.000Z)` };
        body.RestoreDateTime = seconds;
      }
      return ['RestoreTableToPointInTime', body];
    }, onRestored, `${table}-at`);
}

// A table's Backups tab: point-in-time recovery (on/off, the restorable
// window, a restore to any instant in it), on-demand backups (create,
// restore under a new name, delete), exports to S3 (with a new table
// imported from S3) and bulk loads from S3 into this table
// (StartBulkPutItems, their counts and reports, cancel), over the DynamoDB
// API alone, so it works against AWS too. Lists refresh while a backup,
// export or bulk load is still running.

import { api } from './api.js';
import { el, fill, button, dialog, field, select, errorBox, toast, formatBytes } from './ui.js';
import { app } from './app.js';

/** The tab's body for `table`; `onRestored(name)` runs when a restore starts. */
export function backupsView(table, onRestored) {
  const recovery = el('section.card.recovery', { 'aria-label': 'Point-in-time recovery' }, el('p.hint', 'Reading…'));
  const backups = el('section.card.backups', { 'aria-label': 'Backups' }, el('p.hint', 'Reading…'));
  const transfers = el('section.card.transfers', { 'aria-label': 'Exports to S3' }, el('p.hint', 'Reading…'));
  const bulk = el('section.card.bulkloads', { 'aria-label': 'Bulk loads from S3' });
  const view = el('div.backupsview', recovery, backups, transfers, bulk);
  let timer;
  // Every card at first and after an action; then, once a second while the
  // tab is shown, only the cards with a job still running, so that what is
  // typed into the other cards' forms is not redrawn away.
  const load = async (cards = all) => {
    clearTimeout(timer);
    const running = await Promise.all(cards.map((draw) => draw()));
    const busy = cards.filter((_, i) => running[i]);
    if (busy.length && view.isConnected) timer = setTimeout(() => load(busy), 1000);
  };
  const reload = () => load();
  const all = [
    () => drawBackups(backups, table, reload, onRestored),
    () => drawRecovery(recovery, table, reload, onRestored),
    () => drawExports(transfers, table, reload, onRestored),
    bulkLoadsCard(bulk, table, reload),
  ];
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

// ---- exports to and imports from S3 -----------------------------------------

/** Draws the table's exports and the export form; true while one runs. */
async function drawExports(box, table, reload, onRestored) {
  let exports;
  try {
    const arn = (await api('call/DescribeTable', { TableName: table })).Table.TableArn;
    const listed = (await api('call/ListExports', { TableArn: arn, MaxResults: 25 })).ExportSummaries || [];
    exports = await Promise.all(listed.map(async (s) => (await api('call/DescribeExport', { ExportArn: s.ExportArn })).ExportDescription));
    box.dataset.tableArn = arn;
  } catch (e) {
    fill(box, el('h2', 'Exports to S3'), errorBox(e));
    return false;
  }
  const bucket = el('input', { 'aria-label': 'S3 bucket', placeholder: 'bucket', value: localStorage.getItem('ferrodyn.exportBucket') || '' });
  const prefix = el('input', { 'aria-label': 'S3 prefix', placeholder: 'prefix (optional)' });
  const format = el('select', { 'aria-label': 'Export format' }, el('option', { value: 'DYNAMODB_JSON' }, 'DynamoDB JSON'), el('option', { value: 'ION' }, 'Ion'));
  const start = async () => {
    localStorage.setItem('ferrodyn.exportBucket', bucket.value.trim());
    const request = { TableArn: box.dataset.tableArn, S3Bucket: bucket.value.trim(), ExportFormat: format.value };
    if (prefix.value.trim()) request.S3Prefix = prefix.value.trim();
    try {
      await api('call/ExportTableToPointInTime', request);
      toast(`Exporting ${table} to s3://${request.S3Bucket}`);
    } catch (e) {
      toast(`${e.code || 'Error'}: ${e.message}`, 'error');
    }
    reload();
  };
  const row = (d) => el('tr',
    el('td', el(`span.pill.s-${d.ExportStatus.toLowerCase().replace('_', '-')}`, d.ExportStatus)),
    el('td', time(d.ExportTime)),
    el('td', d.ExportFormat),
    el('td.num', d.ItemCount === undefined ? '—' : d.ItemCount.toLocaleString()),
    el('td', d.ExportStatus === 'FAILED' ? el('span.bad', `${d.FailureCode}: ${d.FailureMessage}`)
      : el('code', `s3://${d.S3Bucket}/${d.ExportManifest || (d.S3Prefix || '')}`)));
  fill(box,
    el('header.row', el('h2', 'Exports to S3'), el('span.spacer'),
      button('Import a new table from S3…', () => importDialog(table, onRestored, reload, latestData(exports)))),
    el('div.row', field('Bucket', bucket), field('Prefix', prefix), field('Format', format),
      button('Export now', start, 'primary')),
    exports.length
      ? el('table.plain', { 'aria-label': 'Exports of this table' },
        el('thead', el('tr', ['Status', 'As of', 'Format', 'Items', 'Manifest'].map((h) => el('th', h)))),
        el('tbody', exports.map(row)))
      : el('p.hint', 'No exports yet. An export needs point-in-time recovery on, and writes DynamoDB\'s layout (manifests and gzipped data files) to the bucket.'));
  return exports.some((d) => d.ExportStatus === 'IN_PROGRESS');
}

/** The newest completed export's bucket and data folder, to import it back. */
function latestData(exports) {
  // ListExports answers newest first.
  const done = exports.find((d) => d.ExportStatus === 'COMPLETED' && d.ExportManifest);
  return done && { bucket: done.S3Bucket, prefix: done.ExportManifest.replace(/manifest-summary\.json$/, 'data/') };
}

/** ImportTable: a new table from the objects under a prefix (by default
 * the table's newest export, which imports back as it was). */
function importDialog(table, onRestored, reload, source) {
  const described = app.described[table] || {};
  const key = (described.KeySchema || []).find((k) => k.KeyType === 'HASH')?.AttributeName || 'pk';
  return dialog('Import a new table from S3', (close) => {
    const name = el('input', { 'aria-label': 'New table name', value: `${table}-imported`, autofocus: true });
    const bucket = el('input', { 'aria-label': 'Import bucket', value: source?.bucket || localStorage.getItem('ferrodyn.exportBucket') || '' });
    const prefix = el('input', { 'aria-label': 'Import prefix', placeholder: 'AWSDynamoDB/<export id>/data/', value: source?.prefix || '' });
    const format = el('select', { 'aria-label': 'Input format' }, el('option', { value: 'DYNAMODB_JSON' }, 'DynamoDB JSON lines'), el('option', { value: 'CSV' }, 'CSV'));
    const compression = el('select', { 'aria-label': 'Compression' }, ['GZIP', 'NONE', 'ZSTD'].map((c) => el('option', { value: c }, c)));
    const problem = el('div');
    const submit = async (e) => {
      e.preventDefault();
      const parameters = {
        TableName: name.value.trim(), BillingMode: 'PAY_PER_REQUEST',
        KeySchema: described.KeySchema, AttributeDefinitions: described.AttributeDefinitions,
      };
      try {
        await api('call/ImportTable', {
          S3BucketSource: { S3Bucket: bucket.value.trim(), S3KeyPrefix: prefix.value.trim() },
          InputFormat: format.value, InputCompressionType: compression.value, TableCreationParameters: parameters,
        });
        toast(`Importing ${parameters.TableName}: it is CREATING until every object is read`);
        close(true);
        onRestored(parameters.TableName);
        reload();
      } catch (error) {
        fill(problem, errorBox(error));
      }
    };
    return el('form', { onsubmit: submit },
      el('p.hint', `A new table with ${table}'s keys (${key}…), filled from every object under the prefix. Lines that are no item of it are skipped and counted.`),
      field('New table name', name), field('Bucket', bucket), field('Prefix', prefix), field('Format', format), field('Compression', compression),
      problem, el('div.row', el('span.spacer'), button('Cancel', () => close(false)), el('button.btn.primary', { type: 'submit' }, 'Import')));
  });
}

// ---- bulk loads from S3 into this table -------------------------------------

const BULK_RUNNING = ['IN_PROGRESS', 'CANCELLING'];

/** Fills the Bulk loads card once (its form keeps what is typed while the
 * list refreshes) and returns the list's redraw, true while one runs. */
function bulkLoadsCard(box, table, reload) {
  const list = el('div', el('p.hint', 'Reading…'));
  // Ended operations never change: each is described once.
  const state = { table, reload, arn: null, ended: new Map() };
  fill(box,
    el('header.row', el('h2', 'Bulk loads from S3')),
    el('p.hint', `Puts the items of every object under the prefix (DynamoDB JSON lines, {"Item": {…}}, or Ion structs) into ${table} `
      + 'through the normal write path: indexes, streams and recovery history follow, and an item with a stored item\'s key overwrites it. '
      + 'A line may carry a ConditionExpression (with its ExpressionAttributeNames and ExpressionAttributeValues), checked against the stored item; '
      + `what fails it, or is no item of ${table}, goes to the report.`),
    bulkForm(table, reload),
    list);
  return () => drawBulkLoads(list, state);
}

function bulkForm(table, reload) {
  const remembered = localStorage.getItem('ferrodyn.bulkBucket') || localStorage.getItem('ferrodyn.exportBucket') || '';
  const inputs = {
    bucket: el('input', { 'aria-label': 'Bulk load bucket', placeholder: 'bucket', value: remembered }),
    prefix: el('input', { 'aria-label': 'Bulk load prefix', placeholder: 'prefix (optional)' }),
    format: el('select', { 'aria-label': 'Bulk load format' },
      el('option', { value: 'DYNAMODB_JSON' }, 'DynamoDB JSON'), el('option', { value: 'ION' }, 'Ion')),
    compression: select(['NONE', 'GZIP', 'ZSTD'], 'NONE', { 'aria-label': 'Bulk load compression' }),
    units: el('input', { type: 'number', min: 1024, step: 1, 'aria-label': 'Max write units per second', placeholder: 'no limit (≥ 1024)' }),
    reports: el('input', { 'aria-label': 'Report prefix', value: 'bulk-reports' }),
  };
  const problem = el('div');
  const go = button(`Load into ${table}`, async () => {
    fill(problem);
    go.disabled = true; // one click, one operation
    try {
      await startBulkLoad(table, inputs);
      reload();
    } catch (e) {
      fill(problem, errorBox(e));
    } finally {
      go.disabled = false;
    }
  }, 'primary');
  return el('div',
    el('div.row', field('Bucket', inputs.bucket), field('Prefix', inputs.prefix), field('Format', inputs.format),
      field('Compression', inputs.compression),
      field('Max write units/s', inputs.units), field('Report prefix', inputs.reports), go),
    problem);
}

async function startBulkLoad(table, inputs) {
  const request = bulkRequest(table, inputs);
  await api('call/StartBulkPutItems', request);
  localStorage.setItem('ferrodyn.bulkBucket', request.InputS3Configuration.S3Bucket);
  toast(`Loading s3://${request.InputS3Configuration.S3Bucket}/${request.InputS3Configuration.S3KeyPrefix || ''} into ${table}`);
}

/** StartBulkPutItems' request from the form: reports of both kinds, in the
 * input's bucket. The server checks the values (a rate under 1024 is its
 * ValidationException); only what a number field would hide is caught here. */
function bulkRequest(table, { bucket, prefix, format, compression, units, reports }) {
  const input = { S3Bucket: bucket.value.trim(), InputFormat: format.value, InputCompressionType: compression.value };
  if (prefix.value.trim()) input.S3KeyPrefix = prefix.value.trim();
  const output = { OutputType: ['ERROR', 'CONDITION_CHECK_FAILURE'], S3Bucket: input.S3Bucket };
  if (reports.value.trim()) output.S3KeyPrefix = reports.value.trim();
  const request = { TableName: table, InputS3Configuration: input, OutputS3Configuration: output };
  // A number field reads '' for text that is no number: say so, not "no limit".
  if (units.validity.badInput) throw { code: 'Invalid rate', message: 'Max write units/s must be a whole number (at least 1024), or empty for no limit' };
  if (units.value !== '') request.MaxWriteRequestUnits = Number(units.value);
  return request;
}

/** Draws this table's bulk operations; true while one runs. */
async function drawBulkLoads(box, state) {
  let operations;
  try {
    state.arn ||= (await api('call/DescribeTable', { TableName: state.table })).Table.TableArn;
    const mine = await bulkOperationsOf(state.arn);
    operations = await Promise.all(mine.map((s) => describeBulk(s.BulkOperationArn, state.ended)));
  } catch (e) {
    fill(box, errorBox(e));
    return false;
  }
  fill(box, operations.length
    ? el('div.scrollx', el('table.plain', { 'aria-label': 'Bulk loads into this table' },
      el('thead', el('tr', ['Status', 'Started', 'Processed', 'Failed', 'Input read', 'S3', ''].map((h) => el('th', h)))),
      el('tbody', operations.map((d) => bulkRow(d, state)))))
    : el('p.hint', `No bulk loads into ${state.table} yet.`));
  return operations.some((d) => BULK_RUNNING.includes(d.BulkOperationStatus));
}

/** The table's bulk operations, newest first. ListBulkOperations has no
 * table filter, so every page is read and the ARNs under the table's kept. */
async function bulkOperationsOf(tableArn) {
  const mine = [];
  let token;
  do {
    const request = { MaxResults: 25 };
    if (token) request.NextToken = token;
    const page = await api('call/ListBulkOperations', request);
    mine.push(...(page.BulkOperationsSummaryList || []).filter((s) => s.BulkOperationArn.startsWith(`${tableArn}/bulk-operation/`)));
    token = page.NextToken;
  } while (token);
  return mine;
}

/** DescribeBulkOperation (the summary has no counts), kept once ended. */
async function describeBulk(arn, ended) {
  if (ended.has(arn)) return ended.get(arn);
  const description = (await api('call/DescribeBulkOperation', { BulkOperationArn: arn })).BulkOperationDescription;
  if (!BULK_RUNNING.includes(description.BulkOperationStatus)) ended.set(arn, description);
  return description;
}

function bulkRow(d, state) {
  const status = d.BulkOperationStatus;
  const count = (n) => (n === undefined ? '—' : n.toLocaleString());
  return el('tr', { dataset: { arn: d.BulkOperationArn } },
    el('td', el(`span.pill.s-${status.toLowerCase().replaceAll('_', '-')}`, status)),
    el('td', time(d.StartTime), d.EndTime ? el('small.hint.took', `took ${took(d.EndTime - d.StartTime)}`) : null),
    el('td.num', { 'data-field': 'processed' }, count(d.ProcessedItemCount)),
    el('td.num', { 'data-field': 'failed', class: d.FailedItemCount ? 'bad' : null }, count(d.FailedItemCount)),
    el('td', inputRead(d)),
    el('td.where', el('div', 'from ', path(s3Url(d.InputS3Configuration?.S3Bucket, d.InputS3Configuration?.S3KeyPrefix || ''))),
      d.FailureCode ? el('div.bad', `${d.FailureCode}: ${d.FailureMessage || ''}`) : el('div', 'reports ', path(reportFolder(d)))),
    el('td.actions', status === 'IN_PROGRESS' ? button('Cancel…', () => cancelBulk(d, state), 'small danger') : null));
}

const s3Url = (bucket, key) => `s3://${bucket}/${key}`;

/** An S3 URL that wraps after a slash, not inside a name. */
const path = (url) => el('code', url.split(/(?<=\/)/).map((part) => [part, el('wbr')]));

/** "4 s", "2 min 5 s": how long an ended operation ran. */
function took(seconds) {
  const s = Math.max(0, Math.round(seconds));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** ProcessedInputBytes of TotalInputBytes, a bar once the total is known
 * (DynamoDB omits it until the input's size has been measured). */
function inputRead(d) {
  const read = d.ProcessedInputBytes || 0;
  if (!d.TotalInputBytes) return `${formatBytes(read)} read`;
  const share = Math.min(100, (100 * read) / d.TotalInputBytes);
  const bar = el('div.bar-fill');
  bar.style.width = `${share}%`;
  return el('div.progress', { title: 'ProcessedInputBytes of TotalInputBytes: the objects done, and the current one as far as its items have been read' },
    el('div.bar', { role: 'progressbar', 'aria-label': 'Input read', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': Math.floor(share) }, bar),
    el('small', `${Math.floor(share)}% · ${formatBytes(read)} of ${formatBytes(d.TotalInputBytes)}`));
}

/** Where the server writes this operation's reports: the output prefix
 * (trailing slashes dropped) / AWSDynamoDB/BulkOperation/<id>/, in the
 * output bucket, or the input's when none was given. */
function reportFolder(d) {
  const output = d.OutputS3Configuration || {};
  const prefix = output.S3KeyPrefix === undefined ? '' : `${output.S3KeyPrefix.replace(/\/+$/, '')}/`;
  const id = d.BulkOperationArn.split('/').pop();
  return s3Url(output.S3Bucket || d.InputS3Configuration?.S3Bucket, `${prefix}AWSDynamoDB/BulkOperation/${id}/`);
}

async function cancelBulk(d, state) {
  if (!confirm(`Cancel this bulk load into ${state.table}? Items it has already written stay in the table.`)) return;
  try {
    await api('call/CancelBulkOperation', { BulkOperationArn: d.BulkOperationArn });
    toast(`Cancelling the bulk load into ${state.table}: CANCELLING until its current batch is written`);
  } catch (e) {
    toast(`${e.code || 'Error'}: ${e.message}`, 'error');
  }
  state.reload();
}

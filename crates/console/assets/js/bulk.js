// Bulk delete / set / remove on a selection or a whole query result. The
// server runs the job (BatchWriteItem with unprocessed items retried under
// capped exponential backoff and full jitter, or guarded UpdateItems) and
// this dialog polls its progress: done, retried, failed; cancellable; a
// final report of what could not be written. Every job (imports too) is
// also listed behind the header's Jobs button, so closing its dialog or
// reloading the page neither hides it nor makes it uncancellable.

import { api } from './api.js';
import { el, fill, field, button, select, dialog, errorBox } from './ui.js';
import { TYPES, parseTyped } from './values.js';

export function bulkDialog(table, source, label, shownRows = 0) {
  return dialog(`Bulk change: ${label}`, (close) => {
    const action = select([['delete', 'Delete the items'], ['set', 'Set an attribute'], ['remove', 'Remove an attribute']], 'delete', { 'aria-label': 'Bulk action' });
    const attribute = el('input', { 'aria-label': 'Attribute name', placeholder: 'status', autocomplete: 'off' });
    const type = select(TYPES.filter((t) => !['L', 'M'].includes(t)), 'S', { 'aria-label': 'Value type' });
    const value = el('input', { 'aria-label': 'Attribute value', autocomplete: 'off' });
    const attrRow = el('div.row', { hidden: true }, field('Attribute', attribute), field('Type', type), field('Value', value));
    action.addEventListener('change', () => {
      attrRow.hidden = action.value === 'delete';
      value.parentElement.hidden = type.parentElement.hidden = action.value !== 'set';
    });
    const progress = el('div.progress');
    const status = el('div');
    let job = null;
    const start = el('button.btn.danger', { type: 'button' }, 'Start');
    // What the change will touch, counted before Start: a selection is its
    // keys; a whole query/scan result is counted with Select COUNT pages
    // (reads, no writes), and more items than the page shows must be
    // confirmed.
    const preview = el('div.preview', { 'aria-live': 'polite' });
    const confirmAll = el('input', { type: 'checkbox', 'aria-label': 'Confirm every item' });
    let counted = source.keys ? source.keys.length : null;
    const ready = () => { start.disabled = counted === null || (!!source.read && counted > shownRows && !confirmAll.checked); };
    confirmAll.addEventListener('change', ready);
    const writeUnits = (n, bytes) => n * Math.max(1, Math.ceil(bytes / 1024));
    if (source.keys) {
      fill(preview, el('p', el('strong', `${counted} item(s)`), ' selected: at most ', el('strong', `${counted}`), ' write request(s), 1 WCU per KB of each item.'));
    } else {
      fill(preview, el('p.hint', 'Counting the items this would change (Select COUNT; nothing is written)…'));
      api('bulk/preview', { table, read: source.read }).then((p) => {
        counted = p.count;
        fill(preview,
          el('p', el('strong', `${p.complete ? '' : 'at least '}${p.count.toLocaleString()} item(s)`), ` match (${p.scanned.toLocaleString()} scanned; counting read ${Math.round(p.readUnits * 10) / 10} RCU).`,
            ` Estimated writes: ≈ ${writeUnits(p.count, p.averageItemBytes).toLocaleString()} WCU at the table's average item size (${p.averageItemBytes} B), plus the reads to find them again.`),
          p.count > shownRows ? el('label.check.confirm-all', confirmAll, `Change all ${p.count.toLocaleString()} items, not only the ${shownRows} on this page`) : null);
        ready();
      }).catch((e) => fill(preview, errorBox(e)));
    }
    ready();
    const cancel = button('Cancel job', async () => { if (job) await api(`bulk/${job}/cancel`, {}); }, 'ghost', { hidden: true });
    start.addEventListener('click', async () => {
      const request = { table, action: action.value, ...source };
      try {
        if (action.value !== 'delete') request.attribute = attribute.value.trim();
        if (action.value === 'set') request.value = parseTyped(type.value, value.value);
        request.label = `${{ delete: 'Delete', set: `Set ${request.attribute}`, remove: `Remove ${request.attribute}` }[action.value]}: ${label} (${table})`;
        job = (await api('bulk', request)).job;
        trackJob();
      } catch (e) {
        fill(status, errorBox(e));
        return;
      }
      start.hidden = true;
      cancel.hidden = false;
      watchJob(job, progress, () => { cancel.hidden = true; });
    });
    return el('div.form',
      el('p', 'Applies to ', el('strong', label), '. Writes go out immediately (not staged), 25 per BatchWriteItem for deletes, with unprocessed items retried.'),
      field('Action', action), attrRow, preview, progress, status,
      el('footer', el('span.spacer'), cancel, button('Close', () => close(), 'ghost'), start));
  });
}

/** Polls job `job` into `box`: progress bar, counts, final report. */
export function watchJob(job, box, finished = () => {}) {
  const bar = el('div.bar-fill');
  const counts = el('div.counts', { 'aria-live': 'polite' });
  const report = el('div');
  fill(box, el('div.bar', { role: 'progressbar', 'aria-label': 'Bulk progress' }, bar), counts, report);
  const tick = async () => {
    let p;
    try {
      p = await api(`bulk/${job}`);
    } catch (e) {
      fill(report, errorBox(e));
      setTimeout(tick, 1000);
      return;
    }
    const total = p.total ?? (p.state === 'running' ? null : p.done + p.failed);
    if (total) {
      bar.style.width = `${Math.min(100, (100 * (p.done + p.failed)) / total)}%`;
      bar.parentElement.setAttribute('aria-valuenow', String(p.done + p.failed));
      bar.parentElement.setAttribute('aria-valuemax', String(total));
    } else {
      bar.classList.add('indeterminate');
    }
    fill(counts,
      el('span.metric.done', el('b', String(p.done)), ' done'),
      el('span.metric.retried', el('b', String(p.retried)), ' retried'),
      el('span.metric.failed', el('b', String(p.failed)), ' failed'),
      el('span.metric', `state: `, el('b.state', p.state)));
    if (p.state === 'running') {
      setTimeout(tick, 200);
      return;
    }
    bar.classList.remove('indeterminate');
    bar.style.width = '100%';
    finished();
    fill(report, el('div.report', { role: 'status' },
      el('p', `${p.state === 'done' ? 'Finished' : p.state === 'cancelled' ? 'Cancelled' : 'Failed'}: ${p.done} written, ${p.failed} not written, ${p.retried} retried call(s), ${p.unprocessed} unprocessed returned, ${(p.millis / 1000).toFixed(2)} s.`),
      p.error && errorBox({ code: 'BulkFailed', message: p.error }),
      p.failures.length ? el('ul.failures', p.failures.map((f) => el('li', el('code', JSON.stringify(f.key)), ' — ', f.reason))) : null));
  };
  tick();
}

// ---- the header's job list ---------------------------------------------------

let jobsTimer = null;

/** Starts (or keeps) polling the server's job list into the header button. */
export function trackJob() {
  if (!jobsTimer) pollJobs();
}

async function pollJobs() {
  jobsTimer = null;
  let jobs = [];
  try {
    jobs = (await api('bulk')).jobs;
  } catch {
    // The connection pill reports outages; try again on the next tick.
  }
  const running = jobs.filter((j) => j.state === 'running').length;
  const btn = document.getElementById('jobs-button');
  if (btn) {
    btn.hidden = jobs.length === 0;
    btn.textContent = running ? `⟳ ${running} job${running > 1 ? 's' : ''} running` : 'Jobs';
    btn.classList.toggle('busy', running > 0);
  }
  if (running) jobsTimer = setTimeout(pollJobs, 1000);
}

/** The dialog behind the Jobs button: every job this server's console ran,
 * newest first, with progress and Cancel for the running ones. */
export function jobsDialog() {
  return dialog('Jobs', () => {
    const list = el('ul.jobs');
    const draw = async () => {
      let jobs;
      try {
        jobs = (await api('bulk')).jobs;
      } catch (e) {
        fill(list, errorBox(e));
        return;
      }
      fill(list, jobs.length ? jobs.map(jobRow) : el('li.hint', 'No jobs yet.'));
      if (jobs.some((j) => j.state === 'running') && list.isConnected) setTimeout(draw, 500);
    };
    draw();
    return el('div.form', el('p.hint', 'Bulk changes and imports run on the server: they go on when their dialog is closed, until done or cancelled.'), list);
  }, { wide: true });
}

function jobRow(job) {
  const total = job.total ?? null;
  const done = job.done + job.failed;
  const fillBar = el(`div.bar-fill${total || job.state !== 'running' ? '' : '.indeterminate'}`);
  // The page's CSP forbids style attributes; the property is allowed.
  fillBar.style.width = `${total ? Math.min(100, (100 * done) / total) : 100}%`;
  const bar = el('div.bar', { role: 'progressbar', 'aria-label': `Progress of ${job.label}` }, fillBar);
  return el('li.job', { dataset: { state: job.state } },
    el('div.row',
      el('strong.label', job.label),
      el('span.spacer'),
      el('b.state', job.state),
      job.state === 'running'
        ? button('Cancel', async () => { await api(`bulk/${job.id}/cancel`, {}); }, 'small ghost danger', { 'aria-label': `Cancel ${job.label}` })
        : null),
    bar,
    el('div.counts',
      el('span.metric', el('b', String(job.done)), ' done'),
      total ? el('span.metric', ' of ', el('b', String(total))) : null,
      el('span.metric', el('b', String(job.retried)), ' retried'),
      el('span.metric', el('b', String(job.failed)), ' failed'),
      job.state !== 'running' ? el('span.metric', `${(job.millis / 1000).toFixed(1)} s`) : null),
    job.error ? errorBox({ code: 'BulkFailed', message: job.error }) : null);
}

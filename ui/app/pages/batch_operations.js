// Batch operations: every one with its type, state and progress (items done, failed, in all),
// and cancel, suspend or resume where its state allows (as the engine does: cancel an active
// or suspended one, suspend an active one, resume a suspended one).
import { html, useState } from '../preact.js';
import { post, search } from '../api.js';
import { ErrorBox, Num, Page, PagedTable, fmtDate, useAction } from '../ui.js';

const ACTIONS = [
  ['Cancel', 'cancellation', ['ACTIVE', 'SUSPENDED']],
  ['Suspend', 'suspension', ['ACTIVE']],
  ['Resume', 'resumption', ['SUSPENDED']],
];

const STATE_CLASS = { ACTIVE: 'active', CREATED: 'active', COMPLETED: 'completed', CANCELED: 'canceled', SUSPENDED: '', FAILED: 'incident', PARTIALLY_COMPLETED: 'incident' };

function Progress({ b }) {
  const done = b.operationsCompletedCount ?? 0;
  const failed = b.operationsFailedCount ?? 0;
  const total = b.operationsTotalCount ?? 0;
  return html`<span class="progress-text"><${Num} value=${done} /> done, <span class=${failed ? 'bad' : ''}><${Num} value=${failed} /> failed</span>, of <${Num} value=${total} /></span>
    <progress max=${total || 1} value=${done + failed} aria-label=${`Batch ${b.batchOperationKey} progress`}></progress>`;
}

function Actions({ b, onChanged }) {
  const [run, busy, error, clear] = useAction();
  const act = async (path) => {
    const ok = await run(async () => {
      await post(`/batch-operations/${b.batchOperationKey}/${path}`, {});
      return true;
    });
    if (ok) onChanged();
  };
  const allowed = ACTIONS.filter(([, , states]) => states.includes(b.state));
  return html`${allowed.map(([label, path]) => html`<button disabled=${busy}
      aria-label=${`${label} batch ${b.batchOperationKey}`} onClick=${() => act(path)}>${label}</button> `)}
    <${ErrorBox} error=${error} onClose=${clear} />`;
}

export function BatchOperations() {
  const [refresh, setRefresh] = useState(0);
  const changed = () => setRefresh((r) => r + 1);
  const columns = [
    { key: 'key', label: 'Batch', sort: 'batchOperationKey', render: (b) => html`<code>${b.batchOperationKey}</code>` },
    { key: 'type', label: 'Type', sort: 'operationType', render: (b) => b.batchOperationType },
    { key: 'state', label: 'State', sort: 'state', render: (b) => html`<span class=${`badge ${STATE_CLASS[b.state] ?? ''}`}>${b.state}</span>` },
    { key: 'progress', label: 'Progress', render: (b) => html`<${Progress} b=${b} />` },
    { key: 'start', label: 'Started', sort: 'startDate', render: (b) => fmtDate(b.startDate) },
    { key: 'end', label: 'Ended', render: (b) => fmtDate(b.endDate) },
    { key: 'actions', label: 'Actions', render: (b) => html`<${Actions} b=${b} onChanged=${changed} />` },
  ];
  return html`<${Page} title="Batch operations">
    <p class="muted">Started from the <a href="/operate/processes">Instances</a> page (cancel or retry every instance of a filter).</p>
    <${PagedTable} query="batch-operations" columns=${columns} live refresh=${refresh}
      rowKey=${(b) => b.batchOperationKey} initialSort=${[{ field: 'startDate', order: 'DESC' }]}
      empty="No batch operation yet."
      fetch=${({ sort, page }) => search('/batch-operations/search', { sort, page })} />
  <//>`;
}

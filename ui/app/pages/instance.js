// One process instance: its diagram with the tokens and the sequence flows taken, its
// incidents with a retry, its variables, and cancel.
import { html, useState } from '../preact.js';
import { get, getText, patch, post, search } from '../api.js';
import { Diagram } from '../diagram.js';
import { ErrorBox, LIVE_MS, Loaded, Page, PagedTable, StateBadge, fmtDate, useAction, useApi } from '../ui.js';

export function Instance({ id }) {
  const [version, setVersion] = useState(0);
  const refresh = () => setVersion((v) => v + 1);
  const inst = useApi(() => get(`/process-instances/${id}`), [id, version], { every: LIVE_MS });
  const p = inst.data;
  const title = p ? `${p.processDefinitionName || p.processDefinitionId} · ${id}` : `Instance ${id}`;
  return html`<${Page} title=${title} actions=${html`<button onClick=${refresh}>Reload</button>`}>
    <${Loaded} state=${inst}>${(pi) => html`
      <${Summary} p=${pi} onChanged=${refresh} />
      <${InstanceDiagram} p=${pi} version=${version} />
      <h2>Incidents</h2>
      <${Incidents} id=${id} version=${version} onChanged=${refresh} />
      <h2>Variables</h2>
      <${Variables} id=${id} />`}<//>
  <//>`;
}

function Summary({ p, onChanged }) {
  const [run, busy, error, clear] = useAction();
  const [confirming, setConfirming] = useState(false);
  const cancel = async () => {
    setConfirming(false);
    const ok = await run(() => post(`/process-instances/${p.processInstanceKey}/cancellation`, {}));
    if (ok !== undefined) onChanged();
  };
  return html`<div class="summary">
    <dl>
      <div><dt>State</dt><dd><${StateBadge} state=${p.state} incident=${p.hasIncident} /></dd></div>
      <div><dt>Process</dt><dd><a href=${`/operate/definitions/${p.processDefinitionKey}`}>${p.processDefinitionId}</a> version ${p.processDefinitionVersion}</dd></div>
      <div><dt>Started</dt><dd>${fmtDate(p.startDate)}</dd></div>
      ${p.endDate && html`<div><dt>Ended</dt><dd>${fmtDate(p.endDate)}</dd></div>`}
      ${p.parentProcessInstanceKey && html`<div><dt>Parent</dt><dd><a href=${`/operate/processes/${p.parentProcessInstanceKey}`}>${p.parentProcessInstanceKey}</a></dd></div>`}
    </dl>
    ${p.state === 'ACTIVE' && html`<div class="actions">
      ${confirming
        ? html`<span role="group" aria-label="Confirm cancel">Cancel this instance?
            <button class="danger" onClick=${cancel}>Yes, cancel it</button>
            <button onClick=${() => setConfirming(false)}>No</button></span>`
        : html`<button class="danger" disabled=${busy} onClick=${() => setConfirming(true)}>Cancel instance</button>`}
    </div>`}
    <${ErrorBox} error=${error} onClose=${clear} />
  </div>`;
}

function InstanceDiagram({ p, version }) {
  const key = p.processInstanceKey;
  const xml = useApi(() => getText(`/process-definitions/${p.processDefinitionKey}/xml`), [p.processDefinitionKey]);
  const data = useApi(async () => {
    const [stats, flows] = await Promise.all([
      get(`/process-instances/${key}/statistics/element-instances`),
      get(`/process-instances/${key}/sequence-flows`),
    ]);
    return { stats: stats.items, flows: flows.items.map((f) => f.sequenceFlowId) };
  }, [key, version], { every: LIVE_MS });
  return html`<div>
    ${data.error && html`<${ErrorBox} error=${data.error} />`}
    <${Loaded} state=${xml}>${(x) => html`<${Diagram} xml=${x} stats=${data.data?.stats}
      flows=${data.data?.flows} showCompleted=${false} />`}<//>
  </div>`;
}

function Incidents({ id, version, onChanged }) {
  const incidents = useApi(() => search('/incidents/search', {
    filter: { processInstanceKey: id, state: 'ACTIVE' },
    sort: [{ field: 'creationTime', order: 'ASC' }],
    page: { limit: 100 },
  }), [id, version], { every: LIVE_MS });
  return html`<${Loaded} state=${incidents}>${(d) => (d.items.length
    ? html`<ul class="incident-list">${d.items.map((i) => html`<${IncidentItem} key=${i.incidentKey} i=${i} onChanged=${onChanged} />`)}</ul>
      ${d.page.totalItems > d.items.length && html`<p class="muted">${d.items.length} of ${d.page.totalItems} shown.</p>`}`
    : html`<p class="muted">No open incident.</p>`)}<//>`;
}

/** One incident: its error, where it is, and a retry, which first gives a job without retries
 *  one more (as Operate does), then resolves the incident. */
function IncidentItem({ i, onChanged }) {
  const [run, busy, error, clear] = useAction();
  const retry = async () => {
    const ok = await run(async () => {
      if (i.jobKey && i.errorType === 'JOB_NO_RETRIES') {
        await patch(`/jobs/${i.jobKey}`, { changeset: { retries: 1 } });
      }
      await post(`/incidents/${i.incidentKey}/resolution`, {});
      return true;
    });
    if (ok) onChanged();
  };
  return html`<li class="incident-item">
    <div class="incident-head">
      <span class="badge incident">${i.errorType}</span>
      <span>at <code>${i.elementId}</code></span>
      <span class="muted">${fmtDate(i.creationTime)}</span>
      <button class="primary" disabled=${busy} onClick=${retry}>${busy ? 'Retrying…' : 'Retry'}</button>
    </div>
    <pre class="error-message">${i.errorMessage || '(no message)'}</pre>
    ${i.jobKey && html`<p class="muted">Job ${i.jobKey}</p>`}
    <${ErrorBox} error=${error} onClose=${clear} />
  </li>`;
}

const VARIABLE_COLUMNS = [
  { key: 'name', label: 'Name', sort: 'name', render: (v) => html`<code>${v.name}</code>` },
  { key: 'value', label: 'Value', render: (v) => html`<code class="value">${v.value}</code>${v.isTruncated ? html` <span class="muted">(truncated)</span>` : ''}` },
  { key: 'scope', label: 'Scope', render: (v) => (v.scopeKey === v.processInstanceKey ? 'process' : v.scopeKey) },
];

function Variables({ id }) {
  const filter = { processInstanceKey: id };
  return html`<${PagedTable} query=${id} columns=${VARIABLE_COLUMNS} live
    rowKey=${(v) => v.variableKey} initialSort=${[{ field: 'name', order: 'ASC' }]}
    empty="No variables."
    fetch=${({ sort, page }) => search('/variables/search', { filter, sort, page })} />`;
}

// The dashboard: running instances and those with incidents, per process; incidents by error.
import { html } from '../preact.js';
import { count, search } from '../api.js';
import { withQuery } from '../router.js';
import { LIVE_MS, Loaded, Num, Page, useApi } from '../ui.js';
import { IncidentsByError } from './by_error.js';

export function Dashboard() {
  const totals = useApi(async () => {
    const [running, incidents] = await Promise.all([
      count('/process-instances/search', { state: 'ACTIVE' }),
      count('/process-instances/search', { state: 'ACTIVE', hasIncident: true }),
    ]);
    return { running, incidents };
  }, [], { every: LIVE_MS });
  const byProcess = useApi(() => search('/process-definitions/statistics/process-instances', {
    sort: [{ field: 'activeInstancesWithIncidentCount', order: 'DESC' },
      { field: 'activeInstancesWithoutIncidentCount', order: 'DESC' }],
    page: { limit: 50 },
  }), [], { every: LIVE_MS });
  return html`<${Page} title="Dashboard">
    <${Loaded} state=${totals}>${(t) => html`<div class="metrics">
      <a class="metric" href=${withQuery('/operate/processes', { state: 'ACTIVE' })}>
        <${Num} value=${t.running} /><span>running instances</span></a>
      <a class="metric bad" href=${withQuery('/operate/processes', { state: 'ACTIVE', incident: 'yes' })}>
        <${Num} value=${t.incidents} /><span>with incidents</span></a>
    </div>`}<//>
    <div class="columns">
      <section>
        <h2>Running instances by process</h2>
        <${Loaded} state=${byProcess}>${(d) => html`<${ByProcess} data=${d} />`}<//>
      </section>
      <section>
        <h2>Incidents by error message</h2>
        <${IncidentsByError} />
      </section>
    </div>
  <//>`;
}

function ByProcess({ data }) {
  if (!data.items.length) {
    return html`<p class="muted">No instance is running. <a href="/operate/definitions">Deploy a process</a>.</p>`;
  }
  return html`<table>
    <thead><tr><th scope="col">Process</th><th scope="col">Running</th><th scope="col">With incidents</th></tr></thead>
    <tbody>${data.items.map((p) => html`<tr key=${p.processDefinitionId + p.tenantId}>
      <td data-label="Process"><a href=${withQuery('/operate/processes', { process: p.processDefinitionId, state: 'ACTIVE' })}>
        ${p.latestProcessDefinitionName || p.processDefinitionId}</a>
        ${p.latestProcessDefinitionName && html` <span class="muted">${p.processDefinitionId}</span>`}</td>
      <td data-label="Running"><${Num} value=${p.activeInstancesWithoutIncidentCount + p.activeInstancesWithIncidentCount} /></td>
      <td data-label="With incidents" class=${p.activeInstancesWithIncidentCount ? 'bad' : ''}><${Num} value=${p.activeInstancesWithIncidentCount} /></td>
    </tr>`)}</tbody>
  </table>
  ${data.page.totalItems > data.items.length && html`<p class="muted">The ${data.items.length} processes with the most incidents of ${data.page.totalItems}.</p>`}`;
}

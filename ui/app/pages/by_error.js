// Open incidents grouped by error message (8.9's statistics, one row per message), each
// leading to the incidents with that message; shared by the dashboard and the incidents page.
import { html } from '../preact.js';
import { search } from '../api.js';
import { withQuery } from '../router.js';
import { LIVE_MS, Loaded, Num, useApi } from '../ui.js';

export function IncidentsByError({ selected }) {
  const byError = useApi(() => search('/incidents/statistics/process-instances-by-error', {
    sort: [{ field: 'activeInstancesWithErrorCount', order: 'DESC' }],
    page: { limit: 50 },
  }), [], { every: LIVE_MS });
  return html`<${Loaded} state=${byError}>${(data) => (data.items.length
    ? html`<table>
        <thead><tr><th scope="col">Error</th><th scope="col">Instances</th></tr></thead>
        <tbody>${data.items.map((e) => html`<tr key=${e.errorHashCode} class=${e.errorMessage === selected ? 'selected' : ''}>
          <td data-label="Error"><a href=${withQuery('/operate/incidents', { errorMessage: e.errorMessage })}>${e.errorMessage || '(no message)'}</a></td>
          <td data-label="Instances" class="bad"><${Num} value=${e.activeInstancesWithErrorCount} /></td>
        </tr>`)}</tbody>
      </table>
      ${data.page.totalItems > data.items.length && html`<p class="muted">The ${data.items.length} errors with the most instances of ${data.page.totalItems}.</p>`}`
    : html`<p class="muted">No incident.</p>`)}<//>`;
}

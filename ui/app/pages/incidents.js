// Incidents across all processes: grouped by error message, and the open ones (newest first;
// those of one message when one is chosen).
import { html } from '../preact.js';
import { search } from '../api.js';
import { useQuery } from '../router.js';
import { Page, PagedTable, fmtDate } from '../ui.js';
import { IncidentsByError } from './by_error.js';

const COLUMNS = [
  { key: 'instance', label: 'Instance', sort: 'processInstanceKey', render: (i) => html`
    <a href=${`/operate/processes/${i.processInstanceKey}`}>${i.processInstanceKey}</a>` },
  { key: 'process', label: 'Process', sort: 'processDefinitionId', render: (i) => html`
    <a href=${`/operate/definitions/${i.processDefinitionKey}`}>${i.processDefinitionId}</a>` },
  { key: 'element', label: 'Element', sort: 'elementId', render: (i) => html`<code>${i.elementId}</code>` },
  { key: 'type', label: 'Type', sort: 'errorType', render: (i) => i.errorType },
  { key: 'message', label: 'Error', render: (i) => html`<span class="clip" title=${i.errorMessage}>${i.errorMessage}</span>` },
  { key: 'created', label: 'Created', sort: 'creationTime', render: (i) => fmtDate(i.creationTime) },
];

export function Incidents() {
  const q = useQuery();
  const filter = { state: 'ACTIVE' };
  if (q.errorMessage) filter.errorMessage = q.errorMessage;
  return html`<${Page} title="Incidents">
    <details class="elements" open>
      <summary>By error message</summary>
      <${IncidentsByError} selected=${filter.errorMessage} />
    </details>
    <h2>${filter.errorMessage
      ? html`Incidents with the error <q>${filter.errorMessage}</q> <a href="/operate/incidents">(all)</a>`
      : 'All open incidents'}</h2>
    <${PagedTable} query=${JSON.stringify(filter)} columns=${COLUMNS} live
      rowKey=${(i) => i.incidentKey} initialSort=${[{ field: 'creationTime', order: 'DESC' }]}
      empty="No open incident."
      fetch=${({ sort, page }) => search('/incidents/search', { filter, sort, page })} />
  <//>`;
}

// The table of process instances (search by filter, sortable, paged with cursors), shared by
// the Instances page and a process's page.
import { html } from '../preact.js';
import { search } from '../api.js';
import { PagedTable, StateBadge, fmtDate } from '../ui.js';

const COLUMNS = [
  { key: 'key', label: 'Instance', sort: 'processInstanceKey', render: (p) => html`
    <a href=${`/operate/processes/${p.processInstanceKey}`}>${p.processInstanceKey}</a>` },
  { key: 'process', label: 'Process', sort: 'processDefinitionId', render: (p) => html`
    <a href=${`/operate/definitions/${p.processDefinitionKey}`}>${p.processDefinitionName || p.processDefinitionId}</a>` },
  { key: 'version', label: 'Version', sort: 'processDefinitionVersion', render: (p) => p.processDefinitionVersion },
  { key: 'state', label: 'State', sort: 'state', render: (p) => html`<${StateBadge} state=${p.state} incident=${p.hasIncident} />` },
  { key: 'start', label: 'Started', sort: 'startDate', render: (p) => fmtDate(p.startDate) },
  { key: 'end', label: 'Ended', sort: 'endDate', render: (p) => fmtDate(p.endDate) },
  { key: 'parent', label: 'Parent', render: (p) => p.parentProcessInstanceKey
    && html`<a href=${`/operate/processes/${p.parentProcessInstanceKey}`}>${p.parentProcessInstanceKey}</a>` },
];

export function InstanceTable({ filter, caption, live }) {
  return html`<${PagedTable} query=${JSON.stringify(filter)} columns=${COLUMNS} caption=${caption} live=${live}
    rowKey=${(p) => p.processInstanceKey}
    initialSort=${[{ field: 'startDate', order: 'DESC' }]}
    empty="No instance matches."
    fetch=${({ sort, page }) => search('/process-instances/search', { filter, sort, page })} />`;
}

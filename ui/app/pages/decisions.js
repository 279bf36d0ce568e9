// Decisions: the deployed decisions (every version), and one decision with its table in
// dmn-js and its evaluations.
import { html } from '../preact.js';
import { get, getText, search } from '../api.js';
import { DmnView } from '../dmn.js';
import { ErrorBox, Loaded, Page, PagedTable, StateBadge, VersionSelect, fmtDate, useApi } from '../ui.js';

const DEFINITION_COLUMNS = [
  { key: 'name', label: 'Decision', sort: 'name', render: (d) => html`
    <a href=${`/operate/decisions/${d.decisionDefinitionKey}`}>${d.name || d.decisionDefinitionId}</a>
    ${d.name && html` <span class="muted">${d.decisionDefinitionId}</span>`}` },
  { key: 'version', label: 'Version', sort: 'version', render: (d) => d.version },
  { key: 'drg', label: 'Requirements', sort: 'decisionRequirementsId', render: (d) => d.decisionRequirementsId },
];

export function Decisions() {
  return html`<${Page} title="Decisions">
    <p class="muted">Deploy a <code>.dmn</code> file on the <a href="/operate/definitions">Processes</a> page.</p>
    <${PagedTable} query="decisions" columns=${DEFINITION_COLUMNS}
      rowKey=${(d) => d.decisionDefinitionKey}
      initialSort=${[{ field: 'decisionDefinitionId', order: 'ASC' }, { field: 'version', order: 'DESC' }]}
      empty="No decision is deployed."
      fetch=${({ sort, page }) => search('/decision-definitions/search', { sort, page })} />
  <//>`;
}

const INSTANCE_COLUMNS = [
  { key: 'date', label: 'Evaluated', sort: 'evaluationDate', render: (i) => html`<a href=${`/operate/decision-instances/${i.decisionEvaluationInstanceKey}`}>${fmtDate(i.evaluationDate)}</a>` },
  { key: 'state', label: 'State', sort: 'state', render: (i) => html`<${StateBadge} state=${i.state} />` },
  { key: 'result', label: 'Result', render: (i) => html`<code class="value">${i.result}</code>` },
  { key: 'instance', label: 'Process instance', sort: 'processInstanceKey', render: (i) => i.processInstanceKey
    && html`<a href=${`/operate/processes/${i.processInstanceKey}`}>${i.processInstanceKey}</a>` },
];

export function Decision({ id }) {
  const def = useApi(() => get(`/decision-definitions/${id}`), [id]);
  const xml = useApi(() => getText(`/decision-definitions/${id}/xml`), [id]);
  const d = def.data;
  const title = d ? `${d.name || d.decisionDefinitionId} · version ${d.version}` : 'Decision';
  const filter = { decisionDefinitionKey: id };
  return html`<${Page} title=${title}>
    ${def.error && html`<${ErrorBox} error=${def.error} />`}
    ${d && html`<${Versions} def=${d} />`}
    <${Loaded} state=${xml}>${(x) => d && html`<${DmnView} xml=${x} decisionId=${d.decisionDefinitionId} />`}<//>
    <h2>Evaluations</h2>
    <${PagedTable} query=${id} columns=${INSTANCE_COLUMNS}
      rowKey=${(i) => i.decisionEvaluationInstanceKey}
      initialSort=${[{ field: 'evaluationDate', order: 'DESC' }]}
      empty="Not evaluated yet."
      fetch=${({ sort, page }) => search('/decision-instances/search', { filter, sort, page })} />
  <//>`;
}

function Versions({ def }) {
  return html`<div class="toolbar">
    <${VersionSelect} path="/decision-definitions/search" current=${def} keyField="decisionDefinitionKey"
      filter=${{ decisionDefinitionId: def.decisionDefinitionId, tenantId: def.tenantId }}
      hrefOf=${(key) => `/operate/decisions/${key}`} />
    <span class="muted">${def.decisionDefinitionId} · requirements ${def.decisionRequirementsId} · key ${def.decisionDefinitionKey}</span>
  </div>`;
}

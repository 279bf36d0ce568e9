// Processes: every process (its latest version) with its counts of running instances and
// incidents; deploy .bpmn, .dmn and .form files by dropping them or choosing them.
import { html, useState } from '../preact.js';
import { deploy, search } from '../api.js';
import { withQuery } from '../router.js';
import { ErrorBox, Num, Page, PagedTable, useAction, useApi } from '../ui.js';

export function Definitions() {
  const [deployed, setDeployed] = useState(0);
  // counts per process: the groups of processes with running instances (bounded by the
  // processes, not the instances), at most 1,000 of them
  const stats = useApi(async () => {
    const res = await search('/process-definitions/statistics/process-instances', {
      page: { limit: 1000 },
    });
    return new Map(res.items.map((s) => [`${s.processDefinitionId}|${s.tenantId}`, s]));
  }, [deployed]);
  const countOf = (row, f) => {
    if (!stats.data) return undefined;
    return stats.data.get(`${row.processDefinitionId}|${row.tenantId}`)?.[f] ?? 0;
  };
  const columns = [
    { key: 'name', label: 'Process', sort: 'name', render: (d) => html`
      <a href=${`/operate/definitions/${d.processDefinitionKey}`}>${d.name || d.processDefinitionId}</a>
      ${d.name && html` <span class="muted">${d.processDefinitionId}</span>`}` },
    { key: 'version', label: 'Latest version', sort: 'version', render: (d) => d.version },
    { key: 'resource', label: 'Resource', sort: 'resourceName', render: (d) => d.resourceName },
    { key: 'running', label: 'Running', render: (d) => html`<a href=${withQuery('/operate/processes', { process: d.processDefinitionId, state: 'ACTIVE' })}>
      <${Num} value=${sum(countOf(d, 'activeInstancesWithoutIncidentCount'), countOf(d, 'activeInstancesWithIncidentCount'))} /></a>` },
    { key: 'incidents', label: 'Incidents', render: (d) => {
      const n = countOf(d, 'activeInstancesWithIncidentCount');
      return html`<a class=${n ? 'bad' : ''} href=${withQuery('/operate/processes', { process: d.processDefinitionId, state: 'ACTIVE', incident: 'yes' })}><${Num} value=${n} /></a>`;
    } },
  ];
  return html`<${Page} title="Processes">
    <${Deploy} onDeployed=${() => setDeployed(deployed + 1)} />
    ${stats.error && html`<${ErrorBox} error=${stats.error} />`}
    <${PagedTable} query=${`latest-${deployed}`} columns=${columns}
      rowKey=${(d) => d.processDefinitionKey}
      initialSort=${[{ field: 'processDefinitionId', order: 'ASC' }]}
      empty="No process is deployed yet: drop a .bpmn file above."
      fetch=${({ sort, page }) => search('/process-definitions/search', { filter: { isLatestVersion: true }, sort, page })} />
  <//>`;
}

function sum(a, b) {
  return a === undefined || b === undefined ? undefined : a + b;
}

const ACCEPT = ['.bpmn', '.dmn', '.form'];

/** The drop zone: dropped or chosen files become one deployment. */
function Deploy({ onDeployed }) {
  const [run, busy, error, clear] = useAction();
  const [over, setOver] = useState(false);
  const [result, setResult] = useState();
  const send = async (list) => {
    const files = [...list];
    setResult(undefined);
    if (!files.length) return;
    const wrong = files.filter((f) => !ACCEPT.some((e) => f.name.toLowerCase().endsWith(e)));
    if (wrong.length) {
      await run(() => Promise.reject({ title: 'Not deployed', detail: `only ${ACCEPT.join(', ')} files deploy: ${wrong.map((f) => f.name).join(', ')}` }));
      return;
    }
    const res = await run(() => deploy(files));
    if (res) {
      setResult(res);
      onDeployed();
    }
  };
  return html`<div>
    <label class=${`dropzone ${over ? 'over' : ''}`} data-testid="dropzone"
      onDragOver=${(e) => { e.preventDefault(); setOver(true); }}
      onDragLeave=${() => setOver(false)}
      onDrop=${(e) => { e.preventDefault(); setOver(false); send(e.dataTransfer.files); }}>
      <input type="file" multiple accept=${ACCEPT.join(',')} class="visually-hidden"
        onChange=${(e) => { send(e.target.files); e.target.value = ''; }} />
      <strong>${busy ? 'Deploying…' : 'Deploy'}</strong>
      <span>Drop .bpmn, .dmn or .form files here, or press to choose them.</span>
    </label>
    <${ErrorBox} error=${error} onClose=${clear} />
    ${result && html`<${Deployed} result=${result} />`}
  </div>`;
}

function Deployed({ result }) {
  const items = (result.deployments || []).map((d) => {
    if (d.processDefinition) {
      const p = d.processDefinition;
      return html`<li>Process <a href=${`/operate/definitions/${p.processDefinitionKey}`}>${p.processDefinitionId}</a> version ${p.processDefinitionVersion}</li>`;
    }
    if (d.decisionDefinition) {
      const x = d.decisionDefinition;
      return html`<li>Decision <a href=${`/operate/decisions/${x.decisionDefinitionKey}`}>${x.decisionDefinitionId}</a> version ${x.version}</li>`;
    }
    if (d.decisionRequirements) {
      const x = d.decisionRequirements;
      return html`<li>Decision requirements ${x.decisionRequirementsId} version ${x.version}</li>`;
    }
    if (d.form) return html`<li>Form ${d.form.formId} version ${d.form.version}</li>`;
    return null;
  });
  return html`<div class="notice" role="status">
    Deployed (deployment ${result.deploymentKey}):<ul>${items}</ul>
  </div>`;
}

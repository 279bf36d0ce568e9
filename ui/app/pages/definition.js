// A process version: its diagram coloured by the element statistics of its instances, the
// counts per element, and its instances (filtered by the element clicked on the diagram).
import { html, useState } from '../preact.js';
import { get, getText, post } from '../api.js';
import { navigate, useQuery, withQuery } from '../router.js';
import { Diagram } from '../diagram.js';
import { FormView } from '../form.js';
import { ErrorBox, LIVE_MS, Loaded, Num, Page, VariablesEditor, VersionSelect, useAction, useApi } from '../ui.js';
import { InstanceTable } from './instance_table.js';

export function Definition({ id: definitionKey }) {
  const q = useQuery();
  const element = q.element || '';
  const def = useApi(() => get(`/process-definitions/${definitionKey}`), [definitionKey]);
  const xml = useApi(() => getText(`/process-definitions/${definitionKey}/xml`), [definitionKey]);
  const stats = useApi(() => post(`/process-definitions/${definitionKey}/statistics/element-instances`, {}), [definitionKey], { every: LIVE_MS });
  const here = `/operate/definitions/${definitionKey}`;
  const select = (id) => navigate(withQuery(here, { element: id === element ? '' : id }), { replace: true });
  const d = def.data;
  const title = d ? `${d.name || d.processDefinitionId} · version ${d.version}` : 'Process';
  const [starting, setStarting] = useState(false);
  const filter = { processDefinitionKey: definitionKey };
  if (element) filter.elementId = element;
  const actions = html`
    ${d && !starting && html`<button class="primary" onClick=${() => setStarting(true)}>Start an instance</button>`}
    <button onClick=${stats.reload}>Reload</button>`;
  return html`<${Page} title=${title} actions=${actions}>
    ${def.error && html`<${ErrorBox} error=${def.error} />`}
    ${d && html`<${Versions} def=${d} />`}
    ${d && starting && html`<${StartInstance} def=${d} onClose=${() => setStarting(false)} />`}
    <${Loaded} state=${xml}>${(x) => html`<${Diagram} xml=${x} stats=${stats.data?.items}
      selected=${element} onSelect=${select} />`}<//>
    ${stats.error && html`<${ErrorBox} error=${stats.error} />`}
    ${stats.data && html`<${ElementTable} items=${stats.data.items} selected=${element} here=${here} />`}
    <h2>Instances${element && html` at <code>${element}</code> <a href=${here}>(all)</a>`}</h2>
    <${InstanceTable} filter=${filter} live />
  <//>`;
}

/** Starts an instance of this version with its start form's values (form-js) or typed-in
 *  variables, then shows the instance. */
function StartInstance({ def, onClose }) {
  const [run, busy, error, clear] = useAction();
  const form = useApi(
    () => (def.hasStartForm ? get(`/process-definitions/${def.processDefinitionKey}/form`) : Promise.resolve(null)),
    [def.processDefinitionKey],
  );
  const start = async (variables) => {
    const res = await run(() => post('/process-instances', { processDefinitionKey: def.processDefinitionKey, variables }));
    if (res) navigate(`/operate/processes/${res.processInstanceKey}`);
  };
  return html`<section class="panel" aria-labelledby="start-title">
    <h2 id="start-title">Start an instance of version ${def.version}</h2>
    <${Loaded} state=${form}>${(f) => (f
      ? html`<${FormView} schema=${f.schema} data=${{}} busy=${busy} onSubmit=${start} submitLabel="Start" />`
      : html`<${VariablesEditor} busy=${busy} onSubmit=${start} label="Start" />`)}<//>
    <${ErrorBox} error=${error} onClose=${clear} />
    <button class="link" onClick=${onClose}>Close</button>
  </section>`;
}

/** The other versions of the process, to switch between. */
function Versions({ def }) {
  return html`<div class="toolbar">
    <${VersionSelect} path="/process-definitions/search" current=${def} keyField="processDefinitionKey"
      filter=${{ processDefinitionId: def.processDefinitionId, tenantId: def.tenantId }}
      hrefOf=${(key) => `/operate/definitions/${key}`} />
    <span class="muted">${def.processDefinitionId} · ${def.resourceName} · key ${def.processDefinitionKey}</span>
    <a href=${withQuery('/operate/processes', { process: def.processDefinitionId })}>All instances of every version</a>
  </div>`;
}

function ElementTable({ items, selected, here }) {
  if (!items.length) return html`<p class="muted">No instance of this version has reached an element yet.</p>`;
  return html`<details class="elements" open=${items.length <= 12}>
    <summary>Instances per element</summary>
    <table>
      <thead><tr><th scope="col">Element</th><th scope="col">Active</th><th scope="col">Incidents</th><th scope="col">Completed</th><th scope="col">Canceled</th></tr></thead>
      <tbody>${items.map((s) => html`<tr key=${s.elementId} class=${s.elementId === selected ? 'selected' : ''}>
        <td data-label="Element"><a href=${withQuery(here, { element: s.elementId })}>${s.elementId}</a></td>
        <td data-label="Active"><${Num} value=${s.active} /></td>
        <td data-label="Incidents" class=${s.incidents ? 'bad' : ''}><${Num} value=${s.incidents} /></td>
        <td data-label="Completed"><${Num} value=${s.completed} /></td>
        <td data-label="Canceled"><${Num} value=${s.canceled} /></td>
      </tr>`)}</tbody>
    </table>
  </details>`;
}

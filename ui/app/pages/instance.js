// One process instance: its diagram with the tokens and the sequence flows taken, its
// incidents with a retry, its variables, cancel, modification and migration.
import { html, useEffect, useRef, useState } from '../preact.js';
import { ApiError, get, getText, patch, post, put, search } from '../api.js';
import { Diagram } from '../diagram.js';
import { CallHierarchy, ElementTree } from './element_tree.js';
import { Migration, Modification } from './modify.js';
import { ErrorBox, LIVE_MS, Loaded, Page, PagedTable, StateBadge, fmtDate, useAction, useApi } from '../ui.js';

export function Instance({ id }) {
  const [version, setVersion] = useState(0);
  const refresh = () => setVersion((v) => v + 1);
  const inst = useApi(() => get(`/process-instances/${id}`), [id, version], { every: LIVE_MS });
  const p = inst.data;
  const title = p ? `${p.processDefinitionName || p.processDefinitionId} · ${id}` : `Instance ${id}`;
  return html`<${Page} title=${title} actions=${html`<button onClick=${refresh}>Reload</button>`}>
    <${Loaded} state=${inst}>${(pi) => html`
      <${CallHierarchy} processInstanceKey=${id} />
      <${Summary} p=${pi} onChanged=${refresh} />
      <${InstanceDiagram} p=${pi} version=${version} />
      ${pi.state === 'ACTIVE' && html`<${Changes} p=${pi} onChanged=${refresh} />`}
      <h2>Incidents</h2>
      <${Incidents} id=${id} version=${version} onChanged=${refresh} />
      <h2>Variables</h2>
      <${Variables} id=${id} active=${pi.state === 'ACTIVE'} />
      <h2>Element instances</h2>
      <${ElementTree} processInstanceKey=${id} />`}<//>
  <//>`;
}

function Summary({ p, onChanged }) {
  const [run, busy, error, clear] = useAction();
  const [confirming, setConfirming] = useState(false);
  // the question takes the focus (on its safe answer), so a keyboard user keeps their place
  const no = useRef();
  useEffect(() => {
    if (confirming) no.current?.focus();
  }, [confirming]);
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
            <button ref=${no} onClick=${() => setConfirming(false)}>No</button></span>`
        : html`<button class="danger" disabled=${busy} onClick=${() => setConfirming(true)}>Cancel instance</button>`}
    </div>`}
    <${ErrorBox} error=${error} onClose=${clear} />
  </div>`;
}

/** An active instance's modification and migration, each folded until opened. */
function Changes({ p, onChanged }) {
  return html`<details class="panel">
      <summary>Modify the instance</summary>
      <${Modification} p=${p} onChanged=${onChanged} />
    </details>
    <details class="panel">
      <summary>Migrate to another version</summary>
      <${Migration} p=${p} onChanged=${onChanged} />
    </details>`;
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

/** Sets variables in a scope (an element instance or the process instance) as Operate does:
 *  in that scope itself. */
function setVariables(scopeKey, variables) {
  return put(`/element-instances/${scopeKey}/variables`, { variables, local: true });
}

function Variables({ id, active }) {
  const [refresh, setRefresh] = useState(0);
  const changed = () => setRefresh((r) => r + 1);
  const filter = { processInstanceKey: id };
  const columns = [
    { key: 'name', label: 'Name', sort: 'name', render: (v) => html`<code>${v.name}</code>` },
    { key: 'value', label: 'Value', render: (v) => html`<${VariableValue} key=${v.variableKey} v=${v} editable=${active} onChanged=${changed} />` },
    { key: 'scope', label: 'Scope', render: (v) => (v.scopeKey === v.processInstanceKey ? 'process' : v.scopeKey) },
  ];
  return html`
    ${active && html`<${AddVariable} id=${id} onChanged=${changed} />`}
    <${PagedTable} query=${id} columns=${columns} live refresh=${refresh}
      rowKey=${(v) => v.variableKey} initialSort=${[{ field: 'name', order: 'ASC' }]}
      empty="No variables."
      fetch=${({ sort, page }) => search('/variables/search', { filter, sort, page })} />`;
}

/** A variable's value; while the instance runs, editable as JSON (the whole value is read
 *  first when the search truncated it). */
function VariableValue({ v, editable, onChanged }) {
  const [text, setText] = useState();
  const [run, busy, error, clear] = useAction();
  const edit = () => run(async () => {
    const full = v.isTruncated ? (await get(`/variables/${v.variableKey}`)).value : v.value;
    setText(full);
  });
  const save = async (e) => {
    e.preventDefault();
    const ok = await run(() => {
      let value;
      try {
        value = JSON.parse(text);
      } catch (err) {
        throw new ApiError(0, 'Not JSON', err.message);
      }
      return setVariables(v.scopeKey, { [v.name]: value });
    });
    if (ok !== undefined) {
      setText(undefined);
      onChanged();
    }
  };
  if (text === undefined) {
    return html`<code class="value">${v.value}</code>${v.isTruncated ? html` <span class="muted">(truncated)</span>` : ''}
      ${editable && html` <button class="link" aria-label=${`Edit ${v.name}`} disabled=${busy} onClick=${edit}>Edit</button>`}
      <${ErrorBox} error=${error} onClose=${clear} />`;
  }
  return html`<form class="inline-edit" onSubmit=${save}>
    <textarea aria-label=${`Value of ${v.name}`} rows="2" value=${text} onInput=${(e) => setText(e.target.value)}></textarea>
    <button class="primary" type="submit" disabled=${busy}>Save</button>
    <button type="button" onClick=${() => { setText(undefined); clear(); }}>Cancel</button>
    <${ErrorBox} error=${error} onClose=${clear} />
  </form>`;
}

/** Adds a variable (or sets one) in the process instance's own scope. */
function AddVariable({ id, onChanged }) {
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [run, busy, error, clear] = useAction();
  const add = async (e) => {
    e.preventDefault();
    const ok = await run(() => {
      if (!name.trim()) throw new ApiError(0, 'A variable needs a name');
      let parsed;
      try {
        parsed = JSON.parse(value);
      } catch (err) {
        throw new ApiError(0, 'The value is not JSON', err.message);
      }
      return setVariables(id, { [name.trim()]: parsed });
    });
    if (ok !== undefined) {
      setName('');
      setValue('');
      onChanged();
    }
  };
  return html`<form class="add-variable" onSubmit=${add} aria-label="Add a variable">
    <label>Name<input value=${name} onInput=${(e) => setName(e.target.value)} /></label>
    <label>Value (JSON)<input value=${value} onInput=${(e) => setValue(e.target.value)} /></label>
    <button type="submit" disabled=${busy}>Add variable</button>
    <${ErrorBox} error=${error} onClose=${clear} />
  </form>`;
}

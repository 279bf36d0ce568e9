// Instances: the process instances by filter (process, version, state, incident, error
// message, element, start and end dates, a variable's value, keys, parent), sortable and paged
// with cursors. The filter lives in the URL, so a view can be linked.
import { html, useState } from '../preact.js';
import { get, post } from '../api.js';
import { navigate, useQuery, withQuery } from '../router.js';
import { ErrorBox, Loaded, Num, Page, fmtDate, useAction, useApi } from '../ui.js';
import { InstanceTable } from './instance_table.js';

const FIELDS = ['process', 'version', 'state', 'incident', 'error', 'element', 'startedAfter',
  'startedBefore', 'endedAfter', 'endedBefore', 'variable', 'value', 'key', 'parent'];

/** A date input's local time as the API's date-time, or undefined when empty or invalid. */
function isoOf(local) {
  const d = local ? new Date(local) : undefined;
  return d && !Number.isNaN(d.getTime()) ? d.toISOString() : undefined;
}

/** A date range filter of the two inputs, or undefined when both are empty. */
function range(after, before) {
  const [from, to] = [isoOf(after), isoOf(before)];
  const r = {};
  if (from) r.$gte = from;
  if (to) r.$lt = to;
  return Object.keys(r).length ? r : undefined;
}

/** A variable's value as the API compares it (its JSON): as typed when it is JSON (`42`,
 *  `"Ada"`, `true`), else the text as a JSON string (`Ada` -> `"Ada"`). */
function jsonOf(value) {
  try {
    JSON.parse(value);
    return value;
  } catch {
    return JSON.stringify(value);
  }
}

/** The API's filter of the URL's parameters. */
export function filterOf(q) {
  const f = {};
  if (q.process) f.processDefinitionId = q.process;
  if (q.version && /^\d+$/.test(q.version)) f.processDefinitionVersion = Number(q.version);
  if (q.state) f.state = q.state;
  if (q.incident === 'yes') f.hasIncident = true;
  if (q.incident === 'no') f.hasIncident = false;
  if (q.error) f.errorMessage = { $like: `*${q.error}*` };
  if (q.element) f.elementId = q.element;
  const started = range(q.startedAfter, q.startedBefore);
  if (started) f.startDate = started;
  const ended = range(q.endedAfter, q.endedBefore);
  if (ended) f.endDate = ended;
  if (q.variable) {
    f.variables = [q.value ? { name: q.variable, value: jsonOf(q.value) } : { name: q.variable }];
  }
  if (q.key) f.processInstanceKey = q.key;
  if (q.parent) f.parentProcessInstanceKey = q.parent;
  return f;
}

export function Instances() {
  const q = useQuery();
  return html`<${Page} title="Instances">
    <${Filters} key=${location.search} q=${q} />
    <${Bulk} key=${location.search} filter=${filterOf(q)} />
    <${InstanceTable} filter=${filterOf(q)} live />
  <//>`;
}

function Filters({ q }) {
  const [form, setForm] = useState(() => Object.fromEntries(FIELDS.map((f) => [f, q[f] || ''])));
  const set = (f) => (e) => setForm({ ...form, [f]: e.target.value });
  const submit = (e) => {
    e.preventDefault();
    navigate(withQuery('/operate/processes', form));
  };
  const reset = () => {
    setForm(Object.fromEntries(FIELDS.map((f) => [f, ''])));
    navigate('/operate/processes');
  };
  return html`<form class="filters" onSubmit=${submit} aria-label="Filter instances">
    <label>Process id<input name="process" value=${form.process} onInput=${set('process')} /></label>
    <label>Version<input name="version" inputmode="numeric" pattern="[0-9]*" size="4" value=${form.version} onInput=${set('version')} /></label>
    <label>State<select name="state" value=${form.state} onChange=${set('state')}>
      <option value="">Any</option>
      <option value="ACTIVE">Active</option>
      <option value="COMPLETED">Completed</option>
      <option value="TERMINATED">Canceled</option>
    </select></label>
    <label>Incident<select name="incident" value=${form.incident} onChange=${set('incident')}>
      <option value="">Any</option>
      <option value="yes">With incident</option>
      <option value="no">Without incident</option>
    </select></label>
    <label>Error message<input name="error" value=${form.error} onInput=${set('error')} /></label>
    <label>Element id<input name="element" value=${form.element} onInput=${set('element')} /></label>
    <label>Started after<input type="datetime-local" name="startedAfter" value=${form.startedAfter} onInput=${set('startedAfter')} /></label>
    <label>Started before<input type="datetime-local" name="startedBefore" value=${form.startedBefore} onInput=${set('startedBefore')} /></label>
    <label>Ended after<input type="datetime-local" name="endedAfter" value=${form.endedAfter} onInput=${set('endedAfter')} /></label>
    <label>Ended before<input type="datetime-local" name="endedBefore" value=${form.endedBefore} onInput=${set('endedBefore')} /></label>
    <label>Variable name<input name="variable" value=${form.variable} onInput=${set('variable')} /></label>
    <label>Variable value<input name="value" placeholder='42, "text" or text' value=${form.value} onInput=${set('value')} /></label>
    <label>Instance key<input name="key" inputmode="numeric" value=${form.key} onInput=${set('key')} /></label>
    <label>Parent key<input name="parent" inputmode="numeric" value=${form.parent} onInput=${set('parent')} /></label>
    <div class="filter-actions">
      <button type="submit" class="primary">Apply</button>
      <button type="button" onClick=${reset}>Reset</button>
    </div>
  </form>`;
}

const BULK = {
  cancel: ['Cancel them', '/process-instances/cancellation', { state: 'ACTIVE' }],
  retry: ['Retry their incidents', '/process-instances/incident-resolution', { state: 'ACTIVE', hasIncident: true }],
};

/** Acts on every instance the filter matches (not only the page shown) through a batch
 *  operation, and follows its progress. */
function Bulk({ filter }) {
  const [confirm, setConfirm] = useState();
  const [batch, setBatch] = useState();
  const [run, busy, error, clear] = useAction();
  const start = async (what) => {
    setConfirm(undefined);
    const [, path, only] = BULK[what];
    const res = await run(() => post(path, { filter: { ...filter, ...only } }));
    if (res) setBatch(res.batchOperationKey);
  };
  return html`<div class="bulk" role="group" aria-label="Every matching instance">
    <span class="muted">Every instance this filter matches:</span>
    ${confirm
      ? html`<span>${BULK[confirm][0]}?
          <button class="danger" onClick=${() => start(confirm)}>Yes, ${BULK[confirm][0].toLowerCase()}</button>
          <button onClick=${() => setConfirm(undefined)}>No</button></span>`
      : Object.entries(BULK).map(([k, [label]]) => html`<button disabled=${busy} onClick=${() => setConfirm(k)}>${label}</button>`)}
    <${ErrorBox} error=${error} onClose=${clear} />
    ${batch && html`<${BatchProgress} batchKey=${batch} />`}
  </div>`;
}

const DONE = ['COMPLETED', 'PARTIALLY_COMPLETED', 'FAILED', 'CANCELED'];

/** A batch operation's state and counts, asked again every second until it ends. */
function BatchProgress({ batchKey }) {
  const [done, setDone] = useState(false);
  const op = useApi(async () => {
    const b = await get(`/batch-operations/${batchKey}`);
    if (DONE.includes(b.state)) setDone(true);
    return b;
  }, [batchKey], { every: done ? undefined : 1000 });
  return html`<div class="notice" role="status">
    <${Loaded} state=${op}>${(b) => html`
      Batch operation ${b.batchOperationKey} (${b.batchOperationType}): <strong>${b.state}</strong>, <${Num} value=${b.operationsCompletedCount} /> of <${Num} value=${b.operationsTotalCount} /> done${b.operationsFailedCount ? html`, <span class="bad">${b.operationsFailedCount} failed</span>` : ''}${b.endDate ? ` at ${fmtDate(b.endDate)}` : ''}.
      ${b.errors?.length ? html`<ul>${b.errors.map((e) => html`<li>${e.type}: ${e.message}</li>`)}</ul>` : null}`}<//>
  </div>`;
}

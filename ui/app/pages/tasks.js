// Tasks, as Tasklist: the user tasks people work on (open, assigned to you, unassigned,
// completed), sortable by dates or priority; one task with claim, unclaim, and completion
// through its form in form-js (or a variables editor when it has none). There is no login:
// "you" is the name kept in this browser (Tasklist's user when authentication comes).
import { html, useState } from '../preact.js';
import { ApiError, get, post, request, search } from '../api.js';
import { navigate, useQuery, withQuery } from '../router.js';
import { FormView } from '../form.js';
import { ErrorBox, Loaded, Page, PagedTable, StateBadge, VariablesEditor, fmtDate, useAction, useApi } from '../ui.js';

const USER_KEY = 'zest.user';

function useUser() {
  const [user, setUser] = useState(() => localStorage.getItem(USER_KEY) || 'demo');
  const change = (name) => {
    localStorage.setItem(USER_KEY, name);
    setUser(name);
  };
  return [user, change];
}

const VIEWS = {
  open: ['Open tasks', () => ({ state: 'CREATED' })],
  mine: ['Assigned to me', (user) => ({ state: 'CREATED', assignee: user })],
  unassigned: ['Unassigned', () => ({ state: 'CREATED', assignee: { $exists: false } })],
  completed: ['Completed', () => ({ state: 'COMPLETED' })],
};

const COLUMNS = [
  { key: 'name', label: 'Task', sort: 'name', render: (t) => html`<a href=${`/tasklist/${t.userTaskKey}`}>${t.name || t.elementId}</a>` },
  { key: 'process', label: 'Process', render: (t) => t.processName || t.processDefinitionId },
  { key: 'assignee', label: 'Assignee', render: (t) => t.assignee || html`<span class="muted">unassigned</span>` },
  { key: 'priority', label: 'Priority', sort: 'priority', render: (t) => t.priority },
  { key: 'created', label: 'Created', sort: 'creationDate', render: (t) => fmtDate(t.creationDate) },
  { key: 'due', label: 'Due', sort: 'dueDate', render: (t) => fmtDate(t.dueDate) },
  { key: 'followUp', label: 'Follow up', sort: 'followUpDate', render: (t) => fmtDate(t.followUpDate) },
];

export function Tasks() {
  const q = useQuery();
  const [user, setUser] = useUser();
  const view = VIEWS[q.view] ? q.view : 'open';
  const filter = VIEWS[view][1](user);
  if (q.group) filter.candidateGroup = q.group;
  return html`<${Page} title="Tasks">
    <div class="toolbar">
      <label>You are <input value=${user} size="12" onChange=${(e) => setUser(e.target.value.trim() || 'demo')} /></label>
      <label>Show <select value=${view} onChange=${(e) => navigate(withQuery('/tasklist', { ...q, view: e.target.value }))}>
        ${Object.entries(VIEWS).map(([k, [label]]) => html`<option value=${k}>${label}</option>`)}
      </select></label>
      <label>Candidate group <input value=${q.group || ''} size="12"
        onChange=${(e) => navigate(withQuery('/tasklist', { ...q, group: e.target.value.trim() }))} /></label>
    </div>
    <${PagedTable} query=${JSON.stringify(filter)} columns=${COLUMNS} live
      rowKey=${(t) => t.userTaskKey} initialSort=${[{ field: 'creationDate', order: 'DESC' }]}
      empty="No task here."
      fetch=${({ sort, page }) => search('/user-tasks/search', { filter, sort, page })} />
  <//>`;
}

export function Task({ id }) {
  const [user] = useUser();
  const [version, setVersion] = useState(0);
  const task = useApi(() => get(`/user-tasks/${id}`), [id, version]);
  const t = task.data;
  return html`<${Page} title=${t ? t.name || t.elementId : `Task ${id}`}>
    <p><a href="/tasklist">All tasks</a></p>
    <${Loaded} state=${task}>${(tk) => html`<${TaskBody} t=${tk} user=${user}
      onChanged=${() => setVersion(version + 1)} />`}<//>
  <//>`;
}

function TaskBody({ t, user, onChanged }) {
  const [run, busy, error, clear] = useAction();
  const open = t.state === 'CREATED';
  const mine = t.assignee === user;
  const act = async (fn) => {
    if ((await run(fn)) !== undefined) onChanged();
  };
  const claim = () => act(() => post(`/user-tasks/${t.userTaskKey}/assignment`, { assignee: user, allowOverride: false }));
  const unclaim = () => act(() => request('DELETE', `/user-tasks/${t.userTaskKey}/assignee`));
  const complete = (variables) => act(() => post(`/user-tasks/${t.userTaskKey}/completion`, { variables }));
  return html`<div>
    <div class="summary">
      <dl>
        <div><dt>State</dt><dd><${StateBadge} state=${t.state} /></dd></div>
        <div><dt>Process</dt><dd><a href=${`/operate/processes/${t.processInstanceKey}`}>${t.processName || t.processDefinitionId}</a></dd></div>
        <div><dt>Assignee</dt><dd>${t.assignee || 'unassigned'}</dd></div>
        ${t.candidateGroups?.length ? html`<div><dt>Candidate groups</dt><dd>${t.candidateGroups.join(', ')}</dd></div>` : null}
        <div><dt>Created</dt><dd>${fmtDate(t.creationDate)}</dd></div>
        ${t.dueDate && html`<div><dt>Due</dt><dd>${fmtDate(t.dueDate)}</dd></div>`}
        <div><dt>Priority</dt><dd>${t.priority}</dd></div>
      </dl>
      ${open && html`<div class="actions">
        ${mine
          ? html`<button disabled=${busy} onClick=${unclaim}>Unclaim</button>`
          : html`<button class="primary" disabled=${busy} onClick=${claim}>${t.assignee ? `Assign to me (now ${t.assignee})` : 'Claim'}</button>`}
      </div>`}
    </div>
    <${ErrorBox} error=${error} onClose=${clear} />
    ${open && (mine
      ? html`<${Completion} t=${t} busy=${busy} onComplete=${complete} />`
      : html`<p class="muted">Claim the task to work on it.</p>`)}
  </div>`;
}

/** The task's form with its variables, or a JSON editor of the variables to complete with. */
function Completion({ t, busy, onComplete }) {
  const form = useApi(async () => {
    const vars = await search(`/user-tasks/${t.userTaskKey}/effective-variables/search`, { page: { limit: 1000 } });
    const data = Object.fromEntries(vars.items.map((v) => [v.name, parse(v.value)]));
    try {
      return { form: await get(`/user-tasks/${t.userTaskKey}/form`), data };
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return { form: null, data };
      throw e;
    }
  }, [t.userTaskKey]);
  return html`<${Loaded} state=${form}>${({ form: f, data }) => (f
    ? html`<${FormView} schema=${f.schema} data=${data} busy=${busy} onSubmit=${onComplete} />`
    : html`<${VariablesEditor} busy=${busy} onSubmit=${onComplete} label="Complete" />`)}<//>`;
}

function parse(value) {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

// Shared components: page frame, errors, loading, state badges, dates, and the paged table.
import { html, useCallback, useEffect, useRef, useState } from './preact.js';
import { search } from './api.js';
import { navigate } from './router.js';

/** How often live views ask again (Operate polls too), while the page is visible. */
export const LIVE_MS = 5000;

/** Runs `load` (an async function) when `deps` change, and every `every` ms while the page is
 *  visible when given: {data, error, loading, reload}. The data stays while it reloads; an
 *  answer that arrives after newer deps is dropped. */
export function useApi(load, deps, { every } = {}) {
  const [state, setState] = useState({ data: undefined, error: undefined, loading: true });
  const seq = useRef(0);
  const run = useCallback(() => {
    const mine = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => mine === seq.current && setState({ data, error: undefined, loading: false }),
      // what was shown stays (a failed poll must not blank the page), under the error
      (error) => mine === seq.current && setState((s) => ({ data: s.data, error, loading: false })),
    );
  }, deps);
  useEffect(run, [run]);
  useEffect(() => {
    if (!every) return undefined;
    const timer = setInterval(() => document.visibilityState === 'visible' && run(), every);
    return () => clearInterval(timer);
  }, [run, every]);
  return { ...state, reload: run };
}

/** An action's runner: [run(fn), busy, error, clearError]; `run` resolves to fn's result, or
 *  undefined when it failed (the error is then in `error`). */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState();
  const run = useCallback(async (fn) => {
    setBusy(true);
    setError(undefined);
    try {
      return await fn();
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return [run, busy, error, () => setError(undefined)];
}

export function Page({ title, actions, children }) {
  useEffect(() => {
    document.title = `${title} · Zest`;
  }, [title]);
  return html`<section class="page">
    <header class="page-head">
      <h1>${title}</h1>
      ${actions && html`<div class="page-actions">${actions}</div>`}
    </header>
    ${children}
  </section>`;
}

export function ErrorBox({ error, onClose }) {
  if (!error) return null;
  const status = error.status ? html`<span class="error-status">${error.status}</span>` : null;
  return html`<div class="error" role="alert">
    ${status}<strong>${error.title || 'Error'}</strong>
    ${error.detail || (!error.title && error.message) ? html`<p>${error.detail || error.message}</p>` : null}
    ${onClose && html`<button class="link" onClick=${onClose}>Dismiss</button>`}
  </div>`;
}

export function Loading() {
  return html`<p class="muted" aria-live="polite">Loading…</p>`;
}

/** The content of a loaded `useApi` state (under its error, when the last load failed), or
 *  its error, or "Loading". */
export function Loaded({ state, children }) {
  if (state.data === undefined) {
    return state.error ? html`<${ErrorBox} error=${state.error} />` : html`<${Loading} />`;
  }
  return html`${state.error && html`<${ErrorBox} error=${state.error} />`}${children(state.data)}`;
}

const STATES = {
  ACTIVE: ['Active', 'active'],
  COMPLETED: ['Completed', 'completed'],
  TERMINATED: ['Canceled', 'canceled'],
  CANCELED: ['Canceled', 'canceled'],
  RESOLVED: ['Resolved', 'completed'],
  PENDING: ['Pending', 'active'],
  EVALUATED: ['Evaluated', 'completed'],
  CREATED: ['Open', 'active'],
  FAILED: ['Failed', 'incident'],
};

export function StateBadge({ state, incident }) {
  if (incident && state === 'ACTIVE') {
    return html`<span class="badge incident">Incident</span>`;
  }
  const [label, cls] = STATES[state] || [state, ''];
  return html`<span class=${`badge ${cls}`}>${label}</span>`;
}

export function fmtDate(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, {
    year: 'numeric', month: '2-digit', day: '2-digit',
    hour: '2-digit', minute: '2-digit', second: '2-digit',
  });
}

export function Num({ value }) {
  return html`<span class="num">${value == null ? '—' : Number(value).toLocaleString()}</span>`;
}

const PAGE = 50;

/**
 * A sortable table paged with the API's cursors: `fetch({page, sort})` answers a search's
 * {items, page}. `columns`: [{key, label, render(row), sort?: API sort field}]. Pages go
 * forwards with `after: endCursor`, backwards by the cursors kept of the pages seen; a new
 * `query` (the filter's identity) starts at the first page again; `live` asks again every
 * LIVE_MS, and a new `refresh` at once (the same page).
 */
export function PagedTable({ fetch, columns, query, initialSort, rowKey, empty, caption, live, refresh }) {
  const [sort, setSort] = useState(initialSort || []);
  // the cursors belong to one query and order: another starts at the first page
  const identity = `${query}|${JSON.stringify(sort)}`;
  const [pages, setPages] = useState({ identity, cursors: [null] });
  const cursors = pages.identity === identity ? pages.cursors : [null];
  const setCursors = (c) => setPages({ identity, cursors: c });
  const after = cursors[cursors.length - 1];
  const state = useApi(
    () => fetch({ sort, page: after ? { limit: PAGE, after } : { limit: PAGE } }),
    [identity, after, refresh],
    { every: live ? LIVE_MS : undefined },
  );
  const onSort = (field) => {
    const cur = sort[0];
    const order = cur?.field === field && cur.order === 'ASC' ? 'DESC' : 'ASC';
    setSort([{ field, order }]);
  };
  return html`<div class="table-wrap">
    ${state.error && html`<${ErrorBox} error=${state.error} />`}
    <table>
      ${caption && html`<caption>${caption}</caption>`}
      <thead><tr>
        ${columns.map((c) => html`<th scope="col" aria-sort=${ariaSort(sort, c.sort)}>
          ${c.sort
            ? html`<button class="sort" onClick=${() => onSort(c.sort)}>
                ${c.label}<span aria-hidden="true">${arrow(sort, c.sort)}</span></button>`
            : c.label}
        </th>`)}
      </tr></thead>
      <tbody>
        ${(state.data?.items || []).map((row) => html`<tr key=${rowKey(row)}>
          ${columns.map((c) => html`<td data-label=${c.label}>${c.render(row)}</td>`)}
        </tr>`)}
      </tbody>
    </table>
    ${state.data && !state.data.items.length && html`<p class="muted">${empty || 'Nothing found.'}</p>`}
    ${state.loading && !state.data && !state.error && html`<${Loading} />`}
    <nav class="pager" aria-label="Pages">
      <span class="muted">${state.data ? pageText(state.data.page, cursors.length) : ''}</span>
      <button disabled=${cursors.length < 2}
        onClick=${() => setCursors(cursors.slice(0, -1))}>Previous</button>
      <button disabled=${!hasNext(state.data)}
        onClick=${() => setCursors([...cursors, state.data.page.endCursor])}>Next</button>
      <button onClick=${state.reload} title="Reload this page">Reload</button>
    </nav>
  </div>`;
}

function hasNext(data) {
  if (!data?.page?.endCursor || data.items.length < PAGE) return false;
  return true;
}

function pageText(page, n) {
  const total = page.totalItems;
  const more = page.hasMoreTotalItems ? '+' : '';
  return `Page ${n} · ${Number(total).toLocaleString()}${more} in all`;
}

function ariaSort(sort, field) {
  if (!field || sort[0]?.field !== field) return undefined;
  return sort[0].order === 'DESC' ? 'descending' : 'ascending';
}

function arrow(sort, field) {
  if (sort[0]?.field !== field) return '';
  return sort[0].order === 'DESC' ? ' ▼' : ' ▲';
}

/**
 * The versions of a definition (a process's or a decision's: `path` is its search, `filter`
 * names it), newest first, up to 100: choosing one goes to `hrefOf(key)`. `keyField` names
 * the key of `current` and of the items.
 */
export function VersionSelect({ path, filter, keyField, current, hrefOf }) {
  const versions = useApi(() => search(path, {
    filter,
    sort: [{ field: 'version', order: 'DESC' }],
    page: { limit: 100 },
  }), [path, JSON.stringify(filter)]);
  const items = versions.data?.items?.length ? versions.data.items : [current];
  return html`<label>Version
      <select value=${current[keyField]} onChange=${(e) => navigate(hrefOf(e.target.value))}>
        ${items.map((v) => html`<option value=${v[keyField]}>${v.version}${v.versionTag ? ` (${v.versionTag})` : ''}</option>`)}
      </select>
    </label>
    ${versions.error && html`<${ErrorBox} error=${versions.error} />`}`;
}

/** A JSON object of variables, typed in: `onSubmit(object)` once it parses as one. */
export function VariablesEditor({ busy, onSubmit, label }) {
  const [text, setText] = useState('{}');
  const [error, setError] = useState();
  const submit = (e) => {
    e.preventDefault();
    let value;
    try {
      value = JSON.parse(text);
    } catch (err) {
      setError({ title: 'Not JSON', detail: err.message });
      return;
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      setError({ title: 'Not a JSON object', detail: 'the variables are an object of names and values' });
      return;
    }
    setError(undefined);
    onSubmit(value);
  };
  return html`<form onSubmit=${submit} class="variables-editor">
    <label>Variables (a JSON object)
      <textarea rows="6" value=${text} onInput=${(e) => setText(e.target.value)}></textarea></label>
    <${ErrorBox} error=${error} />
    <button class="primary" type="submit" disabled=${busy}>${label}</button>
  </form>`;
}

// An instance's element instances as a tree, read a level at a time as scopes open (children
// by `elementInstanceScopeKey`, 50 at a time, more on request), and its call hierarchy.
import { html, useState } from '../preact.js';
import { get, search } from '../api.js';
import { LIVE_MS, Loaded, StateBadge, fmtDate, useApi } from '../ui.js';

/** Element types whose instances hold others. */
const SCOPES = new Set(['SUB_PROCESS', 'EVENT_SUB_PROCESS', 'MULTI_INSTANCE_BODY',
  'AD_HOC_SUB_PROCESS', 'AD_HOC_SUB_PROCESS_INNER_INSTANCE']);
const PAGE = 50;

export function ElementTree({ processInstanceKey }) {
  return html`<div class="tree" role="tree" aria-label="Element instances">
    <${Children} scopeKey=${processInstanceKey} />
  </div>`;
}

function Children({ scopeKey }) {
  const [limit, setLimit] = useState(PAGE);
  const children = useApi(() => search('/element-instances/search', {
    filter: { elementInstanceScopeKey: scopeKey },
    sort: [{ field: 'startDate', order: 'ASC' }, { field: 'elementInstanceKey', order: 'ASC' }],
    page: { limit },
  }), [scopeKey, limit], { every: LIVE_MS });
  return html`<${Loaded} state=${children}>${(d) => html`<ul role="group">
    ${d.items.map((e) => html`<${Node} key=${e.elementInstanceKey} e=${e} />`)}
    ${d.page.totalItems > d.items.length && html`<li><button class="link" onClick=${() => setLimit(limit + PAGE)}>
      ${Math.min(PAGE, d.page.totalItems - d.items.length)} more of ${d.page.totalItems - d.items.length}</button></li>`}
    ${!d.items.length && html`<li class="muted">Nothing yet.</li>`}
  </ul>`}<//>`;
}

function Node({ e }) {
  const [open, setOpen] = useState(false);
  const scope = SCOPES.has(e.type);
  return html`<li role="treeitem" aria-expanded=${scope ? String(open) : undefined}>
    <span class="node">
      ${scope
        ? html`<button class="toggle" aria-label=${`${open ? 'Close' : 'Open'} ${e.elementName || e.elementId}`}
            onClick=${() => setOpen(!open)}>${open ? '▾' : '▸'}</button>`
        : html`<span class="toggle" aria-hidden="true"></span>`}
      <strong>${e.elementName || e.elementId}</strong>
      <span class="muted">${e.type.toLowerCase().replaceAll('_', ' ')}</span>
      <${StateBadge} state=${e.state} incident=${e.hasIncident} />
      <span class="muted">${fmtDate(e.startDate)}${e.endDate ? ` – ${fmtDate(e.endDate)}` : ''}</span>
    </span>
    ${open && html`<${Children} scopeKey=${e.elementInstanceKey} />`}
  </li>`;
}

/** The instances that called this one, root first, when it was called. */
export function CallHierarchy({ processInstanceKey }) {
  const chain = useApi(() => get(`/process-instances/${processInstanceKey}/call-hierarchy`), [processInstanceKey]);
  return html`<${Loaded} state=${chain}>${(items) => (items.length > 1
    ? html`<nav class="calls" aria-label="Call hierarchy">Called by
        ${items.slice(0, -1).map((c) => html` <a href=${`/operate/processes/${c.processInstanceKey}`}>${c.processDefinitionName || c.processInstanceKey}</a> ›`)}
        this instance</nav>`
    : null)}<//>`;
}

// A BPMN diagram in bpmn-js's navigated viewer, with the element statistics as overlays
// (active, incidents, completed, canceled), markers on elements with tokens or incidents, the
// sequence flows taken, and a selected element. Clicking a flow node calls `onSelect(id)`.
import { html, useEffect, useRef } from './preact.js';
import { bpmnViewer, useViewer } from './vendor.js';
import { ErrorBox, Loading } from './ui.js';

const KINDS = [
  ['active', 'active'],
  ['incidents', 'incidents'],
  ['completed', 'completed'],
  ['canceled', 'canceled'],
];

export function Diagram({ xml, stats, flows, selected, onSelect, showCompleted = true }) {
  const select = useRef(onSelect);
  select.current = onSelect;
  const { container, viewer, ready, error } = useViewer(bpmnViewer, async (v) => {
    await v.importXML(xml);
    v.get('canvas').zoom('fit-viewport', 'auto');
    v.on('element.click', (e) => {
      const el = e.element;
      if (!el.parent || el.type === 'label' || el.waypoints) return;
      select.current?.(el.id);
    });
  }, [xml]);

  useEffect(() => {
    if (!ready) return undefined;
    return decorate(viewer.current, { stats, flows, selected, showCompleted });
  }, [ready, stats, flows, selected, showCompleted]);

  return html`<div class="diagram-box">
    ${error && html`<${ErrorBox} error=${{ title: 'The diagram cannot be shown', detail: error.message }} />`}
    ${!ready && !error && html`<${Loading} />`}
    <div class="diagram" ref=${container} data-ready=${ready ? 'true' : 'false'}
      aria-label="Process diagram" role="img"></div>
  </div>`;
}

/** Adds the overlays and markers; answers the function that removes them. */
function decorate(viewer, { stats, flows, selected, showCompleted }) {
  const canvas = viewer.get('canvas');
  const overlays = viewer.get('overlays');
  const registry = viewer.get('elementRegistry');
  const marked = [];
  const mark = (id, cls) => {
    if (!registry.get(id)) return;
    canvas.addMarker(id, cls);
    marked.push([id, cls]);
  };
  for (const s of stats || []) {
    if (!registry.get(s.elementId)) continue;
    const box = document.createElement('div');
    box.className = 'stats';
    for (const [field, cls] of KINDS) {
      const n = s[field];
      if (!n || (!showCompleted && (field === 'completed' || field === 'canceled'))) continue;
      const b = document.createElement('span');
      b.className = `stat stat-${cls}`;
      b.title = `${n} ${field}`;
      b.textContent = n.toLocaleString();
      box.append(b);
    }
    if (box.childElementCount) {
      overlays.add(s.elementId, 'zest-stats', { position: { bottom: 8, left: -8 }, html: box });
    }
    if (s.incidents) mark(s.elementId, 'has-incident');
    else if (s.active) mark(s.elementId, 'has-token');
  }
  for (const f of flows || []) mark(f, 'taken');
  if (selected) mark(selected, 'selected');
  return () => {
    overlays.remove({ type: 'zest-stats' });
    for (const [id, cls] of marked) canvas.removeMarker(id, cls);
  };
}

// A DMN model in dmn-js's viewer, opened at one decision's table or literal expression (or
// its requirements diagram); the views it has can be switched. `highlight` names rules
// (their ids) marked in the decision table: a decision instance's matched rules.
import { html, useEffect, useState } from './preact.js';
import { dmnViewer, useViewer } from './vendor.js';
import { ErrorBox, Loading } from './ui.js';

const LABELS = { drd: 'Requirements diagram', decisionTable: 'Decision table', literalExpression: 'Literal expression' };

export function DmnView({ xml, decisionId, highlight }) {
  const [views, setViews] = useState([]);
  const [active, setActive] = useState();
  const [failed, setFailed] = useState();
  const { container, viewer, error } = useViewer(dmnViewer, async (v, alive) => {
    v.on('views.changed', ({ views: all, activeView }) => {
      setViews(all.filter((x) => x.type === 'drd' || x.element.id === decisionId));
      setActive(activeView);
    });
    await v.importXML(xml);
    const mine = v.getViews().find((x) => x.type !== 'drd' && x.element.id === decisionId);
    if (alive() && mine) await v.open(mine);
  }, [xml, decisionId]);
  useEffect(() => {
    if (active?.type !== 'decisionTable' || !container.current) return;
    const marked = new Set(highlight || []);
    // dmn-js names each cell's rule (not its row)
    for (const cell of container.current.querySelectorAll('td[data-row-id]')) {
      cell.classList.toggle('matched-rule', marked.has(cell.dataset.rowId));
    }
  }, [active, highlight]);
  const open = (view) => viewer.current.open(view).catch(setFailed);
  const shown = error || failed;
  return html`<div class="dmn-box">
    ${shown && html`<${ErrorBox} error=${{ title: 'The decision cannot be shown', detail: shown.message }} />`}
    ${!active && !shown && html`<${Loading} />`}
    ${views.length > 1 && html`<div class="tabs" role="group" aria-label="Views">
      ${views.map((v) => html`<button aria-pressed=${v === active ? 'true' : 'false'} onClick=${() => open(v)}>
        ${LABELS[v.type] || v.type}${v.type === 'drd' ? '' : `: ${v.element.name || v.element.id}`}</button>`)}
    </div>`}
    <div class="dmn" ref=${container} data-view=${active?.type || ''}></div>
  </div>`;
}

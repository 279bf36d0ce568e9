// A DMN model in dmn-js's viewer, opened at one decision's table or literal expression (or
// its requirements diagram); the views it has can be switched.
import { html, useEffect, useRef, useState } from './preact.js';
import { dmnViewer } from './vendor.js';
import { ErrorBox, Loading } from './ui.js';

const LABELS = { drd: 'Requirements diagram', decisionTable: 'Decision table', literalExpression: 'Literal expression' };

export function DmnView({ xml, decisionId }) {
  const container = useRef();
  const viewer = useRef();
  const [views, setViews] = useState([]);
  const [active, setActive] = useState();
  const [error, setError] = useState();

  useEffect(() => {
    let alive = true;
    setError(undefined);
    dmnViewer()
      .then(async (DmnJS) => {
        if (!alive) return;
        const v = new DmnJS({ container: container.current });
        viewer.current = v;
        v.on('views.changed', ({ views: all, activeView }) => {
          setViews(all.filter((x) => x.type === 'drd' || x.element.id === decisionId));
          setActive(activeView);
        });
        await v.importXML(xml);
        const mine = v.getViews().find((x) => x.type !== 'drd' && x.element.id === decisionId);
        if (alive && mine) await v.open(mine);
      })
      .catch((e) => alive && setError(e));
    return () => {
      alive = false;
      viewer.current?.destroy();
      viewer.current = undefined;
    };
  }, [xml, decisionId]);

  const open = (view) => viewer.current.open(view).catch(setError);
  return html`<div class="dmn-box">
    ${error && html`<${ErrorBox} error=${{ title: 'The decision cannot be shown', detail: error.message }} />`}
    ${!active && !error && html`<${Loading} />`}
    ${views.length > 1 && html`<div class="tabs" role="group" aria-label="Views">
      ${views.map((v) => html`<button aria-pressed=${v === active ? 'true' : 'false'} onClick=${() => open(v)}>
        ${LABELS[v.type] || v.type}${v.type === 'drd' ? '' : `: ${v.element.name || v.element.id}`}</button>`)}
    </div>`}
    <div class="dmn" ref=${container} data-view=${active?.type || ''}></div>
  </div>`;
}

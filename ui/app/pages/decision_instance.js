// One decision instance (an evaluation of one decision): its inputs, matched rules and
// outputs, with the decision's table in dmn-js and the matched rules marked in it.
import { html } from '../preact.js';
import { get, getText } from '../api.js';
import { DmnView } from '../dmn.js';
import { ErrorBox, Loaded, Page, StateBadge, fmtDate, useApi } from '../ui.js';

export function DecisionInstance({ id }) {
  const inst = useApi(() => get(`/decision-instances/${encodeURIComponent(id)}`), [id]);
  const d = inst.data;
  const title = d ? `${d.decisionDefinitionName || d.decisionDefinitionId} · evaluation ${id}` : `Decision instance ${id}`;
  return html`<${Page} title=${title}>
    <${Loaded} state=${inst}>${(di) => html`
      <${Summary} d=${di} />
      <h2>Inputs</h2>
      <${Inputs} inputs=${di.evaluatedInputs || []} />
      <h2>Matched rules and outputs</h2>
      <${Rules} rules=${di.matchedRules || []} />
      <h2>Decision table</h2>
      <${Table} d=${di} />`}<//>
  <//>`;
}

function Summary({ d }) {
  return html`<div class="summary"><dl>
    <div><dt>State</dt><dd><${StateBadge} state=${d.state} /></dd></div>
    <div><dt>Decision</dt><dd><a href=${`/operate/decisions/${d.decisionDefinitionKey}`}>${d.decisionDefinitionId}</a> version ${d.decisionDefinitionVersion}</dd></div>
    <div><dt>Evaluated</dt><dd>${fmtDate(d.evaluationDate)}</dd></div>
    ${d.processInstanceKey && html`<div><dt>Process instance</dt><dd><a href=${`/operate/processes/${d.processInstanceKey}`}>${d.processInstanceKey}</a></dd></div>`}
    <div><dt>Result</dt><dd><code class="value">${d.result}</code></dd></div>
  </dl>
  ${d.evaluationFailure && html`<${ErrorBox} error=${{ title: 'The evaluation failed', detail: d.evaluationFailure }} />`}
  </div>`;
}

function Inputs({ inputs }) {
  if (!inputs.length) return html`<p class="muted">No inputs.</p>`;
  return html`<div class="table-wrap"><table aria-label="Inputs">
    <thead><tr><th scope="col">Input</th><th scope="col">Value</th></tr></thead>
    <tbody>${inputs.map((i) => html`<tr key=${i.inputId}>
      <td data-label="Input">${i.inputName || i.inputId}</td>
      <td data-label="Value"><code class="value">${i.inputValue}</code></td>
    </tr>`)}</tbody>
  </table></div>`;
}

function Rules({ rules }) {
  if (!rules.length) return html`<p class="muted">No rule matched.</p>`;
  return html`<div class="table-wrap"><table aria-label="Matched rules">
    <thead><tr><th scope="col">Rule</th><th scope="col">Outputs</th></tr></thead>
    <tbody>${rules.map((r) => html`<tr key=${r.ruleId}>
      <td data-label="Rule">${r.ruleIndex}: <code>${r.ruleId}</code></td>
      <td data-label="Outputs">${(r.evaluatedOutputs || []).map((o) => html`<div>
        ${o.outputName || o.outputId} = <code class="value">${o.outputValue}</code></div>`)}</td>
    </tr>`)}</tbody>
  </table></div>`;
}

function Table({ d }) {
  const xml = useApi(() => getText(`/decision-definitions/${d.decisionDefinitionKey}/xml`), [d.decisionDefinitionKey]);
  const matched = (d.matchedRules || []).map((r) => r.ruleId);
  return html`<${Loaded} state=${xml}>${(x) => html`<${DmnView} xml=${x}
    decisionId=${d.decisionDefinitionId} highlight=${matched} />`}<//>`;
}

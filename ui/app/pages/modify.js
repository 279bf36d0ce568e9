// One instance's modification (move, add and cancel tokens, with a summary of what will be
// applied) and its migration to another version of its process (elements mapped by id, each
// mapping changeable).
import { html, useRef, useState } from '../preact.js';
import { ApiError, getText, post, search } from '../api.js';
import { flowNodes, nodeLabel } from '../bpmn.js';
import { ErrorBox, Loaded, useAction, useApi } from '../ui.js';

const KINDS = {
  move: 'Move the tokens',
  add: 'Add a token',
  cancel: 'Cancel the tokens',
};

function describe(op, names) {
  const n = (id) => names[id] || id;
  if (op.kind === 'move') return `Move the tokens at ${n(op.from)} to ${n(op.to)}`;
  if (op.kind === 'add') return `Add a token at ${n(op.to)}`;
  return `Cancel the tokens at ${n(op.from)}`;
}

/** The element instances active at `elementId` in the instance (up to 100). */
async function activeAt(key, elementId) {
  const res = await search('/element-instances/search', {
    filter: { processInstanceKey: key, elementId, state: 'ACTIVE' },
    page: { limit: 100 },
  });
  if (!res.items.length) throw new ApiError(0, `No active token at ${elementId}`);
  return res.items.map((e) => e.elementInstanceKey);
}

/** The modification's body: a moved element's tokens are canceled and as many started at the
 *  target. */
async function instructions(key, ops) {
  const activateInstructions = [];
  const terminateInstructions = [];
  for (const op of ops) {
    const ended = op.kind === 'add' ? [] : await activeAt(key, op.from);
    terminateInstructions.push(...ended.map((k) => ({ elementInstanceKey: k })));
    const started = op.kind === 'move' ? ended.length : Number(op.kind === 'add');
    for (let i = 0; i < started; i++) activateInstructions.push({ elementId: op.to });
  }
  return { activateInstructions, terminateInstructions };
}

/** The modification panel of an active instance `p`; `onChanged` after it is applied. */
export function Modification({ p, onChanged }) {
  const key = p.processInstanceKey;
  const model = useApi(async () => ({
    nodes: flowNodes(await getText(`/process-definitions/${p.processDefinitionKey}/xml`)),
  }), [p.processDefinitionKey]);
  return html`<${Loaded} state=${model}>${(m) => html`<${ModificationForm} key=${key} pkey=${key}
    nodes=${m.nodes} onChanged=${onChanged} />`}<//>`;
}

function ModificationForm({ pkey, nodes, onChanged }) {
  const names = Object.fromEntries(nodes.map((n) => [n.id, n.name]));
  const [ops, setOps] = useState([]);
  const [op, setOp] = useState({ kind: 'move', from: '', to: '' });
  const [formError, setFormError] = useState();
  const [run, busy, error, clear] = useAction();
  const first = useRef();
  const set = (field) => (e) => setOp({ ...op, [field]: e.target.value });
  const add = (e) => {
    e.preventDefault();
    const needsFrom = op.kind !== 'add';
    const needsTo = op.kind !== 'cancel';
    if ((needsFrom && !op.from) || (needsTo && !op.to)) {
      setFormError({ title: 'Choose the elements', detail: needsFrom && needsTo ? 'a source and a target' : 'an element' });
      return;
    }
    setFormError(undefined);
    setOps([...ops, { kind: op.kind, from: needsFrom ? op.from : '', to: needsTo ? op.to : '' }]);
  };
  const apply = async () => {
    const ok = await run(async () => {
      await post(`/process-instances/${pkey}/modification`, await instructions(pkey, ops));
      return true;
    });
    if (ok) {
      setOps([]);
      first.current?.focus(); // the summary and its button go: the focus stays in the panel
      onChanged();
    }
  };
  const options = (placeholder) => html`<option value="">${placeholder}</option>
    ${nodes.map((n) => html`<option value=${n.id}>${nodeLabel(n)}</option>`)}`;
  return html`<div class="modification">
    <form class="filters" onSubmit=${add} aria-label="A modification">
      <label>Operation<select ref=${first} value=${op.kind} onChange=${set('kind')}>
        ${Object.entries(KINDS).map(([k, label]) => html`<option value=${k}>${label}</option>`)}
      </select></label>
      ${op.kind !== 'add' && html`<label>From element<select value=${op.from} onChange=${set('from')}>${options('— choose —')}</select></label>`}
      ${op.kind !== 'cancel' && html`<label>To element<select value=${op.to} onChange=${set('to')}>${options('— choose —')}</select></label>`}
      <button type="submit">Add to the modification</button>
    </form>
    <${ErrorBox} error=${formError} onClose=${() => setFormError(undefined)} />
    ${ops.length > 0 && html`<section class="pending" aria-label="Modification summary">
      <h3>Will be applied</h3>
      <ol>${ops.map((o, i) => html`<li>${describe(o, names)}
        <button class="link" aria-label=${`Remove: ${describe(o, names)}`}
          onClick=${() => setOps(ops.filter((_, j) => j !== i))}>Remove</button></li>`)}</ol>
      <button class="primary" disabled=${busy} onClick=${apply}>
        ${busy ? 'Applying…' : `Apply ${ops.length} ${ops.length === 1 ? 'modification' : 'modifications'}`}</button>
      <button disabled=${busy} onClick=${() => setOps([])}>Discard</button>
    </section>`}
    <${ErrorBox} error=${error} onClose=${clear} />
  </div>`;
}

/** The migration panel of an active instance `p` to another version of its process. */
export function Migration({ p, onChanged }) {
  const [target, setTarget] = useState('');
  const versions = useApi(() => search('/process-definitions/search', {
    filter: { processDefinitionId: p.processDefinitionId },
    sort: [{ field: 'version', order: 'DESC' }],
    page: { limit: 100 },
  }), [p.processDefinitionId]);
  return html`<${Loaded} state=${versions}>${(d) => {
    const others = d.items.filter((v) => String(v.processDefinitionKey) !== String(p.processDefinitionKey));
    if (!others.length) return html`<p class="muted">This process has no other version to migrate to.</p>`;
    return html`<div class="migration">
      <label>Target version<select value=${target} onChange=${(e) => setTarget(e.target.value)}>
        <option value="">— choose —</option>
        ${others.map((v) => html`<option value=${v.processDefinitionKey}>${v.version}${v.versionTag ? ` (${v.versionTag})` : ''}</option>`)}
      </select></label>
      ${target && html`<${MigrationMapping} key=${target} p=${p} target=${target}
        version=${others.find((v) => String(v.processDefinitionKey) === target)?.version} onChanged=${onChanged} />`}
    </div>`;
  }}<//>`;
}

function MigrationMapping({ p, target, version, onChanged }) {
  const models = useApi(async () => {
    const [source, dest] = await Promise.all([
      getText(`/process-definitions/${p.processDefinitionKey}/xml`),
      getText(`/process-definitions/${target}/xml`),
    ]);
    return { source: flowNodes(source), target: flowNodes(dest) };
  }, [p.processDefinitionKey, target]);
  return html`<${Loaded} state=${models}>${(m) => html`<${MappingForm} source=${m.source}
    target=${m.target} p=${p} targetKey=${target} version=${version} onChanged=${onChanged} />`}<//>`;
}

function MappingForm({ source, target, p, targetKey, version, onChanged }) {
  const ids = new Set(target.map((n) => n.id));
  const [mapping, setMapping] = useState(() => Object.fromEntries(source.map((n) => [n.id, ids.has(n.id) ? n.id : ''])));
  const [run, busy, error, clear] = useAction();
  const migrate = async (e) => {
    e.preventDefault();
    const mappingInstructions = Object.entries(mapping)
      .filter(([, to]) => to)
      .map(([sourceElementId, targetElementId]) => ({ sourceElementId, targetElementId }));
    const ok = await run(async () => {
      await post(`/process-instances/${p.processInstanceKey}/migration`, {
        targetProcessDefinitionKey: targetKey, mappingInstructions,
      });
      return true;
    });
    if (ok) onChanged();
  };
  return html`<form onSubmit=${migrate} aria-label="Element mapping">
    <table class="mapping">
      <caption>Elements of version ${p.processDefinitionVersion} → version ${version}</caption>
      <thead><tr><th scope="col">Source element</th><th scope="col">Target element</th></tr></thead>
      <tbody>${source.map((n) => html`<tr key=${n.id}>
        <td data-label="Source element">${nodeLabel(n)}</td>
        <td data-label="Target element"><select aria-label=${`Target of ${n.id}`} value=${mapping[n.id]}
          onChange=${(e) => setMapping({ ...mapping, [n.id]: e.target.value })}>
          <option value="">— not mapped —</option>
          ${target.map((t) => html`<option value=${t.id}>${nodeLabel(t)}</option>`)}
        </select></td>
      </tr>`)}</tbody>
    </table>
    <button class="primary" type="submit" disabled=${busy}>${busy ? 'Migrating…' : `Migrate to version ${version}`}</button>
    <${ErrorBox} error=${error} onClose=${clear} />
  </form>`;
}

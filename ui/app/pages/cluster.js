// Cluster: the nodes and their partitions (role and health) from the topology, and the
// answering node's key figures (`/operate/api/figures`, every 5 s) as sparklines of the last
// 5 minutes, kept in the page's memory.
import { html, useEffect, useState } from '../preact.js';
import { figures, get } from '../api.js';
import { ErrorBox, LIVE_MS, Loaded, Loading, Num, Page, useApi } from '../ui.js';
import { Sparkline } from '../sparkline.js';

/** Polls kept: 5 minutes of them, and one more for the first interval's rate. */
const KEEP = Math.round(300_000 / LIVE_MS) + 1;

export function Cluster() {
  const topo = useApi(() => get('/topology'), []);
  return html`<${Page} title="Cluster" actions=${html`<button onClick=${topo.reload}>Reload</button>`}>
    <${Loaded} state=${topo}>${(t) => html`<${Topology} t=${t} />`}<//>
    <${Figures} />
  <//>`;
}

/** A partition's badge class: green while it leads, red while unhealthy. */
const badge = (p) => `badge ${p.health === 'healthy' ? (p.role === 'leader' ? 'active' : '') : 'incident'}`;

function Topology({ t }) {
  return html`<p>${t.clusterSize} node${t.clusterSize === 1 ? '' : 's'}, ${t.partitionsCount} partition${t.partitionsCount === 1 ? '' : 's'},
      replication factor ${t.replicationFactor}; gateway version ${t.gatewayVersion}.</p>
    <table>
      <thead><tr><th scope="col">Node</th><th scope="col">Address</th><th scope="col">Version</th><th scope="col">Partitions</th></tr></thead>
      <tbody>${t.brokers.map((b) => html`<tr key=${b.nodeId}>
        <td data-label="Node">${b.nodeId}</td>
        <td data-label="Address">${b.host}:${b.port}</td>
        <td data-label="Version">${b.version}</td>
        <td data-label="Partitions">${b.partitions.map((p) => html`<span class=${badge(p)}
          title=${`${p.role}, ${p.health}`}>${p.partitionId} ${p.role}</span> `)}</td>
      </tr>`)}</tbody>
    </table>`;
}

/** The figures of the last KEEP polls (oldest first) and the last poll's error: the page's
 *  live poll (`useApi`), each answer kept. */
function useFigures() {
  const f = useApi(figures, [], { every: LIVE_MS });
  const [samples, setSamples] = useState([]);
  useEffect(() => {
    if (f.data) setSamples((s) => [...s.slice(1 - KEEP), f.data]);
  }, [f.data]);
  return { samples, error: f.error };
}

/** The sum over the node's partitions of `pick(partition)` (null where it has none). */
function total(f, pick) {
  return f.partitions.reduce((sum, p) => sum + (pick(p) ?? 0), 0);
}

/** Per interval between polls: a counter's increase per second; null across a restart (the
 *  counter went back) or an answer of another node. */
function rates(samples, pick) {
  return samples.slice(1).map((b, i) => {
    const a = samples[i];
    const seconds = (b.time - a.time) / 1000;
    const delta = total(b, pick) - total(a, pick);
    return a.nodeId === b.nodeId && seconds > 0 && delta >= 0 ? delta / seconds : null;
  });
}

/** Per interval: the mean time from processing to export of the records exported in it. */
function meanLag(samples) {
  return samples.slice(1).map((b, i) => {
    const a = samples[i];
    const count = total(b, (p) => p.export?.lagCount) - total(a, (p) => p.export?.lagCount);
    const sum = total(b, (p) => p.export?.lagSecondsSum) - total(a, (p) => p.export?.lagSecondsSum);
    return a.nodeId === b.nodeId && count > 0 ? sum / count : null;
  });
}

const perSecond = (v) => `${v >= 100 ? Math.round(v).toLocaleString() : v.toFixed(1)}/s`;
const seconds = (v) => (v >= 10 ? `${v.toFixed(0)} s` : v >= 0.1 ? `${v.toFixed(2)} s` : `${(v * 1000).toFixed(0)} ms`);
const count = (v) => Math.round(v).toLocaleString();
const mib = (bytes) => (bytes < 1048576 ? `${Math.round(bytes / 1024)} KiB`
  : `${(bytes / 1048576).toFixed(bytes < 10485760 ? 1 : 0)} MiB`);

function Figures() {
  const { samples, error } = useFigures();
  const last = samples[samples.length - 1];
  if (!last) {
    return html`<h2>Figures</h2>${error ? html`<${ErrorBox} error=${error} />` : html`<${Loading} />`}`;
  }
  const exporting = last.partitions.some((p) => p.export);
  const none = !last.partitions.length;
  const { memory } = last;
  return html`<h2>Figures of node ${last.nodeId}</h2>
    <p class="muted">${`Node ${last.nodeId} answered: its own partitions' figures, polled every ${LIVE_MS / 1000} s and kept here for 5 minutes. `}
      In a cluster, each node's figures are on its own REST address (and in its <code>/metrics</code> on the management port).</p>
    ${error && html`<${ErrorBox} error=${error} />`}
    <div class="sparks">
      <${Sparkline} label="Instances started per second" format=${perSecond}
        values=${rates(samples, (p) => p.processInstances.activated)} />
      <${Sparkline} label="Instances completed per second" format=${perSecond}
        values=${rates(samples, (p) => p.processInstances.completed)} />
      <${Sparkline} label="Commands rejected by backpressure per second" format=${perSecond}
        values=${rates(samples, (p) => p.backpressure.rejected)}
        note=${`in flight ${count(total(last, (p) => p.backpressure.inFlight))} of a limit of ${count(total(last, (p) => p.backpressure.limit))}`} />
      ${exporting ? html`
        <${Sparkline} label="Records not yet exported" format=${count}
          values=${samples.map((f) => total(f, (p) => p.export?.recordsBehind))} />
        <${Sparkline} label="Export lag (mean of each poll)" format=${seconds} values=${meanLag(samples)} />`
    : html`<p class="muted">${none ? 'This node holds no partition (a standalone gateway): nothing is exported here.' : 'History is off: nothing is exported.'}</p>`}
      <${Sparkline} label="Resident memory" format=${mib}
        values=${samples.map((f) => f.memory.residentBytes)}
        note=${`budget ${mib(memory.budgetBytes)}; its counted parts use ${mib(memory.usedBytes)}`} />
    </div>
    ${!none && html`<${PartitionFigures} f=${last} />`}
    <${MemoryParts} memory=${memory} />`;
}

function PartitionFigures({ f }) {
  return html`<table>
    <caption class="visually-hidden">Node ${f.nodeId}'s partitions, counted since it started</caption>
    <thead><tr><th scope="col">Partition</th><th scope="col">Role</th><th scope="col">Instances started</th>
      <th scope="col">Completed</th><th scope="col">Canceled</th><th scope="col">Commands received</th>
      <th scope="col">Rejected</th><th scope="col">In flight / limit</th><th scope="col">Queued</th>
      <th scope="col">Not yet exported</th></tr></thead>
    <tbody>${f.partitions.map((p) => html`<tr key=${p.partitionId}>
      <td data-label="Partition">${p.partitionId}</td>
      <td data-label="Role"><span class=${badge(p)}>${p.role}, ${p.health}</span></td>
      <td data-label="Instances started"><${Num} value=${p.processInstances.activated} /></td>
      <td data-label="Completed"><${Num} value=${p.processInstances.completed} /></td>
      <td data-label="Canceled"><${Num} value=${p.processInstances.terminated} /></td>
      <td data-label="Commands received"><${Num} value=${p.backpressure.received} /></td>
      <td data-label="Rejected"><${Num} value=${p.backpressure.rejected} /></td>
      <td data-label="In flight / limit"><${Num} value=${p.backpressure.inFlight} /> / <${Num} value=${p.backpressure.limit} /></td>
      <td data-label="Queued"><${Num} value=${p.backpressure.queued} /></td>
      <td data-label="Not yet exported">${p.export ? html`<${Num} value=${p.export.recordsBehind} />` : 'history off'}</td>
    </tr>`)}</tbody>
  </table>`;
}

function MemoryParts({ memory }) {
  return html`<details class="memory-parts">
    <summary>Memory budget by part</summary>
    <table>
      <thead><tr><th scope="col">Part</th><th scope="col">Budget</th><th scope="col">Used now</th></tr></thead>
      <tbody>${memory.parts.map((p) => html`<tr key=${p.part}>
        <td data-label="Part">${p.part.replaceAll('_', ' ')}</td>
        <td data-label="Budget">${mib(p.budgetBytes)}</td>
        <td data-label="Used now">${p.usedBytes == null ? html`<span class="muted">not counted</span>` : mib(p.usedBytes)}</td>
      </tr>`)}</tbody>
    </table>
  </details>`;
}

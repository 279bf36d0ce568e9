// Cluster: the nodes and their partitions (role and health) from the topology.
import { html } from '../preact.js';
import { get } from '../api.js';
import { Loaded, Page, useApi } from '../ui.js';

export function Cluster() {
  const topo = useApi(() => get('/topology'), []);
  return html`<${Page} title="Cluster" actions=${html`<button onClick=${topo.reload}>Reload</button>`}>
    <${Loaded} state=${topo}>${(t) => html`
      <p>${t.clusterSize} node${t.clusterSize === 1 ? '' : 's'}, ${t.partitionsCount} partition${t.partitionsCount === 1 ? '' : 's'},
        replication factor ${t.replicationFactor}; gateway version ${t.gatewayVersion}.</p>
      <table>
        <thead><tr><th scope="col">Node</th><th scope="col">Address</th><th scope="col">Version</th><th scope="col">Partitions</th></tr></thead>
        <tbody>${t.brokers.map((b) => html`<tr key=${b.nodeId}>
          <td data-label="Node">${b.nodeId}</td>
          <td data-label="Address">${b.host}:${b.port}</td>
          <td data-label="Version">${b.version}</td>
          <td data-label="Partitions">${b.partitions.map((p) => html`<span class=${`badge ${p.health === 'healthy' ? (p.role === 'leader' ? 'active' : '') : 'incident'}`}
            title=${`${p.role}, ${p.health}`}>${p.partitionId} ${p.role}</span> `)}</td>
        </tr>`)}</tbody>
      </table>`}<//>
  <//>`;
}

// What the UI reads from a BPMN model's XML itself: its flow nodes (the elements a token can
// be at), for the instance's modification and migration.

const FLOW_NODE = /^(\w*Task|task|\w*Event|\w*Gateway|subProcess|adHocSubProcess|callActivity|transaction)$/;
const BPMN_NS = 'http://www.omg.org/spec/BPMN/20100524/MODEL';

/** The flow nodes of a model, in document order: [{id, name}] (`name` is the id when the
 *  element has none). */
export function flowNodes(xml) {
  const doc = new DOMParser().parseFromString(xml, 'application/xml');
  const nodes = [];
  for (const el of doc.getElementsByTagNameNS(BPMN_NS, '*')) {
    const id = el.getAttribute('id');
    if (id && FLOW_NODE.test(el.localName)) nodes.push({ id, name: el.getAttribute('name') || id });
  }
  return nodes;
}

/** A flow node's label: its name, with its id when they differ. */
export function nodeLabel(n) {
  return n.name === n.id ? n.id : `${n.name} (${n.id})`;
}

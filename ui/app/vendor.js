// The bpmn.io bundles (pinned npm dists embedded by zest-ui's build), loaded by a <script> tag
// the first time a page needs one, so list pages do not fetch them; `useViewer` holds one of
// their viewers in a component.
import { useEffect, useRef, useState } from './preact.js';

const base = new URL('../', import.meta.url).pathname; // /ui/<build>/
const loading = new Map();

function script(path, global) {
  if (!loading.has(path)) {
    loading.set(path, new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = base + path;
      s.onload = () => resolve(window[global]);
      s.onerror = () => {
        loading.delete(path);
        s.remove();
        reject(new Error(`${path} could not be loaded`));
      };
      document.head.append(s);
    }));
  }
  return loading.get(path);
}

function css(path) {
  const href = base + path;
  if (document.querySelector(`link[href="${href}"]`)) return;
  const l = document.createElement('link');
  l.rel = 'stylesheet';
  l.href = href;
  document.head.append(l);
}

/** bpmn-js's navigated viewer (pan and zoom; the bpmn.io watermark stays, as its licence asks). */
export function bpmnViewer() {
  css('vendor/bpmn-js/dist/assets/diagram-js.css');
  css('vendor/bpmn-js/dist/assets/bpmn-js.css');
  css('vendor/bpmn-js/dist/assets/bpmn-font/css/bpmn-embedded.css');
  return script('vendor/bpmn-js/dist/bpmn-navigated-viewer.production.min.js', 'BpmnJS');
}

// dmn-js's production bundle carries Inferno's development build, which reports itself with a
// console error when its script runs (bpmn-io/dmn-js#965, open): that one message, and only
// while the bundle loads, is dropped; every other error goes through.
const INFERNO = "It looks like you're using a minified copy of the development build of Inferno";

/** dmn-js's viewer (decision requirements, tables, literal expressions). */
export function dmnViewer() {
  for (const f of ['diagram-js.css', 'dmn-js-shared.css', 'dmn-js-drd.css',
    'dmn-js-decision-table.css', 'dmn-js-literal-expression.css', 'dmn-font/css/dmn-embedded.css']) {
    css(`vendor/dmn-js/dist/assets/${f}`);
  }
  const path = 'vendor/dmn-js/dist/dmn-viewer.production.min.js';
  if (loading.has(path)) return loading.get(path);
  const { error } = console;
  console.error = (...args) => {
    if (!(typeof args[0] === 'string' && args[0].startsWith(INFERNO))) error.apply(console, args);
  };
  const restore = () => {
    console.error = error;
  };
  const loaded = script(path, 'DmnJS');
  loaded.then(restore, restore);
  return loaded;
}

/** form-js's viewer (user task and start forms). */
export function formViewer() {
  css('vendor/form-js/dist/assets/form-js.css');
  css('vendor/form-js/dist/assets/flatpickr/light.css');
  return script('vendor/form-js/dist/form-viewer.umd.js', 'FormViewer');
}

/**
 * A bpmn.io viewer in a component: `load()` answers its constructor, which is given the
 * container; `setup(viewer, alive)` imports what it shows (`alive()` says whether the component
 * still wants it). The viewer is destroyed when `deps` change or the component goes:
 * {container (the ref for its element), viewer (a ref), ready, error}.
 */
export function useViewer(load, setup, deps) {
  const container = useRef();
  const viewer = useRef();
  const [ready, setReady] = useState(false);
  const [error, setError] = useState();
  useEffect(() => {
    let alive = true;
    setReady(false);
    setError(undefined);
    load()
      .then(async (Viewer) => {
        if (!alive) return;
        viewer.current = new Viewer({ container: container.current });
        await setup(viewer.current, () => alive);
        if (alive) setReady(true);
      })
      .catch((e) => alive && setError(e));
    return () => {
      alive = false;
      viewer.current?.destroy();
      viewer.current = undefined;
    };
  }, deps);
  return { container, viewer, ready, error };
}

// The bpmn.io bundles (pinned npm dists embedded by zest-ui's build), loaded by a <script> tag
// the first time a page needs one, so list pages do not fetch them.
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

/** dmn-js's viewer (decision requirements, tables, literal expressions). */
export function dmnViewer() {
  for (const f of ['diagram-js.css', 'dmn-js-shared.css', 'dmn-js-drd.css',
    'dmn-js-decision-table.css', 'dmn-js-literal-expression.css', 'dmn-font/css/dmn-embedded.css']) {
    css(`vendor/dmn-js/dist/assets/${f}`);
  }
  return script('vendor/dmn-js/dist/dmn-viewer.production.min.js', 'DmnJS');
}

/** form-js's viewer (user task and start forms). */
export function formViewer() {
  css('vendor/form-js/dist/assets/form-js.css');
  css('vendor/form-js/dist/assets/flatpickr/light.css');
  return script('vendor/form-js/dist/form-viewer.umd.js', 'FormViewer');
}

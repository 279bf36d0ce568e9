// A form (form-js's viewer) over `data`; `onSubmit(data)` is called with the form's values
// once they pass the form's own validation.
import { html, useEffect, useRef, useState } from './preact.js';
import { formViewer } from './vendor.js';
import { ErrorBox, Loading } from './ui.js';

export function FormView({ schema, data, onSubmit, submitLabel = 'Complete', busy }) {
  const container = useRef();
  const form = useRef();
  const [ready, setReady] = useState(false);
  const [error, setError] = useState();

  useEffect(() => {
    let alive = true;
    setReady(false);
    formViewer()
      .then(async (FormViewer) => {
        if (!alive) return;
        const f = new FormViewer.Form({ container: container.current });
        form.current = f;
        await f.importSchema(typeof schema === 'string' ? JSON.parse(schema) : schema, data);
        if (alive) setReady(true);
      })
      .catch((e) => alive && setError(e));
    return () => {
      alive = false;
      form.current?.destroy();
      form.current = undefined;
    };
  }, [schema, JSON.stringify(data)]);

  const submit = () => {
    const { data: values, errors } = form.current.submit();
    if (!Object.keys(errors).length) onSubmit(values);
  };
  return html`<div class="form-box">
    ${error && html`<${ErrorBox} error=${{ title: 'The form cannot be shown', detail: error.message }} />`}
    ${!ready && !error && html`<${Loading} />`}
    <div class="form" ref=${container}></div>
    ${ready && html`<button class="primary" disabled=${busy} onClick=${submit}>${submitLabel}</button>`}
  </div>`;
}

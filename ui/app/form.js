// A form (form-js's viewer) over `data`; `onSubmit(data)` is called with the form's values
// once they pass the form's own validation.
import { html } from './preact.js';
import { formViewer, useViewer } from './vendor.js';
import { ErrorBox, Loading } from './ui.js';

export function FormView({ schema, data, onSubmit, submitLabel = 'Complete', busy }) {
  const { container, viewer: form, ready, error } = useViewer(
    () => formViewer().then((FormViewer) => FormViewer.Form),
    (f) => f.importSchema(typeof schema === 'string' ? JSON.parse(schema) : schema, data),
    [schema, JSON.stringify(data)],
  );

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

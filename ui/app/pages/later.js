import { html } from '../preact.js';
import { Page } from '../ui.js';

/** A page of issue 61 that a later session builds: says what it will show. */
export function Later({ title, what }) {
  return html`<${Page} title=${title}>
    <p>Not built yet. This page will show ${what}, through the REST API v2.</p>
  <//>`;
}

// A small inline SVG line chart of a series (no chart library): the points as a polyline
// scaled to the series' own maximum, gaps (null) breaking the line; a figure beside it says the
// latest value, and the chart's accessible name says the latest and highest.
import { html } from './preact.js';

const W = 240;
const H = 48;

/** The polylines' points ([x, y]) of `values` (null breaks the line), `max` at the top. */
function lines(values, max) {
  const step = values.length > 1 ? W / (values.length - 1) : 0;
  const out = [];
  let current = [];
  values.forEach((v, i) => {
    if (v == null) {
      if (current.length) out.push(current);
      current = [];
      return;
    }
    const y = H - 2 - (max > 0 ? (v / max) * (H - 4) : 0);
    current.push([(i * step).toFixed(1), y.toFixed(1)]);
  });
  if (current.length) out.push(current);
  return out;
}

/** `label`: what the series is; `values`: oldest first; `format(v)`: a value as text;
 *  `note`: a line under the figure (a limit, a budget). */
export function Sparkline({ label, values, format, note }) {
  const known = values.filter((v) => v != null);
  const latest = known.length ? known[known.length - 1] : null;
  const max = known.length ? Math.max(...known) : 0;
  const text = latest == null ? 'collecting' : format(latest);
  const name = latest == null
    ? `${label}: collecting`
    : `${label}: now ${format(latest)}, highest ${format(max)} over the last ${known.length} polls`;
  return html`<figure class="spark">
    <figcaption>${label}</figcaption>
    <div class="spark-row">
      <svg viewBox=${`0 0 ${W} ${H}`} width=${W} height=${H} role="img" aria-label=${name}
        preserveAspectRatio="none">
        <line x1="0" y1=${H - 1} x2=${W} y2=${H - 1} class="spark-base" />
        ${lines(values, max).map((pts) => (pts.length === 1
    ? html`<circle cx=${pts[0][0]} cy=${pts[0][1]} r="2" class="spark-dot" />`
    : html`<polyline points=${pts.map((p) => p.join(',')).join(' ')} class="spark-line" />`))}
      </svg>
      <span class="spark-now num" data-value=${latest ?? ''}>${text}</span>
    </div>
    ${note && html`<p class="muted spark-note">${note}</p>`}
  </figure>`;
}

// Preact with htm's tagged templates (htm/preact/standalone, pinned and embedded by zest-ui's
// build): the one place that names the vendored file.
export {
  html, render, useState, useEffect, useRef, useMemo, useCallback,
} from '../vendor/htm/preact/standalone.module.js';

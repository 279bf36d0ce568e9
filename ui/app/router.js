// History API routing under /operate and /tasklist: links are real <a href> elements (so the
// keyboard, middle-click and "open in new tab" work); a click on one is handled here without a
// reload, and the server answers the app for any such path, so reloads and deep links work.
import { useEffect, useState } from './preact.js';

const listeners = new Set();

function here() {
  return location.pathname + location.search;
}

export function navigate(url, { replace = false } = {}) {
  if (url === here()) return;
  history[replace ? 'replaceState' : 'pushState'](null, '', url);
  for (const f of listeners) f();
  if (!replace) window.scrollTo(0, 0);
}

/** The current path and query, re-rendering the caller when they change. */
export function useLocation() {
  const [loc, setLoc] = useState(here());
  useEffect(() => {
    const f = () => setLoc(here());
    listeners.add(f);
    addEventListener('popstate', f);
    return () => {
      listeners.delete(f);
      removeEventListener('popstate', f);
    };
  }, []);
  return loc;
}

/** The query's parameters as a plain object. */
export function useQuery() {
  useLocation();
  return Object.fromEntries(new URLSearchParams(location.search));
}

/** A URL of `path` with the non-empty parameters of `params`. */
export function withQuery(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, v);
  }
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** Matches `path` against routes like '/operate/processes/:key': [handler, params] or null. */
export function match(routes, path) {
  const parts = path.replace(/\/+$/, '').split('/');
  for (const [pattern, handler] of routes) {
    const want = pattern.split('/');
    if (want.length !== parts.length) continue;
    const params = {};
    const ok = want.every((w, i) => {
      if (w.startsWith(':')) {
        params[w.slice(1)] = decodeURIComponent(parts[i]);
        return parts[i] !== '';
      }
      return w === parts[i];
    });
    if (ok) return [handler, params];
  }
  return null;
}

document.addEventListener('click', (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) {
    return;
  }
  const a = e.target.closest?.('a[href]');
  if (!a || a.target || a.hasAttribute('download') || a.origin !== location.origin) return;
  if (!/^\/(operate|tasklist)(\/|$)/.test(a.pathname)) return;
  if (a.hash && a.pathname === location.pathname && a.search === location.search) return;
  e.preventDefault();
  navigate(a.pathname + a.search);
});

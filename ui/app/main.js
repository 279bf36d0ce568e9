// The app: the shell (header, navigation, the page's errors) and the routes.
import { html, render, useEffect, useState } from './preact.js';
import { match, useLocation } from './router.js';
import { ErrorBox, Page } from './ui.js';
import { Dashboard } from './pages/dashboard.js';
import { Definitions } from './pages/definitions.js';
import { Definition } from './pages/definition.js';
import { Instances } from './pages/instances.js';
import { Instance } from './pages/instance.js';
import { Incidents } from './pages/incidents.js';
import { Cluster } from './pages/cluster.js';
import { Decision, Decisions } from './pages/decisions.js';
import { Task, Tasks } from './pages/tasks.js';
import { BatchOperations } from './pages/batch_operations.js';
import { DecisionInstance } from './pages/decision_instance.js';
import { Login } from './pages/login.js';
import { logout, me, whenUnauthorized } from './api.js';

// Camunda's Operate paths where they exist: an instance is /operate/processes/<key>.
const ROUTES = [
  ['/operate', Dashboard],
  ['/operate/definitions', Definitions],
  ['/operate/definitions/:id', Definition],
  ['/operate/processes', Instances],
  ['/operate/processes/:id', Instance],
  ['/operate/incidents', Incidents],
  ['/operate/decisions', Decisions],
  ['/operate/decisions/:id', Decision],
  ['/operate/decision-instances/:id', DecisionInstance],
  ['/operate/batch-operations', BatchOperations],
  ['/operate/cluster', Cluster],
  ['/tasklist', Tasks],
  ['/tasklist/:id', Task],
];

const NAV = [
  ['/operate', 'Dashboard'],
  ['/operate/definitions', 'Processes'],
  ['/operate/processes', 'Instances'],
  ['/operate/incidents', 'Incidents'],
  ['/operate/decisions', 'Decisions'],
  ['/operate/batch-operations', 'Batches'],
  ['/tasklist', 'Tasks'],
  ['/operate/cluster', 'Cluster'],
];

function current(path) {
  // the longest navigation entry the path is in (Dashboard only for /operate itself)
  let best = null;
  for (const [href] of NAV) {
    const inside = path === href || (href !== '/operate' && path.startsWith(`${href}/`));
    if (inside && (!best || href.length > best.length)) best = href;
  }
  return best;
}

/** Who is logged in, and a way out (only with authentication on). */
function Account({ user, onLoggedOut }) {
  if (!user?.canLogout) return null;
  const out = async () => {
    await logout().catch(() => {});
    onLoggedOut();
  };
  return html`<div class="account">
    <span class="muted">${user.displayName || user.username}</span>
    <button class="link" onClick=${out}>Log out</button>
  </div>`;
}

function Header({ path, user, onLoggedOut }) {
  const [open, setOpen] = useState(false);
  useEffect(() => setOpen(false), [path]);
  const here = current(path);
  return html`<header class="top">
    <a class="brand" href="/operate"><img src=${new URL('../favicon.svg', import.meta.url).pathname} alt="" width="24" height="24" />Zest</a>
    <button class="menu" aria-expanded=${open ? 'true' : 'false'} aria-controls="nav"
      onClick=${() => setOpen(!open)}>Menu</button>
    <nav id="nav" class=${open ? 'open' : ''} aria-label="Main">
      <ul>
        ${NAV.map(([href, label]) => html`<li>
          <a href=${href} aria-current=${here === href ? 'page' : undefined}>${label}</a>
        </li>`)}
      </ul>
    </nav>
    <${Account} user=${user} onLoggedOut=${onLoggedOut} />
  </header>`;
}

function NotFound({ path }) {
  return html`<${Page} title="Not found">
    <p>Nothing is at <code>${path}</code>. <a href="/operate">Go to the dashboard</a>.</p>
  <//>`;
}

/** Errors no page caught (a failed script, a rejected promise): shown, never swallowed. */
function Uncaught() {
  const [errors, setErrors] = useState([]);
  useEffect(() => {
    const add = (e) => setErrors((list) => [...list.slice(-2), e]);
    const onError = (e) => add({ title: 'Unexpected error', detail: e.message || String(e.error) });
    const onRejection = (e) => add({
      title: e.reason?.title || 'Unexpected error',
      detail: e.reason?.detail ?? e.reason?.message ?? String(e.reason),
      status: e.reason?.status,
    });
    addEventListener('error', onError);
    addEventListener('unhandledrejection', onRejection);
    return () => {
      removeEventListener('error', onError);
      removeEventListener('unhandledrejection', onRejection);
    };
  }, []);
  return errors.map((e, i) => html`<${ErrorBox} error=${e}
    onClose=${() => setErrors(errors.filter((_, j) => j !== i))} />`);
}

/** Who uses the UI: undefined while asked, null when the node wants a login, else
 *  `/v2/authentication/me`'s answer (no one logged in with authentication off). */
function useUser() {
  const [user, setUser] = useState();
  const ask = () => me().then(setUser, (e) => setUser(e.status === 401 ? null : {}));
  useEffect(() => {
    whenUnauthorized(() => setUser(null));
    ask();
  }, []);
  return [user, ask, () => setUser(null)];
}

function App() {
  const loc = useLocation();
  const [user, ask, loggedOut] = useUser();
  const path = loc.split('?')[0];
  const found = match(ROUTES, path);
  const [View, params] = found || [NotFound, { path }];
  if (user === undefined) return null;
  if (user === null) {
    return html`<main id="main" tabindex="-1"><${Login} onLoggedIn=${ask} /></main>`;
  }
  return html`
    <a class="skip" href="#main">Skip to content</a>
    <${Header} path=${path} user=${user} onLoggedOut=${loggedOut} />
    <main id="main" tabindex="-1">
      <${Uncaught} />
      <${View} key=${path} ...${params} />
    </main>`;
}

render(html`<${App} />`, document.getElementById('app'));

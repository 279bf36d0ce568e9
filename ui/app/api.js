// The REST API v2 client: the UI's only data source (with the node's figures for the cluster
// page, `/operate/api/figures`). Every answer that is not 2xx becomes an ApiError carrying the
// RFC 9457 problem's title and detail, so pages show what went wrong.

export class ApiError extends Error {
  constructor(status, title, detail) {
    super(detail ? `${title}: ${detail}` : title);
    this.status = status;
    this.title = title;
    this.detail = detail;
  }
}

/** Called when an answer says the session is gone (401): the app shows its login page. */
let onUnauthorized = () => {};
export function whenUnauthorized(f) {
  onUnauthorized = f;
}

export async function request(method, path, body, { as = 'json', base = '/v2' } = {}) {
  // X-Requested-With: the node takes changes with a session cookie only with it (a form of
  // another site cannot send it), and answers 401 without the browser's own login prompt
  const init = {
    method,
    headers: { Accept: as === 'json' ? 'application/json' : '*/*', 'X-Requested-With': 'zest-ui' },
  };
  if (body instanceof FormData || body instanceof URLSearchParams) {
    init.body = body;
  } else if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(`${base}${path}`, init);
  } catch (e) {
    throw new ApiError(0, 'The server cannot be reached', e.message);
  }
  const text = await res.text();
  if (res.ok && as === 'text') return text;
  let json = null;
  if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      if (res.ok) throw new ApiError(res.status, 'The answer is not JSON', text.slice(0, 200));
    }
  }
  if (res.status === 401) onUnauthorized();
  if (!res.ok) {
    const title = json?.title || `${res.status} ${res.statusText}`;
    throw new ApiError(res.status, title, json?.detail || (json ? '' : text.slice(0, 200)));
  }
  return json;
}

export const get = (path) => request('GET', path);
export const getText = (path) => request('GET', path, undefined, { as: 'text' });
/** The answering node's key figures (not the REST API v2: the UI's own, `figures.rs`). */
export const figures = () => request('GET', '/operate/api/figures', undefined, { base: '' });
export const post = (path, body) => request('POST', path, body ?? {});
export const patch = (path, body) => request('PATCH', path, body);
export const put = (path, body) => request('PUT', path, body);

/** One page of a search: `page` is {limit, after?}; the answer's items and page. */
export function search(path, { filter, sort, page }) {
  const body = { page };
  if (filter && Object.keys(filter).length) body.filter = filter;
  if (sort?.length) body.sort = sort;
  return post(path, body);
}

/** Deploys files (`.bpmn`, `.dmn`, `.form`) as one deployment. */
export function deploy(files) {
  const form = new FormData();
  for (const f of files) form.append('resources', f, f.name);
  return request('POST', '/deployments', form);
}

/** The totalItems of a search, reading one row. */
export async function count(path, filter) {
  const res = await search(path, { filter, page: { limit: 1 } });
  return res.page.totalItems;
}

/** Who is logged in (`GET /v2/authentication/me`); an ApiError with status 401 when no one. */
export const me = () => get('/authentication/me');

/** Logs in with a user's name and password: the node answers with a session cookie. */
export async function login(username, password) {
  const body = new URLSearchParams({ username, password });
  return request('POST', '/login', body, { base: '' });
}

export const logout = () => request('POST', '/logout', undefined, { base: '' });

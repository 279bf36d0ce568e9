// The login page, shown in place of any page while the node wants credentials (--auth basic):
// the user's name and password go to POST /login once, and the session cookie it sets carries
// the UI's requests after that. Wrong credentials, or too many tries, are said on the page.
import { html, useState } from '../preact.js';
import { login } from '../api.js';
import { ErrorBox } from '../ui.js';

export function Login({ onLoggedIn }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState();
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await login(username, password);
      onLoggedIn();
    } catch (err) {
      setError(err.status === 401
        ? { title: 'Wrong username or password', detail: 'Check both and try again.' }
        : err);
    } finally {
      setBusy(false);
    }
  };
  return html`<section class="page login">
    <h1>Log in to Zest</h1>
    <form onSubmit=${submit} aria-label="Log in">
      <${ErrorBox} error=${error} />
      <label>Username
        <input name="username" autocomplete="username" required value=${username}
          onInput=${(e) => setUsername(e.target.value)} />
      </label>
      <label>Password
        <input name="password" type="password" autocomplete="current-password" required
          value=${password} onInput=${(e) => setPassword(e.target.value)} />
      </label>
      <button type="submit" disabled=${busy}>${busy ? 'Logging in…' : 'Log in'}</button>
    </form>
  </section>`;
}

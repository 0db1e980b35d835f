// Static assets of the server-rendered pages, kept as strings so the service ships as plain TypeScript.
// Served as files (not inline) so the Content-Security-Policy can forbid inline script and style.

export const APP_CSS = `
:root { --fg: #1d2330; --muted: #5b6475; --line: #dfe3ea; --bg: #f6f7f9; --accent: #2456d8; --danger: #b42318; --ok: #067647; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
.bar { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; justify-content: space-between; padding: 12px 24px; background: #fff; border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; font-size: 18px; color: var(--fg); text-decoration: none; letter-spacing: .02em; }
nav { display: flex; flex-wrap: wrap; gap: 4px 16px; align-items: center; }
nav a { color: var(--accent); text-decoration: none; }
.who { color: var(--muted); }
main { max-width: 980px; margin: 32px auto; padding: 0 24px; }
h1 { font-size: 24px; margin: 0 0 8px; }
p.lead { color: var(--muted); margin: 0 0 24px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 20px 24px; margin-bottom: 24px; }
.card h2 { font-size: 16px; margin: 0 0 12px; }
form.inline { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-end; }
label { display: flex; flex-direction: column; gap: 4px; font-size: 13px; color: var(--muted); }
input, select { font: inherit; height: 38px; padding: 0 10px; border: 1px solid var(--line); border-radius: 6px; background: #fff; color: var(--fg); min-width: 160px; }
button { font: inherit; padding: 8px 14px; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
button.danger { background: #fff; color: var(--danger); border-color: #f0c4c0; padding: 4px 10px; }
button.link { background: none; border: none; color: var(--accent); padding: 0; }
form.inline button { height: 38px; padding-top: 0; padding-bottom: 0; }
button:disabled { opacity: .5; cursor: default; }
#tokens { overflow-x: auto; }
table { width: 100%; border-collapse: collapse; font-size: 14px; }
th, td { text-align: left; padding: 9px 8px; border-bottom: 1px solid var(--line); vertical-align: middle; }
th { color: var(--muted); font-weight: 600; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 13px; }
.pill { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; border: 1px solid var(--line); }
.pill.active { color: var(--ok); border-color: #abefc6; background: #ecfdf3; }
.pill.revoked, .pill.expired { color: var(--muted); background: var(--bg); }
.secret { border-color: #abefc6; background: #f6fef9; }
.secret .row { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; }
.secret code { flex: 1 1 20em; padding: 10px 12px; background: #fff; border: 1px solid var(--line); border-radius: 6px; overflow-wrap: anywhere; }
.error { color: var(--danger); margin: 8px 0 0; min-height: 1.5em; }
.ok-note { color: var(--ok); margin: 8px 0 0; }
.empty { color: var(--muted); padding: 16px 8px; }
.login { max-width: 380px; margin: 72px auto; }
.login form { display: flex; flex-direction: column; gap: 14px; }
.login input { width: 100%; }
.cli-login { max-width: 520px; }
.cli-login .row { display: flex; gap: 12px; }
.cli-login .scope, .cli-login .note { margin: 0; color: var(--muted); font-size: 14px; }
[hidden] { display: none !important; }
`;

export const PAGES_JS = `
(function () {
  var meta = document.querySelector('meta[name=csrf-token]');
  var csrf = meta ? meta.getAttribute('content') : '';
  function post(url, body) {
    return fetch(url, {
      method: 'POST', credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
      body: body === undefined ? undefined : JSON.stringify(body)
    });
  }
  var logout = document.getElementById('logout');
  if (logout) logout.addEventListener('click', function () {
    post('/auth/logout').then(function () { location.href = '/login'; });
  });

  // /cli/login: approve mints the token and sends the browser to the CLI's loopback listener with a
  // one-time code (the CLI trades it for the token with its PKCE verifier); cancel tells the listener
  // no, so the command stops waiting.
  var cli = document.getElementById('cli-approve');
  if (cli) {
    var port = cli.getAttribute('data-port');
    var state = cli.getAttribute('data-state');
    var challenge = cli.getAttribute('data-challenge');
    var cliError = document.getElementById('cli-error');
    var deny = document.getElementById('deny');
    if (deny) deny.addEventListener('click', function () {
      location.href = 'http://127.0.0.1:' + port + '/callback?error=access_denied&state=' + encodeURIComponent(state);
    });
    cli.addEventListener('submit', function (e) {
      e.preventDefault();
      cliError.textContent = '';
      var body = {
        port: Number(port), state: state, name: cli.elements.name.value,
        code_challenge: challenge, code_challenge_method: 'S256'
      };
      var days = cli.elements.expires_in_days.value;
      body.expires_in_days = days ? Number(days) : null;
      var approve = document.getElementById('approve');
      approve.disabled = true;
      post('/cli/login', body).then(function (r) {
        return r.json().then(function (b) { return { ok: r.ok, body: b }; });
      }).then(function (res) {
        if (!res.ok) { approve.disabled = false; cliError.textContent = res.body.detail || 'Could not create the token.'; return; }
        location.href = res.body.redirect;
      }).catch(function () { approve.disabled = false; cliError.textContent = 'Network error; try again.'; });
    });
    return;
  }

  var form = document.getElementById('mint');
  if (!form) return;
  var error = document.getElementById('mint-error');
  var panel = document.getElementById('secret-panel');
  var secret = document.getElementById('secret');
  var copied = document.getElementById('copied');
  var tableHolder = document.getElementById('tokens');
  function refresh() {
    return fetch('/settings/tokens/table', { credentials: 'same-origin' })
      .then(function (r) { return r.text(); })
      .then(function (t) { tableHolder.innerHTML = t; });
  }
  form.addEventListener('submit', function (e) {
    e.preventDefault();
    error.textContent = '';
    var data = { name: form.elements.name.value, scope: form.elements.scope.value };
    var days = form.elements.expires_in_days.value;
    if (days) data.expires_in_days = Number(days);
    var button = form.querySelector('button');
    button.disabled = true;
    post('/api/v1/tokens', data).then(function (r) {
      return r.json().then(function (body) { return { ok: r.ok, body: body }; });
    }).then(function (res) {
      button.disabled = false;
      if (!res.ok) { error.textContent = res.body.detail || 'Could not create the token.'; return; }
      secret.textContent = res.body.token;
      copied.textContent = '';
      panel.hidden = false;
      form.reset();
      return refresh();
    }).catch(function () { button.disabled = false; error.textContent = 'Network error; try again.'; });
  });
  document.getElementById('copy').addEventListener('click', function () {
    var text = secret.textContent;
    var done = function () { copied.textContent = 'Copied.'; };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(done, function () { fallback(); });
    } else fallback();
    function fallback() {
      var range = document.createRange(); range.selectNodeContents(secret);
      var sel = getSelection(); sel.removeAllRanges(); sel.addRange(range);
      try { document.execCommand('copy'); done(); } catch (err) { copied.textContent = 'Select the token and copy it.'; }
    }
  });
  document.getElementById('dismiss').addEventListener('click', function () {
    secret.textContent = ''; panel.hidden = true;
  });
  tableHolder.addEventListener('click', function (e) {
    var target = e.target;
    if (!target.matches || !target.matches('button[data-revoke]')) return;
    if (!confirm('Revoke token "' + target.getAttribute('data-name') + '"? Anything using it stops working at once.')) return;
    target.disabled = true;
    post('/settings/tokens/' + target.getAttribute('data-revoke') + '/revoke').then(function (r) {
      if (!r.ok) { target.disabled = false; error.textContent = 'Could not revoke the token.'; return; }
      return refresh();
    });
  });
})();
`;

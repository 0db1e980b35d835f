// `npm run test:pgbouncer [vitest filters…]` (the last step of `npm test`): the integration and
// end-to-end suites with every connection of the service going through a real PgBouncer in
// transaction pool mode, as managed installations run it (spec/decisions.md, "Scale-out on real
// engines"). PgBouncer is started here on a free port in front of the tests' Postgres (DATABASE_URL, or 127.0.0.1:5432), from Debian's package;
// the test databases' template is migrated through it too. Only the harness's own administration
// (create, clone and drop databases) goes to Postgres directly (OPSI_TEST_ADMIN_DATABASE_URL): PgBouncer
// keeps idle server connections, and a database cannot be cloned or dropped while one is open.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BIN = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find(
  (p) => spawnSync(p, ['--version']).status === 0,
);
if (!BIN) {
  // As the real-world corpora's tests do: skipped with a message, on a machine without it (.ci/run
  // installs it, so CI never skips).
  console.error('test:pgbouncer skipped: PgBouncer is not installed (apt-get install pgbouncer)');
  process.exit(0);
}

const direct = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
const port = await freePort();
const dir = mkdtempSync(join(tmpdir(), 'opsi-pgbouncer-'));
// PgBouncer refuses to run as root: as root, it runs as the postgres user, which must reach the dir.
chmodSync(dir, 0o777);
const users = [decodeURIComponent(direct.username || 'postgres'), 'postgres', 'root'];
writeFileSync(join(dir, 'userlist.txt'), [...new Set(users)].map((u) => `"${u}" ""`).join('\n') + '\n');
writeFileSync(
  join(dir, 'pgbouncer.ini'),
  `[databases]
* = host=${direct.hostname} port=${direct.port || 5432}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${join(dir, 'userlist.txt')}
pool_mode = transaction
max_client_conn = 4000
default_pool_size = 20
; pg sends these at connect; PgBouncer tracks application_name itself.
ignore_startup_parameters = extra_float_digits,options
; nothing session-level is relied on (decisions), so nothing is reset between clients
server_reset_query =
server_idle_timeout = 30
logfile = ${join(dir, 'pgbouncer.log')}
log_connections = 0
log_disconnections = 0
`,
);
const asRoot = process.getuid?.() === 0;
const bouncer = spawn(BIN, [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], {
  stdio: 'ignore', // its log is the file above (printed if it dies)
});
let exiting = false;
bouncer.on('exit', (code) => {
  if (exiting) return;
  console.error(`pgbouncer exited (${code}):\n${safeRead(join(dir, 'pgbouncer.log'))}`);
  process.exit(1);
});
await waitForPort(port);

const pooled = new URL(direct);
pooled.hostname = '127.0.0.1';
pooled.port = String(port);
console.error(`== PgBouncer ${port} (transaction mode) -> ${direct.host}`);
const args = process.argv.slice(2);
const vitest = spawn(
  process.execPath,
  [
    'node_modules/vitest/vitest.mjs',
    'run',
    ...(args.some((a) => a.startsWith('--project')) ? [] : ['--project', 'integration', '--project', 'e2e']),
    ...args,
  ],
  {
    stdio: 'inherit',
    env: { ...process.env, DATABASE_URL: pooled.toString(), OPSI_TEST_ADMIN_DATABASE_URL: direct.toString() },
  },
);
const code = await new Promise((resolve) => vitest.on('exit', (c) => resolve(c ?? 1)));
exiting = true;
bouncer.kill('SIGTERM');
rmSync(dir, { recursive: true, force: true });
process.exit(code);

function safeRead(path) {
  try {
    return readFileSync(path, 'utf8').slice(-4000);
  } catch {
    return '(no log)';
  }
}

async function freePort() {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const { port: p } = server.address();
  await new Promise((r) => server.close(r));
  return p;
}

async function waitForPort(p) {
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise((resolve) => {
      const socket = createConnection(p, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`pgbouncer did not listen on ${p}`);
}

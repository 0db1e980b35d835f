import { Command, CommanderError, Option } from 'commander';
import { loadConfigOrExit } from '@opsi/config';
import {
  AppError,
  createTenant,
  createUser,
  deleteTenant,
  deleteUser,
  ensureDemoTenant,
  expireToken,
  setDailyAgentBudget,
  updateTenant,
} from '@opsi/core';
import { migrateToLatest, openDatabase, pendingMigrations, type DatabaseHandle } from '@opsi/db';

// `npm run admin -- <command>`: operator commands. No token: the operator has the database.
// Every command takes --json and then prints exactly one JSON object on stdout.

const config = loadConfigOrExit();
// With --json, even usage errors answer one JSON object on stdout; set before any command is defined,
// because subcommands inherit these settings when they are created.
let json = process.argv.includes('--json');
const program = new Command('admin')
  .description('opsi operator commands')
  .exitOverride()
  .configureOutput({ writeErr: (text) => void (json ? undefined : process.stderr.write(text)) });
if (!json) program.showHelpAfterError();

async function withDb<T>(fn: (db: DatabaseHandle['db']) => Promise<T>): Promise<T> {
  const handle = await openDatabase(config, 'opsi-admin');
  try {
    if (handle.kind === 'pglite') {
      await migrateToLatest(handle.db); // single machine: the operator's first command may come before `npm start`
    } else {
      const pending = await pendingMigrations(handle.db);
      if (pending.length)
        throw new AppError(
          409,
          `database has pending migrations (${pending.join(', ')}): run npm run db:migrate`,
        );
    }
    return await fn(handle.db);
  } finally {
    await handle.close();
  }
}

function print(result: Record<string, unknown>, human: string) {
  process.stdout.write(json ? `${JSON.stringify(result)}\n` : `${human}\n`);
}

function run<A extends unknown[]>(fn: (...args: A) => Promise<void>) {
  return async (...args: A) => {
    json =
      Boolean(program.opts().json) ||
      args.some((a) => a && typeof a === 'object' && (a as { json?: boolean }).json);
    await fn(...args);
  };
}

const jsonOption = new Option('--json', 'print one JSON object on stdout');
program.addOption(jsonOption);

const tenant = program.command('tenant').description('tenants');
tenant
  .command('create <slug>')
  .description('create a tenant')
  .option('--name <name>', 'display name (default: the slug)')
  .addOption(new Option('--tier <tier>', 'plan').choices(['free', 'team', 'enterprise']).default('free'))
  .option('--timezone <tz>', 'IANA timezone for schedules', 'UTC')
  .addOption(jsonOption)
  .action(
    run(
      async (slug: string, o: { name?: string; tier: 'free' | 'team' | 'enterprise'; timezone: string }) => {
        const t = await withDb((db) =>
          createTenant(db, { slug, tier: o.tier, timezone: o.timezone, ...(o.name ? { name: o.name } : {}) }),
        );
        print({ tenant: t }, `tenant ${t.slug} created (${t.id}, tier ${t.tier})`);
      },
    ),
  );

tenant
  .command('update <slug>')
  .description("change a tenant's name, tier or timezone")
  .option('--name <name>')
  .addOption(new Option('--tier <tier>').choices(['free', 'team', 'enterprise']))
  .option('--timezone <tz>', 'IANA timezone: schedules follow it')
  .addOption(jsonOption)
  .action(
    run(
      async (
        slug: string,
        o: { name?: string; tier?: 'free' | 'team' | 'enterprise'; timezone?: string },
      ) => {
        const t = await withDb((db) =>
          updateTenant(db, slug, { name: o.name, tier: o.tier, timezone: o.timezone }),
        );
        print({ tenant: t }, `tenant ${t.slug} updated (tier ${t.tier}, timezone ${t.timezone})`);
      },
    ),
  );
tenant
  .command('delete <slug>')
  .description('delete a tenant: its tokens and sessions stop working at once, its schedules are dropped')
  .addOption(jsonOption)
  .action(
    run(async (slug: string) => {
      const t = await withDb((db) => deleteTenant(db, slug));
      print({ tenant: t }, `tenant ${t.slug} deleted`);
    }),
  );

const user = program.command('user').description('users');
user
  .command('create')
  .description('create a user in a tenant')
  .requiredOption('--tenant <slug>')
  .requiredOption('--email <email>')
  .requiredOption('--password <password>')
  .option('--name <name>')
  .addOption(new Option('--role <role>').choices(['owner', 'admin', 'member', 'viewer']).default('member'))
  .addOption(jsonOption)
  .action(
    run(
      async (o: {
        tenant: string;
        email: string;
        password: string;
        name?: string;
        role: 'owner' | 'admin' | 'member' | 'viewer';
      }) => {
        const u = await withDb((db) =>
          createUser(db, {
            tenantSlug: o.tenant,
            email: o.email,
            password: o.password,
            role: o.role,
            ...(o.name ? { name: o.name } : {}),
          }),
        );
        print({ user: u }, `user ${u.email} created in ${o.tenant} (${u.id}, role ${u.role})`);
      },
    ),
  );
user
  .command('delete')
  .description('delete a user: their tokens and sessions stop working at once')
  .requiredOption('--tenant <slug>')
  .requiredOption('--email <email>')
  .addOption(jsonOption)
  .action(
    run(async (o: { tenant: string; email: string }) => {
      const u = await withDb((db) => deleteUser(db, o.tenant, o.email));
      print({ user: u }, `user ${u.email} deleted`);
    }),
  );

program
  .command('budget')
  .description('daily agent budget')
  .command('set')
  .description('set the daily agent budget (per token per UTC day) of a tenant')
  .requiredOption('--tenant <slug>')
  .requiredOption('--daily <n>', 'units per token per UTC day', (v) => {
    if (!/^\d+$/.test(v)) throw new AppError(400, '--daily must be a whole number >= 0');
    return Number(v);
  })
  .addOption(jsonOption)
  .action(
    run(async (o: { tenant: string; daily: number }) => {
      const t = await withDb((db) => setDailyAgentBudget(db, o.tenant, o.daily));
      print({ tenant: t }, `tenant ${t.slug}: daily agent budget ${t.daily_agent_budget}`);
    }),
  );

program
  .command('token')
  .description('tokens')
  .command('expire <token_id>')
  .description('end a token now by setting its expiry (it then reads as expired, not revoked)')
  .addOption(jsonOption)
  .action(
    run(async (tokenId: string) => {
      const t = await withDb((db) => expireToken(db, tokenId));
      print({ token: t }, `token ${t.id} (${t.name}) expired at ${t.expires_at?.toISOString()}`);
    }),
  );

program
  .command('demo')
  .description('create the demo tenant and user (idempotent) and say how to sign in')
  .addOption(jsonOption)
  .action(
    run(async () => {
      const d = await withDb((db) => ensureDemoTenant(db));
      print(
        { tenant: d.tenant, user: d.user, login: d.login },
        `demo tenant ready. Start the service (npm start) and sign in at /login as ${d.login.email} / ${d.login.password}`,
      );
    }),
  );

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError && e.exitCode === 0) process.exit(0); // --help, --version
  const detail =
    e instanceof AppError
      ? e.detail
      : e instanceof CommanderError
        ? e.message.replace(/^error: /, '')
        : (e as Error).message;
  if (json) process.stdout.write(`${JSON.stringify({ detail })}\n`);
  else process.stderr.write(`error: ${detail}\n`);
  process.exitCode = 1;
}

import { Command, CommanderError, Option } from 'commander';
import { loadConfigOrExit } from '@opsi/config';
import {
  AppError,
  advanceDemo,
  connectEnvironment,
  execDemoCommand,
  getScan,
  getTenantBySlug,
  requestScan,
  runResilience,
  runScan,
  type ConnectInput,
  createTenant,
  createUser,
  deleteTenant,
  deleteUser,
  ensureDemoTenant,
  expireToken,
  installTool,
  outboundPolicyFor,
  listTenantTools,
  listTerraformStates,
  removeTerraformState,
  removeTool,
  runMorningReportJob,
  generateMorningReport,
  secretBoxFor,
  setDailyAgentBudget,
  updateTenant,
} from '@opsi/core';
import {
  migrateToLatest,
  openDatabase,
  pendingMigrations,
  type DatabaseHandle,
  type ScanWarning,
} from '@opsi/db';
import { AWS_IAM_POLICY, DEMO_SIZES, type DemoSize } from '@opsi/inventory';
import { JobProducer } from '@opsi/jobs';
import { createRedis } from '@opsi/redis';

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

/** The tenant named by --tenant, or a clear error. */
async function tenantId(db: DatabaseHandle['db'], slug: string): Promise<string> {
  return (await getTenantBySlug(db, slug)).id;
}

/**
 * A job producer for one command, or null without REDIS_URL. Its Redis connection is the command's
 * only socket besides the database pool: it is quit on the way out, or the command would never exit.
 */
async function withProducer<T>(fn: (producer: JobProducer | null) => Promise<T>): Promise<T> {
  if (!config.REDIS_URL) return fn(null);
  const redis = createRedis(config.REDIS_URL, 'producer', config.REDIS_CLUSTER);
  const producer = new JobProducer(redis, config.REDIS_PREFIX);
  try {
    return await fn(producer);
  } finally {
    await producer.close().catch(() => undefined);
    await redis.quit().catch(() => redis.disconnect());
  }
}

/** How long `scan --wait` waits for a worker to serve the pulse queue before it gives up. */
const NO_WORKER_GRACE_MS = 10_000;
const followCommand = (slug: string) => `npm run admin -- scan --tenant ${slug} --wait`;

type ScanOutcome = { scan: { id: string; status: string } & Record<string, unknown>; follow?: string };

/**
 * Requests a scan of the tenant, reusing one still queued or running, and (with `wait`) sees it to its
 * end. With REDIS_URL the workers run it and this watches its row; without (the embedded
 * single-machine mode, where no service holds the database right now) it runs here. `wait: 'if-served'`
 * waits only when a worker serves the pulse queue now; else, and without `wait`, the answer is the
 * queued scan and the command that follows it.
 */
async function requestAndWatchScan(
  db: DatabaseHandle['db'],
  tenant: string,
  slug: string,
  wait: boolean | 'if-served',
): Promise<ScanOutcome> {
  return withProducer(async (producer) => {
    const scan = await requestScan(db, producer, tenant, 'operator', { reuseActive: true });
    const show = (phase: string, counts: Record<string, number>) => {
      if (json || !process.stderr.isTTY) return;
      const shown = Object.entries(counts)
        .map(([k, v]) => `${k} ${v}`)
        .join(' · ');
      process.stderr.write(`\r\x1b[2K  scan ${scan.id.slice(0, 8)}: ${phase}${shown ? ` · ${shown}` : ''}`);
    };
    const endLine = () => void (!json && process.stderr.isTTY && process.stderr.write('\n'));
    if (!producer) {
      const done = await runScan(db, scan.id, { onProgress: show });
      // What the pulse.resilience job does after a queued scan, here too: the graph's scenarios and risks.
      show('resilience', done.counts as Record<string, number>);
      await runResilience(db, tenant, { scanId: done.id });
      endLine();
      return { scan: done };
    }
    const queued = { scan, follow: followCommand(slug) };
    if (!wait) return queued;
    let served = (await producer.workerCount('pulse')) ?? 0;
    if (wait === 'if-served' && !served) return queued;
    let lastServed = Date.now();
    for (;;) {
      const current = (await getScan(db, tenant, scan.id))!;
      show(current.phase, current.counts);
      if (current.status === 'completed' || current.status === 'failed') {
        endLine();
        if (current.status === 'failed') throw new AppError(500, `scan failed: ${current.error}`);
        return { scan: current };
      }
      // Queued, or running on a worker that died (a live worker takes it over): either way only a
      // worker moves it on, so with none for a while, say so rather than wait forever.
      if (served) lastServed = Date.now();
      else if (Date.now() - lastServed > NO_WORKER_GRACE_MS) {
        endLine();
        throw new AppError(
          503,
          `scan ${scan.id} is ${current.status}, but no worker serves the pulse queue: start one (npm run start:worker), then follow the scan with: ${followCommand(slug)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 500));
      // null (the server does not list its clients): keep waiting, as before this check existed
      served = (await producer.workerCount('pulse')) ?? 1;
    }
  });
}

const env = program.command('env').description("the tenant's connected environment");
env
  .command('connect')
  .description(
    'connect the demo environment, a Terraform state (a file or an S3 backend; each one adds a state), or an AWS account (read-only)',
  )
  .requiredOption('--tenant <slug>')
  .option('--demo', 'the built-in demo environment')
  .option('--seed <n>', 'demo seed', (v) => {
    if (!/^\d+$/.test(v)) throw new AppError(400, '--seed must be a whole number');
    return Number(v);
  })
  .addOption(new Option('--size <size>', 'demo size').choices([...DEMO_SIZES]))
  .option('--terraform-state <file>', 'a terraform.tfstate (versions 3 and 4) or terraform show -json output')
  .option(
    '--terraform-s3 <url>',
    "an S3 backend's state, s3://BUCKET/KEY, read with s3:GetObject at every scan",
  )
  .option(
    '--region <region>',
    "the S3 backend's region (default us-east-1; S3 redirects to the bucket's own)",
  )
  .option('--aws-profile <profile>', 'an AWS profile of the standard credential chain')
  .option('--regions <list>', 'AWS regions to scan, comma-separated', 'us-east-1')
  .addOption(jsonOption)
  .action(
    run(
      async (o: {
        tenant: string;
        demo?: boolean;
        seed?: number;
        size?: DemoSize;
        terraformState?: string;
        terraformS3?: string;
        region?: string;
        pathStyle?: boolean;
        awsProfile?: string;
        regions: string;
      }) => {
        const chosen = [o.demo, o.terraformState, o.terraformS3, o.awsProfile].filter(Boolean).length;
        if (chosen !== 1)
          throw new AppError(
            400,
            'give exactly one of --demo, --terraform-state FILE, --terraform-s3 s3://BUCKET/KEY, --aws-profile P',
          );
        if ((o.region || o.pathStyle) && !o.terraformS3)
          throw new AppError(400, `${o.region ? '--region' : '--path-style'} goes with --terraform-s3`);
        const input: ConnectInput = o.demo
          ? {
              kind: 'demo',
              ...(o.seed !== undefined ? { seed: o.seed } : {}),
              ...(o.size ? { size: o.size } : {}),
            }
          : o.terraformState
            ? { kind: 'terraform_state', file: o.terraformState }
            : o.terraformS3
              ? { kind: 'terraform_state', s3: o.terraformS3, region: o.region, pathStyle: o.pathStyle }
              : {
                  kind: 'aws',
                  profile: o.awsProfile!,
                  regions: o.regions
                    .split(',')
                    .map((r) => r.trim())
                    .filter(Boolean),
                };
        const connection = await withDb(async (db) => {
          const id = await tenantId(db, o.tenant);
          const c = await connectEnvironment(db, id, input);
          if (input.kind !== 'terraform_state')
            return {
              id: c.id,
              kind: c.kind,
              config: c.config,
              created_at: c.created_at,
              updated_at: c.updated_at,
            };
          const states = await listTerraformStates(db, id);
          return {
            id: c.id,
            kind: c.kind,
            config:
              input.file !== undefined
                ? { file: input.file }
                : { s3: input.s3, region: input.region ?? null },
            states,
            created_at: c.created_at,
            updated_at: c.updated_at,
          };
        });
        const stateLines =
          'states' in connection && connection.states
            ? connection.states
                .map(
                  (s) =>
                    `\n  ${s.source}: serial ${s.serial ?? '–'}, ${s.resources} of ${s.managed} managed resources mapped${
                      Object.keys(s.skipped_unsupported).length
                        ? `; skipped (types not modelled): ${Object.entries(s.skipped_unsupported)
                            .map(([t, n]) => `${t} ×${n}`)
                            .join(', ')}`
                        : ''
                    }`,
                )
                .join('')
            : '';
        // The identity behind the profile needs read-only access: the policy names every action the scan calls.
        const policy = input.kind === 'aws' ? AWS_IAM_POLICY : undefined;
        print(
          { connection, ...(policy ? { policy } : {}) },
          `${o.tenant}: connected ${connection.kind} (${connection.id}).${stateLines}${policy ? ` The profile's identity needs the read-only actions of ${policy} (attach it as an IAM policy); a scan without some of them completes partial, naming the ones missing.` : ''}\nRun: npm run admin -- scan --tenant ${o.tenant} --wait`,
        );
      },
    ),
  );

env
  .command('forget-state')
  .description("forget one of the tenant's Terraform states; the next scan marks its resources deleted")
  .requiredOption('--tenant <slug>')
  .option('--terraform-state <file>', 'the state file, as it was connected')
  .option('--terraform-s3 <url>', 's3://BUCKET/KEY, as it was connected')
  .addOption(jsonOption)
  .action(
    run(async (o: { tenant: string; terraformState?: string; terraformS3?: string }) => {
      if (!o.terraformState === !o.terraformS3)
        throw new AppError(400, 'give exactly one of --terraform-state FILE, --terraform-s3 s3://BUCKET/KEY');
      const result = await withDb(async (db) =>
        removeTerraformState(
          db,
          await tenantId(db, o.tenant),
          o.terraformState !== undefined ? { file: o.terraformState } : { s3: o.terraformS3! },
        ),
      );
      print(result, `${o.tenant}: forgot ${result.removed}; ${result.states.length} Terraform state(s) left`);
    }),
  );

program
  .command('scan')
  .description("scan the tenant's environment: sync the inventory, then run the detectors")
  .requiredOption('--tenant <slug>')
  .option('--wait', 'wait until it is done, showing progress')
  .addOption(jsonOption)
  .action(
    run(async (o: { tenant: string; wait?: boolean }) => {
      const { scan, follow } = await withDb(async (db) =>
        requestAndWatchScan(db, await tenantId(db, o.tenant), o.tenant, Boolean(o.wait)),
      );
      const refused: ScanWarning[] =
        'warnings' in scan && scan.partial ? (scan.warnings as ScanWarning[]) : [];
      const missing = [...new Set(refused.map((w) => w.action))];
      print(
        { scan, ...(follow ? { follow } : {}) },
        `scan ${scan.id}: ${scan.status}${refused.length ? ` (partial: ${missing.length} permissions missing: ${missing.join(', ')})` : ''}${'counts' in scan ? ` ${JSON.stringify(scan.counts)}` : ''}${follow ? `\n${scan.status === 'running' ? 'It is running' : 'It is queued for the workers'}; follow it with: ${follow}` : ''}`,
      );
    }),
  );

const demo = program
  .command('demo')
  .description(
    'create the demo tenant and user, connect the demo environment and run the first scan (idempotent)',
  )
  .addOption(jsonOption)
  .action(
    run(async () => {
      const result = await withDb(async (db) => {
        const d = await ensureDemoTenant(db);
        const connected = await db
          .selectFrom('cloud_connections')
          .select('id')
          .where('tenant_id', '=', d.tenant.id)
          .executeTakeFirst();
        if (!connected) await connectEnvironment(db, d.tenant.id, { kind: 'demo' });
        const scanned = await db
          .selectFrom('inventory_scans')
          .select('id')
          .where('tenant_id', '=', d.tenant.id)
          .where('status', '=', 'completed')
          .executeTakeFirst();
        // With REDIS_URL the workers scan: wait for them only when one serves the queue now.
        const outcome = scanned
          ? null
          : await requestAndWatchScan(db, d.tenant.id, d.tenant.slug, 'if-served');
        return { ...d, scan: outcome?.scan ?? null, follow: outcome?.follow };
      });
      const { scan, follow } = result;
      const scanned = !scan ? '' : follow ? '' : ` and scanned (${scan.status})`;
      const queued = !follow
        ? ''
        : `\nIts first scan ${scan!.id} is ${scan!.status === 'running' ? 'running' : 'queued for the workers (none serves the pulse queue now: start one with npm run start:worker)'}; follow it with: ${follow}`;
      print(
        {
          tenant: result.tenant,
          user: result.user,
          login: result.login,
          scan,
          ...(follow ? { follow } : {}),
        },
        `demo tenant ready${scanned}. Start the service (npm start) and sign in at /login as ${result.login.email} / ${result.login.password}${queued}`,
      );
    }),
  );
demo
  .command('exec <command>')
  .description('apply a mutating AWS CLI command to the demo environment, as a user fixing something would')
  .requiredOption('--tenant <slug>')
  .addOption(jsonOption)
  .action(
    run(async (command: string, o: { tenant: string }) => {
      const applied = await withDb(async (db) => execDemoCommand(db, await tenantId(db, o.tenant), command));
      print(
        { applied },
        `applied on day ${applied.day}: ${applied.operation} (${applied.effects.map((e) => `${e.change} ${e.arn}`).join(', ')})`,
      );
    }),
  );
demo
  .command('advance')
  .description('move the demo environment forward in simulated time')
  .requiredOption('--tenant <slug>')
  .requiredOption('--days <n>', 'days to advance', (v) => {
    if (!/^\d+$/.test(v)) throw new AppError(400, '--days must be a whole number');
    return Number(v);
  })
  .addOption(jsonOption)
  .action(
    run(async (o: { tenant: string; days: number }) => {
      const environment = await withDb(async (db) => advanceDemo(db, await tenantId(db, o.tenant), o.days));
      print(
        { environment },
        `${o.tenant}: the demo environment is now at day ${environment.day} (${environment.now})`,
      );
    }),
  );

const OPERATOR = { type: 'operator' as const, id: null };

const tools = program.command('tools').description("a tenant's integrations (notifiers, alert sources)");
tools
  .command('list')
  .description('what the tenant has: its connection, installed integrations, built-in agent tools')
  .requiredOption('--tenant <slug>')
  .addOption(jsonOption)
  .action(
    run(async (o: { tenant: string }) => {
      const list = await withDb(async (db) => listTenantTools(db, await tenantId(db, o.tenant)));
      print({ tools: list }, list.map((x) => `${x.id}\t${x.status}\t${x.name}`).join('\n'));
    }),
  );
tools
  .command('install <tool_id>')
  .description('install or reconfigure an integration (webhook needs --url and --secret, slack --url)')
  .requiredOption('--tenant <slug>')
  .option('--url <url>', "a notifier's target; stored encrypted, never shown")
  .option('--secret <secret>', "a webhook's signing secret (16+ characters); stored encrypted, never shown")
  .option(
    '--events <list>',
    'comma-separated: report.morning, finding.critical, incident.opened (default all)',
  )
  .addOption(jsonOption)
  .action(
    run(async (toolId: string, o: { tenant: string; url?: string; secret?: string; events?: string }) => {
      const { tool, created } = await withDb(async (db) =>
        installTool(
          db,
          secretBoxFor(config),
          await tenantId(db, o.tenant),
          OPERATOR,
          {
            tool_id: toolId,
            url: o.url,
            secret: o.secret,
            events: o.events?.split(',').map((e) => e.trim()),
          },
          outboundPolicyFor(config),
        ),
      );
      print(
        { tool, created },
        `${o.tenant}: ${created ? 'installed' : 'reconfigured'} ${tool.id} (${tool.status})`,
      );
    }),
  );
tools
  .command('remove <tool_id>')
  .description('remove an installed integration')
  .requiredOption('--tenant <slug>')
  .addOption(jsonOption)
  .action(
    run(async (toolId: string, o: { tenant: string }) => {
      await withDb(async (db) => removeTool(db, await tenantId(db, o.tenant), OPERATOR, toolId));
      print({ removed: toolId }, `${o.tenant}: removed ${toolId}`);
    }),
  );

program
  .command('report')
  .description(
    "write the tenant's morning report now, covering the time since the previous one; with REDIS_URL its notifier deliveries are queued for the workers",
  )
  .requiredOption('--tenant <slug>')
  .addOption(jsonOption)
  .action(
    run(async (o: { tenant: string }) => {
      const report = await withDb(async (db) => {
        const id = await tenantId(db, o.tenant);
        const input = { tenantId: id, periodTo: new Date(), requestedBy: 'operator' };
        // withProducer quits its Redis connection: JobProducer.close() closes its queues, not the
        // connection it was given, and an open socket would keep the command from exiting.
        return withProducer(async (producer) => {
          if (!producer) return (await generateMorningReport(db, id, input)).report;
          const done = await runMorningReportJob(db, producer, input, {
            attempts: config.NOTIFY_ATTEMPTS,
            backoffMs: config.NOTIFY_BACKOFF_MS,
            timeoutMs: config.NOTIFY_TIMEOUT_MS,
          });
          return { ...(await generateMorningReport(db, id, input)).report, deliveries: done.deliveries };
        });
      });
      print({ report }, `${o.tenant}: ${report.headline}`);
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

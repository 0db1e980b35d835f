import { Command, CommanderError, Option } from 'commander';
import { DOMAINS, FINDING_STATUSES, SEVERITIES } from '@opsi/contracts/vocabulary';
import type { Context, GlobalOptions } from './context';
import { CliError, EXIT } from './exit-codes';

// `opsi`: the command line of the Operations Intelligence Service. Command modules are imported when
// their command runs, so `opsi --help` loads commander and nothing else.

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each command declares its own arguments
type Action = (ctx: Context, ...args: any[]) => Promise<number | void>;

function errorLine(ctx: Context | undefined, error: unknown): string {
  const e = error as { status?: number; detail?: string; requestId?: string | null; message?: string };
  if (typeof e?.status === 'number' && e.detail !== undefined)
    return `${e.detail} (HTTP ${e.status}${e.requestId ? `, request ${e.requestId}` : ''})`;
  return e?.message ?? String(error);
}

/** Runs a command: a Context from the global options, the exit status from its answer or its error. */
function run(load: () => Promise<Action>) {
  return async function (this: Command, ...args: unknown[]) {
    const command = args[args.length - 1] as Command;
    const positional = args.slice(0, -1);
    let ctx: Context | undefined;
    try {
      const { Context } = await import('./context');
      ctx = new Context(command.optsWithGlobals() as GlobalOptions);
      const action = await load();
      const code = await action(ctx, ...positional);
      process.exitCode = typeof code === 'number' ? code : EXIT.ok;
    } catch (error) {
      const { exitCodeOf } = await import('./exit-status');
      const code = exitCodeOf(error);
      const message = errorLine(ctx, error);
      if (ctx?.json) {
        const e = error as { status?: number; requestId?: string | null };
        process.stdout.write(
          `${JSON.stringify({ error: { message, status: e.status ?? null, request_id: e.requestId ?? null, exit_code: code } })}\n`,
        );
      } else {
        process.stderr.write(`${ctx ? ctx.c.red('error:') : 'error:'} ${message}\n`);
      }
      process.exitCode = code;
    }
  };
}

export function buildProgram(): Command {
  const program = new Command('opsi')
    .description('The command line of the Operations Intelligence Service (opsi).')
    .version('0.1.0', '-v, --version')
    .addOption(
      new Option('--url <url>', 'service address')
        .env('OPSI_URL')
        .default(undefined, 'http://127.0.0.1:8080'),
    )
    .addOption(
      new Option('--token <token>', 'a personal access token instead of the stored login').env('OPSI_TOKEN'),
    )
    .option('--json', 'print one JSON object (or one per line when following) instead of text')
    .option('--no-color', 'no colour in the output')
    .showHelpAfterError('(run opsi --help for usage)')
    .exitOverride()
    .addHelpText(
      'after',
      `
Sign in with \`opsi login\` (browser) or set OPSI_TOKEN (CI). Exit statuses: 0 ok, 1 error, 2 usage or
bad request, 3 not logged in or token refused, 4 forbidden, 5 not found, 6 conflict, 7 agent budget
spent, 8 agent run failed, 9 service unreachable, 10 plan review risk at or above --fail-on,
130 interrupted. See docs/cli.md.`,
    );

  program
    .command('login')
    .description('sign in through the browser and store a read_write token (or store --token / OPSI_TOKEN)')
    .option('--no-browser', 'print the sign-in address instead of opening a browser')
    .option('--name <name>', 'name of the token to mint')
    .action(run(async () => (await import('./commands/login')).login));
  program
    .command('logout')
    .description('revoke the stored token and forget it')
    .action(run(async () => (await import('./commands/login')).logout));
  program
    .command('whoami')
    .description('the user, tenant and token in use')
    .action(run(async () => (await import('./commands/login')).whoami));

  program
    .command('ask')
    .description('ask the agent; the answer streams, and survives a dropped connection')
    .argument('<prompt...>', 'the question')
    .option('-s, --session <id>', 'session to continue (created when new)')
    .option('--tools <names>', 'comma-separated tools the agent may use')
    .action(run(async () => (await import('./commands/ask')).ask));
  program
    .command('sessions')
    .description('list agent sessions')
    .action(run(async () => (await import('./commands/pulse')).sessions));
  program
    .command('history')
    .description("a session's messages")
    .argument('<session>', 'session id')
    .action(run(async () => (await import('./commands/pulse')).history));

  program
    .command('findings')
    .description('list findings')
    .addOption(new Option('--status <status>').choices(FINDING_STATUSES))
    .addOption(new Option('--severity <severity>').choices(SEVERITIES))
    .addOption(new Option('--domain <domain>').choices(DOMAINS))
    .addOption(new Option('--sort <field>').choices(['severity', 'date', 'savings', 'effort', 'status']))
    .addOption(new Option('--dir <dir>').choices(['asc', 'desc']))
    .action(run(async () => (await import('./commands/pulse')).findings));
  program
    .command('finding')
    .description('one finding with its resources, recommendation and evidence trail')
    .argument('<id>', 'finding id')
    .action(run(async () => (await import('./commands/pulse')).finding));
  program
    .command('rerun')
    .description('re-run one step of a finding’s evidence trail live (read-only)')
    .argument('<finding>', 'finding id')
    .argument('<seq>', 'step number')
    .action(run(async () => (await import('./commands/pulse')).rerun));
  program
    .command('plan')
    .description('the resolution plan of a finding: show it, verify, confirm or skip a step, finalize')
    .argument('<finding>', 'finding id')
    .option('--verify <seq>', "run a step's read-only verification and wait for its result")
    .option('--confirm <seq>', 'mark a step done by hand')
    .option('--skip <seq>', 'skip a step (needs --reason)')
    .option('--reason <text>', 'why the step is skipped')
    .option('--finalize', 'run the final check and wait for its outcome')
    .option('--regenerate', 'draft the plan again from the current evidence (stale or failed)')
    .option('-i, --interactive', 'walk the steps one by one')
    .option('--timeout <seconds>', 'bound of each wait for background work', '180')
    .action(run(async () => (await import('./commands/plan')).plan));

  program
    .command('incidents')
    .description('list incidents')
    .option('--status <status>')
    .option('--severity <severity>')
    .option('--limit <n>')
    .option('--offset <n>')
    .action(run(async () => (await import('./commands/incidents')).incidents));
  program
    .command('incident')
    .description('one incident and its timeline')
    .argument('<id>', 'incident id')
    .option('-f, --follow', 'print new timeline events as they are written (live stream), until resolved')
    .action(run(async () => (await import('./commands/incidents')).incident));
  program
    .command('plan-review')
    .description('review a Terraform plan against the live environment (exit 10 at or above --fail-on)')
    .argument('<file>', 'plan text file, or - for standard input')
    .addOption(
      new Option('--fail-on <risk>', 'risk that fails the command')
        .choices(['low', 'medium', 'high', 'critical', 'never'])
        .default('high'),
    )
    .action(run(async () => (await import('./commands/review')).planReview));
  program
    .command('report')
    .description('the latest morning report')
    .action(run(async () => (await import('./commands/report')).report));

  const tokens = program
    .command('tokens')
    .description('list your API tokens')
    .action(run(async () => (await import('./commands/pulse')).tokens));
  tokens
    .command('revoke')
    .description('revoke a token')
    .argument('<id>', 'token id')
    .action(run(async () => (await import('./commands/pulse')).revokeToken));
  return program;
}

export async function main(argv: string[] = process.argv) {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      process.exitCode =
        e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help'
          ? EXIT.ok
          : EXIT.usage;
      return;
    }
    process.stderr.write(`error: ${(e as Error).message}\n`);
    process.exitCode = e instanceof CliError ? e.exitCode : EXIT.error;
  }
}

await main();

import { createColors } from 'picocolors';
import { OpsiClient } from '@opsi/sdk';
import { DEFAULT_URL, normaliseUrl, storedLogin } from './config';
import { CliError, EXIT } from './exit-codes';

export interface GlobalOptions {
  url?: string;
  token?: string;
  json?: boolean;
  color?: boolean;
}

export type Colors = ReturnType<typeof createColors>;

/** What every command gets: the service address, output settings and a client with the right token. */
export class Context {
  readonly url: string;
  readonly json: boolean;
  readonly c: Colors;
  /** Colour and in-place redraws only on a terminal. */
  readonly isTty: boolean;
  readonly isErrTty: boolean;

  constructor(
    readonly options: GlobalOptions,
    readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    try {
      this.url = normaliseUrl(options.url ?? env.OPSI_URL ?? DEFAULT_URL);
    } catch (e) {
      throw new CliError((e as Error).message, EXIT.usage);
    }
    this.json = options.json === true;
    this.isTty = process.stdout.isTTY === true;
    this.isErrTty = process.stderr.isTTY === true;
    const colour =
      options.color !== false && !('NO_COLOR' in env) && (this.isTty || env.FORCE_COLOR !== undefined);
    this.c = createColors(colour);
  }

  out(text = '') {
    process.stdout.write(`${text}\n`);
  }

  /** Progress and notes: stderr, so stdout stays the answer. */
  note(text: string) {
    if (!this.json) process.stderr.write(`${this.c.dim(text)}\n`);
  }

  printJson(value: unknown) {
    process.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** The token to use: --token, else OPSI_TOKEN, else the stored login for this address. */
  async token(): Promise<{ token: string; source: 'flag' | 'env' | 'stored' } | undefined> {
    if (this.options.token) return { token: this.options.token, source: 'flag' };
    if (this.env.OPSI_TOKEN) return { token: this.env.OPSI_TOKEN, source: 'env' };
    const login = await storedLogin(this.url, this.env);
    return login ? { token: login.token, source: 'stored' } : undefined;
  }

  /** A client for this address with the caller's token; no token is exit status 3 with a hint. */
  async client(): Promise<OpsiClient> {
    const found = await this.token();
    if (!found)
      throw new CliError(
        `not logged in to ${this.url}: run \`opsi login\`, or set OPSI_TOKEN (or pass --token)`,
        EXIT.auth,
      );
    return new OpsiClient({ baseUrl: this.url, token: found.token, userAgent: 'opsi-cli' });
  }

  anonymousClient(token?: string): OpsiClient {
    return new OpsiClient({ baseUrl: this.url, token, userAgent: 'opsi-cli' });
  }
}

/** A spinner on stderr while work takes time; silent when stderr is not a terminal or with --json. */
export function spinner(ctx: Context, text: string) {
  if (!ctx.isErrTty || ctx.json) return { update() {}, stop() {} };
  const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
  let i = 0;
  let label = text;
  const draw = () => process.stderr.write(`\r\x1b[2K${ctx.c.cyan(frames[i++ % frames.length]!)} ${label}`);
  draw();
  const timer = setInterval(draw, 80);
  return {
    update(next: string) {
      label = next;
    },
    stop() {
      clearInterval(timer);
      process.stderr.write('\r\x1b[2K');
    },
  };
}

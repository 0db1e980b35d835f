/** Exit statuses of `opsi`, documented in docs/cli.md. */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  auth: 3,
  forbidden: 4,
  notFound: 5,
  conflict: 6,
  rateLimited: 7,
  runFailed: 8,
  unreachable: 9,
  riskAboveThreshold: 10,
  interrupted: 130,
} as const;

/** An error the CLI reports as one line and a chosen exit status. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

import { OpsiApiError, OpsiNetworkError, OpsiStreamError } from '@opsi/sdk';
import { CliError, EXIT } from './exit-codes';

/** The exit status for an error thrown by a command. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof OpsiApiError) {
    if (error.status === 400 || error.status === 415 || error.status === 422) return EXIT.usage;
    if (error.status === 401) return EXIT.auth;
    if (error.status === 402 || error.status === 403) return EXIT.forbidden;
    if (error.status === 404) return EXIT.notFound;
    if (error.status === 409) return EXIT.conflict;
    if (error.status === 429) return EXIT.rateLimited;
    return EXIT.error;
  }
  if (error instanceof OpsiNetworkError) return EXIT.unreachable;
  if (error instanceof OpsiStreamError) return EXIT.unreachable;
  return EXIT.error;
}

import { pino, type Logger } from 'pino';
import type { Config } from '@opsi/config';

export type { Logger } from 'pino';

/** Paths never written to a log line: credentials in any shape we pass them. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'password',
  '*.password',
  'token',
  '*.token',
  'secret',
  '*.secret',
  'csrf_token',
  '*.csrf_token',
  'apiKey',
  '*.apiKey',
  'DATABASE_URL',
  'REDIS_URL',
  'AGENT_API_KEY',
  '*.AGENT_API_KEY',
];

/** The one root logger of a process; children carry request and job context. */
export function createLogger(
  config: Pick<Config, 'LOG_LEVEL' | 'LOG_FORMAT'>,
  bindings: Record<string, unknown> = {},
  /** Where lines go instead of stdout (tests read them). */
  destination?: { write(line: string): void },
): Logger {
  const options = {
    level: config.LOG_LEVEL,
    base: { ...bindings },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    ...(config.LOG_FORMAT === 'pretty'
      ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'UTC:HH:MM:ss' } } }
      : {}),
  };
  return destination ? pino(options, destination) : pino(options);
}

import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { REDACT_PATHS } from './index';

describe('log redaction', () => {
  it('never writes tokens, passwords or cookies', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const log = pino({ redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink);
    log.info({ req: { headers: { authorization: 'Bearer opsi_secret', cookie: 'opsi_session=abc' } } }, 'r');
    log.info({ password: 'hunter2', body: { token: 'opsi_x' } }, 'p');
    log.info({ AGENT_API_KEY: 'sk-model-key-1', config: { AGENT_API_KEY: 'sk-model-key-2' } }, 'k');
    const out = lines.join('');
    expect(out).not.toMatch(/opsi_secret|opsi_session=abc|hunter2|opsi_x|sk-model-key/);
    expect(out).toMatch(/\[redacted\]/);
  });
});

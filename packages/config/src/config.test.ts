import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './index';

describe('loadConfig', () => {
  it('gives working single-machine defaults for an empty environment', () => {
    const c = loadConfig({});
    expect(c.PORT).toBe(8080);
    expect(c.HOST).toBe('127.0.0.1');
    expect(c.embeddedDatabase).toBe(true);
    expect(c.embeddedRedis).toBe(true);
    expect(c.publicUrl).toBe('http://127.0.0.1:8080');
  });

  it('uses configured services and treats empty strings as unset', () => {
    const c = loadConfig({ DATABASE_URL: 'postgres://x@h/db', REDIS_URL: '', PORT: '9000' });
    expect(c.embeddedDatabase).toBe(false);
    expect(c.embeddedRedis).toBe(true);
    expect(c.PORT).toBe(9000);
  });

  it('parses worker pools and refuses unsafe combinations', () => {
    const c = loadConfig({ WORKER_QUEUES: 'agent, pulse', WORKER_CONCURRENCY_AGENT: '3' });
    expect(c.WORKER_QUEUES).toEqual(['agent', 'pulse']);
    expect(c.WORKER_CONCURRENCY_AGENT).toBe(3);
    expect(() => loadConfig({ WORKER_QUEUES: 'agent,mail' })).toThrow(ConfigError);
    expect(() => loadConfig({ AGENT_ENGINE: 'scripted', NODE_ENV: 'production' })).toThrow(/scripted/);
    expect(() => loadConfig({ BULL_BOARD_ENABLED: 'true' })).toThrow(/OPERATOR_USER/);
  });

  it('lists every problem at once', () => {
    try {
      loadConfig({ PORT: 'abc', LOG_LEVEL: 'loud', DATABASE_URL: 'not a url' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const problems = (e as ConfigError).problems.join('\n');
      expect(problems).toMatch(/PORT/);
      expect(problems).toMatch(/LOG_LEVEL/);
      expect(problems).toMatch(/DATABASE_URL/);
    }
  });
});

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

  it('reads SNS_TRUSTED_HOSTS as host patterns (default sns.*.amazonaws.com)', () => {
    expect(loadConfig({}).SNS_TRUSTED_HOSTS).toEqual(['sns.*.amazonaws.com']);
    expect(
      loadConfig({ SNS_TRUSTED_HOSTS: ' 127.0.0.1, SNS.*.amazonaws.com.cn ' }).SNS_TRUSTED_HOSTS,
    ).toEqual(['127.0.0.1', 'sns.*.amazonaws.com.cn']);
    expect(() => loadConfig({ SNS_TRUSTED_HOSTS: ',' })).toThrow(ConfigError);
    expect(() => loadConfig({ SNS_TRUSTED_HOSTS: 'https://sns.x.amazonaws.com/' })).toThrow(ConfigError);
  });

  it('uses configured services and treats empty strings as unset', () => {
    const c = loadConfig({ DATABASE_URL: 'postgres://x@h/db', REDIS_URL: '', PORT: '9000' });
    expect(c.embeddedDatabase).toBe(false);
    expect(c.embeddedRedis).toBe(true);
    expect(c.PORT).toBe(9000);
  });

  it('reads REDIS_CLUSTER (default off) and refuses a cluster without a seed or with a tagged prefix', () => {
    expect(loadConfig({}).REDIS_CLUSTER).toBe(false);
    const c = loadConfig({ REDIS_URL: 'redis://10.0.0.1:6379', REDIS_CLUSTER: 'true' });
    expect(c.REDIS_CLUSTER).toBe(true);
    expect(() => loadConfig({ REDIS_CLUSTER: 'true' })).toThrow(/REDIS_CLUSTER: needs REDIS_URL/);
    expect(() =>
      loadConfig({ REDIS_URL: 'redis://10.0.0.1:6379', REDIS_CLUSTER: 'true', REDIS_PREFIX: '{opsi}' }),
    ).toThrow(/REDIS_PREFIX: no \{ \}/);
    // A single Redis keeps accepting a tagged prefix, as before.
    expect(loadConfig({ REDIS_URL: 'redis://h:6379', REDIS_PREFIX: '{opsi}' }).REDIS_PREFIX).toBe('{opsi}');
  });

  it('parses worker pools and refuses unsafe combinations', () => {
    const c = loadConfig({ WORKER_QUEUES: 'agent, pulse', WORKER_CONCURRENCY_AGENT: '3' });
    expect(c.WORKER_QUEUES).toEqual(['agent', 'pulse']);
    expect(c.WORKER_CONCURRENCY_AGENT).toBe(3);
    expect(() => loadConfig({ WORKER_QUEUES: 'agent,mail' })).toThrow(ConfigError);
    // A default worker (and npm start) serves the resolution plans' jobs too.
    expect(loadConfig({}).WORKER_QUEUES).toEqual(['agent', 'pulse', 'plans', 'reports', 'triage']);
    expect(() => loadConfig({ AGENT_ENGINE: 'scripted', NODE_ENV: 'production' })).toThrow(/scripted/);
    expect(() => loadConfig({ BULL_BOARD_ENABLED: 'true' })).toThrow(/OPERATOR_USER/);
  });

  it('serves reports by default, and needs SECRETS_KEY (32+ characters) in production only', () => {
    const c = loadConfig({});
    expect(c.WORKER_QUEUES).toEqual(['agent', 'pulse', 'plans', 'reports', 'triage']);
    expect(c.SECRETS_KEY).toBeUndefined();
    expect(c).toMatchObject({ NOTIFY_ATTEMPTS: 5, NOTIFY_BACKOFF_MS: 30_000, NOTIFY_TIMEOUT_MS: 10_000 });
    // Embedded (no DATABASE_URL): the key file in DATA_DIR, beside the data it protects.
    expect(loadConfig({ NODE_ENV: 'production' }).SECRETS_KEY).toBeUndefined();
    expect(() => loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://x@h/db' })).toThrow(
      /SECRETS_KEY: needed when NODE_ENV=production/,
    );
    expect(() => loadConfig({ SECRETS_KEY: 'too-short' })).toThrow(/SECRETS_KEY/);
    expect(loadConfig({ NODE_ENV: 'production', SECRETS_KEY: 'k'.repeat(32) }).SECRETS_KEY).toBe(
      'k'.repeat(32),
    );
  });

  it('OUTBOUND_ALLOW_CIDRS: empty by default, CIDRs or addresses, refused in production', () => {
    expect(loadConfig({}).OUTBOUND_ALLOW_CIDRS).toEqual([]);
    expect(loadConfig({ OUTBOUND_ALLOW_CIDRS: '127.0.0.1, ::1, 10.0.0.0/8' }).OUTBOUND_ALLOW_CIDRS).toEqual([
      '127.0.0.1/32',
      '::1/128',
      '10.0.0.0/8',
    ]);
    expect(() => loadConfig({ OUTBOUND_ALLOW_CIDRS: 'localhost' })).toThrow(/OUTBOUND_ALLOW_CIDRS/);
    expect(() => loadConfig({ OUTBOUND_ALLOW_CIDRS: '10.0.0.0/33' })).toThrow(/OUTBOUND_ALLOW_CIDRS/);
    expect(() => loadConfig({ NODE_ENV: 'production', OUTBOUND_ALLOW_CIDRS: '127.0.0.1' })).toThrow(
      /OUTBOUND_ALLOW_CIDRS: a test setting/,
    );
  });

  it('configures hosted models and refuses incomplete ones', () => {
    expect(loadConfig({}).AGENT_MAX_STEPS).toBe(8);
    const openai = loadConfig({
      AGENT_ENGINE: 'openai',
      AGENT_MODEL: 'llama3.1',
      AGENT_BASE_URL: 'http://127.0.0.1:11434/v1',
      AGENT_MAX_STEPS: '5',
    });
    expect(openai).toMatchObject({ AGENT_ENGINE: 'openai', AGENT_MAX_STEPS: 5, AGENT_MAX_RETRIES: 2 });
    expect(openai.AGENT_API_KEY).toBeUndefined();
    expect(() => loadConfig({ AGENT_ENGINE: 'openai', AGENT_MODEL: 'm' })).toThrow(/AGENT_BASE_URL/);
    expect(() => loadConfig({ AGENT_ENGINE: 'openai', AGENT_BASE_URL: 'http://h/v1' })).toThrow(
      /AGENT_MODEL/,
    );
    expect(() => loadConfig({ AGENT_ENGINE: 'anthropic', AGENT_MODEL: 'claude' })).toThrow(/AGENT_API_KEY/);
    const anthropic = loadConfig({ AGENT_ENGINE: 'anthropic', AGENT_MODEL: 'claude', AGENT_API_KEY: 'k' });
    expect(anthropic.AGENT_BASE_URL).toBeUndefined();
    expect(() =>
      loadConfig({ AGENT_ENGINE: 'openai', AGENT_MODEL: 'm', AGENT_BASE_URL: 'not a url' }),
    ).toThrow(/AGENT_BASE_URL/);
    expect(() => loadConfig({ AGENT_MAX_STEPS: '1' })).toThrow(/AGENT_MAX_STEPS/);
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

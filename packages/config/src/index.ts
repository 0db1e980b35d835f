import { isIP } from 'node:net';
import { z } from 'zod';
import { QUEUE_NAMES } from '@opsi/contracts';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/** `a.b.c.d/n` or `v6::/n` (a bare address is one address), normalized to CIDR form. */
const cidrList = z
  .string()
  .transform((v) =>
    v
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean),
  )
  .pipe(
    z.array(
      z
        .string()
        .refine((c) => {
          const [addr = '', bits, extra] = c.split('/');
          const kind = isIP(addr);
          if (!kind || extra !== undefined) return false;
          if (bits === undefined) return true;
          const n = Number(bits);
          return /^\d{1,3}$/.test(bits) && n <= (kind === 4 ? 32 : 128);
        }, 'each entry must be an IP address or CIDR (127.0.0.1/32, ::1/128)')
        .transform((c) => (c.includes('/') ? c : `${c}/${isIP(c) === 4 ? 32 : 128}`)),
    ),
  );

const optionalUrl = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .pipe(z.url().optional())
  .optional();

/** Every setting the service reads, with its default. Nothing else reads `process.env`. */
export const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  PUBLIC_URL: optionalUrl,
  DATABASE_URL: optionalUrl,
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  DATA_DIR: z.string().min(1).default('.data'),
  REDIS_URL: optionalUrl,
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_{}-]+$/, 'letters, digits and : _ { } - only')
    .default('opsi'),
  /**
   * REDIS_URL names a seed node of a Redis Cluster (ElastiCache cluster mode, Memorystore for Redis
   * Cluster, a self-run cluster): the service discovers the other nodes, and names its keys with hash
   * tags so that the keys of one script or transaction share a slot while queues and runs spread.
   */
  REDIS_CLUSTER: bool.default(false),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
  SESSION_TTL_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 30)
    .default(12),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  PLAN_REVIEW_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(10 * 1024 * 1024),
  /** Time one plan parse may take on its worker thread (past it: 422). */
  PLAN_PARSE_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** Heap of the plan parser's worker thread, MB (past it: 413). */
  PLAN_PARSE_MEMORY_MB: z.coerce.number().int().min(32).default(512),
  TRUST_PROXY: bool.default(false),
  METRICS_TOKEN: z.string().min(16).optional(),
  REVISION: z.string().min(1).optional(),
  DEMO_SEED: bool.default(true),

  // The infrastructure graph and the resilience engine.
  /** The lowest tier that may read /api/v1/resilience/* (402 tier_restricted below it). */
  RESILIENCE_MIN_TIER: z.enum(['free', 'team', 'enterprise']).default('team'),
  /** How many tenants' graphs an API or worker process keeps in memory (0: build on every read). */
  GRAPH_CACHE_TENANTS: z.coerce.number().int().min(0).max(1000).default(8),

  // Worker pools: which queues this process serves, and how many jobs of each at once.
  WORKER_QUEUES: z
    .string()
    .default('agent,pulse,plans,reports,triage')
    .transform((v) =>
      v
        .split(',')
        .map((q) => q.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(QUEUE_NAMES)).min(1)),
  WORKER_CONCURRENCY_AGENT: z.coerce.number().int().min(1).max(1000).default(8),
  WORKER_CONCURRENCY_PULSE: z.coerce.number().int().min(1).max(64).default(1),
  WORKER_CONCURRENCY_PLANS: z.coerce.number().int().min(1).max(256).default(4),
  /** Resolution plans: generation that passes this is failed (retryable); verify re-checks not yet reflected changes. */
  PLAN_GENERATION_TIMEOUT_MS: z.coerce.number().int().min(1000).default(120_000),
  PLAN_VERIFY_RETRIES: z.coerce.number().int().min(0).max(20).default(3),
  PLAN_VERIFY_RETRY_DELAY_MS: z.coerce.number().int().min(0).default(5_000),
  WORKER_CONCURRENCY_REPORTS: z.coerce.number().int().min(1).max(64).default(2),
  WORKER_CONCURRENCY_TRIAGE: z.coerce.number().int().min(1).max(256).default(16),
  /** Triage: a repeat of an alert (same fingerprint) within this many minutes of its last one is a duplicate. */
  TRIAGE_DEDUPE_WINDOW_MINUTES: z.coerce.number().int().min(1).max(1440).default(30),
  /** Triage: an alert joins an open incident on the same or a connected resource alerted within this window. */
  TRIAGE_CORRELATION_WINDOW_MINUTES: z.coerce.number().int().min(1).max(10_080).default(120),
  /**
   * Amazon SNS: the hosts a message's SigningCertURL and SubscribeURL may name (comma-separated patterns,
   * `*` matching one DNS label). Certificates are fetched only over HTTPS from these hosts.
   */
  SNS_TRUSTED_HOSTS: z
    .string()
    .default('sns.*.amazonaws.com')
    .transform((v) =>
      v
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
    )
    .pipe(
      z.array(z.string().regex(/^[a-z0-9*.:[\]-]+$/, 'host patterns: letters, digits, . - and *')).min(1),
    ),
  /** How long POST /api/v1/triage/alerts waits for the triage job's decision before answering without it. */
  TRIAGE_WAIT_MS: z.coerce.number().int().min(1).max(60_000).default(10_000),
  /**
   * Backpressure: how many jobs of one tenant may wait in one queue (agent turns, scans, triage batches)
   * before a request that would add one answers 503 with Retry-After. Protects the service's Redis, not a
   * quota (the agent budget is the only rate limit). 0: no bound. 5,000 waiting turns take about 6 MB.
   */
  QUEUE_TENANT_BACKLOG_MAX: z.coerce.number().int().min(0).max(1_000_000).default(5_000),
  /**
   * Triage intake group commit: concurrent POST /api/v1/triage/alerts of one tenant go into the inbox as
   * one insert and one job of at most this many alerts, with at most TRIAGE_BATCH_IN_FLIGHT such
   * batches per tenant awaiting their decision at once (more requests wait and coalesce).
   */
  TRIAGE_BATCH_MAX_ALERTS: z.coerce.number().int().min(1).max(10_000).default(1000),
  TRIAGE_BATCH_IN_FLIGHT: z.coerce.number().int().min(1).max(64).default(2),
  /** How long SIGTERM waits for active jobs before handing them back (they resume elsewhere). */
  WORKER_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(30_000),
  /** BullMQ job lock: renewed every half; a dead worker's job is taken over after about this long. */
  WORKER_LOCK_DURATION_MS: z.coerce.number().int().min(1000).default(15_000),
  WORKER_STALLED_INTERVAL_MS: z.coerce.number().int().min(500).default(5_000),
  /** How many times a job may be taken over from a dead worker before its run fails. */
  WORKER_MAX_STALLED_COUNT: z.coerce.number().int().min(0).max(10).default(2),
  /** How often the sweeper looks for runs whose job is gone. */
  RUN_SWEEP_INTERVAL_MS: z.coerce.number().int().min(1000).default(30_000),
  /** How long a run's event stream is kept in Redis after it ends (its messages stay in Postgres). */
  RUN_STREAM_TTL_SECONDS: z.coerce.number().int().min(1).default(86_400),
  /** A run's hard deadline: past it the turn is aborted and the run fails. */
  AGENT_TURN_TIMEOUT_MS: z.coerce.number().int().min(1000).default(600_000),
  /**
   * builtin: the offline engine. openai: any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM,
   * Ollama, LM Studio …). anthropic: Anthropic's messages API. scripted: plays the prompt as a script of
   * events (tests only).
   */
  AGENT_ENGINE: z.enum(['builtin', 'openai', 'anthropic', 'scripted']).default('builtin'),
  /** The hosted model's id (openai, anthropic), e.g. gpt-4o-mini, llama3.1, claude-sonnet-4-5. */
  AGENT_MODEL: z.string().trim().min(1).optional(),
  /** The model API's base URL: required for openai (…/v1); Anthropic's own API when unset. */
  AGENT_BASE_URL: optionalUrl,
  /** The model API's key (Bearer for openai, x-api-key for anthropic). Never logged. */
  AGENT_API_KEY: z.string().min(1).optional(),
  /** Most model calls in one pass of the agent loop; the last must answer in text. */
  AGENT_MAX_STEPS: z.coerce.number().int().min(2).max(50).default(8),
  /** Retries of a failed model call (429, 5xx, network errors), with backoff. */
  AGENT_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  /** Comment lines keep idle SSE connections alive through proxies (at least every 15 s). */
  SSE_KEEPALIVE_MS: z.coerce.number().int().min(100).max(15_000).default(15_000),
  /** Bytes an SSE client may fall behind before it is dropped (it re-attaches with after_seq). */
  SSE_MAX_BUFFERED_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  /** How often the scheduler reconciles per-tenant job schedulers with the tenants table. */
  SCHEDULER_INTERVAL_MS: z.coerce.number().int().min(1000).default(60_000),
  /** Port of the worker's own /metrics and /healthz (0: none). npm start serves them on the API. */
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  /** The queue dashboard (Bull Board) at /admin/queues, behind OPERATOR_USER / OPERATOR_PASSWORD. */
  BULL_BOARD_ENABLED: bool.default(false),
  /**
   * Encrypts installed integrations' secrets (notifier URLs and signing secrets), 32+ characters (a key
   * is derived with HKDF-SHA256). Required when NODE_ENV=production with DATABASE_URL; otherwise a random
   * key is kept in DATA_DIR/secrets.key. Changing it makes the stored secrets unreadable: reinstall the notifiers.
   */
  SECRETS_KEY: z.string().min(32, 'at least 32 characters').optional(),
  /** Tries per notifier delivery (the first included), then it is recorded failed. */
  NOTIFY_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(5),
  /** First retry delay of a notifier delivery; it doubles each retry. */
  NOTIFY_BACKOFF_MS: z.coerce.number().int().min(10).default(30_000),
  /** Timeout of one notifier request. */
  NOTIFY_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /**
   * Tests only (refused when NODE_ENV=production): addresses (CIDRs, comma-separated) that tenant-set
   * URLs may reach although they are loopback, private or link-local, e.g. a test's receiver on
   * 127.0.0.1/32. Default: none.
   */
  OUTBOUND_ALLOW_CIDRS: cidrList.default([]),
  /** Sign-in: wrong passwords for one account within LOGIN_WINDOW_SECONDS before 429 with Retry-After. */
  LOGIN_MAX_FAILURES_PER_ACCOUNT: z.coerce.number().int().min(1).max(10_000).default(20),
  /** Sign-in: failed sign-ins from one client address within LOGIN_WINDOW_SECONDS before 429. */
  LOGIN_MAX_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).max(100_000).default(100),
  /** The window of the sign-in limits; each further window over the limit doubles the wait (to 1 hour). */
  LOGIN_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  /** Password hashes (argon2) at once per process; more wait up to PASSWORD_HASH_WAIT_MS, then 503. */
  PASSWORD_HASH_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  PASSWORD_HASH_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(2_000),
  OPERATOR_USER: z.string().min(1).optional(),
  OPERATOR_PASSWORD: z.string().min(12).optional(),
});

export type Env = z.infer<typeof EnvSchema>;

export interface Config extends Env {
  /** True when no DATABASE_URL is set: Postgres runs embedded (PGlite) under DATA_DIR. */
  embeddedDatabase: boolean;
  /** True when no REDIS_URL is set: a Redis-compatible server runs in this process. */
  embeddedRedis: boolean;
  publicUrl: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment once; a bad environment fails with every problem listed. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`));
  }
  const e = parsed.data;
  const problems: string[] = [];
  if (e.AGENT_ENGINE === 'scripted' && e.NODE_ENV === 'production') {
    problems.push('AGENT_ENGINE: scripted is a test engine and is refused when NODE_ENV=production');
  }
  if (e.AGENT_ENGINE === 'openai' || e.AGENT_ENGINE === 'anthropic') {
    if (!e.AGENT_MODEL) problems.push(`AGENT_MODEL: needed when AGENT_ENGINE=${e.AGENT_ENGINE}`);
    if (e.AGENT_ENGINE === 'openai' && !e.AGENT_BASE_URL) {
      problems.push('AGENT_BASE_URL: needed when AGENT_ENGINE=openai (e.g. https://api.openai.com/v1)');
    }
    if (e.AGENT_ENGINE === 'anthropic' && !e.AGENT_API_KEY) {
      problems.push('AGENT_API_KEY: needed when AGENT_ENGINE=anthropic');
    }
  }
  if (e.OUTBOUND_ALLOW_CIDRS.length && e.NODE_ENV === 'production') {
    problems.push('OUTBOUND_ALLOW_CIDRS: a test setting, refused when NODE_ENV=production');
  }
  if (e.BULL_BOARD_ENABLED && (!e.OPERATOR_USER || !e.OPERATOR_PASSWORD)) {
    problems.push('BULL_BOARD_ENABLED: needs OPERATOR_USER and OPERATOR_PASSWORD (12+ characters)');
  }
  // Embedded mode keeps a generated key beside its data in DATA_DIR (one process owns both); with a
  // database server, every process on every machine must decrypt the same secrets.
  if (e.NODE_ENV === 'production' && !e.SECRETS_KEY && e.DATABASE_URL !== undefined) {
    problems.push(
      'SECRETS_KEY: needed when NODE_ENV=production with DATABASE_URL (32+ characters; it encrypts notifier URLs and secrets)',
    );
  }
  if (e.REDIS_CLUSTER && e.REDIS_URL === undefined) {
    problems.push('REDIS_CLUSTER: needs REDIS_URL (a seed node of the cluster)');
  }
  // The service puts hash tags in its keys on a cluster (docs/operations.md): a tag in the prefix would
  // come first and put every key in one slot.
  if (e.REDIS_CLUSTER && /[{}]/.test(e.REDIS_PREFIX)) {
    problems.push('REDIS_PREFIX: no { } with REDIS_CLUSTER=true (the service tags its keys itself)');
  }
  if (problems.length) throw new ConfigError(problems);
  const shownHost = e.HOST === '0.0.0.0' ? '127.0.0.1' : e.HOST;
  return {
    ...e,
    embeddedDatabase: e.DATABASE_URL === undefined,
    embeddedRedis: e.REDIS_URL === undefined,
    publicUrl: (e.PUBLIC_URL ?? `http://${shownHost}:${e.PORT}`).replace(/\/$/, ''),
  };
}

/**
 * For process entry points: the configuration, or the list of problems on stderr and exit code 2,
 * the same way for every process.
 */
export function loadConfigOrExit(env: Record<string, string | undefined> = process.env): Config {
  try {
    return loadConfig(env);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`${e.message}\n`);
    process.exit(2);
  }
}

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './processes';

// A real Redis Cluster for the tests (spec/decisions.md, "Scale-out on real engines"): masters started
// from this machine's redis-server on free ports in a temp directory, joined with
// `redis-cli --cluster create` (the slots split evenly, no replicas). `npm run test:redis-cluster` runs
// the Redis-heavy suites against one; the cluster's own integration test starts one of its own.

const run = promisify(execFile);

export const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';
export const REDIS_CLI = process.env.REDIS_CLI ?? '/usr/bin/redis-cli';

/** Why a cluster cannot be started here, or undefined when it can. */
export function redisClusterUnavailable(): string | undefined {
  if (!existsSync(REDIS_SERVER)) return `no redis-server at ${REDIS_SERVER} (set REDIS_SERVER)`;
  if (!existsSync(REDIS_CLI)) return `no redis-cli at ${REDIS_CLI} (set REDIS_CLI)`;
  return undefined;
}

export interface RedisCluster {
  /** The seed node's URL (the first master): what REDIS_URL names with REDIS_CLUSTER=true. */
  url: string;
  /** Every master's URL. */
  urls: string[];
  stop(): Promise<void>;
}

/**
 * Starts `masters` cluster-enabled redis-servers (no persistence, noeviction as BullMQ requires) and
 * joins them into one cluster; answers once every node reports `cluster_state:ok`. Each node's cluster
 * bus port is a free port of its own (`cluster-port`), not port + 10000, which may be taken or out of range.
 */
export async function startRedisCluster(opts: { masters?: number } = {}): Promise<RedisCluster> {
  const count = opts.masters ?? 3;
  const dir = mkdtempSync(join(tmpdir(), 'opsi-redis-cluster-'));
  const children: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const port = await freePort();
      const busPort = await freePort();
      ports.push(port);
      const child = spawn(
        REDIS_SERVER,
        [
          ...[
            '--port',
            String(port),
            '--bind',
            '127.0.0.1',
            '--dir',
            dir,
            '--save',
            '',
            '--appendonly',
            'no',
          ],
          ...['--cluster-enabled', 'yes', '--cluster-port', String(busPort)],
          ...['--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '5000'],
          ...['--maxmemory-policy', 'noeviction'],
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      children.push(child);
      let output = '';
      child.stdout!.on('data', (d) => (output += String(d)));
      child.stderr!.on('data', (d) => (output += String(d)));
      for (let n = 0; !output.includes('Ready to accept connections'); n++) {
        if (child.exitCode !== null) throw new Error(`redis-server exited:\n${output}`);
        if (n > 200) throw new Error(`redis-server not ready:\n${output}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await run(
      REDIS_CLI,
      [
        '--cluster',
        'create',
        ...ports.map((p) => `127.0.0.1:${p}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { timeout: 60_000 },
    );
    for (const port of ports) {
      for (let n = 0; ; n++) {
        const { stdout } = await run(REDIS_CLI, ['-p', String(port), 'cluster', 'info']);
        if (/cluster_state:ok/.test(stdout)) break;
        if (n > 300) throw new Error(`Redis Cluster node ${port} not ok:\n${stdout}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const urls = ports.map((p) => `redis://127.0.0.1:${p}`);
    return { url: urls[0]!, urls, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Moves one slot, with its keys, to the master at `toUrl`, as `redis-cli --cluster reshard` does for a
 * range (CLUSTER SETSLOT IMPORTING/MIGRATING, MIGRATE of its keys, then SETSLOT NODE on every master):
 * clients must follow the slot by themselves (MOVED). Answers the URL of the master it came from.
 */
export async function moveSlot(cluster: RedisCluster, slot: number, toUrl: string): Promise<string> {
  const { createRedis } = await import('@opsi/redis');
  const nodes = cluster.urls.map((url) => ({ url, redis: createRedis(url, 'command') }));
  try {
    const ids = await Promise.all(nodes.map((n) => n.redis.cluster('MYID') as Promise<string>));
    const owners = await nodes[0]!.redis.cluster('SLOTS');
    const ownerPort = owners.find(([from, to]) => slot >= from && slot <= to)![2]![1];
    const from = nodes.findIndex((n) => new URL(n.url).port === String(ownerPort));
    const to = nodes.findIndex((n) => n.url === toUrl);
    if (from === to) return toUrl;
    const [source, target] = [nodes[from]!.redis, nodes[to]!.redis];
    await target.cluster('SETSLOT', slot, 'IMPORTING', ids[from]!);
    await source.cluster('SETSLOT', slot, 'MIGRATING', ids[to]!);
    const { hostname, port } = new URL(toUrl);
    for (;;) {
      const keys = (await source.cluster('GETKEYSINSLOT', slot, 100)) as string[];
      if (keys.length === 0) break;
      await source.migrate(hostname, port, '', 0, 5000, 'KEYS', ...keys);
    }
    for (const n of [target, source, ...nodes.map((x) => x.redis)]) {
      await n.cluster('SETSLOT', slot, 'NODE', ids[to]!);
    }
    return nodes[from]!.url;
  } finally {
    for (const n of nodes) n.redis.disconnect();
  }
}

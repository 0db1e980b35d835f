import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Redis as IORedis } from 'ioredis';
import { freePort } from './processes';

/**
 * A real Redis Cluster of three masters (no replicas) from this machine's `redis-server`, on free
 * ports in a temporary directory, for the black-box checks of `REDIS_CLUSTER=true`. Made with
 * `redis-cli --cluster create … --cluster-replicas 0 --cluster-yes`, as an operator would.
 */

export const REDIS_SERVER = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';
export const REDIS_CLI = process.env.REDIS_CLI ?? join(dirname(REDIS_SERVER), 'redis-cli');

/** Why a cluster cannot be started here, or undefined when it can. */
export function clusterUnavailable(): string | undefined {
  if (!existsSync(REDIS_SERVER)) return `no redis-server at ${REDIS_SERVER} (set REDIS_SERVER)`;
  if (!existsSync(REDIS_CLI)) return `no redis-cli beside redis-server at ${REDIS_CLI} (set REDIS_CLI)`;
  return undefined;
}

export interface ClusterNode {
  host: string;
  port: number;
  /** The node's cluster id (CLUSTER MYID). */
  id: string;
  /** A plain (non-cluster) connection to this node alone: SCAN and CLUSTER commands ask it. */
  client: IORedis;
  process: ChildProcess;
  output(): string;
}

export interface RedisCluster {
  nodes: ClusterNode[];
  /** `redis://host:port` of the first node: the one seed the service is given. */
  seedUrl: string;
  /** The master that serves a slot, by CLUSTER SLOTS. */
  ownerOf(slot: number): Promise<ClusterNode>;
  destroy(): Promise<void>;
}

const HOST = '127.0.0.1';

async function waitFor(what: string, probe: () => Promise<boolean>, boundMs = 30_000) {
  const deadline = Date.now() + boundMs;
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'opsi-bb-cluster-'));
  const nodes: ClusterNode[] = [];
  const children: ChildProcess[] = [];
  const destroy = async () => {
    for (const n of nodes) n.client.disconnect();
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
    for (let i = 0; i < masters; i++) {
      const port = await freePort();
      // The bus port is given explicitly: port + 10000 may be out of range or taken.
      const busPort = await freePort();
      const child = spawn(
        REDIS_SERVER,
        [
          ...['--port', String(port), '--bind', HOST, '--dir', dir],
          ...['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`],
          ...['--cluster-port', String(busPort), '--cluster-node-timeout', '5000'],
          ...['--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'],
        ],
        // The marker lets the test teardown kill a server that a killed test file left behind.
        { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, OPSI_TEST_SERVICE: '1' } },
      );
      children.push(child);
      let output = '';
      child.stdout!.on('data', (d) => (output += String(d)));
      child.stderr!.on('data', (d) => (output += String(d)));
      await waitFor(`redis-server on ${port} to accept connections`, async () => {
        if (child.exitCode !== null) throw new Error(`redis-server exited:\n${output}`);
        return output.includes('Ready to accept connections');
      });
      const client = new IORedis({ host: HOST, port, maxRetriesPerRequest: 2, lazyConnect: false });
      const id = String(await client.call('CLUSTER', 'MYID'));
      nodes.push({ host: HOST, port, id, client, process: child, output: () => output });
    }
    const create = spawnSync(
      REDIS_CLI,
      [
        '--cluster',
        'create',
        ...nodes.map((n) => `${n.host}:${n.port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    if (create.status !== 0)
      throw new Error(
        `redis-cli --cluster create failed (${create.status}):\n${create.stdout}${create.stderr}`,
      );
    // Every node sees the whole cluster: all slots served, every master known.
    await waitFor('the cluster to be ok on every node', async () => {
      for (const n of nodes) {
        const info = String(await n.client.call('CLUSTER', 'INFO'));
        if (!/cluster_state:ok/.test(info)) return false;
        if (!new RegExp(`cluster_known_nodes:${masters}\\b`).test(info)) return false;
        if (!/cluster_slots_ok:16384\b/.test(info)) return false;
      }
      return true;
    });
  } catch (err) {
    await destroy();
    throw err;
  }
  const byId = new Map(nodes.map((n) => [n.id, n]));
  return {
    nodes,
    seedUrl: `redis://${HOST}:${nodes[0]!.port}`,
    async ownerOf(slot: number) {
      const ranges = (await nodes[0]!.client.call('CLUSTER', 'SLOTS')) as Array<
        [number, number, [string, number, string, ...unknown[]], ...unknown[]]
      >;
      for (const [from, to, master] of ranges) {
        if (slot >= from && slot <= to) {
          const node = byId.get(master[2]) ?? nodes.find((n) => n.port === Number(master[1]));
          if (node) return node;
        }
      }
      throw new Error(`no master serves slot ${slot}`);
    },
    destroy,
  };
}

/** Every key matching `pattern` on one node (SCAN of that node alone). */
export async function scanNode(node: ClusterNode, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, page] = await node.client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...page);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

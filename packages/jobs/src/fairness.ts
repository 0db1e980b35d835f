import type { Queue } from 'bullmq';
import type { RedisClient } from '@opsi/redis';

/**
 * Fair queuing between tenants on a shared BullMQ queue (open-source BullMQ has no groups).
 *
 * Every job of a tenant gets a BullMQ priority from a virtual clock (start-time fair queuing): the
 * queue's virtual time `v` is the priority of the job at the head of the prioritized set (the next one a
 * worker takes), kept monotonic in a hash; a tenant's next job gets `max(v, the tenant's last) + 1`. A
 * tenant that floods gets consecutive priorities v+1, v+2, … ; a tenant that arrives later gets v+1 and
 * goes in right behind the head, so the pools serve tenants round-robin, one job of each per priority
 * level, whatever one of them has queued. Equal priorities keep their order of arrival (BullMQ's own
 * counter), and a priority never changes once a job has it (a retry or a delayed job keeps its place).
 *
 * The same numbers measure a tenant's backlog: its waiting jobs hold the consecutive priorities v..last,
 * so `last - v + 1` is how many of its jobs wait, give or take the one at v (cancelled jobs count until
 * the head passes them). Admission refuses a job when that reaches the bound (see BacklogFull).
 *
 * BullMQ priorities end at 2^21 - 1: at that point new jobs share the last level (FIFO among them), and
 * once nothing waits the clock starts again from 0.
 */
export const PRIORITY_MAX = 2 ** 21 - 1;
const REBASE_AT = 2 ** 20;

const SCRIPT = `
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local v = tonumber(redis.call('HGET', KEYS[2], 'v') or '0')
local field = 't:' .. ARGV[1]
local limit = tonumber(ARGV[2])
local last
local backlog = 0
if head[2] then
  local h = math.floor(tonumber(head[2]) / 4294967296)
  if h > v then v = h end
  -- The tenant's waiting jobs hold the priorities v..last (the one at v may be taken already).
  last = tonumber(redis.call('HGET', KEYS[2], field) or '0')
  if last >= v then backlog = last - v + 1 else last = v end
else
  -- Nothing waits: no tenant has a backlog. Start the clock again once it has run far. The job still
  -- goes after the tenant's own last place: admissions racing here (their jobs not enqueued yet) get
  -- consecutive places, each counted once its job lands, not one shared place that would count as one
  -- job. (A place the tenant held long ago is passed by the clock as soon as this job is at the head.)
  if v >= tonumber(ARGV[4]) then
    redis.call('DEL', KEYS[2])
    v = 0
  end
  last = math.max(v, tonumber(redis.call('HGET', KEYS[2], field) or '0'))
end
if limit > 0 and backlog >= limit then return {-1, backlog} end
local p = last + 1
if p > tonumber(ARGV[3]) then p = tonumber(ARGV[3]) end
redis.call('HSET', KEYS[2], 'v', v, field, p)
return {p, backlog}
`;

/** A tenant's backlog on a queue is at its bound: the job is refused (nothing was enqueued). */
export class BacklogFull extends Error {
  constructor(
    readonly queue: string,
    readonly tenantId: string,
    readonly backlog: number,
    readonly limit: number,
  ) {
    super(`the ${queue} queue already holds ${backlog} waiting jobs of this tenant (bound ${limit})`);
    this.name = 'BacklogFull';
  }
}

type FairRedis = RedisClient & {
  opsiFairSlot(
    prioritizedKey: string,
    fairKey: string,
    tenantId: string,
    limit: number,
    max: number,
    rebaseAt: number,
  ): Promise<[number, number]>;
};

function withScript(redis: RedisClient): FairRedis {
  const r = redis as FairRedis;
  if (typeof r.opsiFairSlot !== 'function') r.defineCommand('opsiFairSlot', { numberOfKeys: 2, lua: SCRIPT });
  return r;
}

/**
 * The hash holding a queue's virtual time and each tenant's last priority, in the queue's key space: on
 * a cluster it carries the queue's hash tag (bullPrefix), so the script's two keys share a slot.
 */
export function fairKey(queue: Queue): string {
  return queue.toKey('fair');
}

/**
 * Gives the next job of `tenantId` on `queue` (whose connection is `redis`) its priority, and answers
 * the tenant's backlog before it; throws BacklogFull instead when `limit` (> 0) jobs of the tenant
 * already wait.
 */
export async function fairSlot(
  redis: RedisClient,
  queue: Queue,
  tenantId: string,
  limit: number,
): Promise<{ priority: number; backlog: number }> {
  // `redis` is the queue's own (shared) connection: wait until it is ready, as the queue itself does (a
  // producer connection has no offline queue).
  await queue.waitUntilReady();
  const [priority, backlog] = await withScript(redis).opsiFairSlot(
    queue.keys.prioritized!,
    fairKey(queue),
    tenantId,
    limit,
    PRIORITY_MAX,
    REBASE_AT,
  );
  if (priority < 0) throw new BacklogFull(queue.name, tenantId, backlog, limit);
  return { priority, backlog };
}

/** Whether an error is Redis refusing a write at `maxmemory` under the `noeviction` policy. */
export function isRedisOutOfMemory(error: unknown): boolean {
  return error instanceof Error && /^OOM command not allowed/.test(error.message);
}

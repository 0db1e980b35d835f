import type {
  CollectedInventory,
  CollectProgress,
  Connector,
  InventoryEdge,
  InventoryEvent,
  InventoryObservation,
  InventoryResource,
} from '../model';
import type { PriceBook } from '../pricing';
import { applyCommand, type AppliedCommand } from './commands';
import { buildFiller } from './filler';
import { buildSeeded, type Seeded } from './seeded';
import { DemoSignals, demoCosts, demoMetrics } from './signals';
import { applyTimeline, HISTORY_START_DAY } from './timeline';
import { FILLER_SERVICES, WorldBuilder, type DemoSpec } from './world';

export {
  DemoCommandError,
  SUPPORTED_COMMANDS,
  parseCommand,
  type AppliedCommand,
  type CommandEffect,
} from './commands';
export { DEMO_SIZES, FILLER_SERVICES, type DemoSize, type DemoSpec } from './world';
export { HISTORY_START_DAY } from './timeline';
export { METRIC_WINDOW_DAYS } from './signals';

/**
 * The environment on the spec's day: the seeded organization as of day -7, the timeline up to the day,
 * then the operator's commands in the order they were run (a command whose target a later churn
 * removed changes nothing on replay).
 *
 * With `part`, only the filler stacks numbered from `part.from` to before `part.to` are built (the
 * organization always is), and every resource, edge and event records its owner (world.ts, `owner`):
 * collectWorld builds a whale's inventory this way, one part at a time.
 */
export function buildWorld(
  spec: DemoSpec,
  part?: { from: number; to: number },
): { world: WorldBuilder; seeded: Seeded } {
  const world = new WorldBuilder(spec, { trackOwners: part !== undefined });
  const seeded = buildSeeded(world);
  const filler = buildFiller(world, part);
  applyTimeline(world, seeded, filler);
  spec.commands
    .filter((c) => c.day <= spec.day)
    .forEach((c, i) => {
      const mark = world.owners ? ownedSoFar(world) : undefined;
      try {
        const applied = applyCommand(world, c.command, i);
        // What a command adds belongs to the stack it acted on, if any: the part that holds that stack
        // emits it; a command on the organization alone is emitted by the first part.
        if (mark) {
          const touched = [...applied.effects.map((e) => e.arn), ...linkedSince(world, mark)];
          const owner =
            touched
              .map((arn) => world.owners!.resources.get(arn))
              .find((o): o is number => typeof o === 'number') ?? null;
          reassignOwners(world, mark, owner);
        }
      } catch {
        // It was valid when run; its target has since gone (e.g. an instance autoscaling replaced), or
        // it is in a stack another part of the world holds.
      }
    });
  return { world, seeded };
}

/** What owner records there are before a command, to tell which it added. */
function ownedSoFar(w: WorldBuilder) {
  return {
    resources: new Set(w.owners!.resources.keys()),
    edges: new Set(w.owners!.edges.keys()),
    events: w.eventOwners.length,
  };
}

/** Both ends of every edge a command added (an alarm on a stack's instance belongs to that stack). */
function linkedSince(w: WorldBuilder, mark: ReturnType<typeof ownedSoFar>): string[] {
  const out: string[] = [];
  for (const [key, e] of w.edges) if (!mark.edges.has(key)) out.push(e.from, e.to);
  return out;
}

function reassignOwners(w: WorldBuilder, mark: ReturnType<typeof ownedSoFar>, owner: number | null): void {
  for (const arn of w.owners!.resources.keys())
    if (!mark.resources.has(arn)) w.owners!.resources.set(arn, owner);
  for (const key of w.owners!.edges.keys()) if (!mark.edges.has(key)) w.owners!.edges.set(key, owner);
  for (let i = mark.events; i < w.eventOwners.length; i++) w.eventOwners[i] = owner;
}

/** What a world observes at its clock: events after it (the storyline's future) are left out. */
const observed = (w: WorldBuilder) => (e: InventoryEvent) =>
  Date.parse(e.at) < w.observedAt.getTime() + 60_000;

/**
 * Filler stacks per part when a world is built in parts. A part of 4,000 stacks is about 60,000
 * resources (about 70 MB of objects); `large` (6,600 stacks) and smaller are built whole.
 */
export const PART_SERVICES = 4000;

/** What the inventory of a world is: resources, edges, metrics, cost lines, events up to its clock. */
export function collectWorld(spec: DemoSpec, book: PriceBook): CollectedInventory {
  const { world, seeded } = buildWorld(spec);
  return {
    observedAt: world.observedAt,
    resources: [...world.resources.values()],
    edges: [...world.edges.values()],
    metrics: demoMetrics(world, seeded),
    costs: demoCosts(world, book),
    events: world.events.filter(observed(world)),
  };
}

/**
 * The inventory of a world as a scan syncs it: collectWorld's, or, for a world of more than
 * `partServices` filler stacks (`xlarge`), built in parts as it is read (observeInParts).
 */
export function observeWorld(
  spec: DemoSpec,
  book: PriceBook,
  partServices = PART_SERVICES,
): InventoryObservation {
  return FILLER_SERVICES[spec.size] > partServices
    ? observeInParts(spec, book, partServices)
    : collectWorld(spec, book);
}

/**
 * A whale's inventory (`xlarge`, about 1,000,000 resources), never held whole: the world is built in
 * parts of `partServices` filler stacks, each with the organization (seeded defects, networks) and the
 * whole timeline and commands, and each part yields what it owns (world.ts, `owner`; the first part
 * also what the organization owns). The same resources, edges, metric points, cost lines and events
 * as buildWorld's whole world, in another order (demo.test.ts compares them).
 *
 * One pass here counts resources and edges and keeps, per resource that reports metrics or costs, only
 * what its rows need, sorted by ARN so they are generated in the order the sync writes fastest; the
 * resources are built again, part by part, when the sync reads them, and their walk keeps the edges for
 * the edges walk. Each part is dropped before the next is built: the memory held is one part, the
 * signals and the edges, not the estate.
 */
function observeInParts(spec: DemoSpec, book: PriceBook, partServices: number): InventoryObservation {
  const services = FILLER_SERVICES[spec.size];
  const parts: Array<{ from: number; to: number }> = [];
  for (let from = 0; from < services; from += partServices)
    parts.push({ from, to: Math.min(services, from + partServices) });
  const owns = (part: { from: number; to: number }, first: boolean) => (owner: number | null | undefined) =>
    owner === null || owner === undefined ? first : owner >= part.from && owner < part.to;

  function* worlds(): Generator<{ world: WorldBuilder; seeded: Seeded; owned: ReturnType<typeof owns> }> {
    for (let i = 0; i < parts.length; i++) {
      const { world, seeded } = buildWorld(spec, parts[i]);
      yield { world, seeded, owned: owns(parts[i]!, i === 0) };
    }
  }
  function* resourcesOf(world: WorldBuilder, owned: ReturnType<typeof owns>) {
    for (const r of world.resources.values()) if (owned(world.owners!.resources.get(r.arn))) yield r;
  }

  let resourceCount = 0;
  let edgeCount = 0;
  const events: InventoryEvent[] = [];
  const signals = new DemoSignals(spec, book);
  let observedAt: Date | undefined;
  for (const { world, seeded, owned } of worlds()) {
    observedAt = world.observedAt;
    for (const r of resourcesOf(world, owned)) {
      resourceCount++;
      signals.add(r, seeded);
    }
    for (const key of world.edges.keys()) if (owned(world.owners!.edges.get(key))) edgeCount++;
    const seen = observed(world);
    world.events.forEach((e, i) => {
      if (owned(world.eventOwners[i]) && seen(e)) events.push(e);
    });
  }
  // The sync reads the edges after the resources: a walk of the resources keeps each part's edges (about
  // 60 bytes each beside the ARNs the sync holds anyway) for the edges walk that follows, instead of
  // building every part a third time. A walk of the edges without one before it builds the parts.
  let kept: InventoryEdge[] | undefined;
  return {
    observedAt: observedAt!,
    resources: {
      length: resourceCount,
      [Symbol.iterator]: function* () {
        const edges: InventoryEdge[] = [];
        kept = undefined;
        for (const { world, owned } of worlds()) {
          yield* resourcesOf(world, owned);
          for (const [key, e] of world.edges) if (owned(world.owners!.edges.get(key))) edges.push(e);
        }
        kept = edges;
      },
    },
    edges: {
      length: edgeCount,
      [Symbol.iterator]: function* () {
        if (kept) {
          const edges = kept;
          kept = undefined;
          yield* edges;
          return;
        }
        for (const { world, owned } of worlds())
          for (const [key, e] of world.edges) if (owned(world.owners!.edges.get(key))) yield e;
      },
    },
    metrics: signals.metrics(),
    costs: signals.costs(),
    events,
  };
}

/**
 * Checks a command against the environment as it is now, without keeping anything: answers what it
 * would change, or throws DemoCommandError (unsupported, malformed, or refused as AWS would).
 */
export function tryCommand(spec: DemoSpec, command: string): AppliedCommand {
  const { world } = buildWorld(spec);
  return applyCommand(world, command, spec.commands.filter((c) => c.day <= spec.day).length);
}

/**
 * Worlds built for describe calls, by caller key (a tenant), newest last. Building the `large` world
 * takes about 2 s, so a verify or a final check reuses the last one: the same spec, or the same spec
 * with more commands run since (they are applied to the kept world, as buildWorld would). At most two
 * are kept; a large world holds a few hundred MB.
 */
const worlds = new Map<string, { base: string; commands: string[]; world: WorldBuilder }>();
const KEPT_WORLDS = 2;

function worldNow(spec: DemoSpec, cacheKey: string | undefined): WorldBuilder {
  const base = `${spec.seed}|${spec.size}|${spec.epoch}|${spec.day}`;
  const commands = spec.commands.filter((c) => c.day <= spec.day).map((c) => c.command);
  const kept = cacheKey ? worlds.get(cacheKey) : undefined;
  if (
    kept &&
    kept.base === base &&
    kept.commands.length <= commands.length &&
    kept.commands.every((c, i) => c === commands[i])
  ) {
    for (let i = kept.commands.length; i < commands.length; i++) {
      try {
        applyCommand(kept.world, commands[i]!, i);
      } catch {
        // As in buildWorld: a command whose target has gone changes nothing.
      }
    }
    kept.commands = commands;
    worlds.delete(cacheKey!);
    worlds.set(cacheKey!, kept);
    return kept.world;
  }
  const { world } = buildWorld(spec);
  if (cacheKey) {
    worlds.delete(cacheKey);
    worlds.set(cacheKey, { base, commands, world });
    while (worlds.size > KEPT_WORLDS) worlds.delete(worlds.keys().next().value!);
  }
  return world;
}

/**
 * What the demo environment answers to describe calls now, per ARN: the resource as AWS would describe
 * it, or null when it does not exist (the NotFound answer). Read-only: the world is not changed.
 */
export function describeDemo(
  spec: DemoSpec,
  arns: string[],
  cacheKey?: string,
): { observedAt: Date; resources: Map<string, InventoryResource | null> } {
  const world = worldNow(spec, cacheKey);
  const out = new Map<string, InventoryResource | null>();
  for (const arn of arns) {
    const r = world.resources.get(arn);
    out.set(arn, r ? (structuredClone(r) as InventoryResource) : null);
  }
  return { observedAt: world.observedAt, resources: out };
}

export interface DemoConnector extends Connector {
  /** What a scan syncs: collect's inventory, or a whale's built as the sync reads it (observeWorld). */
  observe(options: { onProgress?: CollectProgress }): Promise<InventoryObservation>;
  /**
   * The environment's past (days -7 and -1), for the first scan, so drift has history from the start:
   * each observation built when it is read, so that only one is held at a time.
   */
  backfill(): Iterable<InventoryObservation>;
}

export function createDemoConnector(spec: DemoSpec, book: PriceBook): DemoConnector {
  return {
    kind: 'demo',
    async collect({ onProgress } = {}) {
      onProgress?.('generating', 0, null);
      const inventory = collectWorld(spec, book);
      onProgress?.('generating', inventory.resources.length, inventory.resources.length);
      return inventory;
    },
    async observe({ onProgress } = {}) {
      onProgress?.('generating', 0, null);
      const inventory = observeWorld(spec, book);
      onProgress?.('generating', inventory.resources.length, inventory.resources.length);
      return inventory;
    },
    *backfill() {
      const days = [HISTORY_START_DAY, spec.day - 1].filter(
        (day, i, all) => day < spec.day && all.indexOf(day) === i,
      );
      for (const day of days)
        yield observeWorld({ ...spec, day, commands: spec.commands.filter((c) => c.day <= day) }, book);
    },
  };
}

import type { CollectedInventory, Connector, InventoryResource } from '../model';
import type { PriceBook } from '../pricing';
import { applyCommand, type AppliedCommand } from './commands';
import { buildFiller } from './filler';
import { buildSeeded, type Seeded } from './seeded';
import { demoCosts, demoMetrics } from './signals';
import { applyTimeline, HISTORY_START_DAY } from './timeline';
import { WorldBuilder, type DemoSpec } from './world';

export {
  DemoCommandError,
  SUPPORTED_COMMANDS,
  parseCommand,
  type AppliedCommand,
  type CommandEffect,
} from './commands';
export { FILLER_SERVICES, type DemoSize, type DemoSpec } from './world';
export { HISTORY_START_DAY } from './timeline';
export { METRIC_WINDOW_DAYS } from './signals';

/**
 * The environment on the spec's day: the seeded organization as of day -7, the timeline up to the day,
 * then the operator's commands in the order they were run (a command whose target a later churn
 * removed changes nothing on replay).
 */
export function buildWorld(spec: DemoSpec): { world: WorldBuilder; seeded: Seeded } {
  const world = new WorldBuilder(spec);
  const seeded = buildSeeded(world);
  const filler = buildFiller(world);
  applyTimeline(world, seeded, filler);
  spec.commands
    .filter((c) => c.day <= spec.day)
    .forEach((c, i) => {
      try {
        applyCommand(world, c.command, i);
      } catch {
        // It was valid when run; its target has since gone (e.g. an instance autoscaling replaced).
      }
    });
  return { world, seeded };
}

/** What the inventory of a world is: resources, edges, metrics, cost lines, events up to its clock. */
export function collectWorld(spec: DemoSpec, book: PriceBook): CollectedInventory {
  const { world, seeded } = buildWorld(spec);
  return {
    observedAt: world.observedAt,
    resources: [...world.resources.values()],
    edges: [...world.edges.values()],
    metrics: demoMetrics(world, seeded),
    costs: demoCosts(world, book),
    events: world.events.filter((e) => Date.parse(e.at) < world.observedAt.getTime() + 60_000),
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
  /**
   * The environment's past (days -7 and -1), for the first scan, so drift has history from the start:
   * each observation built when it is read, so that only one is held at a time.
   */
  backfill(): Iterable<CollectedInventory>;
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
    *backfill() {
      const days = [HISTORY_START_DAY, spec.day - 1].filter(
        (day, i, all) => day < spec.day && all.indexOf(day) === i,
      );
      for (const day of days)
        yield collectWorld({ ...spec, day, commands: spec.commands.filter((c) => c.day <= day) }, book);
    },
  };
}

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { InventoryObservation } from '../model';
import { PriceBook } from '../pricing';
import { FILLER_SERVICES } from './world';
import { buildWorld, collectWorld, observeWorld, type DemoSize, type DemoSpec } from './index';

// The whale (`xlarge`, about 1,000,000 resources) is never generated here: its inventory is built in
// parts, so what is checked is that parts give exactly the whole world (on `medium`, with churn and
// commands, cut into small parts), and that one part of the whale has the seeded defects and the
// shape that makes a million.

const book = new PriceBook(
  new Map([
    ['us-east-1|ec2:m5.large:hour', 0.096],
    ['us-west-2|ec2:m5.large:hour', 0.096],
    ['us-east-1|ebs:gp3:gb_month', 0.08],
    ['us-west-2|ebs:gp3:gb_month', 0.08],
    ['us-east-1|ebs:gp2:gb_month', 0.1],
  ]),
);
const base: DemoSpec = { seed: 42, size: 'medium', epoch: '2026-11-01', day: 3, commands: [] };

/** Everything an observation holds, keyed and sorted, so two orders of the same rows compare equal. */
function contents(inv: InventoryObservation) {
  const json = (x: unknown) => JSON.stringify(x);
  const resources = new Map([...inv.resources].map((r) => [r.arn, json(r)]));
  const edges = new Map([...inv.edges].map((e) => [`${e.from}|${e.to}|${e.kind}`, json(e)]));
  return {
    counts: [inv.resources.length, inv.edges.length, inv.metrics.length, inv.costs.length],
    resources: [...resources].sort(),
    edges: [...edges].sort(),
    metrics: [...inv.metrics].map(json),
    costs: [...inv.costs].map(json),
    events: inv.events.map(json).sort(),
  };
}

describe('the demo built in parts (how xlarge is generated)', () => {
  it('gives exactly the whole world: resources, edges, metric points, cost lines, events', () => {
    const whole = collectWorld(base, book);
    const filler = (type: string) => whole.resources.filter((r) => r.type === type && 'team' in r.tags);
    const [stopped, terminated] = filler('aws_ec2_instance').slice(-2);
    const orphan = whole.resources.find(
      (r) => r.type === 'aws_ebs_volume' && r.attributes.volume_type === 'gp2' && r.attributes.size === 200,
    )!;
    // Commands on filler stacks (in one part) and on the organization (in every part).
    const commands = [
      `aws ec2 stop-instances --instance-ids ${stopped!.nativeId}`,
      `aws ec2 terminate-instances --instance-ids ${terminated!.nativeId}`,
      `aws ec2 delete-volume --volume-id ${orphan.nativeId}`,
      `aws logs put-retention-policy --log-group-name ${filler('aws_cloudwatch_log_group')[0]!.nativeId} --retention-in-days 30`,
    ].map((command) => ({ day: 3, command }));
    const spec = { ...base, commands };

    const parts = observeWorld(spec, book, 50); // 320 stacks: 7 parts
    expect(Array.isArray(parts.resources)).toBe(false);
    // The edges alone (parts built again), and after the resources (kept by the resources' walk).
    const edgesAlone = [...parts.edges];
    const expected = contents(collectWorld(spec, book));
    const actual = contents(parts);
    expect(actual.counts).toEqual(expected.counts);
    expect(actual.resources).toEqual(expected.resources);
    expect(actual.edges).toEqual(expected.edges);
    expect(new Map(edgesAlone.map((e) => [`${e.from}|${e.to}|${e.kind}`, JSON.stringify(e)]))).toEqual(
      new Map(actual.edges),
    );
    expect(actual.metrics).toEqual(expected.metrics);
    expect(actual.costs).toEqual(expected.costs);
    expect(actual.events).toEqual(expected.events);
    // The commands took effect (they are not lost between parts).
    const byArn = new Map(actual.resources);
    expect(JSON.parse(byArn.get(stopped!.arn)!).attributes.instance_state).toBe('stopped');
    expect(byArn.has(orphan.arn)).toBe(false);
    expect(byArn.has(terminated!.arn)).toBe(false);
    expect(actual.edges.some(([key]) => key.includes(terminated!.arn))).toBe(false);
    // A second walk yields the same rows (the sync may read a source more than once).
    expect(contents(parts)).toEqual(actual);
  }, 60_000);

  it('is built in parts only above the part size: small to large stay arrays', () => {
    for (const size of ['small', 'medium', 'large'] as DemoSize[])
      expect(FILLER_SERVICES[size]).toBeLessThanOrEqual(6600);
    const small = observeWorld({ ...base, size: 'small', day: 0 }, book);
    expect(Array.isArray(small.resources)).toBe(true);
  });
});

describe('the xlarge demo (a whale tenant), from its first part', () => {
  const spec: DemoSpec = { seed: 42, size: 'xlarge', epoch: '2026-11-01', day: 0, commands: [] };
  const part = { from: 0, to: 300 };

  it('has the seeded defects on the same ids as small, and spreads its stacks over accounts and regions', () => {
    const { world } = buildWorld(spec, part);
    const small = buildWorld({ ...spec, size: 'small' }, { from: 0, to: 0 }).world; // no stacks
    const owners = world.owners!.resources;
    const organization = [...world.resources.values()].filter((r) => owners.get(r.arn) === null);
    // Every seeded resource of small is in the whale's organization, unchanged.
    const seeded = [...small.resources.values()];
    expect(seeded.length).toBeGreaterThan(150);
    for (const r of seeded) expect(world.resources.get(r.arn), r.arn).toEqual(r);
    for (const name of ['sg-bastion', 'bastion', 'analytics-01', 'old-jenkins'])
      expect(organization.some((r) => r.name === name)).toBe(true);
    // 36 application VPCs (3 accounts x 2 regions x 6) beside the seeded ones.
    const vpcs = organization.filter((r) => r.type === 'aws_vpc');
    expect(vpcs.length).toBe(36 + countType(small, 'aws_vpc') - 4); // small has 4 application VPCs
    const stacks = [...world.resources.values()].filter((r) => typeof owners.get(r.arn) === 'number');
    expect(new Set(stacks.map((r) => r.accountId)).size).toBe(3);
    expect(new Set(stacks.map((r) => r.region))).toEqual(new Set(['us-east-1', 'us-west-2']));
  });

  it('makes about a million resources: the first part times the stacks, plus the organization', () => {
    const { world } = buildWorld(spec, part);
    const owners = world.owners!.resources;
    const inStacks = [...owners.values()].filter((o) => typeof o === 'number').length;
    const organization = [...owners.values()].filter((o) => o === null).length;
    const estimate = organization + (inStacks / (part.to - part.from)) * FILLER_SERVICES.xlarge;
    expect(estimate).toBeGreaterThan(950_000);
    expect(estimate).toBeLessThan(1_050_000);
  });

  it('is deterministic: the same part of the same spec, byte for byte', () => {
    const digest = (s: DemoSpec) => {
      const { world } = buildWorld(s, { from: 64_900, to: 65_000 });
      return createHash('sha256')
        .update(JSON.stringify([...world.resources.values(), ...world.edges.values(), world.events]))
        .digest('hex');
    };
    expect(digest(spec)).toBe(digest(spec));
    expect(digest({ ...spec, seed: 43 })).not.toBe(digest(spec));
  });
});

function countType(world: ReturnType<typeof buildWorld>['world'], type: string): number {
  return [...world.resources.values()].filter((r) => r.type === type).length;
}

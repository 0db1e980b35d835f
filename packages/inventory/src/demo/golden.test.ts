import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PriceBook } from '../pricing';
import { buildWorld, collectWorld, type DemoSpec } from './index';
import { hexId } from './random';

// The demo world is a pure function of its spec: these digests, recorded from the generator, pin every
// resource, edge, metric point, cost line and event it makes (values and order). A change to the demo
// that is meant to change the world updates them on purpose; a refactor must leave them as they are.

const book = new PriceBook(
  new Map(
    ['us-east-1', 'us-west-2'].flatMap((region) =>
      [
        ['ec2:m5.large:hour', 0.096],
        ['ec2:m5.xlarge:hour', 0.192],
        ['ec2:t3.medium:hour', 0.0416],
        ['ec2:t3.large:hour', 0.0832],
        ['ec2:t3.micro:hour', 0.0104],
        ['ec2:t2.medium:hour', 0.0464],
        ['ec2:public_ipv4:hour', 0.005],
        ['ebs:gp2:gb_month', 0.1],
        ['ebs:gp3:gb_month', 0.08],
        ['ebs:io1:gb_month', 0.125],
        ['ebs:snapshot:gb_month', 0.05],
        ['vpc:nat_gateway:hour', 0.045],
        ['elb:application:hour', 0.0225],
        ['rds:mysql:db.m5.large:single:hour', 0.171],
        ['rds:storage:gp2:single:gb_month', 0.115],
        ['s3:standard:gb_month', 0.023],
      ].map(([key, price]) => [`${region}|${key}`, price as number] as const),
    ),
  ),
);

/** JSON with every object's keys sorted; arrays keep their order (the order rows are emitted in). */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function digestOf(spec: DemoSpec) {
  const inv = collectWorld(spec, book);
  const part = (rows: Iterable<unknown>) => sha256(canonical([...rows]));
  return {
    resources: part(inv.resources),
    edges: part(inv.edges),
    metrics: part(inv.metrics),
    costs: part(inv.costs),
    events: part(inv.events),
  };
}

const base: DemoSpec = { seed: 42, size: 'small', epoch: '2026-11-01', day: 0, commands: [] };

describe('the demo world, pinned by digest', () => {
  it('small, on day 0 and on the backfilled day -7', () => {
    expect(digestOf(base)).toEqual({
      costs: 'cd538c42d8a7d9a4859a229fe1ebb9bc30dcf122ea8826e31f1dd78e92101889',
      edges: 'e23d16e64b5c7b6c0e63c8a7741766ce97575864721f47917b346ea3ad084658',
      events: 'bd3dfcaccd2eb27c9fb78e0a4312f73e014cef571abef19b1de13a3368842377',
      metrics: '6744550370118e9dfad6a4fb7e3efa5aa575d51904115e3eddb39671c3433bbd',
      resources: '3f48fa4d4502d8f952816eeff637f98f1d5e3d357c107d6f76fef9d3a46ebe00',
    });
    expect(digestOf({ ...base, day: -7 })).toEqual({
      costs: '7f161eabee4cdc9b5d35a833238b7e0816a78305e9e38d782e60f0ed3097ac2d',
      edges: 'e23d16e64b5c7b6c0e63c8a7741766ce97575864721f47917b346ea3ad084658',
      events: '4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945',
      metrics: 'bcae941f156f08575dd349d82fcdf35cd1c29f4327bdfa5356308b6951bfe41b',
      resources: '776bc223fe266199069748c27d3f23adcf2a841c8a793b1f10c76664af38805a',
    });
  }, 60_000);

  it('small with another seed, and with commands run on seeded resources', () => {
    const volume = `vol-${hexId(7, 'prod:orphan:gp2', 17)}`;
    const commands = [
      { day: 1, command: `aws ec2 delete-volume --volume-id ${volume}` },
      {
        day: 2,
        command: 'aws logs put-retention-policy --log-group-name /ecs/batch-workers --retention-in-days 30',
      },
    ];
    expect(digestOf({ ...base, seed: 7, day: 2, commands })).toEqual({
      costs: '4ec6566b98c199525055f773bb16126c833b42a9c5666ad3daf651d739811667',
      edges: 'e712217e1dcb5010d556a8242570fffe980b9b12abfeab8c1df6204c3d059f16',
      events: '24939c234148ce91a4ee01889a0fde67a7cfcedce427c4b3d1cbc36e05920e69',
      metrics: '275ff5008229480c568916779b7645ae71054921d8c87bcd36718b5d33761381',
      resources: '84e23f6d1e1092f68acf98161cff720aa221d33b370544034a11084b559b2f77',
    });
  }, 60_000);

  it('medium, on day 3', () => {
    expect(digestOf({ ...base, size: 'medium', day: 3 })).toEqual({
      costs: '627da871d770d95362d34c3977e15b439908da14bc3449485c6ebcf90bb0a8ad',
      edges: 'b4f43fc2b058d66c75e37022b87ec68ba769830ac89ac1e4bf001c16a9703269',
      events: '3080ff9a9102d42962c021a3fd51d1df947a3e90375fdb86f9c61052d81647e1',
      metrics: '34d4e81c7dd2548dfd162ddf2470c220f18c4b02e0392689e084e23b605b0aee',
      resources: 'bee35e582bb41a4bb631f1cef98d4ebb6c208701988dfb2a60287b6eb653b01b',
    });
  }, 60_000);

  it('xlarge, its first part (the organization and the first 50 stacks)', () => {
    const { world } = buildWorld({ ...base, size: 'xlarge' }, { from: 0, to: 50 });
    expect({
      resources: sha256(canonical([...world.resources.values()])),
      edges: sha256(canonical([...world.edges.values()])),
      events: sha256(canonical(world.events)),
    }).toEqual({
      edges: '070a14750a3c89a7d1059d065dd6eb9e743877636e3878e2eb7b54bd79385352',
      events: 'bd3dfcaccd2eb27c9fb78e0a4312f73e014cef571abef19b1de13a3368842377',
      resources: '75e804cd2f3f1a6c0fa87a1871a098823b152775c4a21851ced1d705c952f94f',
    });
  }, 60_000);
});

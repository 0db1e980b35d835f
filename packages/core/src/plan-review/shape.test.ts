import { describe, expect, it } from 'vitest';
import { applyDelta } from './shape';

const rule = (port: number, cidr = '10.0.0.0/8') => ({
  type: 'ingress',
  from_port: port,
  to_port: port,
  cidr_ipv4: cidr,
});

describe('applyDelta: the live attributes with the plan applied', () => {
  it('list items the plan removes go, items it adds come, the others are kept from the live copy', () => {
    const live = { rules: [{ ...rule(22), rule_id: 'sgr-1' }, rule(443), rule(8080)] };
    const out = applyDelta(live, { rules: [rule(22)] }, { rules: [rule(22, '0.0.0.0/0')] });
    expect(out.rules).toEqual([rule(443), rule(8080), rule(22, '0.0.0.0/0')]);
  });

  it('lists of 20,000 rules on each side are applied within a second (it compared every pair: issue 24)', () => {
    const before = Array.from({ length: 20_000 }, (_, i) => rule(i));
    const after = Array.from({ length: 20_000 }, (_, i) => rule(i + 10_000));
    const started = performance.now();
    const out = applyDelta({ rules: before }, { rules: before }, { rules: after });
    expect(performance.now() - started).toBeLessThan(1000);
    expect((out.rules as unknown[]).length).toBe(20_000);
    expect(out.rules).toEqual(after);
  });
});

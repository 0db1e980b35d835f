import type { InventoryResource } from '@opsi/inventory';
import { parseTerraformState } from '@opsi/inventory/terraform';
import type { PlanResourceChange } from './plan';

/** A plan object's values in the inventory's vocabulary (as the Terraform state connector maps them). */
export interface Shaped {
  type: string;
  nativeId: string | null;
  name: string | null;
  tags: Record<string, string>;
  attributes: Record<string, unknown>;
  region: string | null;
}

const RULE_TYPES = new Set([
  'aws_security_group_rule',
  'aws_vpc_security_group_ingress_rule',
  'aws_vpc_security_group_egress_rule',
]);

/** Rule resources live in their group: plan review applies them to it. */
export const isRuleType = (type: string) => RULE_TYPES.has(type);

const PARENT = '__opsi_parent_group';

/**
 * Maps the values of many plan objects at once through the Terraform state connector's mappers (one
 * synthetic state holding them all), so plan review reads the plan in the vocabulary of the
 * inventory and the detectors. A rule resource is mapped inside a stand-in of its group, whose rules
 * are then the rule's. Types the connector does not know map to nothing.
 */
export function shapeValues(
  items: Array<{ key: string; change: PlanResourceChange; values: Record<string, unknown> }>,
): Map<string, Shaped> {
  const resources: Array<Record<string, unknown>> = [];
  items.forEach((item, i) => {
    if (isRuleType(item.change.type)) {
      const groupId = String(item.values.security_group_id ?? `${PARENT}-${i}`);
      resources.push({
        address: `aws_security_group.${PARENT}_${i}`,
        mode: 'managed',
        type: 'aws_security_group',
        name: `${PARENT}_${i}`,
        values: { id: groupId, opsi_key: item.key },
      });
      resources.push({
        address: `aws_security_group_rule.${PARENT}_rule_${i}`,
        mode: 'managed',
        type: item.change.type,
        name: `${PARENT}_rule_${i}`,
        values: { ...item.values, security_group_id: groupId },
      });
      return;
    }
    resources.push({
      address: `${item.change.type}.k${i}`,
      mode: 'managed',
      type: item.change.type,
      name: `k${i}`,
      values: item.values,
    });
  });
  const out = new Map<string, Shaped>();
  if (!resources.length) return out;
  let mapped: InventoryResource[];
  try {
    mapped = parseTerraformState(
      { format_version: '1.0', values: { root_module: { resources } } },
      { now: () => new Date(0), accountId: '000000000000', defaultRegion: 'us-east-1' },
    ).resources;
  } catch {
    return out;
  }
  const byAddress = new Map<string, InventoryResource>();
  for (const r of mapped) {
    const address = r.attributes.terraform_address;
    if (typeof address === 'string' && !byAddress.has(address)) byAddress.set(address, r);
  }
  items.forEach((item, i) => {
    const rule = isRuleType(item.change.type);
    const r = byAddress.get(rule ? `aws_security_group.${PARENT}_${i}` : `${item.change.type}.k${i}`);
    if (!r) return;
    const { terraform_address: _address, tags: _tags, ...attributes } = r.attributes;
    void _address;
    void _tags;
    const placeholder = (v: string) => v.startsWith(`${item.change.type}.k`) || v.startsWith(PARENT);
    out.set(item.key, {
      type: r.type,
      nativeId: placeholder(r.nativeId) ? null : r.nativeId,
      name: r.name && !placeholder(r.name) ? r.name : null,
      tags: r.tags,
      attributes: rule ? { rules: attributes.rules ?? [] } : attributes,
      region: typeof item.values.region === 'string' ? item.values.region : null,
    });
  });
  return out;
}

const stable = (v: unknown) =>
  JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(
          Object.entries(x as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)),
        )
      : x,
  );

/**
 * The same list item, as far as both sides describe it: the inventory and the connector's mapping may
 * carry different sets of keys (a description, a rule id), so only the keys both have are compared.
 */
function sameItem(x: unknown, y: unknown): boolean {
  if (x && y && typeof x === 'object' && typeof y === 'object' && !Array.isArray(x) && !Array.isArray(y)) {
    const a = x as Record<string, unknown>;
    const b = y as Record<string, unknown>;
    const common = Object.keys(a).filter((k) => k in b);
    return common.length > 0 && common.every((k) => stable(a[k] ?? null) === stable(b[k] ?? null));
  }
  return stable(x) === stable(y);
}

/** Pairs of items compared key by key at most (past it, only identical items are the same). */
const PAIRWISE_LIMIT = 250_000;

/**
 * The items of `xs` that are not in `ys` (sameItem). Identical items are found through a set; the
 * key-by-key comparison of every pair runs only while the pairs stay under PAIRWISE_LIMIT: a plan may
 * list thousands of rules on both sides, and comparing every pair of them took time quadratic in the
 * lists on the API's event loop (issue 24).
 */
function notIn(xs: unknown[], ys: unknown[]): unknown[] {
  if (!xs.length || !ys.length) return xs;
  const identical = new Set(ys.map(stable));
  const pairwise = xs.length * ys.length <= PAIRWISE_LIMIT;
  return xs.filter((x) => {
    const key = stable(x);
    // sameItem never pairs two empty objects (no key in common): neither does the set.
    if (key !== '{}' && identical.has(key)) return false;
    return !(pairwise && ys.some((y) => sameItem(x, y)));
  });
}

/**
 * The live attributes with what the plan changes applied: scalars and objects that differ between
 * the plan's before and after are set; for lists, the items the plan removes go and the items it adds
 * come (a text plan shows only the items that change, so the others are kept from the live copy).
 */
export function applyDelta(
  live: Record<string, unknown>,
  before: Record<string, unknown> | null,
  after: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...live };
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after)]);
  for (const key of keys) {
    const b = before?.[key];
    const a = after[key];
    if (stable(a) === stable(b)) continue;
    if (Array.isArray(a) || Array.isArray(b)) {
      const removed = notIn(Array.isArray(b) ? b : [], Array.isArray(a) ? a : []);
      const added = Array.isArray(a) ? a : [];
      const kept = notIn(Array.isArray(live[key]) ? (live[key] as unknown[]) : [], removed);
      out[key] = [...kept, ...notIn(added, kept)];
    } else {
      out[key] = a;
    }
  }
  return out;
}

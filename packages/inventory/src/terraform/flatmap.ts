/**
 * Expands Terraform 0.11's "flatmap" (state version 3 `primary.attributes`, and version 4's
 * `attributes_flat` for objects no provider has upgraded yet) into the nested values that
 * `terraform show -json` prints: `tags.% = 1, tags.Name = web` → `tags: {Name: "web"}`,
 * `sg.# = 2, sg.1234 = a, sg.5678 = b` → `sg: ["a", "b"]`, `ebs.0.size = 8` → `ebs: [{size: "8"}]`.
 *
 * Written by hand: no npm library reads this format, and Terraform's own reader (hcl2shim) needs the
 * provider's schema, which a state file does not carry. Without a schema, `.#` marks a list or a set
 * (set elements are keyed by a hash, kept in key order), `.%` a map, and leaves stay strings: the
 * mappers read "true", "8" and "8.5" as Terraform 0.11 wrote them.
 */
export function expandFlatmap(flat: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(flat).sort();
  return expandObject(flat, keys, '');
}

function expandObject(
  flat: Record<string, unknown>,
  keys: string[],
  prefix: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const done = new Set<string>();
  for (const key of keys) {
    const rest = key.slice(prefix.length);
    const dot = rest.indexOf('.');
    const name = dot < 0 ? rest : rest.slice(0, dot);
    if (done.has(name)) continue;
    const here = `${prefix}${name}`;
    if (`${here}.#` in flat) {
      out[name] = expandList(flat, keys, `${here}.`);
      done.add(name);
    } else if (`${here}.%` in flat) {
      out[name] = expandMap(flat, keys, `${here}.`);
      done.add(name);
    } else if (dot < 0) {
      out[name] = flat[key];
    }
    // `name.x` without a count key: a stray nested key (hand-written states); it is left out.
  }
  return out;
}

function under(keys: string[], prefix: string): string[] {
  return keys.filter((k) => k.startsWith(prefix));
}

function expandList(flat: Record<string, unknown>, keys: string[], prefix: string): unknown[] {
  const mine = under(keys, prefix).filter((k) => k !== `${prefix}#`);
  const indices: string[] = [];
  for (const k of mine) {
    const idx = k.slice(prefix.length).split('.')[0]!;
    if (!indices.includes(idx)) indices.push(idx);
  }
  // Lists are keyed 0..n-1 (numeric order); sets by element hash (any stable order will do).
  if (indices.every((i) => /^\d+$/.test(i))) indices.sort((a, b) => Number(a) - Number(b));
  return indices.map((idx) => {
    const leaf = `${prefix}${idx}`;
    const nested = under(mine, `${leaf}.`);
    if (!nested.length) return flat[leaf];
    return expandObject(flat, nested, `${leaf}.`);
  });
}

function expandMap(flat: Record<string, unknown>, keys: string[], prefix: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const mine = under(keys, prefix).filter((k) => k !== `${prefix}%`);
  // Map keys may hold dots (`kubernetes.io/role`): 0.11 maps hold strings, so the whole rest is the key,
  // unless it is a nested map or list's own count key.
  const nestedRoots = new Set(
    mine
      .filter((k) => k.endsWith('.%') || k.endsWith('.#'))
      .map((k) => k.slice(prefix.length, -2))
      .filter((root) => !root.includes('.')),
  );
  for (const root of nestedRoots) {
    const here = `${prefix}${root}`;
    out[root] = `${here}.#` in flat ? expandList(flat, keys, `${here}.`) : expandMap(flat, keys, `${here}.`);
  }
  for (const k of mine) {
    const rest = k.slice(prefix.length);
    const root = rest.split('.')[0]!;
    if (nestedRoots.has(root) && rest !== root) continue;
    if (!nestedRoots.has(rest)) out[rest] = flat[k];
  }
  return out;
}

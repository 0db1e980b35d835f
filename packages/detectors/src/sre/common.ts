import type { Severity } from '../detector';

/**
 * Shared pieces of the SRE detectors: SQL fragments that read the inventory the same way everywhere,
 * and the small formatting helpers their narratives use.
 */

/** A jsonb value as an array ('[]' when it is missing or not an array), so one odd record cannot fail a check. */
export const jsonArray = (expr: string) =>
  `(case jsonb_typeof(${expr}) when 'array' then ${expr} else '[]'::jsonb end)`;

/** The environment a resource is tagged with (env / Environment), lower-cased; null when untagged. */
export const envOf = (alias: string) =>
  `lower(coalesce(${alias}.tags->>'env', ${alias}.tags->>'Environment', ${alias}.tags->>'environment', ${alias}.tags->>'Env'))`;

/**
 * The live resources that depend on a resource (inbound `depends-on` edges: instances on a database,
 * subnets on a route table, a role on a table), as a sorted array of names.
 */
export const dependentsOf = (alias: string) => `array(
      select distinct coalesce(d.name, d.native_id)
      from resource_edges e join resources d on d.arn = e.from_arn and d.deleted_at is null
      where e.to_arn = ${alias}.arn and e.kind = 'depends-on'
      order by 1)`;

/**
 * The SNS topic (or other action) this account's alarms in the region notify most often: the target a
 * recommended alarm should use, so the fix command can be run as written.
 */
export const usualAlarmAction = (alias: string) => `(
      select x.action from resources a2,
        jsonb_array_elements_text(${jsonArray("a2.attributes->'alarm_actions'")}) as x(action)
      where a2.type = 'aws_cloudwatch_alarm' and a2.deleted_at is null
        and a2.account_id = ${alias}.account_id and a2.region = ${alias}.region
      group by x.action order by count(*) desc, x.action limit 1)`;

export const isProd = (env: unknown) => /^prod/.test(String(env ?? ''));

/** Production gets the higher severity; everything else (staging, untagged) the lower. */
export const byEnv = (env: unknown, prod: Severity, other: Severity): Severity =>
  isProd(env) ? prod : other;

export const str = (v: unknown): string => (v === null || v === undefined ? '' : String(v));
export const num = (v: unknown): number => Number(v ?? 0);
export const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => String(x)) : []);
export const records = <T extends Record<string, unknown>>(v: unknown): T[] =>
  Array.isArray(v) ? (v as T[]) : [];

/** "name (id)" when the name says something the id does not; the id alone otherwise. */
export function label(row: { name?: unknown; native_id?: unknown }): string {
  const id = str(row.native_id);
  const name = str(row.name);
  return name && name !== id ? `${name} (${id})` : id || name;
}

/** "a", "a and b", "a, b and c". */
export function sentenceList(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** "a, b, c and 4 more" for long lists in narratives. */
export function someOf(items: string[], max = 5): string {
  if (items.length <= max) return sentenceList(items);
  return `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
}

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The environment, as the narratives mention it: " (prod)" or nothing. */
export const envNote = (env: unknown) => details(env);

/** " (a, b)" of the parts that say something; nothing when none does. */
export function details(...parts: unknown[]): string {
  const said = parts.filter((p) => p !== null && p !== undefined && p !== '').map(String);
  return said.length ? ` (${said.join(', ')})` : '';
}

/** A sentence about who depends on the resource, or nothing when the graph knows of no dependents. */
export function dependentsSentence(dependents: string[], what: string): string {
  if (!dependents.length) return '';
  const verb = dependents.length === 1 ? 'depends' : 'depend';
  return ` ${plural(dependents.length, 'resource')} ${verb} on ${what} in the graph (${someOf(dependents)}).`;
}

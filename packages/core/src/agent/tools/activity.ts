/** Agent tools: what happened (recent changes, recent alerts). */
import { z } from 'zod';
import { sql } from '@opsi/db';
import { defineTool } from '../../define-tool';

export const recent_changes = defineTool({
  name: 'recent_changes',
  description:
    'What changed in the inventory in the last days: created, updated and deleted resources with the fields that changed, and the CloudTrail events (who did it).',
  input: z.object({ days: z.number().int().min(1).max(30).default(1) }),
  async execute(i, { db, tenantId }) {
    const since = await sql<{
      since: Date;
    }>`select max(observed_at) - make_interval(days => ${i.days}) as since from inventory_snapshots where tenant_id = ${tenantId}`.execute(
      db,
    );
    const from = since.rows[0]?.since ?? new Date(0);
    const [changes, events] = await Promise.all([
      db
        .selectFrom('resource_history')
        .select([
          'arn',
          'type',
          'change',
          'changed_fields',
          'observed_at',
          sql<string | null>`coalesce(after->>'name', before->>'name')`.as('name'),
        ])
        .where('tenant_id', '=', tenantId)
        .where('observed_at', '>', from)
        .orderBy('observed_at', 'desc')
        .limit(50)
        .execute(),
      db
        .selectFrom('inventory_events')
        .select(['at', 'name', 'actor', 'source_ip', 'arns'])
        .where('tenant_id', '=', tenantId)
        .where('kind', '=', 'cloudtrail')
        .where('at', '>', from)
        .orderBy('at', 'desc')
        .limit(50)
        .execute(),
    ]);
    return { since: from, changes, cloudtrail: events };
  },
});

export const recent_alerts = defineTool({
  name: 'recent_alerts',
  description:
    'Alerts (monitoring events) in the last days, grouped by fingerprint with counts, for what happened during an incident.',
  input: z.object({ days: z.number().int().min(1).max(30).default(2) }),
  async execute(i, { db, tenantId }) {
    // The resources of a group are the union of its alerts' arns (`(array_agg(arns))[1]` indexes a
    // two-dimensional array and is always null).
    const rows = await sql<Record<string, unknown>>`
      select e.fingerprint, e.name, e.severity, e.service, count(distinct e.id)::int as occurrences,
             min(e.at) as first_at, max(e.at) as last_at,
             coalesce(array_agg(distinct a.arn) filter (where a.arn is not null), '{}') as arns
      from inventory_events e left join lateral unnest(e.arns) as a(arn) on true
      where e.tenant_id = ${tenantId} and e.kind = 'alert'
        and e.at > (select max(observed_at) from inventory_snapshots where tenant_id = ${tenantId}) - make_interval(days => ${i.days})
      group by e.fingerprint, e.name, e.severity, e.service order by min(e.at)`.execute(db);
    return { alerts: rows.rows };
  },
});

/** This group's tools, in catalog order. */
export const ACTIVITY_TOOLS = [recent_changes, recent_alerts] as const;

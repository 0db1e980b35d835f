/** Agent tools: what happened (recent changes, recent alerts). */
import { z } from 'zod';
import { defineTool } from '../../define-tool';
import { findAlertGroups, findChangesSince, findRecentCloudtrail, findRecentHistory } from '../repository';

export const recent_changes = defineTool({
  name: 'recent_changes',
  description:
    'What changed in the inventory in the last days: created, updated and deleted resources with the fields that changed, and the CloudTrail events (who did it).',
  input: z.object({ days: z.number().int().min(1).max(30).default(1) }),
  async execute(i, { db, tenantId }) {
    const from = (await findChangesSince(db, tenantId, i.days)) ?? new Date(0);
    const [changes, events] = await Promise.all([
      findRecentHistory(db, tenantId, from),
      findRecentCloudtrail(db, tenantId, from),
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
    return { alerts: await findAlertGroups(db, tenantId, i.days) };
  },
});

/** This group's tools, in catalog order. */
export const ACTIVITY_TOOLS = [recent_changes, recent_alerts] as const;

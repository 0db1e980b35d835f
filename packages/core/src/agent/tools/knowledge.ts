/** Agent tools: the team's knowledge (learnings, runbooks). */
import { z } from 'zod';
import { NotFound } from '../../errors';
import { listLearnings } from '../../knowledge';
import { listRunbooks, matchRunbooks, runbooksForFinding } from '../../knowledge';
import { defineTool } from '../../define-tool';

export const list_learnings = defineTool({
  name: 'list_learnings',
  description:
    "The team's active learnings (facts it taught about its services), newest first; filter by service name or by words in the fact.",
  input: z.object({
    service: z.string().min(1).max(128).optional(),
    query: z.string().min(1).max(200).optional(),
    limit: z.number().int().min(1).max(50).default(20),
  }),
  async execute(i, { db, tenantId }) {
    const learnings = await listLearnings(db, tenantId, {
      service: i.service,
      query: i.query,
      limit: i.limit,
    });
    return {
      learnings: learnings.map(({ id, fact, service, created_by, created_at }) => ({
        id,
        fact,
        service,
        created_by,
        created_at,
      })),
      count: learnings.length,
    };
  },
});

export const runbooks = defineTool({
  name: 'runbooks',
  description:
    "Runbooks: the built-in ones per detector family and the team's own. Give a finding id to get the runbooks that apply to that finding, best first; or a resource type, an alert fingerprint or a service; nothing lists them all.",
  input: z.object({
    finding_id: z.string().min(1).max(64).optional(),
    resource_type: z.string().min(1).max(128).optional().describe('e.g. aws_rds_db_instance'),
    alert_fingerprint: z.string().min(1).max(200).optional(),
    service: z.string().min(1).max(128).optional(),
    limit: z.number().int().min(1).max(20).default(5),
  }),
  async execute(i, { db, tenantId }) {
    let found;
    if (i.finding_id) {
      try {
        found = await runbooksForFinding(db, tenantId, i.finding_id);
      } catch (e) {
        if (e instanceof NotFound) return { runbooks: [], count: 0, error: 'No such finding.' };
        throw e;
      }
    } else if (i.resource_type || i.alert_fingerprint) {
      found = await matchRunbooks(db, tenantId, {
        resourceTypes: i.resource_type ? [i.resource_type] : [],
        alertFingerprint: i.alert_fingerprint,
        services: i.service ? [i.service] : [],
      });
    } else {
      found = await listRunbooks(db, tenantId, { service: i.service });
    }
    const runbooks = found.slice(0, i.limit).map((r) => ({
      id: r.id,
      title: r.title,
      service: r.service,
      source: r.source,
      applies_to: r.applies_to,
      steps: r.steps,
    }));
    return { runbooks, count: runbooks.length };
  },
});

/** This group's tools, in catalog order. */
export const KNOWLEDGE_TOOLS = [list_learnings, runbooks] as const;

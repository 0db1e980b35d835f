import { type Db } from '@opsi/db';
import { appendAudit, type AuditInput } from '../audit';
import type { Auth } from '../context';
import { BadRequest, Conflict, Forbidden, NotFound } from '../errors';
import { availableTools } from '../agent';
import { assertOutboundUrl, NO_EXCEPTIONS, type OutboundPolicy } from './outbound';
import {
  deleteTenantTool,
  findConnectionKinds,
  findSubscribedNotifiers,
  findTenantToolForUpdate,
  findTenantTools,
  upsertTenantTool,
} from './repository';
import type { SecretBox } from './secret-box';
import { listTerraformStates } from '../inventory';

export type ToolKind = 'connector' | 'notifier' | 'agent_tool' | 'alert_source';

export interface CatalogTool {
  id: string;
  name: string;
  category: string;
  description: string;
  kind: ToolKind;
}

/** Events a notifier can be told about. */
export const NOTIFIER_EVENTS = ['report.morning', 'finding.critical', 'incident.opened'] as const;
export type NotifierEvent = (typeof NOTIFIER_EVENTS)[number];

const STATIC_TOOLS: CatalogTool[] = [
  {
    id: 'demo',
    name: 'Demo environment',
    category: 'connectors',
    kind: 'connector',
    description:
      'A seeded, simulated AWS organization with realistic defects and drift, for trying the service.',
  },
  {
    id: 'terraform_state',
    name: 'Terraform state',
    category: 'connectors',
    kind: 'connector',
    description:
      'Reads Terraform states into the inventory at every scan: raw terraform.tfstate (versions 3 and 4) or `terraform show -json` output, from a file or an S3 backend (s3:GetObject only), several per tenant; sensitive values are redacted before anything is stored.',
  },
  {
    id: 'aws',
    name: 'AWS (read-only)',
    category: 'connectors',
    kind: 'connector',
    description: 'Reads an AWS account through Describe/List/Get calls only.',
  },
  {
    id: 'alertmanager',
    name: 'Prometheus Alertmanager',
    category: 'alert sources',
    kind: 'alert_source',
    description:
      'Receives Prometheus Alertmanager (any payload version) and Grafana webhook alerts on POST /api/v1/triage/alerts (docs/alert-sources.md).',
  },
  {
    id: 'cloudwatch_sns',
    name: 'CloudWatch alarms via SNS',
    category: 'alert sources',
    kind: 'alert_source',
    description:
      'Receives Amazon SNS on POST /api/v1/triage/alerts (subscribe https://opsi:<token>@host/api/v1/triage/alerts): signatures verified, the subscription confirmed by the service and shown here; CloudWatch alarms, EventBridge events or any text.',
  },
  {
    id: 'webhook',
    name: 'Webhook',
    category: 'notifiers',
    kind: 'notifier',
    description:
      'POSTs JSON to your URL for the morning report, new critical findings and incidents opened by triage, signed with HMAC-SHA256 (X-Opsi-Signature); retried with backoff.',
  },
  {
    id: 'slack',
    name: 'Slack (incoming webhook)',
    category: 'notifiers',
    kind: 'notifier',
    description:
      'Posts a Block Kit message to a Slack-compatible incoming webhook for the morning report, new critical findings and incidents opened by triage.',
  },
];

/** The integrations catalog: connectors, alert sources, notifiers and the agent's tools. */
export function catalogTools(): CatalogTool[] {
  return [
    ...STATIC_TOOLS,
    ...availableTools({ id: '', tier: 'team' }).map((t) => ({
      id: `agent.${t.name}`,
      name: t.name,
      category: 'agent tools',
      kind: 'agent_tool' as const,
      description: t.description,
    })),
  ];
}

function catalogTool(id: string): CatalogTool | undefined {
  return catalogTools().find((t) => t.id === id);
}

export interface TenantTool {
  id: string;
  name: string;
  category: string;
  kind: ToolKind;
  status: 'active' | 'disabled' | 'connected' | 'built_in';
  installed_at: Date | null;
  settings: Record<string, unknown>;
}

/**
 * What the tenant has: its connected environment, installed integrations, and the built-in agent tools.
 * A Terraform connection's settings list its states: source, serial, last read, what was left out.
 */
export async function listTenantTools(db: Db, tenantId: string): Promise<TenantTool[]> {
  const [connections, installed] = await Promise.all([
    findConnectionKinds(db, tenantId),
    findTenantTools(db, tenantId),
  ]);
  const catalog = catalogTools();
  const out: TenantTool[] = [];
  for (const c of connections) {
    const t = catalog.find((x) => x.id === c.kind);
    if (t)
      out.push({
        id: t.id,
        name: t.name,
        category: t.category,
        kind: t.kind,
        status: 'connected',
        installed_at: c.created_at,
        settings: c.kind === 'terraform_state' ? { states: await listTerraformStates(db, tenantId) } : {},
      });
  }
  for (const row of installed) {
    const t = catalog.find((x) => x.id === row.tool_id);
    if (!t) continue;
    out.push({
      id: t.id,
      name: t.name,
      category: t.category,
      kind: t.kind,
      status: row.status,
      installed_at: row.installed_at,
      settings: row.settings,
    });
  }
  for (const t of catalog.filter((x) => x.kind === 'agent_tool'))
    out.push({
      id: t.id,
      name: t.name,
      category: t.category,
      kind: t.kind,
      status: 'built_in',
      installed_at: null,
      settings: {},
    });
  return out;
}

/** The catalog with `installed` for the tenant. */
export async function listCatalogFor(db: Db, tenantId: string) {
  const mine = new Set((await listTenantTools(db, tenantId)).map((t) => t.id));
  return catalogTools().map((t) => ({ ...t, installed: mine.has(t.id) }));
}

export interface InstallInput {
  tool_id: string;
  url?: string | undefined;
  secret?: string | undefined;
  events?: string[] | undefined;
}

type Actor = AuditInput['actor'];

async function checkUrl(url: string | undefined, toolId: string, outbound: OutboundPolicy): Promise<string> {
  if (!url) throw new BadRequest(`${toolId} needs a url`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BadRequest('url must be an absolute http(s) URL');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new BadRequest('url must be an absolute http(s) URL');
  if (parsed.username || parsed.password) throw new BadRequest('url must not carry credentials');
  await assertOutboundUrl(parsed, outbound);
  return parsed.toString();
}

/** Shown instead of a URL: scheme and host only (a Slack webhook's path is its secret). */
export function urlHint(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}/…`;
}

/**
 * Installs (or reconfigures) an integration for a tenant. Notifiers keep their URL and signing secret
 * encrypted in secret_ciphertext; settings shows only the URL's host and the events. Connectors are
 * connected with the operator's `env connect`; agent tools are built in.
 */
export async function installTool(
  db: Db,
  box: SecretBox,
  tenantId: string,
  actor: Actor,
  input: InstallInput,
  outbound: OutboundPolicy = NO_EXCEPTIONS,
): Promise<{ tool: TenantTool; created: boolean }> {
  const t = catalogTool(input.tool_id);
  if (!t) throw new BadRequest(`tool_id must be one of the catalog's ids (GET /api/v1/marketplace/tools)`);
  if (t.kind === 'connector')
    throw new Conflict(`${t.id} is a connector: connect it with \`npm run admin -- env connect\``);
  if (t.kind === 'agent_tool') throw new Conflict(`${t.id} is built in: every tenant has it`);
  let settings: Record<string, unknown> = {};
  let sealed: string | null = null;
  if (t.kind === 'notifier') {
    const url = await checkUrl(input.url, t.id, outbound);
    if (t.id === 'webhook' && (!input.secret || input.secret.length < 16 || input.secret.length > 256))
      throw new BadRequest('webhook needs a secret of 16 to 256 characters (it signs every delivery)');
    const events = input.events ?? [...NOTIFIER_EVENTS];
    const unknown = events.filter((e) => !(NOTIFIER_EVENTS as readonly string[]).includes(e));
    if (unknown.length || !events.length)
      throw new BadRequest(`events must be a non-empty list of ${NOTIFIER_EVENTS.join(', ')}`);
    settings = { url_hint: urlHint(url), events: [...new Set(events)], signed: t.id === 'webhook' };
    sealed = box.seal(JSON.stringify({ url, secret: t.id === 'webhook' ? input.secret : null }));
  } else if (input.url || input.secret || input.events) {
    throw new BadRequest(`${t.id} takes no settings`);
  }
  return db.transaction().execute(async (tx) => {
    const existed = await findTenantToolForUpdate(tx, tenantId, t.id);
    const row = await upsertTenantTool(tx, {
      tenant_id: tenantId,
      tool_id: t.id,
      settings,
      secret_ciphertext: sealed,
      installed_by: actor.email ? `user:${actor.email}` : actor.type,
    });
    await appendAudit(tx, tenantId, {
      actor,
      action: existed ? 'tool.reconfigured' : 'tool.installed',
      target_type: 'tool',
      target_id: t.id,
      details: { settings },
    });
    return {
      tool: {
        id: t.id,
        name: t.name,
        category: t.category,
        kind: t.kind,
        status: row.status,
        installed_at: row.installed_at,
        settings: row.settings,
      },
      created: !existed,
    };
  });
}

/** Removes an installed integration; 404 when the tenant does not have it. */
export async function removeTool(db: Db, tenantId: string, actor: Actor, toolId: string): Promise<void> {
  const t = catalogTool(toolId);
  if (t?.kind === 'agent_tool') throw new Conflict(`${t.id} is built in: it cannot be removed`);
  if (t?.kind === 'connector')
    throw new Conflict(`${t.id} is a connector: connections are managed with the operator's env commands`);
  await db.transaction().execute(async (tx) => {
    const gone = await deleteTenantTool(tx, tenantId, toolId);
    if (!gone) throw new NotFound('This integration is not installed.');
    await appendAudit(tx, tenantId, {
      actor,
      action: 'tool.removed',
      target_type: 'tool',
      target_id: toolId,
      details: {},
    });
  });
}

/** Only owners and admins manage integrations. */
export function requireToolManager(auth: Auth): Actor {
  if (auth.user.role !== 'owner' && auth.user.role !== 'admin')
    throw new Forbidden('Only an owner or an admin can install or remove integrations.');
  return {
    type: 'user',
    id: auth.user.id,
    email: auth.user.email,
    token_id: auth.kind === 'token' ? auth.token.id : null,
  };
}

/** The tenant's active notifiers subscribed to an event, with their decrypted target. */
export async function notifiersFor(db: Db, tenantId: string, event: string) {
  const rows = await findSubscribedNotifiers(db, tenantId, event);
  return rows.rows.map((r) => r.tool_id);
}

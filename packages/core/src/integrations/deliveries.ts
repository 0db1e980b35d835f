import { createHmac } from 'node:crypto';
import { type Db } from '@opsi/db';
import type { JobProducer } from '@opsi/jobs';
import type { DeliveryPolicy } from '../events';
import { notifiersFor, type NotifierEvent } from './catalog';
import { guardedFetch, OutboundRefused, type OutboundPolicy } from './outbound';
import {
  findDelivery,
  findFindingForDelivery,
  findPendingDeliveries,
  findReportForDelivery,
  findTenantSlug,
  findToolSecret,
  insertDeliveries,
  markDeliveryAttemptFailed,
  markDeliveryDelivered,
} from './repository';
import type { SecretBox } from './secret-box';
import { incidentForNotification } from '../incidents';

/**
 * Records one delivery per subscribed notifier for an event (unique per notifier, event and subject, so
 * asking twice delivers once) and queues each one still pending on the reports pool.
 */
export async function enqueueDeliveries(
  db: Db,
  producer: JobProducer,
  tenantId: string,
  event: NotifierEvent,
  subjectId: string,
  policy: DeliveryPolicy,
): Promise<string[]> {
  const tools = await notifiersFor(db, tenantId, event);
  if (!tools.length) return [];
  await insertDeliveries(db, tenantId, tools, event, subjectId);
  const pending = await findPendingDeliveries(db, tenantId, tools, event, subjectId);
  for (const d of pending)
    await producer.enqueue(
      'reports',
      'deliver',
      { tenant_id: tenantId, delivery_id: d.id },
      {
        jobId: `deliver-${d.id}`,
        attempts: policy.attempts,
        backoff: { type: 'exponential', delay: policy.backoffMs },
      },
    );
  return pending.map((d) => d.id);
}

/** Failures worth retrying; the message never carries the URL or the secret. */
export class DeliveryFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeliveryFailed';
  }
}

interface Envelope {
  id: string;
  event: string;
  tenant: { id: string; slug: string };
  created_at: string;
  data: Record<string, unknown>;
}

async function envelopeOf(
  db: Db,
  d: { id: string; tenant_id: string; event_kind: string; subject_id: string },
  publicUrl: string,
): Promise<Envelope | undefined> {
  const tenant = await findTenantSlug(db, d.tenant_id);
  const base = { id: d.id, event: d.event_kind, tenant, created_at: new Date().toISOString() };
  if (d.event_kind === 'report.morning') {
    const r = await findReportForDelivery(db, d.tenant_id, d.subject_id);
    if (!r) return undefined;
    return {
      ...base,
      data: {
        report: {
          id: r.id,
          generated_at: r.generated_at.toISOString(),
          period: { from: r.period_from.toISOString(), to: r.period_to.toISOString() },
          headline: r.headline,
          sections: r.sections,
        },
        url: `${publicUrl}/api/v1/reports/morning/latest`,
      },
    };
  }
  if (d.event_kind === 'finding.critical') {
    const f = await findFindingForDelivery(db, d.tenant_id, d.subject_id);
    if (!f) return undefined;
    return {
      ...base,
      data: {
        finding: { ...f, detected_at: f.detected_at.toISOString() },
        url: `${publicUrl}/api/v1/pulse/findings/${f.id}`,
      },
    };
  }
  const incident = await incidentForNotification(db, d.tenant_id, d.subject_id);
  return incident ? { ...base, data: { incident } } : undefined;
}

type Sections = {
  new_findings?: unknown[];
  resolved_findings?: unknown[];
  regressed_findings?: unknown[];
  savings?: { open_monthly?: number; realized_monthly?: number };
  drift?: { totals?: { added?: number; removed?: number; changed?: number } };
  incidents?: { opened?: unknown[]; open?: unknown[] };
  top_clusters?: Array<{ title: string; severity: string; why: string; finding_id: string }>;
};

const mrkdwn = (text: string) =>
  text.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!);

/** A Slack Block Kit message for an envelope. */
export function slackMessage(e: Envelope): Record<string, unknown> {
  if (e.event === 'report.morning') {
    const r = e.data.report as { headline: string; sections: Sections; period: { from: string; to: string } };
    const s = r.sections;
    const drift = s.drift?.totals ?? {};
    const field = (label: string, value: string | number) => ({
      type: 'mrkdwn',
      text: `*${label}*\n${value}`,
    });
    return {
      text: `Morning report: ${r.headline}`,
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: 'Morning report' } },
        { type: 'section', text: { type: 'mrkdwn', text: mrkdwn(r.headline) } },
        {
          type: 'section',
          fields: [
            field('New findings', s.new_findings?.length ?? 0),
            field('Resolved', s.resolved_findings?.length ?? 0),
            field('Regressed', s.regressed_findings?.length ?? 0),
            field('Drift', (drift.added ?? 0) + (drift.removed ?? 0) + (drift.changed ?? 0)),
            field('Open savings', `$${(s.savings?.open_monthly ?? 0).toFixed(2)}/month`),
            field('Incidents open', s.incidents?.open?.length ?? 0),
          ],
        },
        ...(s.top_clusters?.length
          ? [
              {
                type: 'section',
                text: {
                  type: 'mrkdwn',
                  text: `*Fix first*\n${s.top_clusters.map((c, i) => `${i + 1}. ${mrkdwn(c.title)} (${c.severity}): ${mrkdwn(c.why)}`).join('\n')}`,
                },
              },
            ]
          : []),
        {
          type: 'context',
          elements: [
            { type: 'mrkdwn', text: `${r.period.from} → ${r.period.to} · <${String(e.data.url)}|open>` },
          ],
        },
      ],
    };
  }
  if (e.event === 'finding.critical') {
    const f = e.data.finding as { title: string; domain: string; id: string };
    return {
      text: `Critical finding: ${f.title}`,
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: 'New critical finding' } },
        {
          type: 'section',
          text: { type: 'mrkdwn', text: `*${mrkdwn(f.title)}*\n${f.domain} · finding ${f.id}` },
        },
      ],
    };
  }
  const i = e.data.incident as { title?: string; severity?: string; incident_id?: string };
  return {
    text: `Incident opened: ${i.title ?? ''}`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: 'Incident opened' } },
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `*${mrkdwn(i.title ?? '')}* (${i.severity ?? ''}) · ${i.incident_id ?? ''}`,
        },
      },
    ],
  };
}

/** `sha256=` + hex HMAC-SHA256 of `<timestamp>.<body>` under the webhook's secret. */
export function signWebhook(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * Attempts one delivery. Delivered or already finished: done. A failure is recorded (attempts, the
 * error without URL or secret) and thrown, so the queue retries it with backoff; on the last attempt the
 * delivery is recorded `failed` first.
 */
export async function attemptDelivery(
  db: Db,
  box: SecretBox,
  deliveryId: string,
  opts: {
    tenantId: string;
    lastAttempt: boolean;
    timeoutMs: number;
    publicUrl: string;
    outbound?: OutboundPolicy;
  },
): Promise<{ status: 'delivered' | 'failed' | 'skipped'; response_status?: number }> {
  const d = await findDelivery(db, opts.tenantId, deliveryId);
  if (!d || d.status !== 'pending') return { status: 'skipped' };
  const fail = async (message: string, responseStatus: number | null, final: boolean) => {
    await markDeliveryAttemptFailed(db, d.id, message, responseStatus, final);
    throw new DeliveryFailed(`${d.tool_id} delivery ${d.id}: ${message}`);
  };
  const tool = await findToolSecret(db, d.tenant_id, d.tool_id);
  if (!tool?.secret_ciphertext || tool.status !== 'active')
    return fail('the notifier was removed or disabled', null, true);
  const envelope = await envelopeOf(db, d, opts.publicUrl);
  if (!envelope) return fail(`the ${d.event_kind} ${d.subject_id} no longer exists`, null, true);
  const target = JSON.parse(box.open(tool.secret_ciphertext)) as { url: string; secret: string | null };
  const body = JSON.stringify(d.tool_id === 'slack' ? slackMessage(envelope) : envelope);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'opsi-notifier/1',
  };
  if (d.tool_id === 'webhook') {
    const timestamp = String(Math.floor(Date.now() / 1000));
    headers['x-opsi-event'] = d.event_kind;
    headers['x-opsi-delivery'] = d.id;
    headers['x-opsi-timestamp'] = timestamp;
    headers['x-opsi-signature'] = signWebhook(target.secret ?? '', timestamp, body);
  }
  let res: Awaited<ReturnType<typeof guardedFetch>>;
  try {
    res = await guardedFetch(
      target.url,
      { method: 'POST', headers, body, signal: AbortSignal.timeout(opts.timeoutMs) },
      opts.outbound,
    );
    await res.arrayBuffer().catch(() => undefined);
  } catch (e) {
    // A refused address stays refused: recorded failed at once, nothing was sent.
    if (e instanceof OutboundRefused) return fail(e.message, null, true);
    const err = e as Error & { cause?: { code?: string } };
    const why = err.name === 'TimeoutError' ? 'timed out' : (err.cause?.code ?? 'network error');
    return fail(`request failed: ${why}`, null, opts.lastAttempt);
  }
  if (res.status < 200 || res.status >= 300) return fail(`HTTP ${res.status}`, res.status, opts.lastAttempt);
  await markDeliveryDelivered(db, d.id, res.status);
  return { status: 'delivered', response_status: res.status };
}

import { X509Certificate, verify as verifySignature } from 'node:crypto';
import { get as httpsGet } from 'node:https';
import { z } from 'zod';
import type { Db } from '@opsi/db';
import { appendAudit, type AuditInput } from '../audit';
import { BadRequest, Forbidden } from '../errors';
import { installSnsTool, lockSnsSettings, mergeSnsSettings } from './repository';

// Amazon SNS as AWS delivers it over HTTP(S) (decisions.md "Wave 3"). Written here rather than taken from
// `sns-validator` (aws-js-sns-message-validator 0.3.5, the maintained npm package): it signs an
// UnsubscribeConfirmation over the Notification fields (AWS signs it as a SubscriptionConfirmation, with
// Token and SubscribeURL), matches its host pattern against `host:port`, fetches with no timeout, size
// bound or cache bound, and has no rule for SubscribeURL. The whole of it is the canonical string
// below, one crypto.verify and one bounded HTTPS GET.

/** The three message types SNS posts to an HTTP(S) subscription. */
export const SNS_MESSAGE_TYPES = [
  'Notification',
  'SubscriptionConfirmation',
  'UnsubscribeConfirmation',
] as const;

const SnsEnvelope = z.object({
  Type: z.enum(SNS_MESSAGE_TYPES),
  MessageId: z.string().min(1),
  TopicArn: z.string().min(1),
  Subject: z.string().nullable().optional(),
  Message: z.string(),
  Timestamp: z.string().min(1),
  SignatureVersion: z.string().min(1),
  Signature: z.string().min(1),
  SigningCertURL: z.string().min(1),
  Token: z.string().min(1).optional(),
  SubscribeURL: z.string().min(1).optional(),
  UnsubscribeURL: z.string().optional(),
});
export type SnsMessage = z.infer<typeof SnsEnvelope>;

/** Does a posted body look like an SNS message (so it must be verified before anything else)? */
export function isSnsMessage(body: unknown): boolean {
  return (
    !!body &&
    typeof body === 'object' &&
    !Array.isArray(body) &&
    'Type' in body &&
    ('TopicArn' in body || 'SigningCertURL' in body || 'Signature' in body)
  );
}

/**
 * Does `host` (no port, lower case) match one of the patterns? `*` matches exactly one DNS label, so
 * `sns.*.amazonaws.com` takes `sns.eu-west-1.amazonaws.com` but not `sns.evil.com.amazonaws.com`.
 */
export function hostTrusted(host: string, patterns: string[]): boolean {
  const labels = host.toLowerCase().replace(/\.$/, '').split('.');
  return patterns.some((pattern) => {
    const want = pattern.toLowerCase().split('.');
    return (
      want.length === labels.length &&
      want.every((w, i) => (w === '*' ? /^[a-z0-9-]+$/.test(labels[i]!) : w === labels[i]))
    );
  });
}

/** An https URL on a trusted host, without credentials; anything else is 403 naming what is wrong. */
function trustedUrl(raw: string, patterns: string[], what: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Forbidden(`The SNS ${what} is not a URL.`);
  }
  if (url.protocol !== 'https:') throw new Forbidden(`The SNS ${what} must be https.`);
  if (url.username || url.password) throw new Forbidden(`The SNS ${what} must not carry credentials.`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!hostTrusted(host, patterns))
    throw new Forbidden(
      `The SNS ${what} names ${host}, which is not a trusted SNS host (SNS_TRUSTED_HOSTS: ${patterns.join(', ')}).`,
    );
  return url;
}

/** AWS's canonical string: "Key\nvalue\n" for each signed field of the type, in this order, when present. */
export function snsStringToSign(m: SnsMessage): string {
  const keys =
    m.Type === 'Notification'
      ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  let out = '';
  for (const k of keys) {
    const v = (m as Record<string, unknown>)[k];
    if (typeof v === 'string') out += `${k}\n${v}\n`;
  }
  return out;
}

const MAX_FETCH_BYTES = 64 * 1024;
const FETCH_TIMEOUT_MS = 5_000;

/** One GET over HTTPS (never a redirect followed), bounded in time and size; answers status and body. */
function httpsText(url: URL): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsGet(url, { timeout: FETCH_TIMEOUT_MS }, (res) => {
      let size = 0;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_FETCH_BYTES) {
          req.destroy(new Error(`more than ${MAX_FETCH_BYTES} bytes`));
          return;
        }
        chunks.push(c);
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${FETCH_TIMEOUT_MS} ms`)));
    req.on('error', reject);
  });
}

/** Signing certificates by URL, kept for the process's life (at most this many; the oldest goes first). */
const CERT_CACHE_MAX = 64;
const certs = new Map<string, Promise<X509Certificate>>();

async function signingCertificate(url: URL): Promise<X509Certificate> {
  const key = url.toString();
  let pending = certs.get(key);
  if (!pending) {
    pending = (async () => {
      const res = await httpsText(url);
      if (res.status !== 200) throw new Error(`answered ${res.status}`);
      return new X509Certificate(res.body);
    })();
    certs.set(key, pending);
    if (certs.size > CERT_CACHE_MAX) certs.delete(certs.keys().next().value!);
    // A failed fetch is not kept: the next message tries again.
    pending.catch(() => certs.delete(key));
  }
  try {
    return await pending;
  } catch (e) {
    throw new Forbidden(`The SNS signing certificate could not be fetched: ${(e as Error).message}.`);
  }
}

/**
 * Checks a posted SNS message: its shape (400 naming the field), then its certificate URL (https, a
 * trusted host) and its signature (version 1: SHA1withRSA, 2: SHA256withRSA) over AWS's canonical
 * string (403). Nothing is stored or fetched before the URL check passes.
 */
export async function verifySnsMessage(body: unknown, trustedHosts: string[]): Promise<SnsMessage> {
  const parsed = SnsEnvelope.safeParse(body);
  if (!parsed.success) {
    const missing = parsed.error.issues.map((i) => i.path.join('.') || 'body');
    // An unsigned message is a forgery, whatever else it lacks.
    if (missing.some((k) => k === 'Signature' || k === 'SigningCertURL' || k === 'SignatureVersion'))
      throw new Forbidden('The SNS message is not signed (Signature, SigningCertURL, SignatureVersion).');
    throw new BadRequest(`Not a valid Amazon SNS message: ${[...new Set(missing)].slice(0, 5).join(', ')}.`);
  }
  const m = parsed.data;
  if (m.Type !== 'Notification' && (!m.Token || !m.SubscribeURL))
    throw new BadRequest(`An SNS ${m.Type} carries Token and SubscribeURL.`);
  const algorithm = m.SignatureVersion === '1' ? 'sha1' : m.SignatureVersion === '2' ? 'sha256' : undefined;
  if (!algorithm)
    throw new Forbidden(`SNS SignatureVersion ${m.SignatureVersion} is not supported (1 or 2).`);
  const certUrl = trustedUrl(m.SigningCertURL, trustedHosts, 'SigningCertURL');
  if (m.SubscribeURL && m.Type === 'SubscriptionConfirmation')
    trustedUrl(m.SubscribeURL, trustedHosts, 'SubscribeURL');
  const cert = await signingCertificate(certUrl);
  const ok = (() => {
    try {
      return verifySignature(
        algorithm,
        Buffer.from(snsStringToSign(m), 'utf8'),
        cert.publicKey,
        Buffer.from(m.Signature, 'base64'),
      );
    } catch {
      return false;
    }
  })();
  if (!ok) throw new Forbidden('The SNS message signature does not verify.');
  return m;
}

/** Confirms a verified SubscriptionConfirmation as AWS asks: GET its SubscribeURL (https, a trusted host). */
export async function confirmSnsSubscription(
  m: SnsMessage,
  trustedHosts: string[],
): Promise<{ subscription_arn: string | null }> {
  const url = trustedUrl(m.SubscribeURL ?? '', trustedHosts, 'SubscribeURL');
  let res: { status: number; body: string };
  try {
    res = await httpsText(url);
  } catch (e) {
    throw new Forbidden(`The SNS SubscribeURL could not be reached: ${(e as Error).message}.`);
  }
  if (res.status !== 200)
    throw new Forbidden(`The SNS SubscribeURL answered ${res.status}: the subscription is not confirmed.`);
  // <ConfirmSubscriptionResponse><ConfirmSubscriptionResult><SubscriptionArn>…
  const arn = /<SubscriptionArn>([^<]+)<\/SubscriptionArn>/.exec(res.body)?.[1] ?? null;
  return { subscription_arn: arn };
}

export interface SnsSubscription {
  topic_arn: string;
  status: 'confirmed' | 'unsubscribed';
  subscription_arn: string | null;
  confirmed_at: string | null;
  unsubscribed_at: string | null;
}

/**
 * Records a subscription's state on the tenant's `cloudwatch_sns` integration (installed if the tenant
 * had not: SNS subscribing is installing it) and in the audit log, in one transaction.
 */
export async function recordSnsSubscription(
  db: Db,
  tenantId: string,
  actor: AuditInput['actor'],
  m: SnsMessage,
  subscriptionArn: string | null,
): Promise<SnsSubscription> {
  const at = new Date().toISOString();
  return db.transaction().execute(async (tx) => {
    await installSnsTool(tx, tenantId);
    const row = await lockSnsSettings(tx, tenantId);
    const list = Array.isArray(row.settings.subscriptions)
      ? (row.settings.subscriptions as SnsSubscription[])
      : [];
    const before = list.find((s) => s.topic_arn === m.TopicArn);
    const entry: SnsSubscription =
      m.Type === 'SubscriptionConfirmation'
        ? {
            topic_arn: m.TopicArn,
            status: 'confirmed',
            subscription_arn: subscriptionArn ?? before?.subscription_arn ?? null,
            confirmed_at: at,
            unsubscribed_at: null,
          }
        : {
            topic_arn: m.TopicArn,
            status: 'unsubscribed',
            subscription_arn: before?.subscription_arn ?? null,
            confirmed_at: before?.confirmed_at ?? null,
            unsubscribed_at: at,
          };
    const subscriptions = [...list.filter((s) => s.topic_arn !== m.TopicArn), entry];
    await mergeSnsSettings(tx, tenantId, JSON.stringify({ subscriptions }));
    await appendAudit(tx, tenantId, {
      actor,
      action: entry.status === 'confirmed' ? 'sns.subscription_confirmed' : 'sns.unsubscribed',
      target_type: 'tool',
      target_id: 'cloudwatch_sns',
      details: { topic_arn: m.TopicArn, subscription_arn: entry.subscription_arn, message_id: m.MessageId },
    });
    return entry;
  });
}

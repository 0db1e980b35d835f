import { execFileSync } from 'node:child_process';
import { randomUUID, sign } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { createServer, request as httpsRequest, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A local Amazon SNS for tests, playing AWS's HTTP(S) delivery as the SNS Developer Guide documents it
// ("Parse message formats", "Verifying the signatures of Amazon SNS messages"): it serves its signing
// certificate at https://<host>/SimpleNotificationService-<id>.pem, signs each message (SignatureVersion
// 1: SHA1withRSA, 2: SHA256withRSA) over the canonical string of its type, POSTs it as text/plain with
// the x-amz-sns-* headers and SNS's User-Agent, first without credentials and, once challenged (a 401
// with `WWW-Authenticate: Basic realm=…`; "the client service must be able to support the HTTP/1.1 401
// Unauthorized header response"), again with the subscription URL's credentials as HTTP Basic, and
// answers GET ?Action=ConfirmSubscription with ConfirmSubscriptionResponse XML. Its CA and
// certificates are made at start with the openssl CLI; the service under test trusts the CA through
// NODE_EXTRA_CA_CERTS and the peer's host through SNS_TRUSTED_HOSTS=127.0.0.1.

export interface SnsPeer {
  /** https://127.0.0.1:<port> */
  origin: string;
  /** The CA's PEM file: give it to the service as NODE_EXTRA_CA_CERTS. */
  caFile: string;
  /** The signing certificate's URL on this peer. */
  certUrl: string;
  /** Every request the peer received (method and path+query), in order. */
  requests: Array<{ method: string; url: string; host: string }>;
  /** Signs a message's fields as SNS does (answers the base64 signature). */
  signature(fields: Record<string, unknown>, version?: '1' | '2'): string;
  /** Rewrites a message text (byte for byte but the named fields' values), then signs it anew. */
  resign(text: string, replace?: Record<string, string>, version?: '1' | '2'): string;
  /**
   * POSTs a message text to `endpoint` as SNS does: without credentials, then, if answered 401 with a
   * Basic challenge, again with the URL's userinfo as HTTP Basic. Answers the last status and body, and
   * the WWW-Authenticate lines of the last answer.
   */
  deliver(endpoint: string, text: string): Promise<{ status: number; body: string; challenges: string[] }>;
  close(): Promise<void>;
}

const SUBSCRIPTION_KEYS = ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
const NOTIFICATION_KEYS = ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'];

function canonical(fields: Record<string, unknown>): string {
  const keys = fields.Type === 'Notification' ? NOTIFICATION_KEYS : SUBSCRIPTION_KEYS;
  return keys
    .filter((k) => typeof fields[k] === 'string')
    .map((k) => `${k}\n${fields[k] as string}\n`)
    .join('');
}

/** Replaces the JSON string value of `key` in a message text, leaving every other byte as it was. */
export function replaceField(text: string, key: string, value: string): string {
  const re = new RegExp(`("${key}"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"`);
  if (!re.test(text)) throw new Error(`no field ${key} in the message`);
  return text.replace(re, (_, head: string) => `${head}${JSON.stringify(value)}`);
}

function openssl(dir: string, args: string[]) {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** One POST as SNS makes it; answers status, body and each WWW-Authenticate line apart. */
function post(
  target: string,
  headers: Record<string, string>,
  text: string,
): Promise<{ status: number; body: string; challenges: string[] }> {
  const send = target.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(text)) } },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            challenges: res.headersDistinct['www-authenticate'] ?? [],
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

export async function startSnsPeer(): Promise<SnsPeer> {
  const dir = mkdtempSync(join(tmpdir(), 'opsi-sns-peer-'));
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=opsi test SNS CA',
  ]);
  openssl(dir, [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'tls.key',
    '-out',
    'tls.csr',
    '-subj',
    '/CN=127.0.0.1',
  ]);
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'tls.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'tls.pem',
    '-days',
    '2',
    '-extfile',
    'san.ext',
  ]);
  openssl(dir, [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'signing.key',
    '-out',
    'signing.csr',
    '-subj',
    '/CN=sns.amazonaws.com',
  ]);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'signing.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'signing.pem',
    '-days',
    '2',
  ]);
  const signingKey = readFileSync(join(dir, 'signing.key'));
  const signingCert = readFileSync(join(dir, 'signing.pem'), 'utf8');
  const certPath = `/SimpleNotificationService-${randomUUID().replace(/-/g, '')}.pem`;
  const requests: SnsPeer['requests'] = [];
  const server: Server = createServer(
    { key: readFileSync(join(dir, 'tls.key')), cert: readFileSync(join(dir, 'tls.pem')) },
    (req, res) => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', host: req.headers.host ?? '' });
      const url = new URL(req.url ?? '/', 'https://127.0.0.1');
      if (req.method === 'GET' && url.pathname === certPath) {
        res.writeHead(200, { 'content-type': 'application/x-x509-ca-cert' });
        res.end(signingCert);
        return;
      }
      if (req.method === 'GET' && url.searchParams.get('Action') === 'ConfirmSubscription') {
        const topic = url.searchParams.get('TopicArn') ?? '';
        res.writeHead(200, { 'content-type': 'text/xml' });
        res.end(
          `<ConfirmSubscriptionResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/">\n` +
            `  <ConfirmSubscriptionResult>\n    <SubscriptionArn>${topic}:${randomUUID()}</SubscriptionArn>\n` +
            `  </ConfirmSubscriptionResult>\n  <ResponseMetadata>\n    <RequestId>${randomUUID()}</RequestId>\n` +
            `  </ResponseMetadata>\n</ConfirmSubscriptionResponse>\n`,
        );
        return;
      }
      res.writeHead(404, { 'content-type': 'text/xml' });
      res.end('<ErrorResponse><Error><Code>NotFound</Code></Error></ErrorResponse>');
    },
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const origin = `https://127.0.0.1:${port}`;

  const signature = (fields: Record<string, unknown>, version: '1' | '2' = '1') =>
    sign(version === '1' ? 'sha1' : 'sha256', Buffer.from(canonical(fields), 'utf8'), signingKey).toString(
      'base64',
    );

  return {
    origin,
    caFile: join(dir, 'ca.pem'),
    certUrl: `${origin}${certPath}`,
    requests,
    signature,
    resign(text, replace = {}, version = '1') {
      let out = replaceField(text, 'SigningCertURL', replace.SigningCertURL ?? `${origin}${certPath}`);
      for (const [k, v] of Object.entries(replace)) if (k !== 'SigningCertURL') out = replaceField(out, k, v);
      out = replaceField(out, 'SignatureVersion', version);
      return replaceField(out, 'Signature', signature(JSON.parse(out) as Record<string, unknown>, version));
    },
    async deliver(endpoint, text) {
      const url = new URL(endpoint);
      const m = JSON.parse(text) as Record<string, string>;
      const headers: Record<string, string> = {
        'x-amz-sns-message-type': m.Type!,
        'x-amz-sns-message-id': m.MessageId!,
        'x-amz-sns-topic-arn': m.TopicArn!,
        'content-type': 'text/plain; charset=UTF-8',
        'user-agent': 'Amazon Simple Notification Service Agent',
      };
      if (m.Type !== 'SubscriptionConfirmation')
        headers['x-amz-sns-subscription-arn'] = `${m.TopicArn}:${randomUUID()}`;
      const target = `${url.protocol}//${url.host}${url.pathname}${url.search}`;
      const first = await post(target, headers, text);
      // As SNS does: the URL's credentials go only in answer to a 401 that challenges for Basic with a
      // realm (one challenge per WWW-Authenticate line, as a Java HTTP client reads them).
      const challenged = first.challenges.some((c) => /^Basic\s+(?:.*[\s,])?realm=/i.test(c));
      if (first.status !== 401 || !url.username || !challenged) return first;
      const basic = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
      return post(
        target,
        { ...headers, authorization: `Basic ${Buffer.from(basic).toString('base64')}` },
        text,
      );
    },
    async close() {
      server.closeAllConnections();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

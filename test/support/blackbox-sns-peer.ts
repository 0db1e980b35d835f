// The black-box checks' own SNS peer (test/e2e/blackbox-wave3-sns), written from AWS's documentation
// without reading the implementation's (sns-peer.ts): two independent readings of the same protocol.
import { execFileSync } from 'node:child_process';
import { createSign, randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A local HTTPS peer that plays Amazon SNS's side of an HTTP(S) subscription, as AWS documents it
// ("Parsing message formats", "Verifying the signatures of Amazon SNS messages"):
// - it serves its signing certificate at SigningCertURL (a PEM, as sns.<region>.amazonaws.com does);
// - it answers the GET of SubscribeURL (`?Action=ConfirmSubscription&TopicArn=…&Token=…`) with the
//   ConfirmSubscriptionResponse XML of the SNS API reference, and records that it was asked;
// - it signs messages with its own key over AWS's canonical string for each type (SignatureVersion 1:
//   SHA1withRSA, 2: SHA256withRSA) and posts them as SNS does: `Content-Type: text/plain;
//   charset=UTF-8`, the `x-amz-sns-*` headers, the body a JSON object laid out as SNS lays it out.
// The TLS certificate is issued by a CA of its own (give `caFile` to the service as
// NODE_EXTRA_CA_CERTS). Certificates are made with the openssl command: Node has no X.509 writer,
// and no npm package is a dependency of the project for it.

export interface PeerRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface SnsPeer {
  /** `https://<host>:<port>` */
  origin: string;
  host: string;
  port: number;
  /** The PEM of the CA that issued the peer's TLS certificate. */
  caFile: string;
  /** Every request the peer received, in order. */
  requests: PeerRequest[];
  /** The SigningCertURL of this peer. */
  certUrl: string;
  /** A SubscribeURL on this peer for a topic and token. */
  subscribeUrl(topicArn: string, token: string): string;
  unsubscribeUrl(subscriptionArn: string): string;
  /** Signs a message (adds Signature, SignatureVersion, SigningCertURL unless given) over AWS's canonical string. */
  sign(message: SnsMessage, version?: '1' | '2'): SnsMessage;
  close(): Promise<void>;
}

export type SnsMessage = Record<string, any>;

export interface CertificateSet {
  dir: string;
  caFile: string;
  tlsKey: string;
  tlsCert: string;
  signingKey: string;
  signingCert: string;
  remove(): void;
}

function openssl(args: string[], cwd: string) {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A CA, a TLS certificate for 127.0.0.1 and localhost issued by it, and an RSA signing certificate. */
export function makeCertificates(): CertificateSet {
  const dir = mkdtempSync(join(tmpdir(), 'opsi-sns-peer-'));
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-sha256',
      '-days',
      '2',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-subj',
      '/CN=opsi test SNS peer CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  openssl(
    [
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
    ],
    dir,
  );
  writeFileSync(
    join(dir, 'tls.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n',
  );
  openssl(
    [
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
      '-sha256',
      '-extfile',
      'tls.ext',
    ],
    dir,
  );
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-sha256',
      '-days',
      '2',
      '-keyout',
      'signing.key',
      '-out',
      'signing.pem',
      '-subj',
      '/CN=sns.amazonaws.com',
    ],
    dir,
  );
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return {
    dir,
    caFile: join(dir, 'ca.pem'),
    tlsKey: read('tls.key'),
    tlsCert: read('tls.pem'),
    signingKey: read('signing.key'),
    signingCert: read('signing.pem'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The fields AWS signs, in its order, for each message type. */
const SIGNED_FIELDS: Record<string, string[]> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: [
    'Message',
    'MessageId',
    'SubscribeURL',
    'Timestamp',
    'Token',
    'TopicArn',
    'Type',
  ],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};

/** AWS's canonical string: each signed field present, as "Name\nvalue\n", in byte order of the names. */
export function canonicalString(message: SnsMessage): string {
  const fields = SIGNED_FIELDS[String(message.Type)];
  if (!fields) throw new Error(`no canonical form for ${message.Type}`);
  let out = '';
  for (const f of fields) {
    if (message[f] === undefined || message[f] === null) continue; // Subject is optional
    out += `${f}\n${message[f]}\n`;
  }
  return out;
}

export function signWith(key: string, message: SnsMessage, version: '1' | '2'): string {
  const s = createSign(version === '1' ? 'RSA-SHA1' : 'RSA-SHA256');
  s.update(canonicalString(message), 'utf8');
  return s.sign(key, 'base64');
}

/** The body as SNS lays it out: `{\n  "Type" : "…",\n  … }` in SNS's key order. */
export function snsBody(message: SnsMessage): string {
  const order = [
    'Type',
    'MessageId',
    'Token',
    'TopicArn',
    'Subject',
    'Message',
    'SubscribeURL',
    'Timestamp',
    'SignatureVersion',
    'Signature',
    'SigningCertURL',
    'UnsubscribeURL',
    'MessageAttributes',
  ];
  const keys = [
    ...order.filter((k) => k in message),
    ...Object.keys(message).filter((k) => !order.includes(k)),
  ];
  return `{\n${keys.map((k) => `  ${JSON.stringify(k)} : ${JSON.stringify(message[k])}`).join(',\n')}\n}`;
}

/** The headers SNS sends with a message (AWS docs, "HTTP/HTTPS headers"). */
export function snsHeaders(message: SnsMessage, body: string): Record<string, string> {
  const h: Record<string, string> = {
    'x-amz-sns-message-type': String(message.Type),
    'x-amz-sns-message-id': String(message.MessageId),
    'x-amz-sns-topic-arn': String(message.TopicArn),
    'content-type': 'text/plain; charset=UTF-8',
    'user-agent': 'Amazon Simple Notification Service Agent',
    'content-length': String(Buffer.byteLength(body)),
  };
  if (message.Type === 'Notification')
    h['x-amz-sns-subscription-arn'] = `${message.TopicArn}:${randomUUID()}`;
  return h;
}

/** Starts the peer on `host` (127.0.0.1 by default, or `localhost` for an untrusted one). */
export async function startSnsPeer(certs: CertificateSet, host = '127.0.0.1'): Promise<SnsPeer> {
  const requests: PeerRequest[] = [];
  const certPath = `/SimpleNotificationService-${randomBytes(16).toString('hex')}.pem`;
  const server: Server = createServer({ key: certs.tlsKey, cert: certs.tlsCert }, (req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers } });
    const url = new URL(req.url ?? '/', 'https://peer');
    if (req.method === 'GET' && url.pathname === certPath) {
      res.writeHead(200, { 'content-type': 'application/x-x509-ca-cert' });
      res.end(certs.signingCert);
      return;
    }
    if (
      req.method === 'GET' &&
      url.pathname === '/' &&
      url.searchParams.get('Action') === 'ConfirmSubscription'
    ) {
      const topic = url.searchParams.get('TopicArn') ?? '';
      res.writeHead(200, { 'content-type': 'text/xml' });
      res.end(
        `<ConfirmSubscriptionResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/">\n` +
          `  <ConfirmSubscriptionResult>\n` +
          `    <SubscriptionArn>${topic}:${randomUUID()}</SubscriptionArn>\n` +
          `  </ConfirmSubscriptionResult>\n` +
          `  <ResponseMetadata>\n    <RequestId>${randomUUID()}</RequestId>\n  </ResponseMetadata>\n` +
          `</ConfirmSubscriptionResponse>\n`,
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'text/xml' });
    res.end('<ErrorResponse><Error><Type>Sender</Type><Code>NotFound</Code></Error></ErrorResponse>');
  });
  server.listen(0, host);
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const origin = `https://${host}:${port}`;
  const certUrl = `${origin}${certPath}`;
  return {
    origin,
    host,
    port,
    caFile: certs.caFile,
    requests,
    certUrl,
    subscribeUrl: (topicArn, token) =>
      `${origin}/?Action=ConfirmSubscription&TopicArn=${encodeURIComponent(topicArn)}&Token=${token}`,
    unsubscribeUrl: (subscriptionArn) =>
      `${origin}/?Action=Unsubscribe&SubscriptionArn=${encodeURIComponent(subscriptionArn)}`,
    sign(message, version = '1') {
      const m: SnsMessage = { ...message, SignatureVersion: version };
      m.SigningCertURL ??= certUrl;
      m.Signature = signWith(certs.signingKey, m, version);
      return m;
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close').catch(() => undefined);
    },
  };
}

import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A local HTTP peer that plays AWS for the real SDK v3 clients (pointed at it with `endpoint` or
 * `AWS_ENDPOINT_URL`). It answers from recorded responses (test/support/aws-recordings: AWS's
 * published answers, each naming its source; see its README) in each service's wire protocol: EC2
 * query → EC2 XML, the other query services → `<XResponse><XResult>` XML, S3 REST-XML,
 * DynamoDB/CloudWatch JSON 1.0, CloudTrail/Logs JSON 1.1. Written by hand because no npm library plays AWS from recorded pages: moto and
 * LocalStack are Python services that answer from their own model of AWS, the opposite of the point.
 *
 * Routing: the service and region come from the SigV4 credential scope of the Authorization header
 * (`…/us-west-2/ec2/aws4_request`), the operation from `Action` (query), `X-Amz-Target` (JSON) or
 * the path and sub-resource (S3). A recording is `<service>/<Action>[@<item>][~<page token>].<ext>`:
 * `@item` is the resource a per-item call names (bucket, user, role, table, ARN's last part), `~token`
 * the page a NextToken/Marker/ContinuationToken asks for. A region directory (`ec2/us-west-2/…`) comes
 * before the service's own. An operation with no recording is answered 501 so a test names it.
 */

const RECORDINGS = join(dirname(fileURLToPath(import.meta.url)), 'aws-recordings');

export type AwsProtocol = 'ec2' | 'query' | 'rest-xml' | 'json1.0' | 'json1.1';

/** The SigV4 signing name of each service the connector reads, with its protocol and XML namespace. */
const SERVICES: Record<string, { protocol: AwsProtocol; xmlns?: string; target?: string }> = {
  sts: { protocol: 'query', xmlns: 'https://sts.amazonaws.com/doc/2011-06-15/' },
  ec2: { protocol: 'ec2' },
  iam: { protocol: 'query', xmlns: 'https://iam.amazonaws.com/doc/2010-05-08/' },
  rds: { protocol: 'query', xmlns: 'http://rds.amazonaws.com/doc/2014-10-31/' },
  elasticloadbalancing: {
    protocol: 'query',
    xmlns: 'http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/',
  },
  autoscaling: { protocol: 'query', xmlns: 'http://autoscaling.amazonaws.com/doc/2011-01-01/' },
  elasticache: { protocol: 'query', xmlns: 'http://elasticache.amazonaws.com/doc/2015-02-02/' },
  s3: { protocol: 'rest-xml' },
  dynamodb: { protocol: 'json1.0' },
  monitoring: { protocol: 'json1.0' },
  cloudtrail: { protocol: 'json1.1' },
  logs: { protocol: 'json1.1' },
};

/** Request members that name the item a per-item call is about (their last ARN/path part is the key). */
const ITEM_PARAMS = [
  'UserName',
  'RoleName',
  'PolicyName',
  'PolicyArn',
  'AccessKeyId',
  'TableName',
  'ResourceArn',
  'ResourceName',
  'LoadBalancerArn',
  'LoadBalancerArns.member.1',
  'TargetGroupArn',
  'ResourceArns.member.1',
  'ResourceIdList',
  // EC2 serializes RestorableByUserIds under its locationName: RestorableBy.1=all.
  'RestorableBy.1',
  'Name',
];
const TOKEN_PARAMS = ['NextToken', 'nextToken', 'Marker', 'continuation-token', 'ExclusiveStartTableName'];

/** S3 sub-resources (`GET /bucket?policy`) and the operation each is. */
const S3_SUBRESOURCES: Record<string, string> = {
  location: 'GetBucketLocation',
  policy: 'GetBucketPolicy',
  policyStatus: 'GetBucketPolicyStatus',
  acl: 'GetBucketAcl',
  encryption: 'GetBucketEncryption',
  versioning: 'GetBucketVersioning',
  lifecycle: 'GetBucketLifecycleConfiguration',
  logging: 'GetBucketLogging',
  tagging: 'GetBucketTagging',
  publicAccessBlock: 'GetPublicAccessBlock',
};

export interface PeerRequest {
  service: string;
  region: string;
  action: string;
  item: string | null;
  token: string | null;
}

/** An injected error, answered in the service's own error format before any recording. */
export interface PeerFault {
  service: string;
  action?: string;
  region?: string;
  /** Only requests about this item (a per-item call's `@item`: the user, role, bucket, ARN's last part). */
  item?: string;
  code: string;
  status: number;
  message?: string;
  /** How many matching requests fail (then the recordings answer); every one when absent. */
  times?: number;
}

export interface AwsPeer {
  url: string;
  /** Every request answered, in order. */
  requests: Array<PeerRequest & { status: number }>;
  fail(fault: PeerFault): void;
  count(service: string, action?: string): number;
  close(): Promise<void>;
}

interface Recording {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * A recording file: `# key: value` header lines (`source`, `fidelity`, `note`, `status`, `header`), a
 * blank line, then the body exactly as sent on the wire. `source` names where the body comes from
 * (repository, path and commit, or a page's URL); `fidelity` says how it came: `verbatim` (the
 * source's wire body byte for byte), `rendered` (the source gives the response's data in another
 * form, e.g. an examples-1.json output, put into the service's wire format) or `unverified`.
 */
function readRecording(file: string): Recording {
  const text = readFileSync(file, 'utf8');
  const split = text.indexOf('\n\n');
  const head = split < 0 ? '' : text.slice(0, split);
  const body = split < 0 ? text : text.slice(split + 2);
  const rec: Recording = { status: 200, headers: {}, body };
  for (const line of head.split('\n')) {
    const m = /^#\s*([a-z-]+):\s*(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === 'status') rec.status = Number(m[2]);
    if (m[1] === 'header') {
      const [k, ...v] = (m[2] ?? '').split(':');
      rec.headers[(k ?? '').trim()] = v.join(':').trim();
    }
  }
  return rec;
}

/** Every recording, as its path under aws-recordings and its `# key: value` header lines. */
export function listRecordings(): Array<{ file: string; header: Array<[string, string]> }> {
  const out: Array<{ file: string; header: Array<[string, string]> }> = [];
  for (const file of readdirSync(RECORDINGS, { recursive: true, encoding: 'utf8' }).sort()) {
    if (!/\.(xml|json)$/.test(file)) continue;
    const text = readFileSync(join(RECORDINGS, file), 'utf8');
    const split = text.indexOf('\n\n');
    const header = (split < 0 ? '' : text.slice(0, split))
      .split('\n')
      .map((l) => /^#\s*([a-z-]+):\s*(.*)$/.exec(l))
      .map((m): [string, string] => (m ? [m[1] as string, m[2] as string] : ['', '']));
    out.push({ file, header });
  }
  return out;
}

const lastPart = (v: string) => v.split(/[/:]/).filter(Boolean).pop() ?? v;
const fileKey = (v: string) => v.replace(/[^A-Za-z0-9._-]/g, '_');

function findRecording(req: PeerRequest, ext: string): string | null {
  const names: string[] = [];
  const page = req.token ? `~${fileKey(req.token)}` : '';
  if (req.item) names.push(`${req.action}@${fileKey(req.item)}${page}`);
  names.push(`${req.action}${page}`);
  for (const dir of [join(RECORDINGS, req.service, req.region), join(RECORDINGS, req.service)])
    for (const n of names) {
      const file = join(dir, `${n}.${ext}`);
      if (existsSync(file)) return file;
    }
  return null;
}

/** The error body each protocol documents (AWS API references, "Common Errors" / "Error responses"). */
function errorAnswer(service: string, code: string, status: number, message: string): Recording {
  const { protocol } = SERVICES[service] ?? { protocol: 'query' };
  const requestId = randomUUID();
  if (protocol === 'ec2')
    return {
      status,
      headers: { 'content-type': 'text/xml;charset=UTF-8' },
      body: `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>${code}</Code><Message>${message}</Message></Error></Errors><RequestID>${requestId}</RequestID></Response>`,
    };
  if (protocol === 'rest-xml')
    return {
      status,
      headers: { 'content-type': 'application/xml' },
      body: `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>${requestId.slice(0, 16).toUpperCase()}</RequestId><HostId>peer</HostId></Error>`,
    };
  if (protocol === 'query')
    return {
      status,
      headers: { 'content-type': 'text/xml' },
      body: `<ErrorResponse xmlns="${SERVICES[service]?.xmlns ?? ''}"><Error><Type>${status >= 500 ? 'Receiver' : 'Sender'}</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
    };
  return {
    status,
    headers: {
      'content-type': `application/x-amz-json-${protocol === 'json1.0' ? '1.0' : '1.1'}`,
      'x-amzn-requestid': requestId,
    },
    body: JSON.stringify({ __type: code, message }),
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Which service, region and operation a signed SDK request is. */
function parseRequest(req: IncomingMessage, body: string): PeerRequest {
  const scope = /Credential=[^/]+\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request/.exec(
    req.headers.authorization ?? '',
  );
  const region = scope?.[1] ?? 'us-east-1';
  const service = scope?.[2] ?? 'unknown';
  const url = new URL(req.url ?? '/', 'http://peer');
  const params = new Map<string, string>();
  let action: string;
  const protocol = SERVICES[service]?.protocol;
  if (protocol === 'rest-xml') {
    url.searchParams.forEach((v, k) => params.set(k, v));
    const bucket = decodeURIComponent(url.pathname.split('/')[1] ?? '');
    if (!bucket) action = 'ListBuckets';
    else {
      const sub = Object.keys(S3_SUBRESOURCES).find((k) => url.searchParams.has(k));
      action = sub ? (S3_SUBRESOURCES[sub] as string) : 'HeadBucket';
      params.set('Bucket', bucket);
    }
  } else if (protocol === 'json1.0' || protocol === 'json1.1') {
    action = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    const json = body ? (JSON.parse(body) as Record<string, unknown>) : {};
    for (const [k, v] of Object.entries(json)) {
      if (typeof v === 'string') params.set(k, v);
      else if (Array.isArray(v) && typeof v[0] === 'string') params.set(k, v[0]);
    }
  } else {
    new URLSearchParams(body).forEach((v, k) => params.set(k, v));
    action = params.get('Action') ?? '';
  }
  const itemParam = ['Bucket', ...ITEM_PARAMS].filter((p) => params.has(p));
  const item = itemParam.length ? itemParam.map((p) => lastPart(params.get(p) as string)).join('+') : null;
  const tokenParam = TOKEN_PARAMS.find((p) => params.has(p));
  return { service, region, action, item, token: tokenParam ? (params.get(tokenParam) as string) : null };
}

function wireAnswer(req: PeerRequest, faults: PeerFault[]): Recording {
  const fault = faults.find(
    (f) =>
      f.service === req.service &&
      (!f.action || f.action === req.action) &&
      (!f.region || f.region === req.region) &&
      (!f.item || f.item === req.item) &&
      (f.times === undefined || f.times > 0),
  );
  if (fault) {
    if (fault.times !== undefined) fault.times--;
    return errorAnswer(req.service, fault.code, fault.status, fault.message ?? `${fault.code} (injected)`);
  }
  const meta = SERVICES[req.service];
  if (!meta) return errorAnswer('sts', 'UnknownService', 400, `peer does not play ${req.service}`);
  const ext = meta.protocol.startsWith('json') ? 'json' : 'xml';
  const file = findRecording(req, ext);
  if (!file)
    return errorAnswer(
      req.service,
      'NotRecorded',
      501,
      `no recording for ${req.service} ${req.action}${req.item ? `@${req.item}` : ''}${req.token ? `~${req.token}` : ''} in ${req.region}`,
    );
  const rec = readRecording(file);
  const contentType =
    ext === 'json'
      ? `application/x-amz-json-${meta.protocol === 'json1.0' ? '1.0' : '1.1'}`
      : 'text/xml;charset=UTF-8';
  return {
    ...rec,
    headers: { 'content-type': contentType, 'x-amzn-requestid': randomUUID(), ...rec.headers },
  };
}

/** Starts the peer on a free port of 127.0.0.1. */
export async function startAwsPeer(): Promise<AwsPeer> {
  const faults: PeerFault[] = [];
  const requests: AwsPeer['requests'] = [];
  const server: Server = createServer((req, res) => {
    void readBody(req).then(
      (body) => {
        const parsed = parseRequest(req, body);
        const answer = wireAnswer(parsed, faults);
        requests.push({ ...parsed, status: answer.status });
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
      },
      () => res.destroy(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    fail: (fault) => void faults.push({ ...fault }),
    count: (service, action) =>
      requests.filter((r) => r.service === service && (!action || r.action === action)).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A profile of the peer's account, as an operator keeps one: the env that points the SDK at it. */
export interface PeerProfile {
  name: string;
  /** AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE and AWS_ENDPOINT_URL, for a process or this one. */
  env: Record<string, string>;
  remove(): void;
}

/**
 * Writes a temporary AWS credentials and config file holding the profile `opsi-peer` (example keys,
 * region us-west-2), for `env connect --aws-profile opsi-peer`; `env` sends every SDK client to `url`.
 */
export function writePeerProfile(url: string): PeerProfile {
  const dir = mkdtempSync(join(tmpdir(), 'opsi-aws-'));
  const name = 'opsi-peer';
  writeFileSync(
    join(dir, 'credentials'),
    `[${name}]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n`,
  );
  writeFileSync(join(dir, 'config'), `[profile ${name}]\nregion = us-west-2\n`);
  return {
    name,
    env: {
      AWS_SHARED_CREDENTIALS_FILE: join(dir, 'credentials'),
      AWS_CONFIG_FILE: join(dir, 'config'),
      AWS_ENDPOINT_URL: url,
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

// The black-box checks' own AWS wire peer (test/e2e/blackbox-aws-partial.e2e.test.ts), written from AWS's
// published wire formats without reading the connector or the project's own peer (aws-peer.ts). The real
// AWS SDK v3 reaches it through `AWS_ENDPOINT_URL` (every service at one address): the service is the one
// the request is signed for (SigV4 credential scope `<date>/<region>/<service>/aws4_request`), the action
// comes from the protocol (query `Action=` form field, JSON `X-Amz-Target`, S3's REST method and path).
//
// What it answers, each in the service's own wire protocol:
// - STS GetCallerIdentity (query XML, as the STS API reference's example response).
// - EC2 (EC2 query protocol, XML): DescribeInstances with botocore's recorded wire response
//   ../shared/realworld/aws-api/botocore-ec2-describe-instances.xml (read from there, never copied);
//   DescribeVolumes with botocore's tests/unit/response_parsing/xml/responses/ec2-describe-volumes.xml
//   (boto/botocore@954320a9933e0c988133feb84cc50b48c992b424, whose parsed form is
//   ../shared/realworld/aws-api/botocore-ec2-describe-volumes.json); DescribeSecurityGroups with the
//   first two groups of botocore's ec2-describe-security-groups.xml
//   (boto/botocore@08925c7e19ebb849596706cdcfbea7fa13545944). The first `throttle` EC2 requests get
//   `RequestLimitExceeded` with HTTP 503, as the EC2 API reference ("Request throttling") documents.
//   Every other EC2 action is refused: `UnauthorizedOperation`, 403, in EC2's
//   `<Response><Errors><Error>` envelope.
// - Every other service and action is refused in its own protocol's AccessDenied:
//   query protocol (IAM, ELB, Auto Scaling, RDS, ElastiCache, STS): 403
//     `<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code>…` (botocore
//     tests/unit/protocols/output/query.json error cases; IAM API reference "Common Errors");
//   S3 REST-XML: 403 `<Error><Code>AccessDenied</Code><Message>Access Denied</Message>…` (S3 API
//     reference "Error responses");
//   JSON 1.0/1.1 protocols (DynamoDB, CloudWatch Logs, CloudTrail, CloudWatch): 400
//     `{"__type":"…#AccessDeniedException","message":…}`; CloudWatch is query-compatible, so it also
//     carries `x-amzn-query-error: AccessDenied;Sender` as the service sends it.
// With `ec2AnswersAll`, EC2's other Describe/Get calls answer an account that has none of those.
// In `denyAll` mode everything, EC2 included, is refused but STS GetCallerIdentity (which AWS never refuses).
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ACCOUNT = '123456789012';
const CALLER_ARN = `arn:aws:iam::${ACCOUNT}:user/opsi-blackbox`;

const VOLUMES_XML = `<?xml version="1.0" encoding="UTF-8"?>
<DescribeVolumesResponse xmlns="http://ec2.amazonaws.com/doc/2014-02-01/">
    <requestId>93f17066-e6f7-4fc2-8308-2c49c99ab86b</requestId>
    <volumeSet>
        <item>
            <volumeId>vol-bc71579a</volumeId>
            <size>8</size>
            <snapshotId>snap-2723f74f</snapshotId>
            <availabilityZone>us-west-2a</availabilityZone>
            <status>in-use</status>
            <createTime>2012-10-16T20:00:16.000Z</createTime>
            <attachmentSet>
                <item>
                    <volumeId>vol-bc71579a</volumeId>
                    <instanceId>i-fde9cece</instanceId>
                    <device>/dev/sda1</device>
                    <status>attached</status>
                    <attachTime>2012-10-16T20:00:21.000Z</attachTime>
                    <deleteOnTermination>true</deleteOnTermination>
                </item>
            </attachmentSet>
            <volumeType>standard</volumeType>
        </item>
        <item>
            <volumeId>vol-a8d2e991</volumeId>
            <size>30</size>
            <snapshotId>snap-3d367c04</snapshotId>
            <availabilityZone>us-west-2b</availabilityZone>
            <status>in-use</status>
            <createTime>2013-03-09T16:43:57.000Z</createTime>
            <attachmentSet>
                <item>
                    <volumeId>vol-a8d2e991</volumeId>
                    <instanceId>i-78f1b94a</instanceId>
                    <device>/dev/sda1</device>
                    <status>attached</status>
                    <attachTime>2013-03-09T16:44:07.000Z</attachTime>
                    <deleteOnTermination>true</deleteOnTermination>
                </item>
            </attachmentSet>
            <volumeType>standard</volumeType>
        </item>
    </volumeSet>
</DescribeVolumesResponse>`;

const SECURITY_GROUPS_XML = `<?xml version="1.0" encoding="UTF-8"?>
<DescribeSecurityGroupsResponse xmlns="http://ec2.amazonaws.com/doc/2014-05-01/">
    <requestId>4296401f-8b78-4f99-b1fb-71def4fc3701</requestId>
    <securityGroupInfo>
        <item>
            <ownerId>123456789012</ownerId>
            <groupId>sg-68d8a958</groupId>
            <groupName>quicklaunch-0</groupName>
            <groupDescription>quicklaunch-0</groupDescription>
            <ipPermissions>
                <item>
                    <ipProtocol>tcp</ipProtocol>
                    <fromPort>22</fromPort>
                    <toPort>22</toPort>
                    <groups/>
                    <ipRanges>
                        <item>
                            <cidrIp>0.0.0.0/0</cidrIp>
                        </item>
                    </ipRanges>
                </item>
            </ipPermissions>
            <ipPermissionsEgress/>
        </item>
        <item>
            <ownerId>123456789012</ownerId>
            <groupId>sg-72334242</groupId>
            <groupName>quicklaunch-1</groupName>
            <groupDescription>quicklaunch-1</groupDescription>
            <ipPermissions>
                <item>
                    <ipProtocol>tcp</ipProtocol>
                    <fromPort>3389</fromPort>
                    <toPort>3389</toPort>
                    <groups/>
                    <ipRanges>
                        <item>
                            <cidrIp>0.0.0.0/0</cidrIp>
                        </item>
                    </ipRanges>
                </item>
            </ipPermissions>
            <ipPermissionsEgress/>
        </item>
    </securityGroupInfo>
</DescribeSecurityGroupsResponse>`;

/** The IAM service prefix of a SigV4 signing name (the two differ for CloudWatch only, among these). */
const IAM_PREFIX: Record<string, string> = { monitoring: 'cloudwatch' };

/** S3 REST calls by the subresource in the query string, as the S3 API reference names them. */
const S3_SUBRESOURCE: Record<string, string> = {
  acl: 'GetBucketAcl',
  location: 'GetBucketLocation',
  logging: 'GetBucketLogging',
  policy: 'GetBucketPolicy',
  policyStatus: 'GetBucketPolicyStatus',
  publicAccessBlock: 'GetBucketPublicAccessBlock',
  tagging: 'GetBucketTagging',
  versioning: 'GetBucketVersioning',
  encryption: 'GetEncryptionConfiguration',
  lifecycle: 'GetLifecycleConfiguration',
};

export interface PeerCall {
  /** The IAM action, `<prefix>:<Action>` (`s3:ListAllMyBuckets` for S3's ListBuckets). */
  iamAction: string;
  region: string;
  answered: 'ok' | 'denied' | 'throttled';
}

export interface BlackboxAwsPeer {
  url: string;
  calls: PeerCall[];
  /** The IAM actions refused so far, sorted and unique. */
  denied(): string[];
  /** The environment a process needs to reach the peer with profile `profile`. */
  env: Record<string, string>;
  profile: string;
  /** `ec2AnswersAll`: EC2's other Describe/Get calls answer an empty account instead of UnauthorizedOperation. */
  setMode(mode: { denyAll?: boolean; throttle?: number; ec2AnswersAll?: boolean }): void;
  close(): Promise<void>;
}

export async function startBlackboxAwsPeer(opts: {
  instancesXmlPath: string;
  throttle?: number;
}): Promise<BlackboxAwsPeer> {
  const instancesXml = readFileSync(opts.instancesXmlPath, 'utf8');
  const calls: PeerCall[] = [];
  let denyAll = false;
  let ec2AnswersAll = false;
  let throttleLeft = opts.throttle ?? 2;

  const send = (res: ServerResponse, status: number, type: string, body: string, headers = {}) => {
    res.writeHead(status, {
      'content-type': type,
      'x-amzn-requestid': randomUUID(),
      'content-length': Buffer.byteLength(body),
      ...headers,
    });
    res.end(body);
  };

  const handle = (req: IncomingMessage, body: string, res: ServerResponse) => {
    const auth = String(req.headers.authorization ?? '');
    const scope = /Credential=[^/]+\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request/.exec(auth);
    const region = scope?.[1] ?? 'us-east-1';
    const service = scope?.[2] ?? 'unknown';
    const prefix = IAM_PREFIX[service] ?? service;
    const url = new URL(req.url ?? '/', 'http://peer');
    const ctype = String(req.headers['content-type'] ?? '');
    const target = String(req.headers['x-amz-target'] ?? '');
    const requestId = randomUUID();

    if (service === 's3') {
      const path = url.pathname.replace(/^\/+/, '');
      const sub = [...url.searchParams.keys()].find((k) => S3_SUBRESOURCE[k]);
      const op =
        path === '' && req.method === 'GET'
          ? 'ListAllMyBuckets'
          : sub
            ? S3_SUBRESOURCE[sub]!
            : `${req.method}Object`;
      calls.push({ iamAction: `s3:${op}`, region, answered: 'denied' });
      return send(
        res,
        403,
        'application/xml',
        `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message><RequestId>${requestId.slice(0, 16)}</RequestId><HostId>${Buffer.from(requestId).toString('base64')}</HostId></Error>`,
      );
    }

    if (target || ctype.includes('x-amz-json')) {
      const action = target.split('.').pop() ?? 'Unknown';
      calls.push({ iamAction: `${prefix}:${action}`, region, answered: 'denied' });
      return send(
        res,
        400,
        ctype.includes('1.0') ? 'application/x-amz-json-1.0' : 'application/x-amz-json-1.1',
        JSON.stringify({
          __type: 'com.amazon.coral.service#AccessDeniedException',
          message: `User: ${CALLER_ARN} is not authorized to perform: ${prefix}:${action} because no identity-based policy allows the ${prefix}:${action} action`,
        }),
        service === 'monitoring' ? { 'x-amzn-query-error': 'AccessDenied;Sender' } : {},
      );
    }

    // The query protocols: the form body names the action.
    const form = new URLSearchParams(body);
    const action = form.get('Action') ?? url.searchParams.get('Action') ?? 'Unknown';
    const iamAction = `${prefix}:${action}`;
    const message = `User: ${CALLER_ARN} is not authorized to perform: ${iamAction} on resource: *`;

    if (service === 'ec2') {
      const ec2Error = (status: number, code: string, msg: string) =>
        send(
          res,
          status,
          'text/xml;charset=UTF-8',
          `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>${code}</Code><Message>${msg}</Message></Error></Errors><RequestID>${requestId}</RequestID></Response>`,
        );
      if (!denyAll && throttleLeft > 0) {
        throttleLeft--;
        calls.push({ iamAction, region, answered: 'throttled' });
        return ec2Error(503, 'RequestLimitExceeded', 'Request limit exceeded.');
      }
      const ok: Record<string, string> = {
        DescribeInstances: instancesXml,
        DescribeVolumes: VOLUMES_XML,
        DescribeSecurityGroups: SECURITY_GROUPS_XML,
      };
      if (!denyAll && ok[action]) {
        calls.push({ iamAction, region, answered: 'ok' });
        return send(res, 200, 'text/xml;charset=UTF-8', ok[action]!);
      }
      if (!denyAll && ec2AnswersAll && /^(Describe|Get)/.test(action)) {
        // An account with none of these: EC2 leaves an empty set out of the body (or writes it empty),
        // and GetEbsEncryptionByDefault answers its flag.
        calls.push({ iamAction, region, answered: 'ok' });
        const flag =
          action === 'GetEbsEncryptionByDefault'
            ? '<ebsEncryptionByDefault>true</ebsEncryptionByDefault>'
            : '';
        return send(
          res,
          200,
          'text/xml;charset=UTF-8',
          `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>${requestId}</requestId>${flag}</${action}Response>`,
        );
      }
      calls.push({ iamAction, region, answered: 'denied' });
      return ec2Error(403, 'UnauthorizedOperation', 'You are not authorized to perform this operation.');
    }

    // GetCallerIdentity is answered even in denyAll: the STS API reference says "No permissions are
    // required to perform this operation", and an explicit deny does not stop it.
    if (service === 'sts' && action === 'GetCallerIdentity') {
      calls.push({ iamAction, region, answered: 'ok' });
      return send(
        res,
        200,
        'text/xml',
        `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <GetCallerIdentityResult>
    <Arn>${CALLER_ARN}</Arn>
    <UserId>AIDACKCEVSQ6C2EXAMPLE</UserId>
    <Account>${ACCOUNT}</Account>
  </GetCallerIdentityResult>
  <ResponseMetadata>
    <RequestId>${requestId}</RequestId>
  </ResponseMetadata>
</GetCallerIdentityResponse>`,
      );
    }

    calls.push({ iamAction, region, answered: 'denied' });
    return send(
      res,
      403,
      'text/xml',
      `<ErrorResponse xmlns="https://${service}.amazonaws.com/doc/"><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>${message}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
    );
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => handle(req, Buffer.concat(chunks).toString('utf8'), res));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const url = `http://127.0.0.1:${port}`;

  // A profile of the standard shared files, as `aws configure` writes them.
  const dir = mkdtempSync(join(tmpdir(), 'bb-aws-'));
  const profile = 'opsi-blackbox';
  writeFileSync(join(dir, 'config'), `[profile ${profile}]\nregion = us-east-1\n`);
  writeFileSync(
    join(dir, 'credentials'),
    `[${profile}]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n`,
  );

  return {
    url,
    calls,
    profile,
    denied: () => [...new Set(calls.filter((c) => c.answered === 'denied').map((c) => c.iamAction))].sort(),
    env: {
      AWS_ENDPOINT_URL: url,
      AWS_CONFIG_FILE: join(dir, 'config'),
      AWS_SHARED_CREDENTIALS_FILE: join(dir, 'credentials'),
      AWS_EC2_METADATA_DISABLED: 'true',
    },
    setMode(mode) {
      if (mode.denyAll !== undefined) denyAll = mode.denyAll;
      if (mode.throttle !== undefined) throttleLeft = mode.throttle;
      if (mode.ec2AnswersAll !== undefined) ec2AnswersAll = mode.ec2AnswersAll;
    },
    async close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

// Hostile input for every operation of the OpenAPI document: NUL bytes, bytes that are not UTF-8, lone
// surrogates, deep JSON, huge strings, odd numbers, wrong types, in path parameters, queries and bodies.
// Shared by the hostile-input integration test and the `npm run drills` hostile drill.

type Json = Record<string, any>;

/** Path segments and query values, already percent-encoded as a client would send them. */
export const ENCODED = [
  '%00',
  'a%00b',
  '%FF%FE', // not UTF-8
  '%ED%A0%80', // a UTF-16 surrogate encoded as UTF-8
  '%', // a broken escape
  '%E2%80%AE', // right-to-left override
  'x'.repeat(3000),
  '0x10',
  '1e3',
  '-1',
  '9007199254740993',
  '..%2F..%2Fetc%2Fpasswd',
  "'%20or%201%3D1--",
];

/** Values put in JSON bodies. */
export function bodyValues(): unknown[] {
  let deep: unknown = 'x';
  for (let i = 0; i < 200; i++) deep = [deep];
  return [
    'a\u0000b',
    'a\ud800b',
    'x'.repeat(70_000), // past the body limit
    'x'.repeat(30_000), // within it, past every field's own limit
    '',
    1e308,
    -0,
    2 ** 53 + 1,
    true,
    null,
    [],
    deep,
    { __proto__: { admin: true } },
  ];
}

/** Raw bodies for an operation that takes one (JSON unless the content type says otherwise). */
export function rawBodies(): Array<{ type: string; body: string | Buffer }> {
  return [
    {
      type: 'application/json',
      body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    },
    { type: 'application/json', body: '['.repeat(20_000) + ']'.repeat(20_000) },
    { type: 'application/json', body: '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000) },
    { type: 'application/json', body: '{"a": 1e309, "b": -1e309}' },
    { type: 'application/json', body: 'null' },
    { type: 'application/json', body: '[]' },
    { type: 'application/json', body: '"x"' },
    { type: 'application/json', body: '{' },
    { type: 'application/json', body: '{"__proto__": {"admin": true}, "constructor": {"prototype": {}}}' },
    { type: 'application/json', body: 'x'.repeat(200_000) },
    { type: 'application/json; charset=utf-16', body: '{}' },
    { type: 'text/plain', body: 'a\u0000b' },
    { type: 'application/x-www-form-urlencoded', body: 'email=a%00b&password=x' },
    { type: 'application/x-www-form-urlencoded', body: 'email[a][b][c][d][e][f][g]=x&password=%FF' },
  ];
}

export interface HostileCase {
  method: string;
  path: string;
  what: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

function resolve(doc: Json, schema: Json | undefined): Json | undefined {
  if (schema?.$ref) return doc.components.schemas[String(schema.$ref).split('/').pop()!] as Json;
  return schema;
}

/** Every hostile request for every operation of an OpenAPI document. */
export function hostileCases(doc: Json): HostileCase[] {
  const out: HostileCase[] = [];
  for (const [template, ops] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(ops)) {
      const params = (op.parameters ?? []) as Json[];
      const pathParams = params.filter((p) => p.in === 'path').map((p) => String(p.name));
      const queryParams = params.filter((p) => p.in === 'query').map((p) => String(p.name));
      const fill = (name?: string, value?: string) =>
        template.replace(/\{(\w+)\}/g, (_, p: string) =>
          p === name ? value! : '00000000-0000-4000-8000-000000000000',
        );
      const M = method.toUpperCase();
      for (const p of pathParams)
        for (const v of ENCODED)
          out.push({ method: M, path: fill(p, v), what: `path ${p}=${v.slice(0, 30)}` });
      for (const q of [...queryParams, 'undeclared']) {
        for (const v of [...ENCODED, '', `a&${q}=b`]) {
          out.push({ method: M, path: `${fill()}?${q}=${v}`, what: `query ${q}=${v.slice(0, 30)}` });
        }
      }
      out.push({
        method: M,
        path: `${fill()}?${'q'.repeat(20)}=${'x'.repeat(20_000)}`,
        what: 'a huge query',
      });
      const body = resolve(doc, op.requestBody?.content?.['application/json']?.schema as Json | undefined);
      const json = (value: unknown) => ({ 'content-type': 'application/json', body: JSON.stringify(value) });
      const props = Object.keys((body?.properties as Json | undefined) ?? {});
      for (const prop of M === 'GET' ? [] : [...props, 'tenant_id', 'undeclared']) {
        for (const [i, v] of bodyValues().entries()) {
          const { body: text, ...headers } = json({ [prop]: v });
          out.push({ method: M, path: fill(), what: `body ${prop} #${i}`, headers, body: text });
        }
      }
      if (M !== 'GET') {
        for (const [i, raw] of rawBodies().entries()) {
          out.push({
            method: M,
            path: fill(),
            what: `raw body #${i}`,
            headers: { 'content-type': raw.type },
            body: raw.body,
          });
        }
      }
    }
  }
  // Logging out ends the session the others use: last.
  return out.sort(
    (a, b) => Number(a.path.startsWith('/auth/logout')) - Number(b.path.startsWith('/auth/logout')),
  );
}

/** The credentials the operation's security asks for: the bearer token, or the browser session. */
export function hostileAuth(
  doc: Json,
  c: HostileCase,
  token: string,
  session: { cookie: string; csrf: string },
): Record<string, string> {
  const op = (doc.paths as Json)[
    Object.keys(doc.paths).find(
      (p) => c.path.split('?')[0]!.startsWith(p.split('{')[0]!) && matchesTemplate(p, c.path),
    )!
  ]?.[c.method.toLowerCase()] as Json | undefined;
  const security = (op?.security ?? []) as Json[];
  if (security.some((s) => 'bearer' in s)) return { authorization: `Bearer ${token}` };
  if (security.some((s) => 'session' in s)) return { cookie: session.cookie, 'x-csrf-token': session.csrf };
  return {};
}

export function matchesTemplate(template: string, path: string): boolean {
  const re = new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]*')}$`);
  return re.test(path.split('?')[0]!);
}

/**
 * Notifier URLs that must never be reached (server-side request forgery), each with the rule its 400
 * names: loopback, link-local and the cloud metadata address, private, carrier-grade NAT, unique-local,
 * multicast, unspecified, and IPv4-mapped and numeric spellings of them. Used by the notifier
 * integration test and the hostile drill; nothing is ever sent to them (they are refused before any
 * connection).
 */
export const SSRF_TARGETS: Array<[url: string, rule: RegExp]> = [
  ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a cloud metadata address/],
  ['http://[::ffff:169.254.169.254]/', /169\.254\.169\.254 is a cloud metadata address/],
  ['http://[::ffff:a9fe:a9fe]/', /169\.254\.169\.254 is a cloud metadata address/],
  ['http://[fd00:ec2::254]/', /cloud metadata address/],
  ['http://100.100.100.200/', /cloud metadata address/],
  ['http://169.254.1.1/', /link-local/],
  ['http://[fe80::1]/', /link-local/],
  ['http://10.0.0.1/hook', /private address \(RFC 1918\)/],
  ['https://192.168.1.10/hook', /private address/],
  ['http://172.16.0.1/', /private address/],
  ['http://100.64.0.1/', /carrier-grade NAT/],
  ['http://[fd00::1]/', /unique-local/],
  ['http://[::1]:8080/', /loopback/],
  ['http://127.0.0.2/', /loopback/],
  ['http://[::ffff:127.0.0.2]/', /loopback/],
  ['http://[::127.0.0.2]/', /IPv4-compatible/],
  ['http://2130706434/', /127\.0\.0\.2 is a loopback address/],
  ['http://0x7f.0.0.2/', /127\.0\.0\.2 is a loopback address/],
  ['http://224.0.0.1/', /multicast/],
  ['http://[ff02::1]/', /multicast/],
  ['http://0.0.0.0/', /unspecified/],
  ['http://[::]/', /unspecified/],
  ['http://255.255.255.255/', /broadcast/],
];

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { IAM_PREFIX_BY_PACKAGE, iamAction, NEEDS_NO_PERMISSION } from './iam-actions';

const here = dirname(fileURLToPath(import.meta.url));
const POLICY = join(here, '../../../../docs/aws-iam-policy.json');

interface SdkCall {
  file: string;
  pkg: string;
  /** `DescribeInstancesCommand` or `paginateDescribeInstances`. */
  name: string;
  /** `DescribeInstances`. */
  operation: string;
}

/**
 * Every SDK command class and paginator the connector's code imports, with the client package it comes
 * from: the calls it can make. Aliased, namespace and dynamic imports would hide a call, so the
 * read-only test refuses them.
 */
function sdkCalls(): { calls: SdkCall[]; sources: Array<{ file: string; text: string }> } {
  const sources = readdirSync(here)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .map((file) => ({ file, text: readFileSync(join(here, file), 'utf8') }));
  const calls: SdkCall[] = [];
  for (const { file, text } of sources)
    for (const m of text.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'(@aws-sdk\/[^']+)'/g))
      for (const spec of (m[1] ?? '').split(',')) {
        const name = spec
          .replace(/^\s*type\s+/, '')
          .split(/\s+as\s+/)[0]
          ?.trim();
        if (!name) continue;
        const operation = name.endsWith('Command')
          ? name.slice(0, -'Command'.length)
          : name.startsWith('paginate')
            ? name.slice('paginate'.length)
            : null;
        if (operation) calls.push({ file, pkg: m[2] as string, name, operation });
      }
  return { calls, sources };
}

describe('AWS connector is read-only', () => {
  it('imports and names only Describe/List/Get commands and paginators (and STS GetCallerIdentity)', () => {
    const { calls, sources } = sdkCalls();
    expect(sources.length).toBeGreaterThan(5);
    const named = new Set(calls.map((c) => c.name));
    for (const { file, text } of sources) {
      for (const m of text.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'@aws-sdk\/[^']+'/g))
        for (const spec of (m[1] ?? '').split(','))
          expect(
            spec.includes(' as ') && /(Command|^\s*paginate\w+)\s+as\s/.test(spec),
            `${file}: aliased ${spec.trim()}`,
          ).toBe(false);
      // Every command or paginator named anywhere in the code, imported or not.
      for (const m of text.matchAll(/\b([A-Z][A-Za-z0-9]*Command|paginate[A-Z][A-Za-z0-9]*)\b/g))
        named.add(m[1] as string);
      expect(text, `${file}: namespace import of an SDK client`).not.toMatch(
        /import\s+\*\s+as\s+\w+\s+from\s+'@aws-sdk/,
      );
      expect(text, `${file}: require or dynamic import`).not.toMatch(/\brequire\(|\bimport\(/);
    }
    expect(named.size).toBeGreaterThan(40);
    for (const c of named)
      expect(
        c === 'GetCallerIdentityCommand' ||
          /^(Describe|List|Get)[A-Z]\w*Command$/.test(c) ||
          /^paginate(Describe|List|Get)[A-Z]/.test(c),
        c,
      ).toBe(true);
  });
});

describe('docs/aws-iam-policy.json', () => {
  const policy = JSON.parse(readFileSync(POLICY, 'utf8')) as {
    Version: string;
    Statement: Array<{ Sid?: string; Effect: string; Action: string[]; Resource: string }>;
  };
  const granted = policy.Statement.flatMap((s) => s.Action);

  it('grants exactly the actions the connector calls, read-only, on any resource', () => {
    const { calls } = sdkCalls();
    const called = new Set<string>();
    for (const c of calls) {
      const prefix = IAM_PREFIX_BY_PACKAGE[c.pkg];
      expect(prefix, `${c.file}: ${c.pkg} has no IAM prefix in iam-actions.ts`).toBeDefined();
      const action = iamAction(prefix as string, c.operation);
      if (!NEEDS_NO_PERMISSION.has(action)) called.add(action);
    }
    const missing = [...called].filter((a) => !granted.includes(a)).sort();
    const unused = granted.filter((a) => !called.has(a)).sort();
    expect(missing, 'called by the code, missing from the policy').toEqual([]);
    expect(unused, 'in the policy, called by no code').toEqual([]);
    expect(new Set(granted).size, 'an action listed twice').toBe(granted.length);
    for (const s of policy.Statement) {
      expect(s.Effect).toBe('Allow');
      expect(s.Resource).toBe('*');
    }
    for (const a of granted) expect(a, a).toMatch(/^[a-z0-9-]+:(Describe|List|Get)[A-Za-z0-9]+$/);
  });
});

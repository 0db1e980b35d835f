import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@opsi/db/testing';
import { runAdmin } from '../support/processes';

// The operator's integration and report commands, run as the operator runs them (child processes,
// --json), against a database cloned from the migrated template and no Redis (the report is written
// in the command; no notifier delivery is queued).

let database: TestDatabase;
const slug = `ops-${randomBytes(3).toString('hex')}`;
const secret = `op-secret-${randomBytes(10).toString('hex')}`;
const path = `/hooks/${randomBytes(8).toString('hex')}`;
const env = () => ({ DATABASE_URL: database.url, REDIS_URL: undefined, SECRETS_KEY: 'k'.repeat(40) });

beforeAll(async () => {
  database = await createTestDatabase();
  const created = await runAdmin(['tenant', 'create', slug], env());
  expect(created.code, created.stderr).toBe(0);
}, 180_000);
afterAll(async () => {
  await database?.close();
});

describe('operator commands: tools and report', () => {
  it('tools install / list / remove; the URL and secret never printed', async () => {
    const installed = await runAdmin(
      [
        'tools',
        'install',
        'webhook',
        '--tenant',
        slug,
        '--url',
        `https://hooks.example.com${path}`,
        '--secret',
        secret,
      ],
      env(),
    );
    expect(installed.code, installed.stdout).toBe(0);
    expect(installed.json).toMatchObject({
      created: true,
      tool: { id: 'webhook', status: 'active', settings: { url_hint: 'https://hooks.example.com/…' } },
    });
    const listed = await runAdmin(['tools', 'list', '--tenant', slug], env());
    expect(listed.json!.tools.map((t: { id: string }) => t.id)).toContain('webhook');
    for (const out of [installed.stdout, listed.stdout, installed.stderr]) {
      expect(out).not.toContain(secret);
      expect(out).not.toContain(path);
    }
    const bad = await runAdmin(['tools', 'install', 'webhook', '--tenant', slug, '--url', 'nope'], env());
    expect(bad.code).toBe(1);
    expect(bad.json).toEqual({ detail: expect.any(String) });
    const removed = await runAdmin(['tools', 'remove', 'webhook', '--tenant', slug], env());
    expect(removed.json).toEqual({ removed: 'webhook' });
  }, 240_000);

  it('report writes the morning report now', async () => {
    const res = await runAdmin(['report', '--tenant', slug], env());
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.json!.report).toMatchObject({
      id: expect.any(String),
      requested_by: 'operator',
      headline: expect.stringContaining('0 new findings'),
      sections: { new_findings: [], top_clusters: [] },
    });
  }, 240_000);
});

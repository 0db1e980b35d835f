import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSecretBox, secretBoxFor } from './secret-box';

describe('secret box', () => {
  const box = createSecretBox('a'.repeat(40));

  it('seals and opens; the same text seals differently each time; nothing readable is stored', () => {
    const plain = JSON.stringify({ url: 'https://hooks.slack.com/services/T/B/xyz', secret: null });
    const one = box.seal(plain);
    const two = box.seal(plain);
    expect(one).toMatch(/^v1:[A-Za-z0-9_-]+$/);
    expect(one).not.toBe(two);
    expect(one).not.toContain('hooks.slack.com');
    expect(box.open(one)).toBe(plain);
    expect(box.open(two)).toBe(plain);
  });

  it('refuses a tampered text, another key and an unknown format', () => {
    const sealed = box.seal('secret');
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    raw[raw.length - 1] = raw[raw.length - 1]! ^ 1;
    expect(() => box.open(`v1:${raw.toString('base64url')}`)).toThrow();
    expect(() => createSecretBox('b'.repeat(40)).open(sealed)).toThrow();
    expect(() => box.open('v0:abc')).toThrow(/format/);
  });

  it('without SECRETS_KEY, keeps one random key in DATA_DIR/secrets.key (0600) that every box of the directory shares', () => {
    const dir = mkdtempSync(join(tmpdir(), 'opsi-secrets-'));
    const first = secretBoxFor({ DATA_DIR: dir });
    const sealed = first.seal('hello');
    const key = readFileSync(join(dir, 'secrets.key'), 'utf8').trim();
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(statSync(join(dir, 'secrets.key')).mode & 0o777).toBe(0o600);
    expect(createSecretBox(key).open(sealed)).toBe('hello');
    expect(secretBoxFor({ DATA_DIR: dir, SECRETS_KEY: undefined }).open(sealed)).toBe('hello');
    expect(() => secretBoxFor({ DATA_DIR: dir, SECRETS_KEY: 'c'.repeat(40) }).open(sealed)).toThrow();
  });
});

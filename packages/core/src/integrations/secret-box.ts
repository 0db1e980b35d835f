import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Encrypts the secrets of installed integrations (notifier URLs and signing secrets) at rest. */
export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}

const VERSION = 'v1';

/** AES-256-GCM under a key derived from SECRETS_KEY with HKDF-SHA256; `v1:` + base64url(iv | tag | data). */
export function createSecretBox(secret: string): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', secret, 'opsi', 'opsi integration secrets v1', 32));
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64url')}`;
    },
    open(sealed) {
      const [version, body] = sealed.split(':', 2);
      if (version !== VERSION || !body) throw new Error('unknown secret format');
      const raw = Buffer.from(body, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}

const boxes = new Map<string, SecretBox>();

/**
 * The process's secret box. SECRETS_KEY when set (production refuses to start without it: see
 * @opsi/config). Otherwise, for one machine and tests, a random key kept in DATA_DIR/secrets.key
 * (created once, mode 0600; concurrent first uses agree on the file that won).
 */
export function secretBoxFor(config: { SECRETS_KEY?: string | undefined; DATA_DIR: string }): SecretBox {
  const cacheKey = config.SECRETS_KEY ? `key:${config.SECRETS_KEY}` : `dir:${config.DATA_DIR}`;
  let box = boxes.get(cacheKey);
  if (!box) {
    box = createSecretBox(config.SECRETS_KEY ?? localKey(config.DATA_DIR));
    boxes.set(cacheKey, box);
  }
  return box;
}

function readKey(path: string): string | undefined {
  // Another process may have created the file and not written it yet: wait for its content.
  for (let i = 0; i < 100; i++) {
    try {
      const key = readFileSync(path, 'utf8').trim();
      if (key) return key;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      return undefined;
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
  }
  throw new Error(`${path} is empty`);
}

function localKey(dataDir: string): string {
  const path = join(dataDir, 'secrets.key');
  const existing = readKey(path);
  if (existing) return existing;
  mkdirSync(dataDir, { recursive: true });
  try {
    writeFileSync(path, `${randomBytes(32).toString('base64url')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  return readKey(path)!;
}

import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

// The stored logins: one file, readable by its owner only (0600, in a 0700 directory), in the XDG
// config directory. OPSI_CONFIG_DIR moves it (tests use a temporary directory).

export const DEFAULT_URL = 'http://127.0.0.1:8080';

export interface StoredLogin {
  token: string;
  token_id: string;
  user: string;
  tenant: string;
  created_at: string;
}

export interface ConfigFile {
  version: 1;
  logins: Record<string, StoredLogin>;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.OPSI_CONFIG_DIR) return env.OPSI_CONFIG_DIR;
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'opsi');
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), 'config.json');
}

/** The service address, normalised so that one login matches however the address was typed. */
export function normaliseUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new Error(`the service address must be http(s): ${url}`);
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
}

export async function readConfig(env: NodeJS.ProcessEnv = process.env): Promise<ConfigFile> {
  try {
    const parsed = JSON.parse(await readFile(configPath(env), 'utf8')) as Partial<ConfigFile>;
    return { version: 1, logins: parsed.logins ?? {} };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, logins: {} };
    throw new Error(`cannot read ${configPath(env)}: ${(e as Error).message}`, { cause: e });
  }
}

/** Writes the file whole with mode 0600 (a temporary file renamed over it, so it is never half written). */
export async function writeConfig(config: ConfigFile, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const dir = configDir(env);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = configPath(env);
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(tmp, 0o600); // the mode of writeFile is masked by the umask
  await rename(tmp, path);
  return path;
}

export async function storeLogin(url: string, login: StoredLogin, env: NodeJS.ProcessEnv = process.env) {
  const config = await readConfig(env);
  config.logins[normaliseUrl(url)] = login;
  return writeConfig(config, env);
}

export async function removeLogin(url: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const config = await readConfig(env);
  const key = normaliseUrl(url);
  if (!config.logins[key]) return false;
  delete config.logins[key];
  await writeConfig(config, env);
  return true;
}

export async function storedLogin(url: string, env: NodeJS.ProcessEnv = process.env) {
  return (await readConfig(env)).logins[normaliseUrl(url)];
}

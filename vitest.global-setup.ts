import { readdirSync, readFileSync } from 'node:fs';
import { prepareTemplateDatabase } from '@opsi/db/testing';

/**
 * startService marks the services it starts with this variable, so the teardown can find any a test
 * file left behind: a file killed at its timeout, or a fork that died, never reaches its afterAll, and
 * its API or worker would keep running, reparented to init.
 */
export const TEST_SERVICE_MARKER = 'OPSI_TEST_SERVICE=1';

export default async function setup() {
  await prepareTemplateDatabase();
  return () => killOrphans(TEST_SERVICE_MARKER);
}

/**
 * SIGKILLs orphaned test services (Linux /proc; elsewhere nothing to read). Only orphans
 * (parent pid 1): a live test's services still have their test file's process as parent.
 */
function killOrphans(marker: string) {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d) && Number(d) !== process.pid);
  } catch {
    return;
  }
  const killed: string[] = [];
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== 1) continue;
      if (!readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(marker)) continue;
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      process.kill(Number(pid), 'SIGKILL');
      killed.push(`${pid} ${cmd}`);
    } catch {
      // gone already, or not ours to read
    }
  }
  if (killed.length)
    console.warn(
      `test teardown: killed ${killed.length} orphaned process(es) of the tests:\n${killed.join('\n')}`,
    );
}

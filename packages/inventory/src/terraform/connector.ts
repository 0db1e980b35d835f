import { readFile } from 'node:fs/promises';
import type { Connector } from '../model';
import { parseTerraformState, type SkippedTerraformResource, type TerraformStateImport } from './parse';
import { TerraformStateError } from './schema';

export interface TerraformStateConnectorOptions {
  /** A file holding the output of `terraform show -json`. */
  file?: string;
  /** The same document, already read (parsed or as text). */
  json?: unknown;
  accountId?: string;
  defaultRegion?: string;
  now?: () => Date;
  /** Told once per sync about the managed resources left out (unsupported types, orphans). */
  onSkipped?: (skipped: SkippedTerraformResource[]) => void;
}

/** Skipped resources counted by type, for a progress line or a sync report. */
export function countSkippedByType(skipped: SkippedTerraformResource[]): { type: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const s of skipped) counts.set(s.type, (counts.get(s.type) ?? 0) + 1);
  return [...counts].map(([type, count]) => ({ type, count })).sort((a, b) => a.type.localeCompare(b.type));
}

/** A connector that imports a Terraform state; `collect` resolves to a TerraformStateImport. */
export function createTerraformStateConnector(options: TerraformStateConnectorOptions): Connector {
  if (options.file === undefined && options.json === undefined) {
    throw new TypeError('createTerraformStateConnector needs a file or json');
  }
  return {
    kind: 'terraform_state',
    async collect({ signal, onProgress } = {}): Promise<TerraformStateImport> {
      signal?.throwIfAborted();
      let input = options.json;
      if (options.file !== undefined) {
        onProgress?.('read', 0, 1);
        let text: string;
        try {
          text = await readFile(options.file, { encoding: 'utf8', signal });
        } catch (err) {
          if (signal?.aborted) throw err;
          throw new TerraformStateError(
            `Cannot read the Terraform state file ${options.file}: ${(err as Error).message}`,
          );
        }
        onProgress?.('read', 1, 1);
        try {
          input = JSON.parse(text) as unknown;
        } catch (err) {
          throw new TerraformStateError(
            `${options.file} is not JSON (${(err as Error).message}); export the state with \`terraform show -json\``,
          );
        }
      }
      signal?.throwIfAborted();
      const result = parseTerraformState(input, {
        accountId: options.accountId,
        defaultRegion: options.defaultRegion,
        now: options.now,
      });
      onProgress?.('resources', result.resources.length, result.resources.length);
      for (const { type, count } of countSkippedByType(result.skipped)) {
        onProgress?.(`skipped ${type}`, count, null);
      }
      options.onSkipped?.(result.skipped);
      return result;
    },
  };
}

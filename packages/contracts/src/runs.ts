import { z } from 'zod';
import { Timestamp } from './common';

/** Session ids may be chosen by the client. */
export const SessionId = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,128}$/, 'session_id must be 1 to 128 of A-Z a-z 0-9 . _ : -');

/** The longest prompt a turn takes (issue 24: the engine's reading of it is linear, and this bounds it). */
export const MAX_PROMPT_CHARS = 20_000;
export const Prompt = z
  .string()
  .trim()
  .min(1, 'prompt must not be empty')
  .max(MAX_PROMPT_CHARS, `prompt must be at most ${MAX_PROMPT_CHARS} characters`);
export const ToolName = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'not a tool name');

export const AskBody = z
  .object({
    prompt: Prompt,
    session_id: SessionId.optional(),
    selected_tools: z.array(ToolName).max(50).optional(),
  })
  .meta({ id: 'AskBody' });
export type AskBody = z.infer<typeof AskBody>;

export const AskResponse = z
  .object({ reply: z.string(), session_id: z.string() })
  .meta({ id: 'AskResponse' });

export const StreamQuery = z.object({
  prompt: Prompt,
  session_id: SessionId.optional(),
  selected_tools: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.split(',').map((t) => t.trim())))
    .pipe(z.array(ToolName).max(50).optional()),
});

/** A sequence number as a query or header value: decimal digits only (not 0x10, 1e3, ' 2' or -0). */
export const Seq = z
  .string()
  .regex(/^[0-9]{1,15}$/, 'must be a sequence number: decimal digits only')
  .transform(Number);

export const AttachQuery = z.object({
  session_id: SessionId,
  after_seq: Seq.optional(),
});

export const CreateSessionBody = z
  .object({ name: z.string().trim().min(1).max(200).optional() })
  .meta({ id: 'CreateSessionBody' });
export const RenameSessionBody = z
  .object({ name: z.string().trim().min(1).max(200) })
  .meta({ id: 'RenameSessionBody' });

export const SessionView = z
  .object({ id: z.string(), name: z.string(), created_at: Timestamp, updated_at: Timestamp })
  .meta({ id: 'Session' });
export const SessionList = z.object({ sessions: z.array(SessionView) }).meta({ id: 'SessionList' });

export const HistoryQuery = z.object({ session_id: SessionId });
export const HistoryResponse = z
  .object({
    session_id: z.string(),
    messages: z.array(
      z.object({
        id: z.string(),
        role: z.enum(['user', 'assistant']),
        content: z.string(),
        created_at: Timestamp,
        run_id: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'History' });

/** The fields of each event kind; every event also carries seq, run_id, kind and at. */
export const RunEventFields = {
  'run.started': z.object({ attempt: z.number().int() }),
  'run.resumed': z.object({ attempt: z.number().int(), after_seq: z.number().int() }),
  'message.delta': z.object({ text: z.string() }),
  'tool.started': z.object({ tool: z.string(), input: z.unknown() }),
  'tool.finished': z.object({ tool: z.string(), ok: z.boolean(), output_preview: z.string() }),
  'message.completed': z.object({ text: z.string() }),
  'run.completed': z.object({ reply: z.string() }),
  'run.failed': z.object({ detail: z.string() }),
} as const;

export type RunEventKind = keyof typeof RunEventFields;
export type RunEventData<K extends RunEventKind = RunEventKind> = z.infer<(typeof RunEventFields)[K]>;
export const TERMINAL_KINDS: readonly RunEventKind[] = ['run.completed', 'run.failed'];

/** An event as stored and streamed: numbered 1, 2, 3… per run. */
export interface RunEvent {
  seq: number;
  run_id: string;
  kind: RunEventKind;
  at: string;
  [field: string]: unknown;
}

export const ToolsResponse = z
  .object({
    tools: z.array(
      z.object({
        name: z.string(),
        description: z.string(),
        input_schema: z.record(z.string(), z.unknown()),
      }),
    ),
  })
  .meta({ id: 'ToolList' });

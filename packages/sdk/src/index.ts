export { OpsiClient, type AskOptions, type OpsiClientOptions, type Schemas } from './client';
export { OpsiApiError, OpsiNetworkError, OpsiStreamError } from './errors';
export {
  RunStream,
  TERMINAL_KINDS,
  type ReconnectInfo,
  type RunEvent,
  type RunEventKind,
  type RunStreamOptions,
  type StreamTransport,
} from './stream';
export type * from './wave2';
export type { components, paths } from './openapi.gen';

import { apiErrorEvent, promptEvent, replyEvent, resultEvent, toolEvent, userEvent, type CallOutcome, type RecordScope, withBase } from '../eventBuilders';
import { isObject, isoTime, str, unknownType, type AdapterSink, type Decoder, type DocumentAdapter, type Json } from '../transcript';

/*
 * opencode's sessions, and Kilo CLI 7.x's (a fork that keeps opencode's storage), as messages
 * with their parts: the shape `opencode export <session>` / `kilo export <session>` prints,
 * `{ info: <session>, messages: [{ info: <message>, parts: [<part>] }] }`, and the shape the
 * watcher builds from their SQLite database (one `messages` element per row of its `message`
 * table, with that message's rows of `part`: see ./database.ts). The shapes, from opencode's
 * `packages/opencode/src/session/message-v2.ts` (sst/opencode), as opencode 1.18.33 and Kilo 7.7.7
 * wrote them here against a scripted model:
 * - a message's `info`: `id`, `sessionID`, `role` (`user` | `assistant`), `time.created` (ms);
 *   an assistant message that failed has `error: { name, data: { message, statusCode?, … } }`
 *   (`APIError`, `ProviderAuthError`, `UnknownError`, `MessageOutputLengthError`, …;
 *   `MessageAbortedError` when the person interrupted it: not a failure of the model);
 * - parts, in the order of their ids: `text` (`text`, `synthetic` when opencode wrote it itself),
 *   `tool` (`tool`, `callID`, `state: { status: pending | running | completed | error, input,
 *   output, error, metadata, time: { start, end } }`; the shell tool `bash` keeps the command's
 *   exit code in `metadata.exit`, its status `completed` whatever the code), `retry` (a failed
 *   model request opencode is retrying: `attempt`, `error`), and parts that carry nothing the
 *   signals read (`reasoning`, `step-start`, `step-finish`, `snapshot`, `patch`, `file`, `agent`,
 *   `subtask`, `compaction`).
 * The line of a message is its place in the document: in an export, the line it starts on; in
 * the database, its number among the messages read.
 */

/** The events' agent for opencode's own sessions. */
export const OPENCODE = 'opencode';

/** Part types that carry nothing the signals read. */
const QUIET_PARTS = new Set(['reasoning', 'step-start', 'step-finish', 'snapshot', 'patch', 'file', 'agent', 'subtask', 'compaction']);

/** A model request the person interrupted: not an error of the model's. */
const ABORTED = 'MessageAbortedError';

/** What a tool part's state says of its call: undefined while it is pending or running. */
function toolOutcome(state: Json): CallOutcome {
  const output = typeof state.output === 'string' ? state.output : '';
  if (state.status === 'error') return { ok: false, error: str(state.error) ?? 'error' };
  if (state.status !== 'completed') return undefined;
  const meta = isObject(state.metadata) ? state.metadata : undefined;
  const exit = typeof meta?.exit === 'number' ? meta.exit : undefined;
  if (exit !== undefined && exit !== 0) return { ok: false, error: `${output.trim()}\nExit code ${exit}`.trim() };
  return { ok: true, output };
}

/** What a message's or a retry's error says. */
function errorParts(error: Json): { error: string; status?: number; class?: string } {
  const data = isObject(error.data) ? error.data : {};
  const name = str(error.name);
  return {
    error: str(data.message) ?? name ?? 'the model request failed',
    ...(typeof data.statusCode === 'number' ? { status: data.statusCode } : {}),
    ...(name !== undefined ? { class: name } : {}),
  };
}

class SessionDecoder implements Decoder {
  constructor(
    private readonly agent: string,
    private readonly fallbackSession: string,
  ) {}

  record(value: unknown, line: number, sink: AdapterSink): void {
    // A row the database reader could not use (its data not JSON): it says why.
    if (typeof value === 'string') return sink.skipped(line, '(message)', value);
    if (!isObject(value) || !isObject(value.info)) return sink.skipped(line, 'info', 'a message without its info');
    const info = value.info;
    const parts = Array.isArray(value.parts) ? value.parts : [];
    const session = str(info.sessionID) ?? this.fallbackSession;
    const created = isoTime(isObject(info.time) ? info.time.created : undefined);
    const scope: RecordScope = { session, agent: this.agent, ...(created !== undefined ? { ts: created } : {}) };
    if (info.role === 'user') {
      const text = parts
        .filter((p): p is Json => isObject(p) && p.type === 'text' && p.synthetic !== true && typeof p.text === 'string')
        .map((p) => p.text as string)
        .join('\n')
        .trim();
      sink.event(userEvent(scope, text), line);
      if (text !== '') sink.event(promptEvent(scope, text), line);
      return;
    }
    if (info.role !== 'assistant') return unknownType(sink, line, 'info.role', info.role);
    parts.forEach((part, i) => this.part(part, i, scope, line, sink));
    if (isObject(info.error) && info.error.name !== ABORTED) sink.event(apiErrorEvent(scope, errorParts(info.error)), line);
  }

  private part(part: unknown, i: number, scope: RecordScope, line: number, sink: AdapterSink): void {
    if (typeof part === 'string') return sink.skipped(line, `parts[${i}]`, part);
    if (!isObject(part)) return sink.skipped(line, `parts[${i}]`, 'not a JSON object');
    switch (part.type) {
      case 'text': {
        const text = typeof part.text === 'string' ? part.text.trim() : '';
        if (text !== '' && part.synthetic !== true) sink.event(replyEvent(scope, text), line);
        return;
      }
      case 'tool': {
        const tool = str(part.tool);
        const id = str(part.callID);
        const state = isObject(part.state) ? part.state : undefined;
        if (tool === undefined || id === undefined || state === undefined) return sink.skipped(line, `parts[${i}]`, 'a tool part without its tool, callID or state');
        const time = isObject(state.time) ? state.time : {};
        const started = isoTime(time.start);
        const at: RecordScope = started !== undefined ? withBase(scope, { ts: started }) : scope;
        sink.event(toolEvent(at, tool, state.input ?? {}, id), line);
        const outcome = toolOutcome(state);
        if (outcome === undefined) return;
        const ended = isoTime(time.end);
        sink.event(resultEvent(ended !== undefined ? withBase(scope, { ts: ended }) : at, id, outcome), line);
        return;
      }
      case 'retry': {
        const error = isObject(part.error) ? part.error : {};
        const attempt = typeof part.attempt === 'number' ? part.attempt : undefined;
        sink.event(apiErrorEvent(scope, { ...errorParts(error), ...(attempt !== undefined ? { retry: attempt } : {}) }), line);
        return;
      }
      default:
        if (typeof part.type === 'string' && QUIET_PARTS.has(part.type)) return;
        unknownType(sink, line, `parts[${i}].type`, part.type);
    }
  }

  finish(): void {}
}

/** Whether a value is one message of the shape: its info with a role, and its parts. */
function isMessage(m: unknown): boolean {
  return isObject(m) && isObject(m.info) && typeof m.info.role === 'string' && Array.isArray(m.parts);
}

/**
 * The adapter of a session document of opencode's shape, for the agent whose events it builds
 * (opencode, or Kilo: an export does not tell them apart, the database's name does).
 */
export function openCodeSession(agent: string): DocumentAdapter {
  return {
    layout: 'document',
    agent,
    // An export (no `agent`: opencode's, as `--format auto` asks opencode first, or Kilo's named
    // with `--format kilo`) or the database's sessions, which name their agent.
    sniff: (doc) =>
      isObject(doc) &&
      (doc.agent === undefined || doc.agent === agent) &&
      Array.isArray(doc.messages) &&
      doc.messages.every((m) => typeof m === 'string' || isMessage(m)) &&
      (doc.messages.some(isMessage) || (isObject(doc.info) && typeof doc.info.directory === 'string')),
    records: (doc) => ({ key: 'messages', items: (doc as { messages: unknown[] }).messages }),
    decoder: (session, doc) => new SessionDecoder(agent, (isObject(doc) && isObject(doc.info) ? str(doc.info.id) : undefined) ?? session),
  };
}

import type { GuardianEvent } from '../../core/events';
import { isObject, isoTime, jsonText, str, unknownType, type AdapterSink, type Decoder, type DocumentAdapter, type Json } from '../transcript';

const AGENT = 'openhands';
/** Actions that are not tool calls: conversation, bookkeeping, the end. */
const NOT_CALLS = new Set(['message', 'system', 'finish', 'think', 'recall', 'condensation', 'condensation_request', 'change_agent_state', 'null', 'reject']);
/** Argument keys that describe a call without being part of it (OpenHands' own loop check ignores them too). */
const NOT_ARGS = new Set(['thought', 'security_risk', 'confirmation_state', 'is_confirmed', 'hidden', 'impl_source', 'blocking', 'is_input']);

function callArgs(args: unknown): Json {
  if (!isObject(args)) return {};
  const out: Json = {};
  for (const [k, v] of Object.entries(args)) if (!NOT_ARGS.has(k)) out[k] = v;
  return out;
}

/**
 * OpenHands event lists: agent actions are calls (named by their function call when there is
 * one), observations whose `cause` is an action's id are their results. `observation: "error"`
 * and a non-zero `extras.metadata.exit_code` (but -1: still running) are failures.
 */
class OpenHandsDecoder implements Decoder {
  private index = 0;

  constructor(private readonly session: string) {}

  record(value: unknown, line: number, sink: AdapterSink): void {
    const i = this.index++;
    if (!isObject(value)) return sink.skipped(line, `[${i}]`, 'not an object');
    const ts = isoTime(value.timestamp);
    const base = { v: 1 as const, session: this.session, agent: AGENT, ...(ts !== undefined ? { ts } : {}) };
    if (typeof value.action === 'string') {
      if (value.source === 'user') {
        if (value.action === 'message') sink.event({ ...base, type: 'user', ...(typeof value.message === 'string' ? { text: value.message.slice(0, 500) } : {}) }, line);
        return;
      }
      if (NOT_CALLS.has(value.action)) return;
      const meta = isObject(value.tool_call_metadata) ? value.tool_call_metadata : undefined;
      const tool = str(meta?.function_name) ?? value.action;
      const id = value.id === undefined || value.id === null ? undefined : String(value.id);
      const event: GuardianEvent = { ...base, type: 'tool', tool, args: callArgs(value.args), ...(id !== undefined ? { id } : {}) };
      sink.event(event, line);
      return;
    }
    if (typeof value.observation === 'string') {
      if (value.cause === undefined || value.cause === null) return;
      const id = String(value.cause);
      const content = typeof value.content === 'string' ? value.content : jsonText(value.content ?? '');
      const extras = isObject(value.extras) ? value.extras : undefined;
      const meta = extras && isObject(extras.metadata) ? extras.metadata : undefined;
      const exit = typeof meta?.exit_code === 'number' ? meta.exit_code : undefined;
      const failed = value.observation === 'error' || (exit !== undefined && exit !== 0 && exit !== -1);
      sink.event(failed ? { ...base, type: 'tool_result', id, ok: false, error: content.trim() || value.observation } : { ...base, type: 'tool_result', id, ok: true, output: content }, line);
      return;
    }
    unknownType(sink, line, 'action', value.action);
  }

  finish(): void {}
}

export const openHandsTranscript: DocumentAdapter = {
  agent: AGENT,
  layout: 'document',
  sniff: (doc) => Array.isArray(doc) && doc.length > 0 && doc.slice(0, 5).some((e) => isObject(e) && (typeof e.action === 'string' || typeof e.observation === 'string') && 'source' in e),
  records: (doc) => ({ key: null, items: Array.isArray(doc) ? doc : [] }),
  decoder: (session) => new OpenHandsDecoder(session),
};

import type { GuardianEvent } from '../../core/events';
import { boundedText } from '../../core/redact';
import { argsObject, isObject, isoTime, jsonText, RecentSet, statusInText, str, unknownType, type AdapterSink, type Decoder, type DocumentAdapter, type Json, type JsonlAdapter } from '../transcript';
import { shellFailure } from './shell';
import { apiErrorEvent, withBase } from '../eventBuilders';

const AGENT = 'gemini-cli';
/** Statuses after which a tool call does not change any more. */
const FINAL = new Set(['success', 'error', 'cancelled']);
const IGNORED = new Set(['info', 'error', 'warning']);

/**
 * Gemini CLI shows a failed model request as `[API Error: <message> (Status: <status>)]`
 * (google-gemini/gemini-cli `packages/core/src/utils/errorParsing.ts`, `parseAndFormatApiError`);
 * an `error` record or event with that text is one. Other errors (a tool's, the CLI's) are not.
 */
const API_ERROR = /^\s*\[API Error:/;
const STATUS_WORD = /\(Status: ([A-Z][A-Z_]+)\)/;

/** The text of a message's content: a string, or its parts' text. */
function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).filter((t) => t.trim() !== '').join('\n');
}

function apiError(text: string, base: { v: 1; session: string; agent: string; ts?: string }): GuardianEvent | undefined {
  if (!API_ERROR.test(text)) return undefined;
  const status = statusInText(text);
  const word = STATUS_WORD.exec(text)?.[1];
  return apiErrorEvent(base, { error: text.trim(), status, class: word });
}

/** The text of a tool call's result: function responses' output or error, else the result as JSON. */
export function geminiResultText(result: unknown): string {
  if (typeof result === 'string') return result;
  const parts: string[] = [];
  const visit = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (isObject(v)) {
      const fr = isObject(v.functionResponse) ? v.functionResponse : undefined;
      const response = fr && isObject(fr.response) ? fr.response : undefined;
      if (response) {
        if (typeof response.error === 'string') parts.push(response.error);
        else if (typeof response.output === 'string') parts.push(response.output);
        else parts.push(jsonText(response));
      } else if (typeof v.text === 'string') parts.push(v.text);
    }
  };
  visit(result);
  return parts.length > 0 ? parts.join('\n') : result === undefined || result === null ? '' : jsonText(result);
}

interface PendingCall {
  readonly call: Json;
  readonly line: number;
  readonly ts?: string;
}

/**
 * Gemini CLI chats re-append a message record with the same id as its tool calls progress: the
 * last copy wins (google-gemini/gemini-cli `packages/core/src/services/chatRecordingService.ts`:
 * each update appends the whole message again, `appendRecord`, and its own reader keeps one per
 * id, `messagesMap.set(id, record)`; a 2026-04 chat writes each tool-calling message twice under
 * one id, issue 34: one call each). A tool call becomes an event once, when a copy shows it finished; calls that
 * never finish are settled as unrecorded at the end of a replay.
 */
class GeminiDecoder implements Decoder {
  private session: string;
  private readonly done = new RecentSet();
  private readonly pending = new Map<string, PendingCall>();

  constructor(fallbackSession: string) {
    this.session = fallbackSession;
  }

  record(value: unknown, line: number, sink: AdapterSink): void {
    if (!isObject(value)) return sink.skipped(line, '(line)', 'not a JSON object');
    if (value.type === undefined && typeof value.sessionId === 'string') {
      this.session = value.sessionId;
      return;
    }
    if (value.type === undefined && isObject(value.$set)) {
      // A patch of the session (Gemini CLI 0.61's chat files, seen in its own runs here:
      // `{"$set": {"lastUpdated": …}}`, and `{"$set": {"messages": [...]}}` with the context it
      // injects): its messages are read as message lines (each once), the rest is bookkeeping.
      const messages = value.$set.messages;
      if (Array.isArray(messages)) for (const m of messages) this.record(m, line, sink);
      return;
    }
    const ts = isoTime(value.timestamp);
    const base = { v: 1 as const, session: this.session, agent: AGENT, ...(ts !== undefined ? { ts } : {}) };
    switch (value.type) {
      // Headless `--output-format stream-json` (Gemini CLI's headless-mode documentation; seen in
      // metaphi-agent/figma-eval-*-gemini_cli `transcript.jsonl`): init, message, tool_use,
      // tool_result, error, result. A file may hold several runs, each from its init.
      case 'init': {
        const id = str(value.session_id);
        if (id !== undefined) this.session = id;
        return;
      }
      case 'message':
        if (value.role === 'user') {
          sink.event(withBase(base, { type: 'user', ...(typeof value.content === 'string' && value.content !== '' ? { text: value.content.slice(0, 500) } : {}) }), line);
          sink.event(withBase(base, { type: 'prompt', text: boundedText(typeof value.content === 'string' ? value.content : '') }), line);
        }
        // The assistant's text comes in `delta` pieces: not joined into answers here.
        return;
      case 'tool_use': {
        const name = str(value.tool_name);
        if (name === undefined) return sink.skipped(line, 'tool_name', 'a tool_use without a tool name');
        const id = str(value.tool_id);
        if (id !== undefined && !this.done.add(`use:${id}`)) return;
        sink.event(withBase(base, { type: 'tool', tool: name, args: argsObject(value.parameters), ...(id !== undefined ? { id } : {}) }), line);
        return;
      }
      case 'tool_result': {
        const id = str(value.tool_id);
        if (id === undefined) return sink.skipped(line, 'tool_id', 'a tool_result without the tool_id of its call');
        if (!this.done.add(`result:${id}`)) return;
        const output = typeof value.output === 'string' ? value.output : jsonText(value.output ?? '');
        if (value.status === 'error') {
          // The error object's message when there is one (its output repeats it, or is empty).
          const err = isObject(value.error) && typeof value.error.message === 'string' ? value.error.message : output;
          sink.event(withBase(base, { type: 'tool_result', id, ok: false, error: err.trim() || 'error' }), line);
        } else sink.event(withBase(base, { type: 'tool_result', id, ok: true, output }), line);
        return;
      }
      case 'result':
        return;
      case 'user': {
        const id = str(value.id);
        if (id !== undefined && !this.done.add(`user:${id}`)) return;
        const text = typeof value.content === 'string' ? value.content : partsText(value.content);
        // Gemini CLI 0.61 also writes the tool results it sends back as `user` records whose parts are
        // all `functionResponse` (seen in its own runs here): no person spoke, no turn begins.
        if (text === '' && Array.isArray(value.content) && value.content.length > 0 && value.content.every((p) => isObject(p) && isObject(p.functionResponse))) return;
        sink.event({ v: 1, type: 'user', session: this.session, agent: AGENT, ...(ts !== undefined ? { ts } : {}), ...(text !== '' ? { text: text.slice(0, 500) } : {}) }, line);
        sink.event(withBase(base, { type: 'prompt', text: boundedText(text) }), line);
        return;
      }
      case 'error': {
        // A chat record `{id, type: "error", content}`, or a headless `{type: "error", severity, message}`.
        const id = str(value.id);
        if (id !== undefined && !this.done.add(`error:${id}`)) return;
        const failed = apiError(typeof value.message === 'string' ? value.message : partsText(value.content), base);
        if (failed !== undefined) sink.event(failed, line);
        return;
      }
      case 'gemini': {
        // Its answer, once per message (later copies add tool calls' progress).
        const said = partsText(value.content);
        const id = str(value.id);
        if (said.trim() !== '' && (id === undefined || this.done.add(`reply:${id}`))) sink.event(withBase(base, { type: 'reply', text: boundedText(said) }), line);
        const calls = value.toolCalls;
        if (calls === undefined) return;
        if (!Array.isArray(calls)) return sink.skipped(line, 'toolCalls', 'not an array');
        calls.forEach((call, i) => this.call(call, i, line, ts, sink));
        return;
      }
      default:
        if (typeof value.type === 'string' && IGNORED.has(value.type)) return;
        unknownType(sink, line, 'type', value.type);
    }
  }

  private call(call: unknown, i: number, line: number, recordTs: string | undefined, sink: AdapterSink): void {
    if (!isObject(call)) return sink.skipped(line, `toolCalls[${i}]`, 'not an object');
    const id = str(call.id);
    const name = str(call.name);
    if (name === undefined) return sink.skipped(line, `toolCalls[${i}].name`, 'a tool call without a name');
    const key = id ?? `${line}:${i}`;
    if (this.done.has(key)) return;
    const ts = isoTime(call.timestamp) ?? recordTs;
    const status = typeof call.status === 'string' ? call.status : undefined;
    if (status === undefined || !FINAL.has(status)) {
      this.pending.set(key, { call, line, ...(ts !== undefined ? { ts } : {}) });
      return;
    }
    this.done.add(key);
    this.pending.delete(key);
    sink.event(this.event(call, name, status, ts), line);
  }

  private event(call: Json, name: string, status: string | undefined, ts: string | undefined): GuardianEvent {
    const base = { v: 1 as const, type: 'tool' as const, session: this.session, agent: AGENT, tool: name, args: argsObject(call.args), ...(ts !== undefined ? { ts } : {}) };
    const text = geminiResultText(call.result);
    // A shell command that failed is a `success` whose output says its exit code (shell.ts).
    const failure = status === 'success' ? shellFailure(text) : undefined;
    if (failure !== undefined) return withBase(base, { ok: false, error: failure });
    if (status === 'success') return withBase(base, { ok: true, output: text });
    if (status === 'error') return withBase(base, { ok: false, error: text.trim() || 'error' });
    // Cancelled by the person, or never finished: what it would have done is unknown.
    return base;
  }

  finish(sink: AdapterSink): void {
    for (const [key, p] of this.pending) {
      this.done.add(key);
      sink.event(this.event(p.call, str(p.call.name) ?? 'unknown', undefined, p.ts), p.line);
    }
    this.pending.clear();
  }
}

/**
 * Gemini CLI chats: `~/.gemini/tmp/<project>/chats/session-<date>-<id>.jsonl`; and its headless
 * `--output-format stream-json` output, whose first record is `init` (or the prompt's `message`).
 */
export const geminiTranscript: JsonlAdapter = {
  agent: AGENT,
  layout: 'jsonl',
  sniff: (first) =>
    (typeof first.sessionId === 'string' && (typeof first.projectHash === 'string' || typeof first.startTime === 'string') && first.type === undefined) ||
    (typeof first.id === 'string' && (first.type === 'user' || first.type === 'gemini') && !('message' in first)) ||
    (first.type === 'init' && typeof first.session_id === 'string') ||
    (first.type === 'message' && (first.role === 'user' || first.role === 'assistant') && typeof first.content === 'string' && !('payload' in first) && !('id' in first)),
  decoder: (fallbackSession) => new GeminiDecoder(fallbackSession),
};

function chatMessages(doc: unknown): unknown[] | undefined {
  if (!isObject(doc) || !Array.isArray(doc.messages)) return undefined;
  if (typeof doc.sessionId !== 'string' && typeof doc.projectHash !== 'string') return undefined;
  if (doc.messages.length === 0) return typeof doc.projectHash === 'string' ? doc.messages : undefined;
  // Gemini's messages are typed records; Cline's message files (also `{sessionId, messages}`) hold roles.
  return doc.messages.slice(0, 3).every((m) => isObject(m) && typeof m.type === 'string' && !('role' in m)) ? doc.messages : undefined;
}

/**
 * Gemini CLI chats of 2026 as one JSON document, `session-<date>-<id>.json`:
 * `{sessionId, projectHash, startTime, lastUpdated, messages: [...]}`, whose messages are the
 * JSONL chat's records (metaphi-agent/figma-eval-010ac575-...-gemini_cli
 * `.gemini/tmp/<hash>/chats/session-*.json`). Read with the same decoder, message by message.
 */
export const geminiSessionDocument: DocumentAdapter = {
  agent: AGENT,
  layout: 'document',
  sniff: (doc) => chatMessages(doc) !== undefined,
  records: (doc) => ({ key: 'messages', items: chatMessages(doc) ?? [] }),
  decoder: (session, doc) => new GeminiDecoder((isObject(doc) ? str(doc.sessionId) : undefined) ?? session),
};

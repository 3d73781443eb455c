import type { GuardianEvent } from '../../core/events';
import { boundedText } from '../../core/redact';
import { apiErrorEvent, httpStatus, withBase } from '../eventBuilders';
import { codexCallArgs } from './patch';
import { isObject, isoTime, jsonText, parseArgsText, RecentSet, statusInText, str, unknownType, type AdapterSink, type Decoder, type Json, type JsonlAdapter } from '../transcript';

const AGENT = 'codex';
const IGNORED_TYPES = new Set(['turn_context', 'compacted']);
/** response_item payloads that are not tool calls. */
const IGNORED_ITEMS = new Set(['message', 'reasoning', 'web_search_call', 'ghost_snapshot', 'compaction', 'other']);
/** What Codex itself puts in a user message at a session's start (not a person's turn). */
const INJECTED = /^\s*<(user_instructions|environment_context)>/;
/** "Reconnecting... 2/5", "retrying 3/5 in 800ms": the attempt of a retried stream. */
const RETRY_OF = /\b(\d{1,3})\/\d{1,3}\b/;
const EXIT_LINE = /^(?:Exit code:|Process exited with code)\s*(-?\d+)\s*$/m;
/**
 * A patch Codex refused before applying it: the text its `apply_patch` handler answers the model
 * with (`FunctionCallError::RespondToModel`), which the rollout keeps as the call's whole output,
 * with no exit code and no `success` flag (openai/codex `codex-rs/core/src/tools/handlers/apply_patch.rs`:
 * "apply_patch verification failed: {parse_error}" for the tool and for a shell `apply_patch`
 * it intercepts, "apply_patch handler received invalid patch input" / "… non-apply_patch
 * input"). Seen live with 0.169.0 for a patch whose lines are not in the file: "apply_patch
 * verification failed: Failed to find expected lines in <file>:\n<lines>". A patch that
 * applies answers "Exit code: 0 … Success. Updated the following files:".
 */
const PATCH_REFUSED = /^apply_patch (?:verification failed:|handler received (?:invalid patch input|non-apply_patch input|unsupported payload))/;
/** Header lines newer builds put before `Output:`; their values change between identical runs. */
const HEADER_LINE = /^(?:Chunk ID|Wall time|Exit code|Process exited with code|Original token count|Total output lines)\b.*$/;

/**
 * What a function_call_output says, since Codex stores no error flag: an exit code in the old
 * JSON envelope (`{"output": ..., "metadata": {"exit_code": N}}`) or in an `Exit code: N` /
 * `Process exited with code N` line; `success: false` where the output is an object; a patch
 * Codex refused to apply (PATCH_REFUSED). Header
 * lines with timings are dropped from the output, so identical runs have identical outputs.
 */
export function codexOutcome(output: unknown): { ok: boolean; text: string } {
  let text: string;
  let failed = false;
  if (isObject(output)) {
    text = typeof output.content === 'string' ? output.content : jsonText(output.content ?? output);
    if (output.success === false) failed = true;
  } else {
    text = typeof output === 'string' ? output : jsonText(output ?? '');
  }
  let code: number | undefined;
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) {
    try {
      const envelope = JSON.parse(trimmed) as unknown;
      if (isObject(envelope) && typeof envelope.output === 'string') {
        text = envelope.output;
        const meta = envelope.metadata;
        if (isObject(meta) && typeof meta.exit_code === 'number') code = meta.exit_code;
      }
    } catch {
      // Not an envelope: the text as it is.
    }
  }
  if (code === undefined) {
    const m = EXIT_LINE.exec(text);
    if (m) code = Number(m[1]);
    const lines = text.split('\n');
    const body = lines.findIndex((l) => l.trim() === 'Output:');
    if (body >= 0 && lines.slice(0, body).every((l) => l.trim() === '' || HEADER_LINE.test(l.trim()))) text = lines.slice(body + 1).join('\n');
  }
  if (code !== undefined && code !== 0) failed = true;
  if (code === undefined && PATCH_REFUSED.test(text.trimStart())) failed = true;
  return { ok: !failed, text };
}

class CodexDecoder implements Decoder {
  private session: string;
  /** Whether a `session_meta` has named the session (a later one is another session's). */
  private named = false;
  /**
   * The time stamp of a parent's history copied into this rollout (see `session_meta` below): the
   * records that carry it are the parent's, replayed; undefined once the child's own begin.
   */
  private replayedAt: string | undefined;
  private readonly seen = new RecentSet();

  constructor(fallbackSession: string) {
    this.session = fallbackSession;
  }

  record(value: unknown, line: number, sink: AdapterSink): void {
    if (!isObject(value)) return sink.skipped(line, '(line)', 'not a JSON object');
    const payload = value.payload;
    if (!isObject(payload)) return this.legacy(value, line, sink);
    const ts = isoTime(value.timestamp);
    if (this.replayedAt !== undefined) {
      if (typeof value.timestamp === 'string' && value.timestamp === this.replayedAt) return;
      this.replayedAt = undefined;
    }
    const base = () => ({ v: 1 as const, session: this.session, agent: AGENT, ...(ts !== undefined ? { ts } : {}) });
    switch (value.type) {
      case 'session_meta': {
        // The first names the rollout's session. A forked thread's rollout (a subagent's, Codex
        // Desktop 0.119, issue 34) opens with two: the child's (`forked_from_id` naming its parent),
        // then the parent's, the first of the parent's rollout items the child starts from, which
        // Codex persists into the child's rollout as they are (openai/codex
        // `codex-rs/core/src/codex.rs`, `InitialHistory::Forked`: "persist all rollout items
        // as-is"; `codex-rs/core/src/rollout/recorder.rs`: `SessionMeta { forked_from_id }`, each
        // line stamped as it is written, so the whole copy carries one millisecond). The second
        // does not make the child's calls the parent's, and the parent's calls and answers
        // replayed after it, stamped with that same millisecond, are the parent's (read in the
        // parent's own rollout), not the child's: the first record stamped otherwise is the child's.
        const id = str(payload.id);
        if (id !== undefined && !this.named) this.session = id;
        else if (id !== undefined && id !== this.session && typeof value.timestamp === 'string') this.replayedAt = value.timestamp;
        this.named = true;
        return;
      }
      case 'event_msg':
        // The person's prompt starts a new turn; other event messages repeat what response items say.
        if (payload.type === 'user_message') {
          sink.event(withBase(base(), { type: 'user', ...(typeof payload.message === 'string' ? { text: payload.message.slice(0, 500) } : {}) }), line);
          sink.event(withBase(base(), { type: 'prompt', text: boundedText(typeof payload.message === 'string' ? payload.message : '') }), line);
        } else if (payload.type === 'error' || payload.type === 'stream_error') this.failed(payload, line, base(), sink);
        return;
      case 'response_item':
        return this.item(payload, line, base(), sink);
      default:
        if (typeof value.type === 'string' && IGNORED_TYPES.has(value.type)) return;
        return unknownType(sink, line, 'type', value.type);
    }
  }

  /**
   * A rollout from before the `{timestamp, type, payload}` wrapper (Codex CLI up to about Sep
   * 2025; AcidicSoil/codex-session-viewer `docs/example.jsonl`): a first line `{id, timestamp,
   * instructions, git?}` naming the session, `{record_type: "state"}` lines, and the response
   * items themselves, unwrapped and without timestamps. Those items read as the newer ones; the
   * person's turns are the `user` messages, less those Codex writes itself (`<user_instructions>`,
   * `<environment_context>`, which it injects at the start of a session).
   */
  private legacy(value: Json, line: number, sink: AdapterSink): void {
    if (value.type === undefined && value.record_type === undefined && typeof value.id === 'string' && ('instructions' in value || 'git' in value || 'timestamp' in value)) {
      this.session = value.id;
      return;
    }
    if (value.type === undefined && typeof value.record_type === 'string') return;
    if (typeof value.type !== 'string') return sink.skipped(line, 'payload', 'a rollout record without a payload object');
    // No time per record: the events carry none (the first line's is the session's start only).
    const base = { v: 1 as const, session: this.session, agent: AGENT };
    if (value.type === 'message') {
      if (value.role !== 'user') return;
      const text = Array.isArray(value.content)
        ? value.content.map((c) => (isObject(c) && typeof c.text === 'string' ? c.text : '')).join('\n')
        : typeof value.content === 'string'
          ? value.content
          : '';
      if (INJECTED.test(text)) return;
      sink.event(withBase(base, { type: 'user', ...(text !== '' ? { text: text.slice(0, 500) } : {}) }), line);
      sink.event(withBase(base, { type: 'prompt', text: boundedText(text) }), line);
      return;
    }
    this.item(value, line, base, sink);
  }

  /**
   * A failed model request, from the event messages Codex keeps (openai/codex
   * `codex-rs/protocol/src/protocol.rs`: `ErrorEvent {message, codex_error_info?}`, and
   * `StreamErrorEvent {message, codex_error_info?, additional_details?}`, the notice that a
   * dropped stream is being retried; which of them a rollout keeps depends on the version's
   * persistence policy, `codex-rs/core/src/rollout/policy.rs`, so both are read where present).
   * `codex_error_info` is a variant name (`context_window_exceeded`, `usage_limit_exceeded`…) or
   * an object naming one with its `http_status_code`; a retry's number is read from "…2/5…".
   */
  private failed(p: Json, line: number, base: { v: 1; session: string; agent: string; ts?: string }, sink: AdapterSink): void {
    const message = str(p.message) ?? str(p.additional_details);
    const info = p.codex_error_info;
    const variant = typeof info === 'string' ? info : isObject(info) ? Object.keys(info)[0] : undefined;
    const inner = isObject(info) && variant !== undefined && isObject(info[variant]) ? (info[variant] as Json) : undefined;
    const code = inner?.http_status_code;
    const status = httpStatus(code) ?? (message !== undefined ? statusInText(message) : undefined);
    const attempt = p.type === 'stream_error' ? RETRY_OF.exec(message ?? '') : null;
    sink.event(apiErrorEvent(base, { error: message, status, class: variant, retry: p.type === 'stream_error' ? (attempt ? Number(attempt[1]) : 0) : undefined }), line);
  }

  private item(p: Json, line: number, base: { v: 1; session: string; agent: string; ts?: string }, sink: AdapterSink): void {
    const type = p.type;
    if (type === 'function_call' || type === 'custom_tool_call' || type === 'local_shell_call') {
      const name = type === 'local_shell_call' ? 'local_shell' : str(p.name);
      if (name === undefined) return sink.skipped(line, 'payload.name', `a ${type} without a name`);
      const id = str(p.call_id) ?? str(p.id);
      if (id !== undefined && !this.seen.add(`call:${id}`)) return;
      const raw = type === 'function_call' ? parseArgsText(p.arguments) : type === 'custom_tool_call' ? { input: p.input } : isObject(p.action) ? p.action : {};
      // An apply_patch: the patch and its files, as the hook reads it (./patch.ts).
      const args = codexCallArgs(name, raw);
      const event: GuardianEvent = withBase(base, { type: 'tool', tool: name, args, ...(id !== undefined ? { id } : {}) });
      sink.event(event, line);
      return;
    }
    if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      const id = str(p.call_id);
      if (id === undefined) return sink.skipped(line, 'payload.call_id', `a ${type} without the call_id of its call`);
      if (!this.seen.add(`result:${id}`)) return;
      const outcome = codexOutcome(p.output);
      const event: GuardianEvent = outcome.ok
        ? withBase(base, { type: 'tool_result', id, ok: true, output: outcome.text })
        : withBase(base, { type: 'tool_result', id, ok: false, error: outcome.text.trim() || 'failed' });
      sink.event(event, line);
      return;
    }
    if (type === 'message' && p.role === 'assistant') {
      // The model's answer: its `output_text` parts (response items are kept by every version).
      const text = Array.isArray(p.content) ? p.content.map((c) => (isObject(c) && typeof c.text === 'string' ? c.text : '')).filter((t) => t.trim() !== '').join('\n') : '';
      if (text !== '') sink.event(withBase(base, { type: 'reply', text: boundedText(text) }), line);
      return;
    }
    if (typeof type === 'string' && IGNORED_ITEMS.has(type)) return;
    unknownType(sink, line, 'payload.type', type);
  }

  finish(): void {}
}

/** OpenAI Codex CLI rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`. */
export const codexTranscript: JsonlAdapter = {
  agent: AGENT,
  layout: 'jsonl',
  sniff: (first) =>
    (typeof first.type === 'string' && isObject(first.payload) && ('timestamp' in first || first.type === 'session_meta')) ||
    // A legacy rollout's first line: the session, before any record.
    (first.type === undefined && typeof first.id === 'string' && typeof first.timestamp === 'string' && ('instructions' in first || 'git' in first)),
  decoder: (fallbackSession) => new CodexDecoder(fallbackSession),
};

import { apiErrorEvent, compactionEvent, httpStatus, promptEvent, replyEvent, userEvent, type RecordScope } from '../eventBuilders';
import { contentText, isObject, isoTime, RecentSet, str, unknownType, type AdapterSink, type Decoder, type Json, type JsonlAdapter } from '../transcript';
import { replyText, toolBlocks, userText } from '../anthropicBlocks';

/** Record types Claude Code writes that say nothing about tool calls. */
const IGNORED = new Set([
  'summary',
  'system',
  'progress',
  'attachment',
  'file-history-snapshot',
  'queue-operation',
  'custom-title',
  'ai-title',
  'tag',
  'agent-name',
  'last-prompt',
  'pr-link',
  'permission-mode',
  // Claude Code 2.1.x's request bookkeeping (seen live from 2.1.328): copies of what was sent to
  // the model (`api-request-blob` holds a `message`, but one already in the transcript), its shape,
  // costs, latches. Nothing of a call, a prompt or an answer of its own.
  'api-request',
  'api-request-blob',
  'api-request-shape',
  'atis-latch',
  'tools-used',
  'cost-state',
]);
const AGENT = 'claude-code';

/**
 * A record's session. Subagents' lines (sidechains) are their own sessions: their calls do not
 * interleave the parent's. A compaction's copy (`agentId: "acompact-<hex>"`, the file
 * `subagents/agent-acompact-<hex>.jsonl`: the conversation again, then its summary; see
 * claude/discovery.ts) is the parent's session: read alone (sometimes the only record of it), its
 * calls are the parent's.
 */
function sessionOf(value: Json, base: string): string {
  if (value.isSidechain !== true) return base;
  const agent = str(value.agentId);
  if (agent?.startsWith('acompact-')) return base;
  return `${base}/${agent ?? 'sidechain'}`;
}

class ClaudeDecoder implements Decoder {
  private readonly seen = new RecentSet();

  constructor(private readonly fallbackSession: string) {}

  record(value: unknown, line: number, sink: AdapterSink): void {
    if (!isObject(value)) return sink.skipped(line, '(line)', 'not a JSON object');
    const type = value.type;
    if (type === 'system' && value.subtype === 'api_error') return this.retry(value, line, sink);
    if (type === 'system' && value.subtype === 'compact_boundary') return this.compacted(value, line, sink);
    if (type !== 'user' && type !== 'assistant') {
      if (typeof type === 'string' && IGNORED.has(type)) return;
      // Calls, results, prompts and answers are only ever in a `message` (of a user or assistant
      // record): a record of another type without one is Claude Code's own bookkeeping (2.1.x
      // writes `api-request`, `api-request-blob`, `api-request-shape`, `atis-latch`, `tools-used`,
      // `cost-state`, seen live), nothing to read and no problem. One with a message is a new shape.
      if (typeof type === 'string' && !('message' in value)) return;
      return unknownType(sink, line, 'type', type);
    }
    const message = value.message;
    if (!isObject(message)) return sink.skipped(line, 'message', `a ${type} record without a message`);
    const base = str(value.sessionId) ?? this.fallbackSession;
    const session = sessionOf(value, base);
    const ts = isoTime(value.timestamp);
    const scope: RecordScope = { session, agent: AGENT, ...(ts !== undefined ? { ts } : {}) };
    const content = message.content;
    if (type === 'assistant') {
      if (value.isApiErrorMessage === true) return this.failed(value, content, line, scope, sink);
      toolBlocks(content, line, scope, this.seen, sink, 'message.content');
      const reply = replyText(content);
      if (reply.trim() !== '') sink.event(replyEvent(scope, reply), line);
      return;
    }
    // A result's outcome is what the model was given: the tool_result in the message. The
    // `toolUseResult` beside it is the tool's own record for the screen (for Bash `{stdout,
    // stderr, interrupted, …}`, with `tokenSaverOutput` where the token saver gave the model a
    // shorter text: "Compressed output sent to model when token-saver is active (UI still uses
    // stdout)", Claude Code's BashTool output schema as readers of its transcripts quote it; issue
    // 34, seen in a real transcript): never read for the outcome. `entrypoint` (what started the
    // process: `cli`, `sdk-ts`, `sdk-py`, `claude-desktop`, its `CLAUDE_CODE_ENTRYPOINT`) changes
    // nothing of a record's shape and is not read.
    if (toolBlocks(content, line, scope, this.seen, sink, 'message.content') > 0) return;
    // The summary a compaction leaves is the compaction itself where no boundary record said so.
    if (value.isCompactSummary === true) return this.compacted(value, line, sink);
    // What the person typed (not meta lines the CLI injects) starts a new turn.
    if (value.isMeta === true) return;
    const uuid = str(value.uuid);
    if (uuid !== undefined && !this.seen.add(`user:${uuid}`)) return;
    const text = userText(content);
    sink.event(userEvent(scope, text), line);
    // A subagent's prompts are the delegating agent's instruction, not a person's (a compaction's
    // copy holds the person's prompts, and last Claude Code's request for the summary: a new turn).
    sink.event(promptEvent(scope, text, session !== base ? 'orchestrator' : undefined), line);
  }

  /**
   * A request to the model that failed for good: Claude Code writes an assistant record in the
   * model's place, `isApiErrorMessage: true`, with `apiErrorStatus` (the HTTP status, when there is
   * one), `error` (a code: `rate_limit`, `authentication_failed`, `server_error`…) and the message
   * as its text ("API Error: 529 Overloaded…", "Please run /login · API Error: 401…"). Not in
   * Anthropic's documentation; seen by third-party transcript readers (code search, 2026; L):
   * parsed tolerantly, every field optional.
   */
  private failed(value: Json, content: unknown, line: number, scope: RecordScope, sink: AdapterSink): void {
    const text = contentText(content).trim();
    const cls = str(value.error) ?? (isObject(value.error) ? str(value.error.type) : undefined);
    const model = isObject(value.message) ? str(value.message.model) : undefined;
    const event = apiErrorEvent(scope, { error: text, status: httpStatus(value.apiErrorStatus), class: cls, model: model !== '<synthetic>' ? model : undefined });
    sink.event(event, line);
  }

  /**
   * An automatic retry of a failing request: a `system` record of subtype `api_error` with
   * `retryAttempt`, `maxRetries`, `retryInMs` and the `error`, an object: `status` and `message`,
   * the provider's `error.error.{type, message}`, or a network failure's `cause.code`
   * (`{"error": {"cause": {"code": "ConnectionRefused", …}}}`, Claude Code 2.0.65 in the real
   * transcript ../shared/fixtures/real/claude/slopometry-0f112eb4.jsonl, lines 379-380; the other
   * fields as third-party readers show them, L).
   */
  private retry(value: Json, line: number, sink: AdapterSink): void {
    const session = sessionOf(value, str(value.sessionId) ?? this.fallbackSession);
    const ts = isoTime(value.timestamp);
    const err = isObject(value.error) ? value.error : undefined;
    const inner = err !== undefined && isObject(err.error) ? (isObject(err.error.error) ? err.error.error : err.error) : undefined;
    const message = str(err?.message) ?? str(inner?.message) ?? str(value.content);
    const status = httpStatus(err?.status);
    const cause = isObject(err?.cause) ? err.cause : isObject(value.cause) ? value.cause : undefined;
    const cls = str(inner?.type) ?? str(inner?.code) ?? str(cause?.code);
    const attempt = typeof value.retryAttempt === 'number' && Number.isInteger(value.retryAttempt) && value.retryAttempt >= 0 ? value.retryAttempt : undefined;
    // A retry record is a retry even when it does not number itself.
    const event = apiErrorEvent({ session, agent: AGENT, ...(ts !== undefined ? { ts } : {}) }, { error: message, status, class: cls, retry: attempt ?? 0 });
    sink.event(event, line);
  }

  /**
   * A compaction of the context: a `system` record of subtype `compact_boundary` ("Conversation
   * compacted", `compactMetadata: {trigger: "auto", preTokens}`), followed by a `user` record with
   * `isCompactSummary: true` holding the summary, whose `parentUuid` is the boundary's `uuid`
   * (Claude Code 2.0.65 in the real transcript ../shared/fixtures/real/claude/slopometry-0f112eb4.jsonl,
   * lines 398-399). One compaction event for the pair: the summary counts only where no boundary
   * came before it (a transcript without boundary records).
   */
  private compacted(value: Json, line: number, sink: AdapterSink): void {
    const session = sessionOf(value, str(value.sessionId) ?? this.fallbackSession);
    if (value.type === 'system') {
      const uuid = str(value.uuid);
      if (uuid !== undefined) this.seen.add(`compact:${uuid}`);
    } else {
      const parent = str(value.parentUuid) ?? str(value.logicalParentUuid);
      if (parent !== undefined && this.seen.has(`compact:${parent}`)) return;
    }
    const ts = isoTime(value.timestamp);
    const meta = isObject(value.compactMetadata) ? value.compactMetadata : undefined;
    const trigger = str(meta?.trigger);
    sink.event(compactionEvent({ session, agent: AGENT, ...(ts !== undefined ? { ts } : {}) }, trigger), line);
  }

  finish(): void {}
}

/** Claude Code transcripts: `~/.claude/projects/<project>/<session>.jsonl`. */
export const claudeTranscript: JsonlAdapter = {
  agent: AGENT,
  layout: 'jsonl',
  sniff: (first) =>
    typeof first.type === 'string' &&
    (typeof first.sessionId === 'string' || typeof first.leafUuid === 'string' || typeof first.uuid === 'string' || first.type === 'file-history-snapshot' || first.type === 'summary') &&
    !('payload' in first),
  decoder: (fallbackSession) => new ClaudeDecoder(fallbackSession),
};

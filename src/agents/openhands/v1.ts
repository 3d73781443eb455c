import { apiErrorEvent, promptEvent, replyEvent, resultEvent, toolEvent, userEvent, type RecordScope, withBase } from '../eventBuilders';
import type { FolderTranscript } from '../agent';
import { isObject, isoTime, parseArgsText, str, unknownType, type AdapterSink, type Decoder, type DocumentAdapter, type Json } from '../transcript';

/*
 * OpenHands V1 conversations (the software agent SDK, its CLI and agent server): one JSON file per
 * event, `<conversation>/events/event-NNNNN-<uuid>.json`, in the order of their index
 * (OpenHands/software-agent-sdk @611629e6 `openhands-sdk/openhands/sdk/conversation/persistence_const.py`,
 * `event_store.py`). Each event names its class in `kind` (`sdk/event/base.py`):
 * - `ActionEvent`: a tool call, `tool_name`, `tool_call_id`, `tool_call.arguments` a JSON string
 *   (`sdk/event/llm_convertible/action.py`, `sdk/llm/message.py`); calls of one model response share
 *   `llm_response_id`;
 * - `ObservationEvent`: its result by `tool_call_id`; `observation.is_error`, and for the terminal a
 *   finished command's `exit_code` (not 0: failed, though `is_error` stays false; -1: timed out or
 *   still running) (`openhands-tools/openhands/tools/terminal/definition.py`, `terminal_session.py`);
 *   before 1.0 `ExecuteBashObservation` with `output` and `error` instead of `content`/`is_error`;
 * - `AgentErrorEvent`: a call that failed before it ran (unknown tool, bad arguments), by `tool_call_id`;
 * - `UserRejectObservation`: a call a person or a hook refused: it did not run (no outcome);
 * - `MessageEvent`: `llm_message.role` user (a turn) or assistant (a reply);
 * - `ConversationErrorEvent`: the run itself failed (`code`, `detail`).
 * The rest (system prompt, state updates, condensation, pause, hooks, tokens) carry nothing the
 * signals read. A conversation is read by `replay` from its folder (or its `events/` folder): the
 * line of an event is its index + 1 (`event-00012-…` is line 13).
 */

const AGENT = 'openhands';
/** Argument keys the agent adds to every call (`sdk/agent/agent.py`: popped from `action`, kept in the arguments' string). */
const NOT_ARGS = new Set(['security_risk', 'summary']);
const IGNORED = new Set([
  'SystemPromptEvent',
  'ConversationStateUpdateEvent',
  'Condensation',
  'CondensationRequest',
  'CondensationSummaryEvent',
  'PauseEvent',
  'InterruptEvent',
  'HookExecutionEvent',
  'TokenEvent',
  'LLMCompletionLogEvent',
  'StreamingDeltaEvent',
]);
const KINDS = new Set(['ActionEvent', 'ObservationEvent', 'AgentErrorEvent', 'UserRejectObservation', 'MessageEvent', 'ConversationErrorEvent', ...IGNORED]);

/** The text of `[TextContent]`. */
function texts(content: unknown): string {
  if (!Array.isArray(content)) return typeof content === 'string' ? content : '';
  return content.map((c) => (isObject(c) && typeof c.text === 'string' ? c.text : '')).join('\n');
}

type Outcome = { ok: true; output: string } | { ok: false; error: string } | undefined;

/** What an observation says of its call. */
function observationOutcome(o: Json): Outcome {
  const text = 'content' in o ? texts(o.content) : typeof o.output === 'string' ? o.output : '';
  if (o.is_error === true || o.error === true) return { ok: false, error: text.trim() || 'error' };
  const meta = isObject(o.metadata) ? o.metadata : undefined;
  const code = typeof o.exit_code === 'number' ? o.exit_code : typeof meta?.exit_code === 'number' && typeof o.command === 'string' ? meta.exit_code : undefined;
  if (o.timeout === true) return { ok: false, error: text.trim() || 'the command timed out' };
  if (code === -1) return undefined;
  if (code !== undefined && code !== 0) return { ok: false, error: `${text.trim()}\nExit code ${code}`.trim() };
  return { ok: true, output: text };
}

class V1Decoder implements Decoder {
  private readonly scope: RecordScope;
  private readonly seen = new Set<string>();

  constructor(session: string) {
    this.scope = { session, agent: AGENT };
  }

  record(value: unknown, line: number, sink: AdapterSink): void {
    // A file that is missing or could not be read: the folder reader says why (FolderTranscript).
    if (typeof value === 'string') return sink.skipped(line, '(event file)', value);
    if (!isObject(value)) return sink.skipped(line, '(event)', 'not a JSON object');
    const kind = value.kind;
    const ts = isoTime(value.timestamp);
    const scope: RecordScope = withBase(this.scope, { ...(ts !== undefined ? { ts } : {}) });
    switch (kind) {
      case 'ActionEvent': {
        const tool = str(value.tool_name);
        const id = str(value.tool_call_id);
        if (tool === undefined) return sink.skipped(line, 'tool_name', 'an action without a tool name');
        const call = isObject(value.tool_call) ? value.tool_call : undefined;
        const args = parseArgsText(call?.arguments ?? {});
        for (const k of NOT_ARGS) delete args[k];
        if (id !== undefined) this.seen.add(id);
        sink.event(toolEvent(scope, tool, args, id), line);
        return;
      }
      case 'ObservationEvent':
      case 'AgentErrorEvent':
      case 'UserRejectObservation': {
        const id = str(value.tool_call_id);
        if (id === undefined || !this.seen.has(id)) return sink.skipped(line, 'tool_call_id', 'a result whose call was not read');
        this.seen.delete(id);
        const outcome = kind === 'AgentErrorEvent' ? ({ ok: false, error: typeof value.error === 'string' ? value.error : 'error' } as const) : kind === 'ObservationEvent' && isObject(value.observation) ? observationOutcome(value.observation) : undefined;
        sink.event(resultEvent(scope, id, outcome), line);
        return;
      }
      case 'MessageEvent': {
        const message = isObject(value.llm_message) ? value.llm_message : undefined;
        const text = texts(message?.content).trim();
        if (message?.role === 'user' && value.source === 'user') {
          sink.event(userEvent(scope, text), line);
          if (text !== '') sink.event(promptEvent(scope, text), line);
        } else if (message?.role === 'assistant' && text !== '') sink.event(replyEvent(scope, text), line);
        return;
      }
      case 'ConversationErrorEvent': {
        const detail = str(value.detail) ?? str(value.code) ?? 'the conversation failed';
        sink.event(apiErrorEvent(scope, { error: detail, class: str(value.code) }), line);
        return;
      }
      default:
        if (typeof kind === 'string' && IGNORED.has(kind)) return;
        unknownType(sink, line, 'kind', kind);
    }
  }

  finish(): void {}
}

function isV1Event(v: unknown): boolean {
  return isObject(v) && typeof v.kind === 'string' && KINDS.has(v.kind) && typeof v.id === 'string' && typeof v.source === 'string';
}

/** A V1 conversation's events, as `replay` gathers them from its folder: an array in index order. */
export const openHandsV1Transcript: DocumentAdapter = {
  layout: 'document',
  agent: AGENT,
  sniff: (doc) => Array.isArray(doc) && doc.length > 0 && doc.some(isV1Event) && doc.every((e) => typeof e === 'string' || (isObject(e) && typeof e.kind === 'string')),
  records: (doc) => ({ key: null, items: doc as unknown[] }),
  decoder: (session) => new V1Decoder(session),
};

/** The event files of a V1 conversation folder: `events/event-NNNNN-<uuid>.json`, by index (`persistence_const.py`'s pattern). */
export const openHandsV1Folder: FolderTranscript = {
  subfolder: 'events',
  index: (name) => {
    const m = /^event-(\d{5,12})-[0-9a-fA-F-]{8,64}\.json$/.exec(name);
    return m ? Number(m[1]) : undefined;
  },
};

import type { GuardianEvent } from '../../core/events';
import { withBase } from '../eventBuilders';
import { boundedText } from '../../core/redact';
import { isObject, isoTime, jsonText, str, unknownType, type AdapterSink, type Decoder, type DocumentAdapter, type Json, type JsonlAdapter } from '../transcript';

const AGENT = 'openhands';
/** Actions that are not tool calls: conversation, bookkeeping, the end. */
const NOT_CALLS = new Set(['message', 'system', 'finish', 'think', 'recall', 'condensation', 'condensation_request', 'change_agent_state', 'null', 'reject']);
/** Argument keys that describe a call without being part of it (OpenHands' own loop check ignores them too). */
const NOT_ARGS = new Set(['thought', 'security_risk', 'confirmation_state', 'is_confirmed', 'hidden', 'impl_source', 'blocking', 'is_input']);
/**
 * The keys of an older record (arguments at its top level, no `args`) that are not arguments: the
 * record's own fields, and settings every call of a kind carries alike (`keep_prompt`,
 * `kernel_init_code`, `action_risk`). Seen in OpenHands/OpenHands
 * `tests/unit/resolver/mock_output/output.jsonl` (its `history`); other older keys are kept as arguments.
 */
const OLD_NOT_ARGS = new Set([...NOT_ARGS, 'action', 'id', 'timestamp', 'source', 'message', 'cause', 'observation', 'tool_call_metadata', 'llm_metrics', 'keep_prompt', 'kernel_init_code', 'action_risk', 'wait_for_response', 'images_urls']);
/**
 * Observations of the file editor whose text starting `ERROR:` is the failure it reports (a
 * replacement not performed, a parameter missing): OpenHands/OpenHands
 * `evaluation/benchmarks/multi_swe_bench/examples/output.jsonl`, `observation: "edit"` / `"read"`.
 */
const EDITOR_OBSERVATIONS = new Set(['edit', 'read']);

function callArgs(args: unknown): Json {
  if (!isObject(args)) return {};
  const out: Json = {};
  for (const [k, v] of Object.entries(args)) if (!NOT_ARGS.has(k)) out[k] = v;
  return out;
}

/** An older record's arguments: its top-level keys, less its own fields. */
function topLevelArgs(record: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(record)) if (!OLD_NOT_ARGS.has(k)) out[k] = v;
  return out;
}

/**
 * OpenHands event lists: agent actions are calls (named by their function call when there is
 * one), observations whose `cause` is an action's id are their results. `observation: "error"`,
 * a non-zero exit code (`extras.metadata.exit_code`, or `exit_code` at the top level in older
 * files) and an editor observation starting `ERROR:` are failures. An exit code of -1 is none: the
 * default of `CmdOutputMetadata.exit_code` (OpenHands/OpenHands
 * `openhands/events/observation/commands.py`), left when a command is still running after the
 * no-change time-out (a server left up, a hung command: ../shared/fixtures/real/openhands/basic_gui_mode.json,
 * `python3 -m http.server 8000`, "The command has no new output after 30 seconds", `success:
 * false` beside it, issue 34): no failure; a hung command tried again is caught by its outputs.
 *
 * Older histories (before `source`, `id` and `cause`) put a call's arguments at the record's top
 * level (`command`, `code`, `path`, ...) and give an observation no cause: it answers the call
 * before it, which has no id, so the pair is settled by order (the call waits for its observation).
 * Who wrote an older `message` is not recorded: it is neither a call nor a turn.
 */
class OpenHandsDecoder implements Decoder {
  private index = 0;
  /** An older call waiting for the observation that follows it. */
  private waiting: { event: GuardianEvent & { type: 'tool' }; line: number } | undefined;

  constructor(private readonly session: string, private readonly field = '') {}

  record(value: unknown, line: number, sink: AdapterSink): void {
    const i = this.index++;
    if (!isObject(value)) return sink.skipped(line, `${this.field}[${i}]`, 'not an object');
    const ts = isoTime(value.timestamp);
    const base = { v: 1 as const, session: this.session, agent: AGENT, ...(ts !== undefined ? { ts } : {}) };
    const older = !('source' in value) && !('args' in value) && !('extras' in value);
    if (typeof value.action === 'string') {
      this.settle(sink);
      if (value.source === 'user') {
        if (value.action === 'message') {
          sink.event(withBase(base, { type: 'user', ...(typeof value.message === 'string' ? { text: value.message.slice(0, 500) } : {}) }), line);
          // The person's message is also the prompt of the turn it starts.
          sink.event(withBase(base, { type: 'prompt', text: boundedText(typeof value.message === 'string' ? value.message : '') }), line);
        }
        return;
      }
      if (NOT_CALLS.has(value.action)) return;
      const meta = isObject(value.tool_call_metadata) ? value.tool_call_metadata : undefined;
      const tool = str(meta?.function_name) ?? value.action;
      if (older) {
        this.waiting = { event: withBase(base, { type: 'tool', tool, args: topLevelArgs(value) }), line };
        return;
      }
      const id = value.id === undefined || value.id === null ? undefined : String(value.id);
      const event: GuardianEvent = withBase(base, { type: 'tool', tool, args: callArgs(value.args), ...(id !== undefined ? { id } : {}) });
      sink.event(event, line);
      return;
    }
    if (typeof value.observation === 'string') {
      const content = typeof value.content === 'string' ? value.content : jsonText(value.content ?? '');
      const extras = isObject(value.extras) ? value.extras : undefined;
      const meta = extras && isObject(extras.metadata) ? extras.metadata : undefined;
      const exit = typeof meta?.exit_code === 'number' ? meta.exit_code : typeof value.exit_code === 'number' ? value.exit_code : undefined;
      const failed =
        value.observation === 'error' || (exit !== undefined && exit !== 0 && exit !== -1) || (EDITOR_OBSERVATIONS.has(value.observation) && content.trimStart().startsWith('ERROR:'));
      const outcome = failed ? { ok: false, error: content.trim() || value.observation } : { ok: true, output: content };
      if (value.cause === undefined || value.cause === null) {
        // An older observation answers the call before it; one with nothing waiting is the environment's.
        const call = this.waiting;
        this.waiting = undefined;
        if (call !== undefined && older) sink.event(withBase(call.event, outcome), call.line);
        else if (call !== undefined) sink.event(call.event, call.line);
        return;
      }
      this.settle(sink);
      const id = String(value.cause);
      sink.event(failed ? withBase(base, { type: 'tool_result', id, ok: false, error: content.trim() || value.observation }) : withBase(base, { type: 'tool_result', id, ok: true, output: content }), line);
      return;
    }
    unknownType(sink, line, this.field === '' ? 'action' : `${this.field}[${i}].action`, value.action);
  }

  /** An older call whose observation never came: what it did is unknown. */
  private settle(sink: AdapterSink): void {
    if (this.waiting === undefined) return;
    sink.event(this.waiting.event, this.waiting.line);
    this.waiting = undefined;
  }

  finish(sink: AdapterSink): void {
    this.settle(sink);
  }
}

function isEventList(doc: unknown): doc is unknown[] {
  return (
    Array.isArray(doc) &&
    doc.length > 0 &&
    doc
      .slice(0, 5)
      .some((e) => isObject(e) && (typeof e.action === 'string' || typeof e.observation === 'string') && ('source' in e || 'content' in e || 'thought' in e || 'command' in e || 'code' in e))
  );
}

/** OpenHands' event lists: a trajectory export, a session's events, an evaluation instance's `history`. */
export const openHandsTranscript: DocumentAdapter = {
  agent: AGENT,
  layout: 'document',
  sniff: isEventList,
  records: (doc) => ({ key: null, items: Array.isArray(doc) ? doc : [] }),
  decoder: (session) => new OpenHandsDecoder(session),
};

/**
 * An evaluation's `output.jsonl`: one instance per line, `{instance_id, instruction, history,
 * metrics, error, ...}` (OpenHands/OpenHands `evaluation/benchmarks/multi_swe_bench/examples/output.jsonl`).
 * Each instance's `history` is an event list read as a session named by its `instance_id`; its
 * events carry the instance's line.
 */
class OpenHandsOutputDecoder implements Decoder {
  private instance = 0;

  constructor(private readonly fallbackSession: string) {}

  record(value: unknown, line: number, sink: AdapterSink): void {
    const n = this.instance++;
    if (!isObject(value)) return sink.skipped(line, '(line)', 'not a JSON object');
    if (!Array.isArray(value.history)) return sink.skipped(line, 'history', value.history === undefined ? 'an evaluation instance without a history' : 'not an array');
    const session = str(value.instance_id) ?? `${this.fallbackSession}#${n + 1}`;
    const decoder = new OpenHandsDecoder(session, 'history');
    for (const e of value.history) decoder.record(e, line, sink);
    decoder.finish(sink);
  }

  finish(): void {}
}

export const openHandsOutputTranscript: JsonlAdapter = {
  agent: AGENT,
  layout: 'jsonl',
  sniff: (first) => Array.isArray(first.history) && isEventList(first.history) && ('instance_id' in first || 'instruction' in first),
  decoder: (fallbackSession) => new OpenHandsOutputDecoder(fallbackSession),
};

import { promptEvent, replyEvent, resultEvent, toolEvent, userEvent, type RecordScope } from '../eventBuilders';
import { shellExitFailed, shellFailure } from '../copilotEvents';
import { isObject, isoTime, parseArgsText, str, type AdapterSink, type Decoder, type DocumentAdapter, type Json } from '../transcript';

/*
 * Copilot CLI's oldest sessions (up to 0.0.341, Sept–Oct 2025):
 * `~/.copilot/history-session-state/session_<id>_<ms>.json`, one JSON document rewritten as the
 * session runs, `{sessionId, startTime, chatMessages, timeline}`. Copilot CLI is closed source and
 * never documented it; what is parsed here is what readers built on real files found
 * (dthphuong/copilot-status @c91163eb `src/utils/session-processor.ts`; guideai-dev/desktop @9006816a
 * `src-tauri/src/providers/copilot_parser.rs`; guideai-dev/session-processing @521001ec
 * `MESSAGE_TYPES.md`), and nothing more:
 * - `chatMessages`: the model's history in OpenAI chat form: `user` (a turn), `assistant` (its text
 *   a reply; `tool_calls[{id, function: {name, arguments}}]`, arguments a JSON string), `tool` (a
 *   result, by `tool_call_id`);
 * - `timeline`: `tool_call_completed` entries, by `callId`, with `result.type` (`success`; anything
 *   else a failure) and `result.log`, which decide the outcome where present; a shell output ending
 *   `<exited with exit code N>` (N ≠ 0) is a failure as in later Copilot CLI logs.
 * Evidence points at `chatMessages[i]` (the line its element starts on).
 */

const AGENT = 'copilot-cli';

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c) => (isObject(c) && typeof c.text === 'string' ? c.text : '')).join('\n');
  return '';
}

class LegacyDecoder implements Decoder {
  private readonly scope: RecordScope;
  /** The timeline's outcome per call id. */
  private readonly completed = new Map<string, { ok: boolean; log: string }>();
  private readonly waiting = new Set<string>();

  constructor(session: string, doc: unknown) {
    const d = isObject(doc) ? doc : {};
    const ts = isoTime(d.startTime);
    this.scope = { session: str(d.sessionId) ?? session, agent: AGENT, ...(ts !== undefined ? { ts } : {}) };
    for (const t of Array.isArray(d.timeline) ? d.timeline : []) {
      if (!isObject(t) || t.type !== 'tool_call_completed' || !isObject(t.result)) continue;
      const id = str(t.callId);
      if (id !== undefined) this.completed.set(id, { ok: t.result.type === 'success', log: typeof t.result.log === 'string' ? t.result.log : '' });
    }
  }

  record(value: unknown, line: number, sink: AdapterSink): void {
    if (!isObject(value)) return sink.skipped(line, 'chatMessages[]', 'not an object');
    const text = contentText(value.content).trim();
    switch (value.role) {
      case 'user':
        sink.event(userEvent(this.scope, text), line);
        if (text !== '') sink.event(promptEvent(this.scope, text), line);
        return;
      case 'assistant': {
        if (text !== '') sink.event(replyEvent(this.scope, text), line);
        for (const call of Array.isArray(value.tool_calls) ? value.tool_calls : []) {
          const fn = isObject(call) && isObject(call.function) ? call.function : undefined;
          const name = str(fn?.name);
          if (name === undefined) {
            sink.skipped(line, 'chatMessages[].tool_calls[].function.name', 'a tool call without a name');
            continue;
          }
          const id = str((call as Json).id);
          if (id !== undefined) this.waiting.add(id);
          sink.event(toolEvent(this.scope, name, parseArgsText(fn?.arguments), id), line);
        }
        return;
      }
      case 'tool': {
        const id = str(value.tool_call_id);
        if (id === undefined || !this.waiting.delete(id)) return sink.skipped(line, 'chatMessages[].tool_call_id', 'a tool result whose call was not read');
        const done = this.completed.get(id);
        const outcome = done !== undefined && !done.ok ? { ok: false as const, error: (done.log || text).trim() || 'failed' } : shellExitFailed(text) ? { ok: false as const, error: shellFailure(text) } : { ok: true as const, output: text };
        sink.event(resultEvent(this.scope, id, outcome), line);
        return;
      }
      case 'system':
        return;
      default:
        sink.skipped(line, 'chatMessages[].role', value.role === undefined ? 'missing role' : `unknown role ${JSON.stringify(value.role)}`);
    }
  }

  finish(): void {}
}

export const copilotCliLegacyTranscript: DocumentAdapter = {
  layout: 'document',
  agent: AGENT,
  sniff: (doc) => isObject(doc) && typeof doc.sessionId === 'string' && typeof doc.startTime === 'string' && Array.isArray(doc.chatMessages),
  records: (doc) => ({ key: 'chatMessages', items: (doc as { chatMessages: unknown[] }).chatMessages }),
  decoder: (session, doc) => new LegacyDecoder(session, doc),
};

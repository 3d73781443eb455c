import { promptEvent, replyEvent, resultEvent, toolEvent, userEvent, type CallOutcome, type RecordScope } from '../eventBuilders';
import { isObject, isoTime, jsonText, str, unknownType, type AdapterSink, type Decoder, type Json, type JsonlAdapter } from '../transcript';
import { OPENCODE } from './session';

/*
 * The transcript an opencode plugin writes for Claude Code's hooks (issue 34: a file of this shape
 * was "not recognised", exit 5): oh-my-opencode's Claude Code compatibility layer
 * (code-yeongyu/oh-my-opencode, now oh-my-openagent, `src/hooks/claude-code-hooks/transcript.ts`
 * and `types.ts`) appends one line per entry to `<Claude config>/transcripts/<sessionID>.jsonl`
 * (`~/.claude/transcripts/ses_….jsonl`), `TranscriptEntry`:
 *   `{"type": "tool_use" | "tool_result" | "user" | "assistant", "timestamp": ISO,
 *     "tool_name"?, "tool_input"?, "tool_output"?, "content"?}`.
 * - `tool_use` is written in opencode's `tool.execute.before` (`handlers/tool-execute-before-handler.ts`):
 *   the call, `tool_name` opencode's own (`bash`, `read`, `edit`…), `tool_input` its arguments;
 * - `tool_result` in `tool.execute.after` (`handlers/tool-execute-after-handler.ts`): the same name
 *   and input (cached by the call's id, which the line does not carry), and `tool_output`
 *   `{output, filePath?, …}` (older builds: what the tool returned, `{title, output, metadata}`);
 *   no error flag: a shell's exit code is there only where `metadata.exit` was kept;
 * - `user` and `assistant` carry `content`, a text.
 * No line names the session or the call: the session is the file's name, and a result answers the
 * oldest call still waiting with the same name and input (else with the same name). A call whose
 * result never came (opencode calls the after hook only when the tool returned) has no outcome.
 */

/** The keys of a `user` or `assistant` entry: nothing else (Claude Code's, Qwen's and Gemini's records carry ids). */
const TEXT_ENTRY_KEYS: ReadonlySet<string> = new Set(['type', 'timestamp', 'content']);

function isToolEntry(v: Record<string, unknown>): boolean {
  return (v.type === 'tool_use' || v.type === 'tool_result') && typeof v.timestamp === 'string' && typeof v.tool_name === 'string' && !('message' in v) && !('sessionId' in v);
}

function isTextEntry(v: Record<string, unknown>): boolean {
  return (v.type === 'user' || v.type === 'assistant') && typeof v.timestamp === 'string' && typeof v.content === 'string' && Object.keys(v).every((k) => TEXT_ENTRY_KEYS.has(k));
}

/** What a result's `tool_output` says: its text, and a failure only where a non-zero exit code was kept. */
function outcomeOf(output: unknown): CallOutcome {
  if (!isObject(output)) return { ok: true, output: typeof output === 'string' ? output : jsonText(output ?? '') };
  const text = typeof output.output === 'string' ? output.output : jsonText(output);
  const meta = isObject(output.metadata) ? output.metadata : undefined;
  const exit = typeof meta?.exit === 'number' ? meta.exit : typeof output.exit === 'number' ? output.exit : undefined;
  if (exit !== undefined && exit !== 0) return { ok: false, error: `${text.trim()}\nExit code ${exit}`.trim() };
  return { ok: true, output: text };
}

class PluginTranscriptDecoder implements Decoder {
  private n = 0;
  /** Calls waiting for their result, oldest first. */
  private readonly waiting: { id: string; name: string; input: string }[] = [];

  constructor(private readonly session: string) {}

  record(value: unknown, line: number, sink: AdapterSink): void {
    if (!isObject(value)) return sink.skipped(line, '(line)', 'not a JSON object');
    const ts = isoTime(value.timestamp);
    const scope: RecordScope = { session: this.session, agent: OPENCODE, ...(ts !== undefined ? { ts } : {}) };
    switch (value.type) {
      case 'tool_use': {
        const name = str(value.tool_name);
        if (name === undefined) return sink.skipped(line, 'tool_name', 'a tool_use without the name of its tool');
        const id = `call-${++this.n}`;
        this.waiting.push({ id, name, input: jsonText(value.tool_input ?? {}) });
        // The id is the reader's own (the line has none): the result found below names it.
        sink.event(toolEvent(scope, name, value.tool_input ?? {}, id), line);
        return;
      }
      case 'tool_result':
        return this.result(value, line, scope, sink);
      case 'user': {
        const text = str(value.content) ?? '';
        sink.event(userEvent(scope, text), line);
        sink.event(promptEvent(scope, text), line);
        return;
      }
      case 'assistant': {
        const text = str(value.content) ?? '';
        if (text.trim() !== '') sink.event(replyEvent(scope, text), line);
        return;
      }
      default:
        return unknownType(sink, line, 'type', value.type);
    }
  }

  private result(value: Json, line: number, scope: RecordScope, sink: AdapterSink): void {
    const name = str(value.tool_name);
    if (name === undefined) return sink.skipped(line, 'tool_name', 'a tool_result without the name of its tool');
    const input = jsonText(value.tool_input ?? {});
    let at = this.waiting.findIndex((w) => w.name === name && w.input === input);
    if (at < 0) at = this.waiting.findIndex((w) => w.name === name);
    let id: string;
    if (at >= 0) {
      id = (this.waiting.splice(at, 1)[0] as { id: string }).id;
    } else {
      // A result whose call was not written (the file begun mid-session): the call is read here.
      id = `call-${++this.n}`;
      sink.event(toolEvent(scope, name, value.tool_input ?? {}, id), line);
    }
    sink.event(resultEvent(scope, id, outcomeOf(value.tool_output)), line);
  }

  finish(): void {}
}

/** An opencode plugin's transcript for Claude Code's hooks: `~/.claude/transcripts/<sessionID>.jsonl`. */
export const openCodePluginTranscript: JsonlAdapter = {
  agent: OPENCODE,
  layout: 'jsonl',
  sniff: (first) => isToolEntry(first) || isTextEntry(first),
  decoder: (fallbackSession) => new PluginTranscriptDecoder(fallbackSession),
};

import { promptEvent, replyEvent, resultEvent, toolEvent, userEvent, type RecordScope } from '../eventBuilders';
import { isObject, isoTime, jsonText, RecentSet, str, unknownType, type AdapterSink, type Decoder, type Json, type JsonlAdapter } from '../transcript';

/*
 * Qwen Code's chat recordings, `~/.qwen/projects/<cwd slug>/chats/<session uuid>.jsonl`: one record
 * a line, `{uuid, parentUuid, sessionId, timestamp, type, cwd, version, message, …}` (QwenLM/qwen-code
 * `packages/core/src/services/chatRecordingService.ts`, `ChatRecord`; checked on the file Qwen Code
 * 0.24.4 wrote in this project's live run of it, test/agents):
 * - `user`: `message.parts[].text` is the prompt (with a `subtype`, a notification or a scheduled
 *   prompt, not a person's turn);
 * - `assistant`: `message.parts`, Gemini-style: `text` (a `thought: true` part is reasoning), and
 *   `functionCall {id, name, args}` per call;
 * - `tool_result`: `message.parts[].functionResponse {id, name, response: {output} | {error}}` and
 *   `toolCallResult {callId, status: success | error | cancelled, resultDisplay}`. Qwen Code decides
 *   the status itself (a shell command exiting non-zero is `error`, but not grep's or diff's exit 1:
 *   `packages/core/src/tools/shell.ts` `isShellExitError`), so the status is taken as it is;
 * - `system` (`ui_telemetry`, `attribution_snapshot`, `chat_compression`, `slash_command`, …):
 *   bookkeeping, nothing the signals read.
 */

const AGENT = 'qwen-code';

function partsOf(message: unknown): Json[] {
  return isObject(message) && Array.isArray(message.parts) ? (message.parts.filter(isObject) as Json[]) : [];
}

function textOf(parts: readonly Json[]): string {
  return parts
    .filter((p) => typeof p.text === 'string' && p.thought !== true)
    .map((p) => p.text as string)
    .join('\n')
    .trim();
}

class QwenDecoder implements Decoder {
  private session: string;
  private readonly seen = new RecentSet();

  constructor(fallbackSession: string) {
    this.session = fallbackSession;
  }

  record(value: unknown, line: number, sink: AdapterSink): void {
    if (!isObject(value)) return sink.skipped(line, '(line)', 'not a JSON object');
    this.session = str(value.sessionId) ?? this.session;
    const ts = isoTime(value.timestamp);
    const scope: RecordScope = { session: this.session, agent: AGENT, ...(ts !== undefined ? { ts } : {}) };
    const parts = partsOf(value.message);
    switch (value.type) {
      case 'user': {
        if (value.subtype !== undefined) return;
        const text = textOf(parts);
        sink.event(userEvent(scope, text), line);
        if (text !== '') sink.event(promptEvent(scope, text), line);
        return;
      }
      case 'assistant': {
        const text = textOf(parts);
        if (text !== '') sink.event(replyEvent(scope, text), line);
        for (const p of parts) {
          const call = isObject(p.functionCall) ? p.functionCall : undefined;
          if (call === undefined) continue;
          const name = str(call.name);
          if (name === undefined) {
            sink.skipped(line, 'message.parts[].functionCall.name', 'a call without a tool name');
            continue;
          }
          const id = str(call.id);
          if (id !== undefined && !this.seen.add(`call:${id}`)) continue;
          sink.event(toolEvent(scope, name, call.args, id), line);
        }
        return;
      }
      case 'tool_result': {
        const result = isObject(value.toolCallResult) ? value.toolCallResult : undefined;
        for (const p of parts) {
          const fr = isObject(p.functionResponse) ? p.functionResponse : undefined;
          const id = str(fr?.id) ?? str(result?.callId);
          if (fr === undefined || id === undefined) continue;
          if (!this.seen.add(`result:${id}`)) continue;
          const response = isObject(fr.response) ? fr.response : {};
          const status = str(result?.status) ?? (typeof response.error === 'string' ? 'error' : 'success');
          const error = typeof response.error === 'string' ? response.error : jsonText(response);
          const output = typeof response.output === 'string' ? response.output : jsonText(response);
          sink.event(resultEvent(scope, id, status === 'error' ? { ok: false, error: error.trim() || 'error' } : status === 'success' ? { ok: true, output } : undefined), line);
        }
        return;
      }
      case 'system':
        return;
      default:
        unknownType(sink, line, 'type', value.type);
    }
  }

  finish(): void {}
}

export const qwenTranscript: JsonlAdapter = {
  layout: 'jsonl',
  agent: AGENT,
  sniff: (first) =>
    typeof first.sessionId === 'string' &&
    typeof first.uuid === 'string' &&
    (first.type === 'user' || first.type === 'assistant' || first.type === 'system' || first.type === 'tool_result') &&
    (partsOf(first.message).length > 0 || isObject(first.systemPayload)),
  decoder: (fallbackSession) => new QwenDecoder(fallbackSession),
};

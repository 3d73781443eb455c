import type { GuardianEvent } from '../core/events';
import { isObject, isoTime, parseArgsText, RecentSet, str, unknownType, type AdapterSink, type Decoder, type Json, type JsonlAdapter } from './transcript';

/*
 * The Copilot session event log, written by GitHub Copilot CLI
 * (`~/.copilot/session-state/<sessionId>/events.jsonl`; `$COPILOT_HOME` replaces `~/.copilot`;
 * older builds wrote `session-state/<id>.jsonl`) and, in the same envelope "so one parser can serve
 * both", by Copilot Chat in VS Code as its hook transcripts
 * (`<workspaceStorage>/<id>/GitHub.copilot-chat/transcripts/<sessionId>.jsonl`,
 * microsoft/vscode-copilot-chat `sessionTranscriptService.ts`; there `tool.execution_complete`
 * carries `success` but no result text).
 * Sources: github/copilot-sdk `nodejs/src/generated/session-events.ts` (the event shapes),
 * microsoft/vscode-copilot-chat `src/extension/agents/copilotcli/node/test/fixtures/*.jsonl` and
 * real logs (../shared/fixtures/real/copilot-cli, SOURCES.md). The schema is not officially
 * documented: unknown types are skipped and counted, missing fields tolerated.
 *
 * Envelope: `{type, data, id, timestamp, parentId}`.
 * - `session.start` `{sessionId, version, producer, copilotVersion, context?: {cwd, gitRoot, …}}`
 * - `user.message` `{content, transformedContent?}`: what the person typed
 * - `tool.execution_start` `{toolCallId, toolName, arguments}`: the call
 * - `tool.execution_complete` `{toolCallId, success, result?: {content, detailedContent?},
 *   error?: {message, code?}}`: its outcome. A shell tool that ran reports `success: true` with
 *   its output ending `<exited with exit code N>` (seen in the real logs): N > 0 is a failure.
 */

/** Types that carry nothing the signals read (narration, turns, hooks' own events, notices). */
const IGNORED = new Set([
  'assistant.message',
  'assistant.turn_start',
  'assistant.turn_end',
  'assistant.reasoning',
  'assistant.intent',
  'hook.start',
  'hook.end',
  'session.info',
  'session.warning',
  'session.error',
  'session.resume',
  'session.shutdown',
  'session.mode_changed',
  'session.model_change',
  'session.task_complete',
  'session.compaction_start',
  'session.compaction_complete',
  'session.truncation',
  'system.notification',
  'subagent.started',
  'subagent.completed',
  'subagent.failed',
  'skill.invoked',
  'tool.user_requested',
  'tool.execution_partial_result',
]);

const SHELL_EXIT = /<exited with exit code (-?\d+)>\s*$/;

/** Whether a shell's output ends with a non-zero `<exited with exit code N>` (it ran, and failed). */
export function shellExitFailed(text: string): boolean {
  const exit = SHELL_EXIT.exec(text);
  return exit !== null && Number(exit[1]) !== 0;
}

/** The outcome of a finished tool: `success`, the error's message, or a shell's non-zero exit code. */
export function copilotOutcome(data: Json): { ok: true; output: string } | { ok: false; error: string } {
  const result = isObject(data.result) ? data.result : {};
  const text = typeof result.content === 'string' ? result.content : typeof result.detailedContent === 'string' ? result.detailedContent : '';
  if (data.success === false) {
    const err = isObject(data.error) && typeof data.error.message === 'string' ? data.error.message : text;
    return { ok: false, error: err || 'failed' };
  }
  if (shellExitFailed(text)) return { ok: false, error: text };
  return { ok: true, output: text };
}

class CopilotEventDecoder implements Decoder {
  private session: string;
  private readonly seen = new RecentSet();

  constructor(fallbackSession: string, private readonly agent: string) {
    this.session = fallbackSession;
  }

  record(value: unknown, line: number, sink: AdapterSink): void {
    if (!isObject(value)) return sink.skipped(line, '(line)', 'not a JSON object');
    const type = value.type;
    const data = isObject(value.data) ? value.data : undefined;
    if (typeof type !== 'string' || data === undefined) return unknownType(sink, line, 'type', type);
    const ts = isoTime(value.timestamp);
    const base = { v: 1 as const, session: this.session, agent: this.agent, ...(ts !== undefined ? { ts } : {}) };
    switch (type) {
      case 'session.start':
        this.session = str(data.sessionId) ?? this.session;
        return;
      case 'user.message': {
        const text = typeof data.content === 'string' ? data.content : '';
        sink.event({ ...base, session: this.session, type: 'user', ...(text !== '' ? { text: text.slice(0, 500) } : {}) } as GuardianEvent, line);
        return;
      }
      case 'tool.execution_start': {
        const id = str(data.toolCallId);
        const tool = str(data.toolName);
        if (id === undefined || tool === undefined) return sink.skipped(line, id === undefined ? 'data.toolCallId' : 'data.toolName', 'missing');
        // A resumed session can repeat what it already wrote: each call once.
        if (!this.seen.add(`start:${id}`)) return;
        sink.event({ ...base, type: 'tool', tool, args: parseArgsText(data.arguments), id }, line);
        return;
      }
      case 'tool.execution_complete': {
        const id = str(data.toolCallId);
        if (id === undefined) return sink.skipped(line, 'data.toolCallId', 'missing');
        if (!this.seen.add(`done:${id}`)) return;
        const outcome = copilotOutcome(data);
        sink.event({ ...base, type: 'tool_result', id, ...(outcome.ok ? { ok: true, output: outcome.output } : { ok: false, error: outcome.error }) }, line);
        return;
      }
      default:
        if (!IGNORED.has(type)) unknownType(sink, line, 'type', type);
    }
  }

  finish(): void {}
}

/** The first record of a Copilot event log: `session.start` with the producer or the CLI's version. */
export function isCopilotSessionStart(first: Record<string, unknown>): first is { data: Record<string, unknown> } & Record<string, unknown> {
  return first.type === 'session.start' && isObject(first.data) && (typeof first.data.producer === 'string' || typeof first.data.copilotVersion === 'string');
}

/** A reader of Copilot event logs whose events carry `agent`; `sniff` tells whose log a first record starts. */
export function copilotEventLog(agent: string, sniff: (first: Record<string, unknown>) => boolean): JsonlAdapter {
  return { agent, layout: 'jsonl', sniff, decoder: (fallbackSession) => new CopilotEventDecoder(fallbackSession, agent) };
}

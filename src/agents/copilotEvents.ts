import type { GuardianEvent, PromptSender } from '../core/events';
import { boundedText } from '../core/redact';
import { apiErrorEvent, httpStatus, withBase } from './eventBuilders';
import { isObject, isoTime, parseArgsText, RecentSet, statusInText, str, unknownType, type AdapterSink, type Decoder, type Json, type JsonlAdapter } from './transcript';

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
 *
 * Turns, answers, failed requests and subtasks (issue 14), from the same source:
 * - `user.message` is also a `prompt`; who sent it from `source` (`agent-<id>`: another agent's
 *   prompt, an orchestrator; any other source, such as `skill-pdf`, an injection of the agent's own)
 *   and `isAutopilotContinuation` (autopilot's continuation loop: the agent's own); without them,
 *   unknown (a person, or a program driving the CLI).
 * - `assistant.message` `content` is a `reply`.
 * - `session.error` `{errorType, message, statusCode?, errorCode?}` ("authentication", "quota",
 *   "rate_limit", "context_limit", … per the SDK's `ErrorData`) is a failed model request, except
 *   `errorType: "mcp"`, an MCP server's (seen in the real logs). `model.call_failure` is ephemeral:
 *   never in the file.
 * - the `task` tool (`{prompt, agent_type, name, mode}`, seen in the real logs; github/docs
 *   `hooks-reference.md` maps it to Claude's `Agent`) and, in VS Code's transcripts, `runSubagent`
 *   (`{prompt, description}`; microsoft/vscode-copilot-chat `toolNames.ts`) are delegations.
 *   Their subagent comes back with `subagent.completed` / `subagent.failed` `{toolCallId}` (a
 *   `mode: "background"` task's call completes at once, before its subagent does), or, for a call
 *   that waits for it, with the call's own `tool.execution_complete`.
 */
const DELEGATION_TOOLS = new Set(['task', 'runSubagent']);

/** Types that carry nothing the signals read (narration, turns, hooks' own events, notices). */
const IGNORED = new Set([
  'assistant.turn_start',
  'assistant.turn_end',
  'assistant.reasoning',
  'assistant.intent',
  // `hook.start` `{hookInvocationId, hookType, input?}` echoes, for a preToolUse or postToolUse
  // hook, the call and its result again (github/copilot-sdk `session-events.ts` `HookStartData`;
  // Copilot CLI 1.0.60 writes them for every call, issue 34): the call is its
  // `tool.execution_start`, never counted twice.
  'hook.start',
  'hook.end',
  // A permission asked (`{requestId, permissionRequest, toolCallId?}`): its answer is `permission.completed`.
  'permission.requested',
  'session.info',
  'session.warning',
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
  'skill.invoked',
  'tool.user_requested',
  'tool.execution_partial_result',
]);

/**
 * The line a shell tool's output ends with: `<exited with exit code N>` (Copilot CLI up to 0.0.3xx,
 * in the real sessions of ../shared/fixtures/real/copilot-cli), `<shellId: N completed with exit
 * code N>` (1.0.x, seen live from 1.0.102, ../shared/docs/live-agents.md); the shell id grows with
 * each call, so it is no part of the outcome.
 */
const SHELL_EXIT = /\n?<(?:exited with exit code|shellId: [^>\s]+ completed with exit code) (-?\d+)>\s*$/;

/** Whether a shell's output ends with a non-zero exit code line (it ran, and failed). */
export function shellExitFailed(text: string): boolean {
  const exit = SHELL_EXIT.exec(text);
  return exit !== null && Number(exit[1]) !== 0;
}

/** A failed shell's output as its error: the exit code said once, without the shell's id. */
export function shellFailure(text: string): string {
  const exit = SHELL_EXIT.exec(text);
  return exit === null ? text : `${text.slice(0, exit.index).trimEnd()}\n(exit code ${exit[1]})`;
}

/** The outcome of a finished tool: `success`, the error's message, or a shell's non-zero exit code. */
function copilotOutcome(data: Json): { ok: true; output: string } | { ok: false; error: string } {
  const result = isObject(data.result) ? data.result : {};
  const text = typeof result.content === 'string' ? result.content : typeof result.detailedContent === 'string' ? result.detailedContent : '';
  if (data.success === false) {
    const err = isObject(data.error) && typeof data.error.message === 'string' ? data.error.message : text;
    return { ok: false, error: err || 'failed' };
  }
  if (shellExitFailed(text)) return { ok: false, error: shellFailure(text) };
  return { ok: true, output: text };
}

/** Who sent a `user.message`, where its data says. */
function senderOf(data: Json): PromptSender | undefined {
  const source = str(data.source);
  if (source?.startsWith('agent-')) return 'orchestrator';
  if (source !== undefined || data.isAutopilotContinuation === true) return 'hook';
  return undefined;
}

/** How a log's `success: true` with no result is read. */
export interface CopilotEventLogOptions {
  /**
   * It says only that the tool returned, not how the call went: VS Code's hook transcripts write
   * `tool.execution_complete {"toolCallId", "success": true}` and nothing else for a terminal
   * command that exited 1 and for a call a PreToolUse hook denied (both seen in Copilot Chat
   * 0.67.0's own transcripts, VS Code 1.139.1, live run of test/host/copilotVscode.js). Such a
   * call is settled with no outcome, never read as a success.
   */
  readonly successIsUnknown?: boolean;
}

class CopilotEventDecoder implements Decoder {
  private session: string;
  private readonly seen = new RecentSet();
  /** Delegations out, by call id: whether their subagent comes back apart from the call (background). */
  private readonly delegations = new Map<string, boolean>();

  constructor(fallbackSession: string, private readonly agent: string, private readonly options: CopilotEventLogOptions = {}) {
    this.session = fallbackSession;
  }

  record(value: unknown, line: number, sink: AdapterSink): void {
    if (!isObject(value)) return sink.skipped(line, '(line)', 'not a JSON object');
    const type = value.type;
    // `copilot -p … --output-format json` ends with `{"type": "result", "sessionId", "exitCode",
    // "usage"}` (Copilot CLI 1.0.102's own output, seen in its live runs here): the run's summary.
    if (type === 'result' && 'exitCode' in value) return;
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
        sink.event(withBase(base, { session: this.session, type: 'user', ...(text !== '' ? { text: text.slice(0, 500) } : {}) }) as GuardianEvent, line);
        const from = senderOf(data);
        sink.event(withBase(base, { type: 'prompt', text: boundedText(text), ...(from !== undefined ? { from } : {}) }), line);
        return;
      }
      case 'assistant.message': {
        const text = typeof data.content === 'string' ? data.content : '';
        if (text.trim() !== '') sink.event(withBase(base, { type: 'reply', text: boundedText(text) }), line);
        return;
      }
      case 'session.error': {
        const cls = str(data.errorType);
        if (cls === 'mcp') return;
        const message = str(data.message);
        const status = httpStatus(data.statusCode) ?? (message !== undefined ? statusInText(message) : undefined);
        sink.event(apiErrorEvent(base, { error: message, status, class: str(data.errorCode) ?? cls }), line);
        return;
      }
      case 'subagent.completed':
      case 'subagent.failed': {
        const id = str(data.toolCallId);
        // A call that waited for its subagent came back with the call's own result.
        if (id === undefined || this.delegations.get(id) !== true || !this.seen.add(`back:${id}`)) return;
        this.delegations.delete(id);
        const failed = type === 'subagent.failed';
        sink.event(withBase(base, { type: 'delegation_result', id, ok: !failed, ...(failed ? { error: boundedText(str(data.error) ?? 'failed') } : {}) }), line);
        return;
      }
      case 'tool.execution_start': {
        const id = str(data.toolCallId);
        const tool = str(data.toolName);
        if (id === undefined || tool === undefined) return sink.skipped(line, id === undefined ? 'data.toolCallId' : 'data.toolName', 'missing');
        // A resumed session can repeat what it already wrote: each call once.
        if (!this.seen.add(`start:${id}`)) return;
        const args = parseArgsText(data.arguments);
        sink.event(withBase(base, { type: 'tool', tool, args, id }), line);
        const instruction = str(args.prompt);
        if (DELEGATION_TOOLS.has(tool) && instruction !== undefined) {
          const to = str(args.agent_type) ?? str(args.name);
          this.delegations.set(id, args.mode === 'background');
          sink.event(withBase(base, { type: 'delegation', instruction: boundedText(instruction), id, ...(to !== undefined ? { to } : {}) }), line);
        }
        return;
      }
      case 'permission.completed': {
        // `{requestId, result: {kind}, toolCallId?}` (github/copilot-sdk `session-events.ts`
        // `PermissionCompletedData`, `PermissionResult`): a kind `denied-…` (by rules, by the person,
        // by a hook, by a content exclusion policy, or with nobody to ask) means the call never ran:
        // it failed with that refusal, whatever `tool.execution_complete` says after it (read once).
        const result = isObject(data.result) ? data.result : undefined;
        const kind = str(result?.kind);
        const id = str(data.toolCallId);
        if (kind === undefined || !kind.startsWith('denied') || id === undefined || !this.seen.add(`done:${id}`)) return;
        const why = str(result?.feedback) ?? str(result?.message);
        sink.event(withBase(base, { type: 'tool_result', id, ok: false, error: `Permission denied (${kind})${why !== undefined ? `: ${boundedText(why)}` : ''}` }), line);
        return;
      }
      case 'tool.execution_complete': {
        const id = str(data.toolCallId);
        if (id === undefined) return sink.skipped(line, 'data.toolCallId', 'missing');
        if (!this.seen.add(`done:${id}`)) return;
        if (this.options.successIsUnknown === true && data.success === true && data.result === undefined && !this.delegations.has(id)) {
          sink.event(withBase(base, { type: 'tool_result', id }), line);
          return;
        }
        const outcome = copilotOutcome(data);
        sink.event(withBase(base, { type: 'tool_result', id, ...(outcome.ok ? { ok: true, output: outcome.output } : { ok: false, error: outcome.error }) }), line);
        if (this.delegations.get(id) === false && this.seen.add(`back:${id}`)) {
          this.delegations.delete(id);
          // VS Code's transcripts carry no result text: then the output is unknown, not empty.
          const back = outcome.ok ? (outcome.output !== '' ? { ok: true, output: boundedText(outcome.output) } : { ok: true }) : { ok: false, error: boundedText(outcome.error) };
          sink.event(withBase(base, { type: 'delegation_result', id, ...back }), line);
        }
        return;
      }
      default:
        // Events marked `ephemeral` are the live view's (deltas, model call progress, background
        // tasks): `--output-format json` prints them, the session log never keeps them.
        if (!IGNORED.has(type) && value.ephemeral !== true) unknownType(sink, line, 'type', type);
    }
  }

  finish(): void {}
}

/** The first record of a Copilot event log: `session.start` with the producer or the CLI's version. */
export function isCopilotSessionStart(first: Record<string, unknown>): first is { data: Record<string, unknown> } & Record<string, unknown> {
  return first.type === 'session.start' && isObject(first.data) && (typeof first.data.producer === 'string' || typeof first.data.copilotVersion === 'string');
}

/**
 * The first record of `copilot -p … --output-format json`'s output: an event of the session log's
 * shape (`type`, `data`, `id`, `timestamp`, `parentId`), but no `session.start` (Copilot CLI 1.0.102
 * begins with ephemeral `session.*` notices: seen in its live runs here).
 */
export function isCopilotJsonOutput(first: Record<string, unknown>): boolean {
  return typeof first.type === 'string' && /^(?:session|user|assistant|tool|model)\./.test(first.type) && isObject(first.data) && typeof first.id === 'string' && 'parentId' in first && typeof first.timestamp === 'string';
}

/** A reader of Copilot event logs whose events carry `agent`; `sniff` tells whose log a first record starts. */
export function copilotEventLog(agent: string, sniff: (first: Record<string, unknown>) => boolean, options: CopilotEventLogOptions = {}): JsonlAdapter {
  return { agent, layout: 'jsonl', sniff, decoder: (fallbackSession) => new CopilotEventDecoder(fallbackSession, agent, options) };
}

import { isObject, nonEmptyString as text } from '../../core/guards';
import { exceedsDepth, tooDeepReason } from '../../core/json';
import { objectOfJsonText, silentAllowReply, type HookCall, type HookPhase, type HookProtocol, type HookReply } from '../hook';

/*
 * Cursor's agent hooks (cursor.com/docs/reference/hooks, also cursor.com/docs/hooks; official
 * docs, no source: M). `.cursor/hooks.json`, `{"version": 1, "hooks": {"preToolUse": [{"command":
 * "…", "timeout": 10, "failClosed": false, "matcher": "Shell"}]}}`; project hooks run from the
 * project root in trusted workspaces only; the environment carries `CURSOR_PROJECT_DIR` (and
 * `CLAUDE_PROJECT_DIR` as an alias).
 *
 * Which events: Cursor has a generic layer (`preToolUse` / `postToolUse` / `postToolUseFailure`,
 * every tool: `Shell`, `Read`, `Write`, `Grep`, `Delete`, `Task`, `MCP:<tool>`, with a
 * `tool_use_id`) and older per-kind hooks (`beforeShellExecution`, `beforeMCPExecution`,
 * `beforeReadFile`, `afterShellExecution`, `afterMCPExecution`, `afterFileEdit`). One tool call
 * fires both layers (observed live by a third party on Cursor 3.9.16: L), so a guard on both would
 * record each call twice and halt on the second try: the guardian registers the generic layer
 * only. The per-kind events are still read (a person may register them on a Cursor that predates
 * the generic layer), each mapped to the tool the generic layer names.
 *
 * stdin, every event: `conversation_id`, `generation_id`, `model`, `hook_event_name`,
 * `cursor_version`, `workspace_roots[]`, `user_email`, `transcript_path`; a `session_id` equal to
 * `conversation_id` has been observed (L).
 * - `preToolUse`: `tool_name`, `tool_input` (object), `tool_use_id`, `cwd` (seen empty).
 * - `postToolUse`: the same with `tool_output`, a JSON string whose shape depends on the tool
 *   (`Shell`: `{"output", "exitCode"}`; `Read`: `{"file_path", "content_length"}`, L), `duration`.
 * - `postToolUseFailure`: `error_message`, `failure_type` (`error` | `timeout` |
 *   `permission_denied`), `duration`, `is_interrupt`. A refused call (by any hook, ours included)
 *   is reported here as `permission_denied`: it never ran, so it is no outcome.
 * - `beforeShellExecution` `{command, cwd, sandbox}`; `afterShellExecution` `{command, output,
 *   duration}` (no exit code: the outcome is not known); `beforeMCPExecution` / `afterMCPExecution`
 *   `{tool_name, tool_input (a JSON string), result_json}`; `beforeReadFile` `{file_path, content}`.
 * - `beforeSubmitPrompt` `{prompt, attachments}`, answered `{"continue": false, "user_message"}`.
 *
 * Answers: stdout JSON at the top level, no `hookSpecificOutput`. A refusal is `{"permission":
 * "deny", "user_message", "agent_message"}`; the text observed reaching the model is
 * `user_message` (L), so both carry the reason. An empty answer is no decision: Cursor's own
 * rules apply. Exit 2 also refuses; any other exit, a crash or a timeout lets the call run unless
 * the entry sets `failClosed: true`, which also refuses on an empty answer: the guardian's entry
 * sets it false, since its allow is an empty answer.
 */

const PRE = 'preToolUse';
const POST = ['postToolUse', 'postToolUseFailure'];
const events = { pre: PRE, post: POST, prompt: 'beforeSubmitPrompt' };

/** The per-kind events, as the generic layer would name their tool: what they are read as. */
const KIND_PRE: Readonly<Record<string, string>> = { beforeShellExecution: 'Shell', beforeMCPExecution: 'MCP', beforeReadFile: 'Read' };
const KIND_POST: Readonly<Record<string, string>> = { afterShellExecution: 'Shell', afterMCPExecution: 'MCP', afterFileEdit: 'Write' };

/** The prompt event: `{prompt, attachments}`, refused by `{"continue": false, "user_message"}`. */
const PROMPT = events.prompt;

function session(raw: Record<string, unknown>): string {
  return text(raw.conversation_id) ?? text(raw.session_id) ?? 'unknown-session';
}

/** What a finished call left: a failure's message, or its output (an exit code in it decides, see `postOutcome`). */
function outcome(event: string, raw: Record<string, unknown>): { response?: unknown; error?: string } | undefined {
  if (event === 'postToolUseFailure') {
    // Refused, by a hook or by the person: it never ran.
    if (raw.failure_type === 'permission_denied') return undefined;
    return { error: text(raw.error_message) ?? text(raw.failure_type) ?? 'failed' };
  }
  if (event === 'postToolUse') return raw.tool_output === undefined ? {} : { response: objectOfJsonText(raw.tool_output) };
  if (event === 'afterMCPExecution') return raw.result_json === undefined ? {} : { response: objectOfJsonText(raw.result_json) };
  // afterShellExecution (output, no exit code) and afterFileEdit: the call ran, how it ended is not said.
  return undefined;
}

function parse(raw: unknown): HookCall | { problem: string } {
  if (!isObject(raw)) return { problem: 'stdin: not a JSON object' };
  if (exceedsDepth(raw)) return { problem: `stdin: ${tooDeepReason()}` };
  // No event name: a finished call if it carries an outcome, else one about to run (never "no call": STOP must refuse it).
  const event = text(raw.hook_event_name) ?? (raw.tool_output !== undefined ? 'postToolUse' : raw.error_message !== undefined ? 'postToolUseFailure' : PRE);
  const base = { event, session: session(raw), ...(text(raw.cwd) !== undefined ? { cwd: raw.cwd as string } : {}) };
  const id = text(raw.tool_use_id);
  if (event === PRE || POST.includes(event)) {
    const tool = text(raw.tool_name);
    if (tool === undefined) return { problem: `stdin: ${event} without tool_name` };
    const phase: HookPhase = event === PRE ? 'pre' : 'post';
    const after = phase === 'post' ? outcome(event, raw) : {};
    if (after === undefined) return { ...base, phase: 'other', tool, input: objectOfJsonText(raw.tool_input) };
    return { ...base, phase, tool, input: objectOfJsonText(raw.tool_input), ...(id !== undefined ? { id } : {}), ...after };
  }
  const kind = KIND_PRE[event] ?? KIND_POST[event];
  if (kind !== undefined) {
    const tool = kind === 'MCP' ? `MCP:${text(raw.tool_name) ?? 'unknown'}` : kind;
    const input = kind === 'Shell' ? { command: raw.command, ...(text(raw.cwd) !== undefined ? { cwd: raw.cwd } : {}) } : kind === 'MCP' ? objectOfJsonText(raw.tool_input) : { file_path: raw.file_path };
    if (KIND_PRE[event] !== undefined) return { ...base, phase: 'pre', tool, input };
    const after = outcome(event, raw);
    return after === undefined ? { ...base, phase: 'other', tool, input } : { ...base, phase: 'post', tool, input, ...after };
  }
  if (event === PROMPT) {
    if (typeof raw.prompt !== 'string') return { problem: `stdin: ${PROMPT} without prompt` };
    return { ...base, phase: 'prompt', input: {}, prompt: raw.prompt, ...(text(raw.transcript_path) !== undefined ? { transcript: raw.transcript_path as string } : {}) };
  }
  // The rest (stop, sessionStart, subagentStart, …): no tool call.
  return { ...base, phase: 'other', input: {} };
}

function jsonReply(out: Record<string, unknown>): HookReply {
  return { stdout: `${JSON.stringify(out)}\n`, stderr: '', exitCode: 0 };
}

export const cursorHook: HookProtocol = {
  events,
  projectDirEnv: ['CURSOR_PROJECT_DIR'],
  parse,
  deny: (reason) => jsonReply({ permission: 'deny', user_message: reason, agent_message: reason }),
  // Before a prompt, Cursor reads `continue`, not `permission`.
  denyPrompt: (reason) => jsonReply({ continue: false, user_message: reason }),
  // No decision: an empty answer, so Cursor's own rules (and its prompts to the person) apply.
  allow: silentAllowReply,
  // The project's file: Cursor has no per-user file for one project (`~/.cursor/hooks.json`
  // applies to every project). The timeout is in seconds.
  registration: {
    settingsFile: '.cursor/hooks.json',
    events: [PRE, ...POST, PROMPT],
    timeout: 10,
    layout: 'flat',
    entry: { commandKey: 'command', fields: { type: 'command', timeout: 10, failClosed: false } },
    version: 1,
  },
};

import { isObject, nonEmptyString as text } from '../core/guards';
import { exceedsDepth, tooDeepReason } from '../core/json';
import { shellExitFailed, shellFailure } from './copilotEvents';
import { objectOfJsonText, parseToolHookInput, permissionDenyReply, silentAllowReply, type HookCall, type HookProtocol, type HookRegistration, type HookReply } from './hook';

/*
 * One hook file, two harnesses: `.github/hooks/*.json` is read by GitHub Copilot CLI (and the
 * cloud agent, and VS Code's Agent-Host "Copilot" harness, which runs the CLI's runtime) and by
 * Copilot's Local agent harness in VS Code. Each sends its own payload and reads its own answer,
 * so the guardian registers one entry there that serves both (`hook copilot` and
 * `hook copilot-cli` are the same hook) and tells the callers apart by their payloads.
 *
 * Copilot CLI (docs.github.com "GitHub Copilot hooks reference", github/docs
 * `content/copilot/reference/hooks-reference.md`): files `.github/hooks/*.json`,
 * `{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "…", "timeoutSec": 30}]}}`.
 * - camelCase events (what the guardian registers): stdin `{sessionId, timestamp (epoch ms), cwd,
 *   toolName, toolArgs}`, no event name and no call id; `postToolUse` adds `toolResult
 *   {resultType, textResultForLlm}`, `postToolUseFailure` adds `error`. `toolArgs` is an object,
 *   or a JSON string in some builds. Checked against the hook inputs in real session logs
 *   (`hook.start` events, ../shared/fixtures/real/copilot-cli).
 * - PascalCase events (a configuration someone else wrote): `{hook_event_name, session_id,
 *   timestamp (ISO), cwd, tool_name, tool_input}`, and no `tool_use_id`.
 * - Refusal: stdout `{"permissionDecision": "deny", "permissionDecisionReason": "…"}` at the top
 *   level. Whether the PascalCase dialect also reads Claude Code's `hookSpecificOutput` form is not
 *   documented: that caller gets both. A pre-call hook that crashes or exits non-zero refuses the
 *   call (fail-closed); a timeout lets it run.
 *
 * VS Code's Local harness (microsoft/vscode `src/vs/workbench/contrib/chat/common/promptSyntax/
 * hookSchema.ts`: a file with a numeric `version` is read in the CLI's format, lowerCamelCase
 * events mapped to `PreToolUse` / `PostToolUse`; microsoft/vscode-copilot-chat
 * `src/extension/chat/vscode-node/chatHookService.ts`): stdin `{timestamp (ISO), hook_event_name,
 * session_id, transcript_path, cwd, tool_name, tool_input, tool_use_id}`, after the call
 * `tool_response` (text); between 2026-02-10 and 02-25 the common keys were camelCase
 * `hookEventName` / `sessionId`. `PostToolUse` fires on success only: failures are not reported.
 * Refusal: `hookSpecificOutput.permissionDecision: "deny"` with a matching `hookEventName`
 * (`hookResultProcessor.ts`). A failing or timed-out hook is a warning and the tool runs.
 *
 * Which caller (../shared/docs/vscode-agents.md, 0.4): `toolName` + `toolArgs` is the CLI's
 * camelCase dialect; `tool_use_id`, a `transcript_path` or camelCase common keys beside
 * `tool_name` is VS Code's Local harness; the remaining Claude-style payload, with no call id, is
 * the CLI's PascalCase dialect.
 */

/** The registry ids of the two callers (their folders are `copilot` and `copilot-cli`). */
export const LOCAL_CALLER = 'copilot';
export const CLI_CALLER = 'copilot-cli';

const localEvents = { pre: 'PreToolUse', post: ['PostToolUse', 'PostToolUseFailure'], prompt: 'UserPromptSubmit' };
const CLI_EVENTS = ['preToolUse', 'postToolUse', 'postToolUseFailure', 'userPromptSubmitted', 'permissionRequest'];

/*
 * Ending a run. Copilot CLI ignores `continue: false` and an `interrupt` in a `preToolUse` answer;
 * it ends the run on a `permissionRequest` hook's `{"behavior": "deny", "message", "interrupt":
 * true}` (seen live from 1.0.102, ../shared/docs/live-agents.md). That hook runs after
 * `preToolUse`, only when it gave no decision, with `{hookName: "permissionRequest", sessionId,
 * timestamp, cwd, toolName, toolInput, permissionSuggestions}`, and only for the calls that need a
 * permission: it fired for `bash` even with `--allow-all-tools`, and not for `view` nor `edit` (seen
 * live from 1.0.102: no `permissionRequest` among the hook calls of a `view` loop or an `edit` loop,
 * test/agents/live.test.ts). So a shell
 * call whose refusal should end the run gets no decision at `preToolUse` (its refusal is recorded)
 * and is refused, the run ended, at its permission request; any other call is refused at once, and
 * its run is not ended (the model is asked to end its turn, as Codex's is).
 */
const ENDS_AT_PERMISSION = new Set(['bash', 'powershell']);

/*
 * Prompts. Copilot CLI runs a `userPromptSubmitted` hook with `{sessionId, timestamp, cwd, prompt}`
 * but drops a command hook's output ("`modifiedPrompt` is only honored by SDK programmatic hooks.
 * Command and HTTP config-file `userPromptSubmitted` hooks have their output dropped", github/docs
 * `hooks-reference.md`): it cannot refuse a prompt, which is then left alone. VS Code's Local
 * harness reads the same file's `userPromptSubmitted` as its `UserPromptSubmit` (microsoft/vscode
 * `src/vs/workbench/contrib/chat/common/promptSyntax/hookTypes.ts`, HOOKS_BY_TARGET) and sends its
 * Claude-style payload with `prompt`; a result with a `stopReason` (`{"continue": false,
 * "stopReason"}`, the hooks' common output) aborts the request (microsoft/vscode-copilot-chat
 * `src/extension/intents/node/hookResultProcessor.ts`, HookAbortError): that refuses it.
 */

type Dialect = 'local' | 'cli' | 'cli-pascal';

function dialectOf(raw: Record<string, unknown>): Dialect {
  if (raw.tool_name === undefined && raw.hook_event_name === undefined && raw.hookEventName === undefined) return 'cli';
  // A prompt from VS Code carries no tool: its `transcript_path` (a common key of every VS Code payload)
  // or its 2026-02 camelCase keys tell it; the CLI's PascalCase payload has neither.
  if (raw.tool_name === undefined && typeof raw.prompt === 'string') return typeof raw.transcript_path === 'string' || raw.hookEventName !== undefined || raw.sessionId !== undefined ? 'local' : 'cli-pascal';
  const local = raw.tool_use_id !== undefined || typeof raw.transcript_path === 'string' || raw.hookEventName !== undefined || raw.sessionId !== undefined;
  return local ? 'local' : 'cli-pascal';
}

/*
 * A terminal command's exit code, where VS Code's Local harness gives one. Its `run_in_terminal`
 * result is the terminal's text, and VS Code appends `\n\nCommand exited with code N` to it when
 * the command it saw finish exited with N > 0 (microsoft/vscode
 * `src/vs/workbench/contrib/terminalContrib/chatAgentTools/browser/executeStrategy/
 * richExecuteStrategy.ts` and `basicExecuteStrategy.ts`: `additionalInformation`, joined after the
 * output by `runInTerminalTool.ts`; the same text in VS Code 1.139.1's workbench.js). That text is
 * the hook's `tool_response`. VS Code 1.139.1 never adds it for a command run at its terminal's
 * idle prompt: its sync run skips the `onCommandFinished` of the command whose start marker was
 * current when it began (meant for a command the new one interrupts: microsoft/vscode PR #313414,
 * compared by marker since PR #313579), and at an idle prompt that marker is the new command's own
 * (`executingCommandObject` promotes the command being typed, whose start marker is set at the
 * prompt's end), so the run ends on the idle prompt with no exit code (seen in 1.139.1's terminal
 * log: `onCommandFinished`, then `onDone via idle prompt`, `exitCode undefined`). Such a call's exit
 * code comes from the terminal's shell integration instead, recorded by the extension
 * (`localTerminalCommands` below, src/hook/terminalExit.ts); without it the call is read as one
 * that returned its text, never guessed failed from its words.
 */
const VSCODE_EXIT = /(?:^|\n)Command exited with code (\d+)\s*$/;

/** The Local harness's terminal result that ends with VS Code's non-zero exit line: the error, its output with the exit code said once. */
function localTerminalFailure(raw: Record<string, unknown>): string | undefined {
  if (typeof raw.tool_response !== 'string') return undefined;
  const exit = VSCODE_EXIT.exec(raw.tool_response);
  if (exit === null || Number(exit[1]) === 0) return undefined;
  return `${raw.tool_response.slice(0, exit.index).trimEnd()}\n(exit code ${exit[1]})`;
}

/*
 * Where VS Code's result carries no exit line (VS Code 1.139.1: never, for a command run at its
 * terminal's idle prompt: docs/agents.md "GitHub Copilot in VS Code"), the exit code comes from the
 * terminal's shell integration, which the extension hears of (`window.onDidEndTerminalShellExecution`)
 * and records for the terminals VS Code creates for Copilot's agent (src/vscode/agentTerminalExits.ts).
 * The command a call ran is its `command`, or the one VS Code ran instead and says so at the top of
 * the result: `Note: The tool simplified the command to \`<command>\` (terminal ID=<id>).… This is
 * the output of running that command instead:`, or `Note: The user manually edited the command to
 * \`<command>\` (terminal ID=<id>), and this is the output…` (microsoft/vscode
 * `runInTerminalTool.ts`; the same text in VS Code 1.139.1's workbench.js).
 */
const RAN_INSTEAD = /^Note: The (?:tool simplified|user manually edited) the command to `/;
const TERMINAL_ID = '` (terminal ID=';

/**
 * The command in such a note: what stands between its backtick and the first `\` (terminal ID=…)`
 * whose id ends on its line. Read with `indexOf`, in one pass (an expression for it,
 * `` `([\s\S]*?)` \(terminal ID=[^)\n]*\) ``, backtracks polynomially on a hostile result).
 */
export function ranInstead(response: string): string | undefined {
  const head = RAN_INSTEAD.exec(response);
  if (head === null) return undefined;
  let close = -1;
  let newline = -1;
  for (let at = response.indexOf(TERMINAL_ID, head[0].length); at >= 0; at = response.indexOf(TERMINAL_ID, at + 1)) {
    const id = at + TERMINAL_ID.length;
    // The next `)` and newline after the id's start: found again only once passed (one pass in all).
    if (close < id) close = response.indexOf(')', id);
    if (close < 0) return undefined;
    if (newline < id && newline !== -2) newline = response.indexOf('\n', id);
    if (newline === -1) newline = -2;
    if (newline === -2 || close < newline) return response.slice(head[0].length, at);
  }
  return undefined;
}

/** The commands a finished `run_in_terminal` call of VS Code's Local harness ran: the model's, and the one VS Code says it ran instead. */
function localTerminalCommands(call: HookCall): readonly string[] {
  if (call.caller !== LOCAL_CALLER || call.phase !== 'post' || call.tool !== 'run_in_terminal' || typeof call.input.command !== 'string') return [];
  const instead = typeof call.response === 'string' ? ranInstead(call.response.trimStart()) : undefined;
  return [call.input.command, ...(instead !== undefined ? [instead] : [])].map((c) => c.trim()).filter((c) => c !== '');
}

function parseClaudeStyle(raw: Record<string, unknown>, caller: string): HookCall | { problem: string } {
  const name = text(raw.hook_event_name) ?? text(raw.hookEventName);
  // Event names in either case (`preToolUse` is the CLI's spelling of `PreToolUse`).
  const named = name !== undefined ? [localEvents.pre, ...localEvents.post, localEvents.prompt].find((e) => e.toLowerCase() === name.toLowerCase()) : undefined;
  const call = parseToolHookInput(localEvents, {
    ...raw,
    ...(named !== undefined ? { hook_event_name: named } : name !== undefined ? { hook_event_name: name } : {}),
    ...(raw.session_id === undefined && raw.sessionId !== undefined ? { session_id: raw.sessionId } : {}),
  });
  if ('problem' in call) return call;
  const failed = caller === LOCAL_CALLER && call.phase === 'post' && call.error === undefined ? localTerminalFailure(raw) : undefined;
  return { ...call, caller, ...(failed !== undefined ? { error: failed } : {}) };
}

function parseCamelCase(raw: Record<string, unknown>): HookCall | { problem: string } {
  // The other dialects go through parseToolHookInput, which checks the same.
  if (exceedsDepth(raw)) return { problem: `stdin: ${tooDeepReason()}` };
  if (raw.hookName === 'permissionRequest') {
    const tool = text(raw.toolName);
    if (tool === undefined) return { problem: 'stdin: permissionRequest without toolName' };
    return { phase: 'permission', event: 'permissionRequest', session: text(raw.sessionId) ?? 'unknown-session', tool, input: objectOfJsonText(raw.toolInput), caller: CLI_CALLER, ...(text(raw.cwd) !== undefined ? { cwd: raw.cwd as string } : {}) };
  }
  if (raw.toolName === undefined && typeof raw.prompt === 'string') {
    return { phase: 'prompt', event: 'userPromptSubmitted', session: text(raw.sessionId) ?? 'unknown-session', input: {}, prompt: raw.prompt, caller: CLI_CALLER, ...(text(raw.cwd) !== undefined ? { cwd: raw.cwd as string } : {}) };
  }
  const event = raw.error !== undefined ? 'postToolUseFailure' : raw.toolResult !== undefined ? 'postToolUse' : 'preToolUse';
  const tool = text(raw.toolName);
  if (tool === undefined) return { problem: `stdin: ${event} without toolName` };
  const input = objectOfJsonText(raw.toolArgs);
  const result = isObject(raw.toolResult) ? raw.toolResult : undefined;
  const resultText = typeof result?.textResultForLlm === 'string' ? result.textResultForLlm : '';
  const failed = result !== undefined && ((typeof result.resultType === 'string' && result.resultType !== 'success') || shellExitFailed(resultText));
  const error = typeof raw.error === 'string' ? raw.error : isObject(raw.error) && typeof raw.error.message === 'string' ? raw.error.message : failed ? shellFailure(resultText) || 'failed' : undefined;
  return {
    phase: event === 'preToolUse' ? 'pre' : 'post',
    event,
    session: text(raw.sessionId) ?? 'unknown-session',
    input,
    tool,
    caller: CLI_CALLER,
    ...(text(raw.cwd) !== undefined ? { cwd: raw.cwd as string } : {}),
    ...(result !== undefined && error === undefined ? { response: resultText } : {}),
    ...(error !== undefined ? { error } : {}),
  };
}

/** A call from either harness, tagged with the one that sent it. */
function parseCopilotHookInput(raw: unknown): HookCall | { problem: string } {
  if (!isObject(raw)) return { problem: 'stdin: not a JSON object' };
  const dialect = dialectOf(raw);
  if (dialect === 'cli') return parseCamelCase(raw);
  return parseClaudeStyle(raw, dialect === 'local' ? LOCAL_CALLER : CLI_CALLER);
}

/**
 * Refuses in the dialect the call came in. When it is not known which (stdin could not be read)
 * or not documented (the CLI's PascalCase dialect), both answers in one object: each harness
 * reads its own keys (VS Code takes `hookSpecificOutput`, the CLI the top-level decision).
 */
function denyCopilotCall(reason: string, call?: HookCall): HookReply {
  const top = { permissionDecision: 'deny', permissionDecisionReason: reason };
  const nested = { hookSpecificOutput: { hookEventName: localEvents.pre, permissionDecision: 'deny', permissionDecisionReason: reason } };
  if (call?.caller === LOCAL_CALLER) return permissionDenyReply(localEvents.pre, reason);
  const out = call === undefined || call.event === localEvents.pre ? { ...top, ...nested } : top;
  return { stdout: `${JSON.stringify(out)}\n`, stderr: '', exitCode: 0 };
}

/**
 * The guardian's own file among the repository's hook files, in the CLI's format (VS Code reads
 * it too); `timeoutSec` in seconds. One entry per event serves both callers.
 */
function copilotRegistration(other: string): HookRegistration {
  return {
    settingsFile: '.github/hooks/loop-guardian.json',
    events: CLI_EVENTS,
    timeout: 10,
    layout: 'flat',
    entry: { commandKey: 'bash', fields: { type: 'command', timeoutSec: 10 } },
    windowsKey: 'powershell',
    version: 1,
    failClosed: true,
    sharedWith: [other],
    // Copilot runs every hook file there, not only the guardian's (github/docs hooks-reference).
    alsoReads: '.github/hooks/*.json',
    // The file lives in the repository: there is no per-user hook file of the project that both
    // harnesses read (the CLI's `.github/copilot/settings.local.json` is not read by VS Code).
    // The CLI started in src/ runs the repository top's hooks (seen live, 1.0.102); in a nested
    // repository, that repository's only.
    fromSubfolder: { runs: true, source: "seen live (Copilot CLI 1.0.102): the repository top's .github/hooks/ run from src/" },
  };
}

/** The hook protocol of either harness: the same parse and deny; `other` is the harness sharing its entry. */
export function copilotHookProtocol(other: string, events: HookProtocol['events']): HookProtocol {
  return {
    events,
    projectDirEnv: [],
    parse: parseCopilotHookInput,
    deny: denyCopilotCall,
    allow: silentAllowReply,
    // The run ends only from a permission request (`interrupt: true`); a refusal before the call ends nothing.
    halt: (reason, call): HookReply | undefined => (call?.phase === 'permission' ? { stdout: `${JSON.stringify({ behavior: 'deny', message: reason, interrupt: true })}\n`, stderr: '', exitCode: 0 } : undefined),
    endsLater: (call) => call.phase === 'pre' && call.caller === CLI_CALLER && call.tool !== undefined && ENDS_AT_PERMISSION.has(call.tool),
    // VS Code's Local harness runs PostToolUse only for a call that returned: a call that threw gets
    // none, and Copilot's transcript (the `transcript_path` of every payload) gets
    // `tool.execution_complete {"success": false}`, flushed before the next hook runs
    // (microsoft/vscode-copilot-chat `src/extension/prompts/node/panel/toolCalling.tsx`: the hook
    // after `invokeTool` only, `logToolExecutionComplete(…, false)` in its catch;
    // `chatHookService.ts` `executeHook` awaits `sessionTranscriptService.flush` first; the same in
    // Copilot Chat 0.67.0's dist/extension.js). Seen live: a `read_file` of a missing file.
    failuresInTranscript: true,
    terminalCommands: localTerminalCommands,
    // There a call is named by the model's id, the hooks' `call_4__vscode-<n>` cut at `__vscode-`
    // (`sessionTranscriptService.ts`); the CLI's calls carry no id.
    transcriptCallId: (id) => id.split('__vscode-')[0] as string,
    // Only VS Code's Local harness can refuse a prompt.
    denyPrompt: (reason, call): HookReply | undefined => (call.caller === LOCAL_CALLER ? { stdout: `${JSON.stringify({ continue: false, stopReason: reason })}\n`, stderr: '', exitCode: 0 } : undefined),
    registration: copilotRegistration(other),
  };
}

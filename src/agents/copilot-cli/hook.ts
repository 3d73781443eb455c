import { isObject, nonEmptyString as text } from '../../core/guards';
import { shellExitFailed } from '../copilotEvents';
import { parseToolHookInput, permissionDenyReply, silentAllowReply, type HookCall, type HookProtocol, type HookReply } from '../hook';

/*
 * GitHub Copilot CLI's hooks (docs.github.com "GitHub Copilot hooks reference",
 * github/docs `content/copilot/reference/hooks-reference.md`): files `.github/hooks/*.json`,
 * `{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "…", "timeoutSec": 30}]}}`.
 * stdin (camelCase dialect): `{sessionId, timestamp, cwd, toolName, toolArgs}` — no event name
 * and no call id; `postToolUse` adds `toolResult {resultType, textResultForLlm}`,
 * `postToolUseFailure` adds `error`. `toolArgs` is an object, or a JSON string in some builds.
 * Refusal: stdout `{"permissionDecision": "deny", "permissionDecisionReason": "…"}` at the top
 * level. A pre-call hook that crashes or exits non-zero refuses the call (fail-closed).
 * Checked against the hook inputs recorded in real session logs (`hook.start` events,
 * ../shared/fixtures/real/copilot-cli).
 */

const events = { pre: 'preToolUse', post: ['postToolUse', 'postToolUseFailure'], prompt: 'userPromptSubmitted' };
/**
 * VS Code's Local Copilot harness also runs the hooks of `.github/hooks/*.json` files that carry a
 * numeric `version`, but sends them its own, Claude-style payload (`hook_event_name`, `tool_name`,
 * `tool_input`, `tool_use_id`; microsoft/vscode `hookSchema.ts`, vscode-copilot-chat
 * `chatHookService.ts`): that dialect is read too, and refused the way that harness reads,
 * `hookSpecificOutput.permissionDecision` (`hookResultProcessor.ts`).
 */
const localEvents = { pre: 'PreToolUse', post: ['PostToolUse', 'PostToolUseFailure'], prompt: 'UserPromptSubmit' };

/*
 * Prompts. Copilot CLI runs a `userPromptSubmitted` hook with `{sessionId, timestamp, cwd, prompt}`
 * but drops a command hook's output ("`modifiedPrompt` is only honored by SDK programmatic hooks.
 * Command and HTTP config-file `userPromptSubmitted` hooks have their output dropped", github/docs
 * `hooks-reference.md`): it cannot refuse a prompt, which is then only recorded. VS Code's Local
 * harness reads the same file's `userPromptSubmitted` as its `UserPromptSubmit` (microsoft/vscode
 * `src/vs/workbench/contrib/chat/common/promptSyntax/hookTypes.ts`, HOOKS_BY_TARGET) and sends
 * its Claude-style payload with `prompt`; a result with a `stopReason` (`{"continue": false,
 * "stopReason"}`, the hooks' common output) aborts the request (microsoft/vscode-copilot-chat
 * `src/extension/intents/node/hookResultProcessor.ts`, HookAbortError): that refuses it.
 */

function parse(raw: unknown): HookCall | { problem: string } {
  if (!isObject(raw)) return { problem: 'stdin: not a JSON object' };
  if (raw.tool_name !== undefined || raw.hook_event_name !== undefined) {
    // Event names in either case (`preToolUse` is the CLI's spelling of `PreToolUse`).
    const named = typeof raw.hook_event_name === 'string' ? [localEvents.pre, ...localEvents.post, localEvents.prompt].find((e) => e.toLowerCase() === (raw.hook_event_name as string).toLowerCase()) : undefined;
    return parseToolHookInput(localEvents, named !== undefined ? { ...raw, hook_event_name: named } : raw);
  }
  if (raw.toolName === undefined && typeof raw.prompt === 'string') {
    return { phase: 'prompt', event: events.prompt, session: text(raw.sessionId) ?? 'unknown-session', input: {}, prompt: raw.prompt, ...(text(raw.cwd) !== undefined ? { cwd: raw.cwd as string } : {}) };
  }
  const event = raw.error !== undefined ? 'postToolUseFailure' : raw.toolResult !== undefined ? 'postToolUse' : 'preToolUse';
  const tool = text(raw.toolName);
  if (tool === undefined) return { problem: `stdin: ${event} without toolName` };
  let input: Record<string, unknown> = {};
  if (isObject(raw.toolArgs)) input = raw.toolArgs;
  else if (typeof raw.toolArgs === 'string') {
    try {
      const parsed = JSON.parse(raw.toolArgs) as unknown;
      input = isObject(parsed) ? parsed : { input: parsed };
    } catch {
      input = { input: raw.toolArgs };
    }
  }
  const result = isObject(raw.toolResult) ? raw.toolResult : undefined;
  const resultText = typeof result?.textResultForLlm === 'string' ? result.textResultForLlm : '';
  const failed = result !== undefined && ((typeof result.resultType === 'string' && result.resultType !== 'success') || shellExitFailed(resultText));
  const error = typeof raw.error === 'string' ? raw.error : isObject(raw.error) && typeof raw.error.message === 'string' ? raw.error.message : failed ? resultText || 'failed' : undefined;
  return {
    phase: event === 'preToolUse' ? 'pre' : 'post',
    event,
    session: text(raw.sessionId) ?? 'unknown-session',
    input,
    tool,
    ...(text(raw.cwd) !== undefined ? { cwd: raw.cwd as string } : {}),
    ...(result !== undefined && error === undefined ? { response: resultText } : {}),
    ...(error !== undefined ? { error } : {}),
  };
}

export const copilotCliHook: HookProtocol = {
  events,
  projectDirEnv: [],
  parse,
  // VS Code's Local harness (the Claude-style dialect, `PreToolUse`) reads Claude Code's answer.
  deny: (reason, call): HookReply => (call?.event === localEvents.pre ? permissionDenyReply(localEvents.pre, reason) : { stdout: `${JSON.stringify({ permissionDecision: 'deny', permissionDecisionReason: reason })}\n`, stderr: '', exitCode: 0 }),
  allow: silentAllowReply,
  // Only VS Code's Local harness (its dialect names `UserPromptSubmit`) can refuse a prompt.
  denyPrompt: (reason, call): HookReply | undefined => (call.event === localEvents.prompt ? { stdout: `${JSON.stringify({ continue: false, stopReason: reason })}\n`, stderr: '', exitCode: 0 } : undefined),
  // The guardian's own file among the repository's hook files; timeoutSec in seconds.
  registration: { settingsFile: '.github/hooks/loop-guardian.json', events: ['preToolUse', 'postToolUse', 'postToolUseFailure', 'userPromptSubmitted'], timeout: 10, layout: 'flat', failClosed: true },
};

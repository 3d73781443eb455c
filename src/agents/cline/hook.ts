import { isObject, nonEmptyString as text } from '../../core/guards';
import { exceedsDepth, tooDeepReason } from '../../core/json';
import { textResultOutcome } from '../clineFamily';
import type { HookCall, HookPhase, HookProtocol, HookReply } from '../hook';

/*
 * Cline's hooks (cline/cline `.clinerules/hooks/README.md`, `apps/vscode/src/core/hooks/` and
 * `proto/cline/hooks.proto` @21cb8d25, v4.1.13; since Cline 3.36, with the "Enable Hooks" setting,
 * on by default in 4.x `hooksEnabled`):
 * - a hook is an executable file named after its event, without extension, in the workspace's
 *   `.clinerules/hooks/` or the user's `~/Documents/Cline/Hooks/` (on Windows a `<Event>.ps1` run by
 *   PowerShell: `core/hooks/utils.ts` `resolveExistingHookPath`); all of them run, concurrently;
 * - stdin: `{clineVersion, hookName, timestamp, taskId, workspaceRoots, userId, model, preToolUse:
 *   {toolName, parameters}}`, after the call `postToolUse: {toolName, parameters, result, success,
 *   executionTimeMs}`; `parameters` maps names to strings (the SDK bundle JSON-encodes the rest:
 *   `apps/vscode/src/sdk/hooks-adapter.ts`);
 * - stdout: `{"cancel": true, "errorMessage": "…"}` refuses, and stops the whole task, not just the
 *   call (legacy `ToolHookUtils` calls `cancelTask()` @v3.89.2; the SDK bundle stops the run): there
 *   is no per-call refusal. `{"cancel": false}`, or no JSON with exit 0, lets the call run. A non-zero
 *   exit without JSON, a crash, or the 30 s timeout let it run too (fail-open); exit code 2 means
 *   nothing to Cline, so `--deny-with exit2` does not refuse there;
 * - the hook runs in the workspace root; which root of a multi-root workspace is not said, so the
 *   guardian's hook file names its own workspace (`--workspace`, from where it lies).
 */

/*
 * Cline 3.x CLI (the SDK runtime, seen live from 3.0.65, ../shared/docs/live-agents.md): the same
 * files, but `hookName` is the runtime's own name of the event, `"tool_call"` before a call and
 * `"tool_result"` after it (`"agent_start"` at a task's start), and beside the legacy
 * `preToolUse` / `postToolUse` objects it sends `tool_call: {id, name, input}` and `tool_result:
 * {id, name, input, output: [{query, result, error?, success}], durationMs}`, where `input` keeps
 * its types (the legacy `parameters` are strings) and `success: false` marks a failed command.
 */
const events = { pre: 'PreToolUse', post: ['PostToolUse'] };
const PRE_NAMES = new Set(['PreToolUse', 'tool_call']);
const POST_NAMES = new Set(['PostToolUse', 'tool_result']);

/** A failed part of a 3.x `tool_result.output`: its text, or undefined when every part succeeded. */
function failedOutput(output: unknown): string | undefined {
  if (!Array.isArray(output)) return undefined;
  const failed = output.filter((o): o is Record<string, unknown> => isObject(o) && (o.success === false || (typeof o.error === 'string' && o.error !== '')));
  if (failed.length === 0) return undefined;
  return failed.map((o) => (typeof o.result === 'string' && o.result.trim() !== '' ? o.result : typeof o.error === 'string' ? o.error : 'failed')).join('\n').trim();
}

function parse(raw: unknown): HookCall | { problem: string } {
  if (!isObject(raw)) return { problem: 'stdin: not a JSON object' };
  if (exceedsDepth(raw)) return { problem: `stdin: ${tooDeepReason()}` };
  const name = text(raw.hookName) ?? (isObject(raw.preToolUse) ? events.pre : isObject(raw.postToolUse) ? 'PostToolUse' : undefined);
  if (name === undefined) return { problem: 'stdin: no hookName (not a Cline hook call)' };
  const phase: HookPhase = PRE_NAMES.has(name) ? 'pre' : POST_NAMES.has(name) ? 'post' : 'other';
  const event = phase === 'pre' ? events.pre : phase === 'post' ? 'PostToolUse' : name;
  const legacy = phase === 'pre' ? raw.preToolUse : phase === 'post' ? raw.postToolUse : undefined;
  const current = phase === 'pre' ? raw.tool_call : phase === 'post' ? raw.tool_result : undefined;
  const session = text(raw.taskId) ?? 'unknown-session';
  const roots = Array.isArray(raw.workspaceRoots) ? raw.workspaceRoots.filter((r): r is string => typeof r === 'string' && r !== '') : [];
  const cwd = roots[0] !== undefined ? { cwd: roots[0] } : {};
  if (phase === 'other') return { phase, event, session, input: {}, ...cwd };
  if (!isObject(legacy) && !isObject(current)) return { problem: `stdin: ${name} without ${phase === 'pre' ? 'tool_call or preToolUse' : 'tool_result or postToolUse'}` };
  const tool = (isObject(current) ? text(current.name) : undefined) ?? (isObject(legacy) ? text(legacy.toolName) : undefined);
  if (tool === undefined) return { problem: `stdin: ${name} without a tool name` };
  const input = isObject(current) && isObject(current.input) ? current.input : isObject(legacy) && isObject(legacy.parameters) ? legacy.parameters : {};
  const id = isObject(current) ? text(current.id) : undefined;
  const base = { phase, event, session, tool, input, ...cwd, ...(id !== undefined ? { id } : {}) };
  if (phase === 'pre') return base;
  // After the call: a 3.x result's failed parts; else `success: false` when the tool threw; a command that failed says so in its result text.
  const failed = isObject(current) ? failedOutput(current.output) : undefined;
  if (failed !== undefined) return { ...base, error: failed || 'failed' };
  const data = isObject(legacy) ? legacy : {};
  const result = typeof data.result === 'string' ? data.result : '';
  const outcome = data.success === false ? { ok: false as const, error: result || 'failed' } : textResultOutcome(result);
  return { ...base, ...(outcome.ok ? { response: result } : { error: outcome.error }) };
}

export const clineHook: HookProtocol = {
  events,
  projectDirEnv: [],
  parse,
  // Cline has no refusal of one call: cancelling stops the task, and the person sees the message.
  deny: (reason): HookReply => ({ stdout: `${JSON.stringify({ cancel: true, errorMessage: reason })}\n`, stderr: '', exitCode: 0 }),
  denyEnds: true,
  allow: (note): HookReply => ({ stdout: '{"cancel":false}\n', stderr: note !== undefined ? `${note}\n` : '', exitCode: 0 }),
  // One file per event in the workspace's hook folder; Cline's timeout is its own (30 s), not written.
  registration: {
    settingsFile: '.clinerules/hooks',
    events: ['PreToolUse', 'PostToolUse'],
    timeout: 30,
    layout: 'script',
    // `<workspace root>/.clinerules/hooks` (@cline/shared dist/storage `resolveHooksConfigSearchPaths`);
    // `-c src` ran the repository top's hook files (seen live, 3.0.65), a nested repository's not.
    fromSubfolder: { runs: true, source: "@cline/shared storage resolveHooksConfigSearchPaths(workspaceRoot): <root>/.clinerules/hooks; seen live (3.0.65): -c src/ runs the repository top's hooks" },
  },
};

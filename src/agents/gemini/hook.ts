import { isObject } from '../../core/guards';
import { parseToolHookInput, postOutcome, userNotice, type HookCall, type HookProtocol, type HookReply, type Outcome } from '../hook';
import { shellFailure } from './shell';

const events = { pre: 'BeforeTool', post: ['AfterTool'], prompt: 'BeforeAgent' };

/*
 * Gemini CLI's hooks (`.gemini/settings.json`, `BeforeTool` / `AfterTool` / `BeforeAgent`): stdin
 * carries `session_id`, `cwd`, `hook_event_name`, `tool_name`, `tool_input`, after the call
 * `tool_response`, before a turn `prompt`; it refuses a call on `{"decision": "deny", "reason"}`,
 * and `{"continue": false, "stopReason"}` ends the whole run (no model request after it: seen live,
 * ../shared/docs/live-agents.md); it parses stdout as JSON, so an allow is `{}`.
 * `GEMINI_PROJECT_DIR` (and, for compatibility, `CLAUDE_PROJECT_DIR`) names the project.
 *
 * A shell command that fails is still a `success` to the hook: its `tool_response.llmContent`
 * tells the exit code (shell.ts).
 */

function geminiOutcome(call: HookCall): Outcome {
  const r = call.response;
  const text = isObject(r) && typeof r.llmContent === 'string' ? r.llmContent : typeof r === 'string' ? r : undefined;
  const failure = text === undefined ? undefined : shellFailure(text);
  return failure !== undefined ? { ok: false, error: failure } : postOutcome(call);
}

const reply = (out: unknown): HookReply => ({ stdout: `${JSON.stringify(out)}\n`, stderr: '', exitCode: 0 });

export const geminiHook: HookProtocol = {
  events,
  projectDirEnv: ['GEMINI_PROJECT_DIR', 'CLAUDE_PROJECT_DIR'],
  parse: (raw) => parseToolHookInput(events, raw),
  deny: (reason): HookReply => reply({ decision: 'deny', reason }),
  allow: (note): HookReply => ({ stdout: '{}\n', stderr: note !== undefined ? `${note}\n` : '', exitCode: 0 }),
  // `systemMessage` is shown to the person (geminicli.com/docs/hooks/reference, "Common Output Fields").
  halt: (reason): HookReply => reply({ decision: 'deny', reason, continue: false, stopReason: reason, systemMessage: userNotice(reason) }),
  outcome: geminiOutcome,
  // BeforeAgent runs before the prompt is sent; `continue: false` there ends the run before any request.
  denyPrompt: (reason): HookReply => reply({ decision: 'deny', reason, continue: false, stopReason: reason, systemMessage: userNotice(reason) }),
  // No matcher matches every tool; the timeout is in milliseconds. Gemini CLI has no per-user file
  // for one project (`~/.gemini/settings.json` applies to every project): the project's file it is.
  registration: {
    settingsFile: '.gemini/settings.json',
    events: ['BeforeTool', 'AfterTool', 'BeforeAgent'],
    timeout: 10_000,
    // Only in the folder it starts in: google-gemini/gemini-cli packages/cli/src/config/settings.ts,
    // `loadSettings(workspaceDir = process.cwd())` reads `new Storage(workspaceDir).getWorkspaceSettingsPath()`
    // (packages/core/src/config/storage.ts: `<targetDir>/.gemini/settings.json`), no folder above it
    // (0.61.0's bundle: chunk-2YTYPKEZ.js `_doLoadSettings`). Seen live: started in src/, no hook ran.
    fromSubfolder: { runs: false, source: 'gemini-cli packages/cli/src/config/settings.ts loadSettings(process.cwd()): <cwd>/.gemini/settings.json only; seen live (0.61.0)' },
  },
};

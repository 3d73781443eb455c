import { parseToolHookInput, type HookProtocol, type HookReply } from '../hook';

const events = { pre: 'BeforeTool', post: ['AfterTool'] };

/**
 * Gemini CLI's hooks (`.gemini/settings.json`, `BeforeTool` / `AfterTool`): stdin carries
 * `session_id`, `cwd`, `hook_event_name`, `tool_name`, `tool_input`; it refuses on
 * `{"decision": "deny", "reason"}` and parses stdout as JSON, so an allow is `{}`.
 * `GEMINI_PROJECT_DIR` (and, for compatibility, `CLAUDE_PROJECT_DIR`) names the project.
 */
export const geminiHook: HookProtocol = {
  events,
  projectDirEnv: ['GEMINI_PROJECT_DIR', 'CLAUDE_PROJECT_DIR'],
  parse: (raw) => parseToolHookInput(events, raw),
  deny: (reason): HookReply => ({ stdout: `${JSON.stringify({ decision: 'deny', reason })}\n`, stderr: '', exitCode: 0 }),
  allow: (note): HookReply => ({ stdout: '{}\n', stderr: note !== undefined ? `${note}\n` : '', exitCode: 0 }),
  // No matcher matches every tool; the timeout is in milliseconds. Gemini CLI has no per-user file
  // for one project (`~/.gemini/settings.json` applies to every project): the project's file it is.
  registration: { settingsFile: '.gemini/settings.json', events: ['BeforeTool', 'AfterTool'], timeout: 10_000 },
};

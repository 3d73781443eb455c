import { parseToolHookInput, permissionDenyReply, silentAllowReply, type HookProtocol } from '../hook';

const events = { pre: 'PreToolUse', post: ['PostToolUse'] };

/**
 * Codex CLI's hooks (`.codex/hooks.json`): the same stdin fields and the same
 * `hookSpecificOutput.permissionDecision: "deny"` answer as Claude Code; it sets no project
 * variable, so the workspace is found from the call's `cwd`.
 */
export const codexHook: HookProtocol = {
  events,
  projectDirEnv: [],
  parse: (raw) => parseToolHookInput(events, raw),
  deny: (reason) => permissionDenyReply(events.pre, reason),
  allow: silentAllowReply,
  // No matcher matches every tool; the timeout is in seconds. Codex has no per-user file for one
  // project (`~/.codex/hooks.json` applies to every project): the project's file it is.
  registration: { settingsFile: '.codex/hooks.json', events: ['PreToolUse', 'PostToolUse'], timeout: 10 },
};

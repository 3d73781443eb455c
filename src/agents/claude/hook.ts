import { blockPromptReply, parseToolHookInput, permissionDenyReply, permissionHaltReply, silentAllowReply, type HookProtocol } from '../hook';

const events = { pre: 'PreToolUse', post: ['PostToolUse', 'PostToolUseFailure'], prompt: 'UserPromptSubmit' };

/**
 * Claude Code's hooks (docs.claude.com, "Hooks reference"): stdin carries `session_id`, `cwd`,
 * `hook_event_name`, `tool_name`, `tool_input`, `tool_use_id`, and after the call `tool_response`
 * (PostToolUse) or `error` (PostToolUseFailure). A call is refused by
 * `hookSpecificOutput.permissionDecision: "deny"`; an empty answer leaves the decision to its own
 * permission rules. `CLAUDE_PROJECT_DIR` names the project.
 * `UserPromptSubmit` runs before a prompt reaches the model, with `prompt` and `transcript_path`;
 * `{"decision": "block", "reason"}` keeps the prompt from being processed and shows the reason to
 * the person (same reference, "UserPromptSubmit decision control"). Matchers do not apply to it.
 */
export const claudeHook: HookProtocol = {
  events,
  projectDirEnv: ['CLAUDE_PROJECT_DIR'],
  parse: (raw) => parseToolHookInput(events, raw),
  deny: (reason) => permissionDenyReply(events.pre, reason),
  allow: silentAllowReply,
  halt: (reason) => permissionHaltReply(events.pre, reason),
  // Copilot CLI also runs the hooks of `.claude/settings.local.json`, with a Claude-style payload
  // that has no `transcript_path` (Claude Code always sends one), and sets `COPILOT_CLI=1` in its
  // hooks' environment (both seen live from 1.0.102, ../shared/docs/live-agents.md).
  foreignCaller: (env, call) => (env.COPILOT_CLI === '1' && call.transcript === undefined ? 'copilot-cli' : undefined),
  denyPrompt: (reason) => blockPromptReply(reason),
  // An Edit whose `old_string` is not in the file is rejected while Claude Code checks its input
  // (`<tool_use_error>String to replace not found in file.`), before any hook: seen live from
  // 2.1.328, no hook call at all for 8 such Edits (test/agents/live.test.ts). Its transcript holds
  // them, under the `tool_use` ids its hooks get as `tool_use_id`.
  // A result line: `{"type":"user","message":{"content":[{"type":"tool_result",…,"tool_use_id":"toolu_…"}]}}`.
  unseenInTranscript: { resultIds: /"tool_use_id":"([^"\\]+)"/g },
  // "*" matches every tool; the prompt event takes no matcher; the timeout is in seconds. The
  // per-user project file: "not checked in, useful for personal preferences … Claude Code will
  // configure git to ignore `.claude/settings.local.json` when it is created"
  // (code.claude.com/docs/en/settings, "Settings files"). Earlier versions wrote the shared
  // `.claude/settings.json`.
  registration: {
    settingsFile: '.claude/settings.local.json',
    events: ['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'UserPromptSubmit'],
    matcher: '*',
    unmatched: ['UserPromptSubmit'],
    timeout: 10,
    migrateFrom: ['.claude/settings.json'],
    gitIgnored: true,
    // Seen live (2.1.328, a closed binary): started in src/, it runs the root's hook (it reads the
    // project settings of its repository's top), with CLAUDE_PROJECT_DIR naming src/ (the hook
    // finds the project upward from it, src/hook/pipeline.ts `namedProject`); started in a nested
    // repository, it runs that repository's hooks only.
    // The after-call records decide nothing: they run in the background, so that a call costs one
    // blocking hook start, not two (code.claude.com/docs/en/hooks, "Run hooks in the background":
    // `"async": true`; 2.1.328's settings schema: "If true, hook runs in background without
    // blocking"). The next PreToolUse settles from the transcript a call whose record is not in yet.
    background: ['PostToolUse', 'PostToolUseFailure'],
    fromSubfolder: { runs: true, source: "seen live (2.1.328): the repository top's .claude/settings.local.json runs from src/; CLAUDE_PROJECT_DIR is src/" },
  },
};

import { blockPromptReply, parseToolHookInput, permissionDenyReply, silentAllowReply, type HookProtocol } from '../hook';
import { codexCallArgs } from './patch';

const events = { pre: 'PreToolUse', post: ['PostToolUse'], prompt: 'UserPromptSubmit' };

/**
 * Codex CLI's hooks (`.codex/hooks.json`): the same stdin fields and the same
 * `hookSpecificOutput.permissionDecision: "deny"` answer as Claude Code; it sets no project
 * variable, so the workspace is found from the call's `cwd`.
 *
 * What it does not do, seen live (../shared/docs/live-agents.md) and in openai/codex
 * `codex-rs/hooks/src/events/pre_tool_use.rs`, `post_tool_use.rs`:
 * - end a run mid-turn: `continue: false` in a PreToolUse answer is unsupported, and an answer
 *   holding it is dropped whole, its deny included (the call then runs). So there is no `halt`:
 *   a refusal is a deny, every time, and the model reads it.
 * - say how a call ended: PostToolUse's `tool_response` is the command's output text alone; the
 *   exit code ("Process exited with code N") is in the rollout (`transcript_path`), written once
 *   the hook has returned. The outcome is read from there at the session's next hook call, the
 *   turn's end (`Stop`) included.
 * `UserPromptSubmit` `{"decision": "block", "reason"}` keeps a prompt from reaching the model
 * (`user_prompt_submit.rs`): STOP refuses a run before its first request.
 */
export const codexHook: HookProtocol = {
  events,
  projectDirEnv: [],
  // An apply_patch's `{command: <patch>}` read as the patch and its files, as the rollout's is (./patch.ts).
  parse: (raw) => {
    const call = parseToolHookInput(events, raw);
    return 'problem' in call ? call : { ...call, input: codexCallArgs(call.tool, call.input) };
  },
  deny: (reason) => permissionDenyReply(events.pre, reason),
  allow: silentAllowReply,
  denyPrompt: (reason) => blockPromptReply(reason),
  outcomeInTranscript: true,
  settleEvents: ['Stop'],
  // No matcher matches every tool; the timeout is in seconds. Codex has no per-user file for one
  // project (`~/.codex/hooks.json` applies to every project): the project's file it is.
  registration: {
    settingsFile: '.codex/hooks.json',
    events: ['PreToolUse', 'PostToolUse', 'UserPromptSubmit', 'Stop'],
    timeout: 10,
    unmatched: ['UserPromptSubmit', 'Stop'],
    windowsKey: 'command_windows',
    // openai/codex docs/config.md: a project's `.codex/` is searched "from the current directory up
    // to the project root" (`project_root_markers`, default `.git`): from a subfolder it is found,
    // from a nested repository (its own .git) not. Seen live with 0.169.0.
    fromSubfolder: { runs: true, source: 'openai/codex docs/config.md: .codex/ searched from the cwd up to the project root (project_root_markers, default .git); seen live (0.169.0)' },
  },
};

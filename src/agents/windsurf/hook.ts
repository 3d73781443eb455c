import { isObject, nonEmptyString as text } from '../../core/guards';
import { exceedsDepth, tooDeepReason } from '../../core/json';
import { exit2Reply, silentAllowReply, type HookCall, type HookProtocol } from '../hook';

/*
 * Windsurf's Cascade hooks (docs.windsurf.com/windsurf/cascade/hooks, "Cascade Hooks"; official
 * docs, no source: M). Files merged system → user (`~/.codeium/windsurf/hooks.json`) → workspace
 * `.windsurf/hooks.json`: `{"hooks": {"pre_run_command": [{"command": "…", "show_output": true,
 * "working_directory": "…"}]}}`, no version, no matcher, no timeout. The command runs from the
 * workspace root (the root of the repository being worked on, in a multi-repo workspace).
 *
 * stdin: `{agent_action_name, trajectory_id (the conversation), execution_id (one agent turn, not
 * one call), timestamp (ISO), tool_info}`, where `tool_info` is:
 * - `pre_run_command` / `post_run_command`: `{command_line, cwd}`: the same after the command
 *   ran, so how a command ended is not known;
 * - `pre_read_code` / `post_read_code`: `{file_path}` (a folder when Cascade reads one whole);
 * - `pre_write_code` / `post_write_code`: `{file_path, edits: [{old_string, new_string}]}`;
 * - `pre_mcp_tool_use`: `{mcp_server_name, mcp_tool_name, mcp_tool_arguments}`;
 *   `post_mcp_tool_use` adds `mcp_result` ("after Cascade successfully invokes an MCP tool");
 * - `pre_user_prompt`: `{user_prompt}` — a prompt, not a tool call.
 * No call ids: a finished call is paired with the oldest open one of the same tool and arguments.
 * Post events other than the MCP one say nothing of the outcome: they are not recorded (the call
 * stays without an outcome, which is what is known of it). Third-party adapters read an
 * `exit_code` / `output` on `post_run_command` (L, not in the docs): taken when present.
 *
 * Answers: exit codes only. Exit 2 from a pre-hook blocks the action and "the Cascade agent will
 * see the error message from stderr"; 0 or any other code lets it proceed. So the guardian refuses
 * with exit 2 and the reason on stderr, and never exits 2 otherwise.
 */

/** The kinds of action with a hook before and after: each call's tool is named after its kind, Cascade's own tool names not being in the payload. */
const KINDS = ['run_command', 'read_code', 'write_code', 'mcp_tool_use'];

const PRE_EVENTS = KINDS.map((t) => `pre_${t}`);
const POST_EVENTS = KINDS.map((t) => `post_${t}`);
const events = { pre: 'pre_run_command', post: POST_EVENTS };

/** The call a payload's `tool_info` describes, under the tool the event names. */
function callOf(kind: string, info: Record<string, unknown>): { tool: string; input: Record<string, unknown> } {
  if (kind === 'run_command') return { tool: kind, input: { command_line: info.command_line, ...(info.cwd !== undefined ? { cwd: info.cwd } : {}) } };
  if (kind === 'mcp_tool_use') {
    const server = text(info.mcp_server_name) ?? 'unknown';
    const name = text(info.mcp_tool_name) ?? 'unknown';
    return { tool: `mcp:${server}/${name}`, input: isObject(info.mcp_tool_arguments) ? info.mcp_tool_arguments : info.mcp_tool_arguments === undefined ? {} : { input: info.mcp_tool_arguments } };
  }
  const { file_path, edits } = info;
  return { tool: kind, input: { file_path, ...(kind === 'write_code' && edits !== undefined ? { edits } : {}) } };
}

/** How a finished call ended, when the payload says. */
function outcomeOf(kind: string, info: Record<string, unknown>): { response?: unknown; error?: string } | undefined {
  if (kind === 'mcp_tool_use' && info.mcp_result !== undefined) return { response: info.mcp_result };
  // Not documented (L): kept only when a build sends it.
  if (kind === 'run_command' && typeof info.exit_code === 'number') {
    const output = typeof info.output === 'string' ? info.output : '';
    return info.exit_code === 0 ? { response: output } : { error: output || `exit code ${info.exit_code}` };
  }
  return undefined;
}

function parse(raw: unknown): HookCall | { problem: string } {
  if (!isObject(raw)) return { problem: 'stdin: not a JSON object' };
  if (exceedsDepth(raw)) return { problem: `stdin: ${tooDeepReason()}` };
  const event = text(raw.agent_action_name);
  if (event === undefined) return { problem: 'stdin: no agent_action_name' };
  const session = text(raw.trajectory_id) ?? 'unknown-session';
  const info = isObject(raw.tool_info) ? raw.tool_info : {};
  const cwd = text(info.cwd);
  const base = { event, session, ...(cwd !== undefined ? { cwd } : {}) };
  const pre = PRE_EVENTS.includes(event);
  if (!pre && !POST_EVENTS.includes(event)) {
    // `pre_user_prompt`, `post_cascade_response`, `post_setup_worktree`…: no tool call. Prompts are
    // not taken from Cascade yet: `pre_user_prompt` (`tool_info.user_prompt`, refused by the same
    // exit 2) would map here as a prompt call.
    return { ...base, phase: 'other', input: {} };
  }
  const kind = event.replace(/^(pre|post)_/, '');
  const { tool, input } = callOf(kind, info);
  if (pre) return { ...base, phase: 'pre', tool, input };
  const after = outcomeOf(kind, info);
  return after === undefined ? { ...base, phase: 'other', tool, input } : { ...base, phase: 'post', tool, input, ...after };
}

export const windsurfHook: HookProtocol = {
  events,
  projectDirEnv: [],
  parse,
  // Cascade reads no JSON decision: exit 2 blocks, and the agent reads stderr.
  deny: exit2Reply,
  allow: silentAllowReply,
  // The workspace's file: Windsurf has no per-user file for one workspace (its user file
  // applies to every workspace). The events that can be refused, and the two after-events that
  // may tell an outcome (`post_read_code` / `post_write_code` never do). No timeout option exists;
  // `show_output` off keeps the hook's notes out of the Cascade panel (a refusal's reason still
  // reaches the agent).
  registration: {
    settingsFile: '.windsurf/hooks.json',
    events: [...PRE_EVENTS, 'post_run_command', 'post_mcp_tool_use'],
    timeout: 0,
    layout: 'flat',
    entry: { commandKey: 'command', fields: { show_output: false } },
  },
};

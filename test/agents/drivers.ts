import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { AGENT_PACKAGES, ensureAgent, type AgentPackage } from './install';
import type { Step, WireFormat } from './model';
import type { Sandbox } from './sandbox';

/*
 * How each agent's own CLI is run headless against the scripted model, offline, as
 * ../shared/docs/live-agents.md verified it: where it is pointed at the model, the trust a user
 * gives it, and the tool it runs shell commands with.
 */

export interface LiveAgent {
  readonly pkg: AgentPackage;
  readonly format: WireFormat;
  /** Settings, auth and trust the agent needs in the sandbox before a run (what a user sets up once). */
  prepare(sb: Sandbox, modelUrl: string): void;
  /** The environment and arguments of one headless run of a prompt, started in `cwd` (the workspace or a folder in it). */
  command(sb: Sandbox, modelUrl: string, prompt: string, cwd: string): { args: string[]; env: NodeJS.ProcessEnv };
  /** A shell command as this agent's model asks for it, from the tools the agent offered. */
  shell(command: string, tools: readonly string[]): Step;
  /** An edit replacing `from` with `to` in a file, with the agent's own edit tool (Codex's: `apply_patch`, offered by the model's catalog entry). */
  edit?(file: string, from: string, to: string, tools: readonly string[]): Step;
  /** A subagent (a delegated task), with the agent's own tool for it. */
  delegate?(task: string, tools: readonly string[]): Step;
  /** A read of a file with the agent's own read-only tool, not its shell; undefined where the suite does not drive one. */
  read?(file: string, tools: readonly string[]): Step;
}

function pick(tools: readonly string[], names: readonly string[], agent: string): string {
  const found = names.find((n) => tools.includes(n));
  if (found === undefined) throw new Error(`${agent}: none of ${names.join(', ')} among the offered tools ${tools.join(', ')}`);
  return found;
}

function writeJson(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

export const claude: LiveAgent = {
  pkg: AGENT_PACKAGES.claude!,
  format: 'anthropic',
  prepare: () => undefined,
  command: (sb, url, prompt) => ({
    args: ['-p', prompt, '--permission-mode', 'bypassPermissions', '--output-format', 'stream-json', '--verbose'],
    env: { ...sb.env, ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-ant-live-test', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1', IS_SANDBOX: '1' },
  }),
  shell: (command, tools) => ({ tool: pick(tools, ['Bash'], 'Claude Code'), args: { command, description: 'Run it' } }),
  edit: (file, from, to, tools) => ({ tool: pick(tools, ['Edit'], 'Claude Code'), args: { file_path: file, old_string: from, new_string: to } }),
  delegate: (task, tools) => ({ tool: pick(tools, ['Agent', 'Task'], 'Claude Code'), args: { description: 'Subtask', prompt: task, subagent_type: 'general-purpose' } }),
};

export const gemini: LiveAgent = {
  pkg: AGENT_PACKAGES.gemini!,
  format: 'gemini',
  prepare: (sb) => {
    writeJson(path.join(sb.home, '.gemini', 'settings.json'), { security: { auth: { selectedType: 'gemini-api-key' } }, general: { disableAutoUpdate: true }, privacy: { usageStatisticsEnabled: false } });
    // The user trusts the folder (Gemini runs a project's hooks only in a trusted folder).
    writeJson(path.join(sb.home, '.gemini', 'trustedFolders.json'), { [sb.ws]: 'TRUST_FOLDER' });
  },
  command: (sb, url, prompt) => ({
    args: ['-p', prompt, '--yolo', '--output-format', 'stream-json', '--model', 'gemini-2.5-flash'],
    env: { ...sb.env, GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: 'live-test', GEMINI_CLI_NO_RELAUNCH: 'true' },
  }),
  shell: (command, tools) => ({ tool: pick(tools, ['run_shell_command'], 'Gemini CLI'), args: { command, description: 'Run it' } }),
  edit: (file, from, to, tools) => ({ tool: pick(tools, ['replace'], 'Gemini CLI'), args: { file_path: file, old_string: from, new_string: to, instruction: 'Fix it' } }),
  delegate: (task, tools) => ({ tool: pick(tools, ['invoke_agent'], 'Gemini CLI'), args: { agent_name: 'generalist', prompt: task } }),
};

/** A TOML basic string. */
const toml = (v: string) => JSON.stringify(v);

/**
 * The scripted model's entry in Codex's model catalog (`model_catalog_json`), so that Codex offers
 * it the tools it offers its own models. Codex 0.169 decides on `apply_patch` by the model's
 * catalog entry, not by a config key: `apply_patch_tool_type` "freeform" (a `custom` tool taking
 * the patch as raw text) or "function"; a model it does not know (no entry) gets none, and
 * `include_apply_patch_tool = true` or `[features] apply_patch_freeform = true` add nothing (tried
 * live with 0.169.0: the offered tools were the same). openai/codex
 * `codex-rs/protocol/src/openai_models.rs` (`ModelInfo`, `ApplyPatchToolType`); the entry copies
 * the shape of the catalog 0.169 ships for gpt-5.5 (`shell_type` "shell_command", freeform
 * `apply_patch`), without its websocket preference (the scripted model speaks HTTP).
 */
function codexCatalog(): unknown {
  return {
    models: [
      {
        slug: 'scripted',
        display_name: 'Scripted',
        description: 'The live suite\'s scripted model',
        default_reasoning_level: 'medium',
        supported_reasoning_levels: [{ effort: 'medium', description: 'Medium' }],
        shell_type: 'shell_command',
        visibility: 'list',
        supported_in_api: true,
        priority: 1,
        upgrade: null,
        base_instructions: 'You are a coding agent.',
        supports_reasoning_summaries: false,
        support_verbosity: false,
        default_verbosity: null,
        apply_patch_tool_type: 'freeform',
        truncation_policy: { mode: 'tokens', limit: 10000 },
        supports_parallel_tool_calls: false,
        context_window: 272000,
        experimental_supported_tools: [],
      },
    ],
  };
}

/**
 * A patch in Codex's own format (openai/codex `codex-rs/apply-patch/apply_patch_tool_instructions.md`:
 * `*** Begin Patch` / `*** Update File: <path>` / `@@` / `-old` `+new` lines / `*** End Patch`).
 */
export function codexPatch(file: string, from: string, to: string): string {
  const lines = (text: string, sign: string) => text.split('\n').map((l) => `${sign}${l}`);
  return ['*** Begin Patch', `*** Update File: ${file}`, '@@', ...lines(from, '-'), ...lines(to, '+'), '*** End Patch'].join('\n');
}

export const codex: LiveAgent = {
  pkg: AGENT_PACKAGES.codex!,
  format: 'responses',
  prepare: (sb, url) => {
    const home = path.join(sb.home, '.codex');
    mkdirSync(home, { recursive: true });
    // The provider (wire_api "responses": "chat" is refused by 0.169), no retries (a refused
    // request must not be re-sent and counted twice), and the project trusted, as `codex exec
    // --trust` would save it (a project's .codex/ loads only in a trusted project).
    writeFileSync(
      path.join(home, 'config.toml'),
      [
        'model = "scripted"',
        'model_provider = "mock"',
        'approval_policy = "never"',
        'sandbox_mode = "danger-full-access"',
        `model_catalog_json = ${toml(path.join(home, 'models.json'))}`,
        '',
        '[model_providers.mock]',
        'name = "mock"',
        `base_url = ${toml(`${url}/v1`)}`,
        'wire_api = "responses"',
        'env_key = "MOCK_API_KEY"',
        'request_max_retries = 0',
        'stream_max_retries = 0',
        '',
        `[projects.${toml(sb.ws)}]`,
        'trust_level = "trusted"',
        '',
      ].join('\n'),
    );
    writeJson(path.join(home, 'models.json'), codexCatalog());
  },
  command: (sb, _url, prompt) => ({
    // Hook trust for this headless run, the flag Codex offers automation that vets its hooks.
    args: ['exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', prompt],
    env: { ...sb.env, CODEX_HOME: path.join(sb.home, '.codex'), MOCK_API_KEY: 'live-test' },
  }),
  shell: (command, tools) => {
    const tool = pick(tools, ['exec_command', 'shell', 'local_shell'], 'Codex');
    return tool === 'exec_command' ? { tool, args: { cmd: command } } : { tool, args: { command: ['bash', '-lc', command] } };
  },
  // Its freeform apply_patch: a `custom_tool_call` whose input is the patch itself.
  edit: (file, from, to, tools) => {
    const patch = codexPatch(file, from, to);
    return { tool: pick(tools, ['apply_patch'], 'Codex'), args: { input: patch }, freeform: patch };
  },
};

export const copilotCli: LiveAgent = {
  pkg: AGENT_PACKAGES['copilot-cli']!,
  format: 'chat',
  prepare: () => undefined,
  command: (sb, url, prompt) => ({
    args: ['-p', prompt, '--allow-all-tools', '--no-auto-update', '--output-format', 'json'],
    // Its built-in offline mode with a provider of one's own: no sign-in. COPILOT_ALLOW_ALL also
    // trusts the folder, so that the repository's hooks load in -p mode.
    env: {
      ...sb.env,
      COPILOT_HOME: path.join(sb.home, '.copilot'),
      COPILOT_OFFLINE: 'true',
      COPILOT_PROVIDER_BASE_URL: `${url}/v1`,
      COPILOT_PROVIDER_TYPE: 'openai',
      COPILOT_PROVIDER_API_KEY: 'live-test',
      COPILOT_MODEL: 'scripted',
      COPILOT_AUTO_UPDATE: 'false',
      COPILOT_ALLOW_ALL: 'true',
    },
  }),
  shell: (command, tools) => ({ tool: pick(tools, ['bash', 'shell', 'powershell'], 'Copilot CLI'), args: { command, description: 'Run it', mode: 'sync', initial_wait: 30 } }),
  edit: (file, from, to, tools) => ({ tool: pick(tools, ['edit'], 'Copilot CLI'), args: { path: file, old_str: from, new_str: to } }),
  read: (file, tools) => ({ tool: pick(tools, ['view'], 'Copilot CLI'), args: { path: file } }),
  delegate: (task, tools) => ({ tool: pick(tools, ['task'], 'Copilot CLI'), args: { description: 'Subtask', prompt: task, agent_type: 'general-purpose' } }),
};

export const cline: LiveAgent = {
  pkg: AGENT_PACKAGES.cline!,
  format: 'chat',
  prepare: (sb, url) => {
    // What a user does once: `cline auth` for an OpenAI-compatible provider (it writes
    // ~/.cline/data/settings/providers.json).
    const r = spawnSync(ensureAgent(AGENT_PACKAGES.cline!), ['auth', '-p', 'openai', '-k', 'live-test', '-m', 'scripted', '-b', `${url}/v1`], { env: sb.env, cwd: sb.ws, encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`cline auth failed (${r.status}): ${r.stderr}${r.stdout}`);
  },
  command: (sb, _url, prompt, cwd) => ({ args: ['--json', '--auto-approve', 'true', '-c', cwd, prompt], env: sb.env }),
  shell: (command, tools) => ({ tool: pick(tools, ['execute_command', 'run_commands', 'bash'], 'Cline'), args: { command, requires_approval: false } }),
  edit: (file, from, to, tools) => ({ tool: pick(tools, ['editor', 'replace_in_file'], 'Cline'), args: { command: 'str_replace', path: file, old_str: from, new_str: to } }),
  delegate: (task, tools) => ({ tool: pick(tools, ['spawn_agent', 'new_task'], 'Cline'), args: { task, systemPrompt: 'Do it.' } }),
};

export const DRIVERS: Readonly<Record<string, LiveAgent>> = { claude, gemini, codex, 'copilot-cli': copilotCli, cline };

/**
 * Qwen Code, watched only (the guardian registers no hook for it): an OpenAI-compatible provider
 * by its environment and `--auth-type openai` (../shared/docs/live-agents.md).
 */
export const qwen: LiveAgent = {
  pkg: AGENT_PACKAGES.qwen!,
  format: 'chat',
  prepare: () => undefined,
  command: (sb, url, prompt) => ({
    args: [prompt, '--yolo', '--output-format', 'stream-json', '--auth-type', 'openai'],
    env: { ...sb.env, OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: 'live-test', OPENAI_MODEL: 'scripted' },
  }),
  shell: (command, tools) => ({ tool: pick(tools, ['run_shell_command', 'shell'], 'Qwen Code'), args: { command, description: 'Run it' } }),
};

/**
 * opencode and Kilo CLI 7.x (its fork), watched only (neither runs hook commands): an
 * OpenAI-compatible provider of their own in a config file named by `OPENCODE_CONFIG` /
 * `KILO_CONFIG` (../shared/docs/live-agents.md); their data in `~/.local/share/<name>/`.
 */
function openCodeFamily(id: 'opencode' | 'kilo', configEnv: string, runArgs: readonly string[]): LiveAgent {
  const configFile = (sb: Sandbox) => path.join(sb.home, `${id}-provider.json`);
  return {
    pkg: AGENT_PACKAGES[id]!,
    format: 'chat',
    prepare: (sb, url) =>
      writeJson(configFile(sb), {
        provider: { mock: { npm: '@ai-sdk/openai-compatible', name: 'Scripted', options: { baseURL: `${url}/v1`, apiKey: 'live-test' }, models: { scripted: { name: 'Scripted' } } } },
        autoupdate: false,
        share: 'disabled',
      }),
    command: (sb, _url, prompt) => ({ args: ['run', '--format', 'json', ...runArgs, '-m', 'mock/scripted', prompt], env: { ...sb.env, [configEnv]: configFile(sb) } }),
    shell: (command, tools) => ({ tool: pick(tools, ['bash'], id), args: { command, description: 'Run it' } }),
    edit: (file, from, to, tools) => ({ tool: pick(tools, ['edit'], id), args: { filePath: file, oldString: from, newString: to } }),
  };
}

export const openCode = openCodeFamily('opencode', 'OPENCODE_CONFIG', []);
export const kiloCli = openCodeFamily('kilo', 'KILO_CONFIG', ['--auto']);

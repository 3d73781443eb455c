import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { HOOK_AGENTS } from '../../../src/agents';
import { clineHook } from '../../../src/agents/cline/hook';
import { codexHookTrust } from '../../../src/agents/codex/trust';
import { copilotCliHook } from '../../../src/agents/copilot-cli/hook';
import { geminiHook } from '../../../src/agents/gemini/hook';
import { geminiHookTrust } from '../../../src/agents/gemini/trust';
import { outcomeOf, type HookCall } from '../../../src/agents/hook';
import { hookCommand } from '../../../src/agents/hookSettings';
import type { TrustScope } from '../../../src/agents';
import { isWithin } from '../../../src/state/workspace';
import { cli, hookLogLines, runHook, tmpdir, write } from '../helpers';

/*
 * The shapes the agents' own CLIs sent and wrote when run live (test/agents, ../shared/docs/live-agents.md),
 * each held here as a fast test of the reader that takes it, so that a change to a reader fails
 * here before the live suite runs.
 */

const parsed = (r: ReturnType<typeof geminiHook.parse>): HookCall => {
  if ('problem' in r) throw new Error(r.problem);
  return r;
};

describe('the agents as their own CLIs speak (shapes seen live)', () => {
  it('Gemini CLI 0.61: a failing shell command is a "success" whose llmContent says Exit Code: 1; its PGID is no part of the failure', () => {
    const after = (pgid: number, code = 1) =>
      parsed(
        geminiHook.parse({
          session_id: 'g',
          hook_event_name: 'AfterTool',
          tool_name: 'run_shell_command',
          tool_input: { command: 'npm run build-missing' },
          tool_response: { llmContent: `<untrusted_context>\nOutput: npm error Missing script: "build-missing"\n${code !== 0 ? `Exit Code: ${code}\n` : ''}Process Group PGID: ${pgid}\n</untrusted_context>`, returnDisplay: 'npm error Missing script: "build-missing"' },
        }),
      );
    const a = outcomeOf(geminiHook, after(5979));
    const b = outcomeOf(geminiHook, after(6006));
    assert.equal(a.ok, false);
    assert.deepEqual(a, b);
    assert.doesNotMatch((a as { error: string }).error, /PGID|untrusted_context/);
    assert.equal(outcomeOf(geminiHook, after(7000, 0)).ok, true);
  });

  it('Gemini CLI: the refusal that ends the run holds both the deny and continue:false; BeforeAgent under STOP ends it before any request', async () => {
    const halt = JSON.parse(geminiHook.halt?.('why') .stdout ?? '{}') as Record<string, unknown>;
    assert.deepEqual([halt.decision, halt.continue, halt.stopReason], ['deny', false, 'why']);
    const ws = await tmpdir();
    await write(ws, '.github/guardian/STOP_ALL', 'STOP 2026-11-25T10:00:00Z\n');
    const r = await runHook(ws, 'gemini', { session_id: 'g', hook_event_name: 'BeforeAgent', prompt: 'build it' });
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    assert.equal(out.continue, false);
    assert.match(String(out.stopReason), /STOP_ALL is set to STOP/);
  });

  it('Copilot CLI 1.0.102: "<shellId: N completed with exit code 1>" is a failure, the shell id no part of it', () => {
    const post = (id: number) =>
      parsed(copilotCliHook.parse({ sessionId: 's', timestamp: 1, cwd: '/p', toolName: 'bash', toolArgs: { command: 'npm run build-missing' }, toolResult: { resultType: 'success', textResultForLlm: `npm error Missing script: "build-missing"\n<shellId: ${id} completed with exit code 1>` } }));
    const a = post(0);
    const b = post(5);
    assert.equal(a.error, b.error);
    assert.match(a.error ?? '', /exit code 1/);
    assert.doesNotMatch(a.error ?? '', /shellId/);
    assert.equal(post(3).phase, 'post');
    const ok = parsed(copilotCliHook.parse({ sessionId: 's', timestamp: 1, cwd: '/p', toolName: 'bash', toolArgs: { command: 'ls' }, toolResult: { resultType: 'success', textResultForLlm: 'a\n<shellId: 2 completed with exit code 0>' } }));
    assert.equal(ok.error, undefined);
  });

  it('Cline CLI 3.0.65: hookName "tool_call" / "tool_result" with typed input and output parts are a call and its failure', () => {
    const common = { clineVersion: '', timestamp: '2026-11-25T22:15:45.819Z', taskId: 'conv_1', workspaceRoots: ['/p'], agent_id: 'a', parent_agent_id: null };
    const pre = parsed(clineHook.parse({ ...common, hookName: 'tool_call', iteration: 1, tool_call: { id: 'call_1', name: 'run_commands', input: { command: 'npm run build-missing', requires_approval: false } }, preToolUse: { toolName: 'run_commands', parameters: { command: 'npm run build-missing', requires_approval: 'false' } } }));
    assert.deepEqual([pre.phase, pre.tool, pre.id, pre.input.requires_approval, pre.session, pre.cwd], ['pre', 'run_commands', 'call_1', false, 'conv_1', '/p']);
    const output = [{ query: 'npm run build-missing', result: '[Command exited with code 1]\n\n[stderr]\nnpm error Missing script: "build-missing"\n', error: 'Command exited with code 1', success: false }];
    const post = parsed(clineHook.parse({ ...common, hookName: 'tool_result', tool_result: { id: 'call_1', name: 'run_commands', input: { command: 'npm run build-missing' }, output, durationMs: 365 } }));
    assert.equal(post.phase, 'post');
    assert.match(post.error ?? '', /Missing script/);
    const fine = parsed(clineHook.parse({ ...common, hookName: 'tool_result', tool_result: { id: 'call_2', name: 'run_commands', input: { command: 'ls' }, output: [{ query: 'ls', result: 'a', success: true }] } }));
    assert.equal(fine.error, undefined);
    assert.equal(parsed(clineHook.parse({ ...common, hookName: 'agent_start', taskStart: {} })).phase, 'other');
  });

  it('the registered hook command means the same when Gemini CLI expands $NAME and ${NAME:-default} in it first (google-gemini/gemini-cli envVarResolver.ts), whatever the environment holds', async () => {
    // Gemini's rule: $NAME and ${NAME} are replaced by the variable when it is set, ${NAME:-d} by d when it is not; others stay.
    const geminiExpand = (text: string, env: NodeJS.ProcessEnv) =>
      text.replace(/\$(?:(\w+)|{([^}]+?)(?::-([^}]*))?})/g, (m, a: string | undefined, b: string | undefined, d: string | undefined) => {
        const name = a ?? b ?? '';
        const v = env[name];
        return typeof v === 'string' ? v : d !== undefined ? d : m;
      });
    const ws = await tmpdir();
    const home = await tmpdir('lg-home-');
    await cli(['init', 'gemini', '--workspace', ws], { env: { HOME: home, LOOP_GUARDIAN_HOME: '' } });
    await write(ws, '.github/guardian/STOP_ALL', 'STOP 2026-11-25T10:00:00Z\n');
    const hostile = { HOME: home, l: '/nowhere', cli: 'x', node: 'y', LOOP_GUARDIAN_HOME: undefined, 1: 'z' } as NodeJS.ProcessEnv;
    const command = hookCommand('gemini', geminiHook);
    for (const env of [hostile, { HOME: home }]) {
      const expanded = geminiExpand(command, env);
      const r = spawnSync('/bin/sh', ['-c', expanded], { input: JSON.stringify({ session_id: 'g', cwd: ws, hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', tool_input: { command: 'ls' } }), cwd: ws, encoding: 'utf8', env: { PATH: process.env.PATH, ...env } });
      assert.match(r.stdout, /STOP_ALL is set to STOP/, `${expanded}\n${r.stderr}`);
    }
    // Every agent's command: no variable of its own, only HOME and LOOP_GUARDIAN_HOME.
    for (const a of HOOK_AGENTS) {
      const names = [...hookCommand(a.id, a.hook).matchAll(/\$\{?(\w+)/g)].map((m) => m[1]);
      assert.deepEqual([...new Set(names)].sort(), ['HOME', 'LOOP_GUARDIAN_HOME'], a.id);
    }
  });

  it('Copilot CLI running Claude Code\'s hook file (COPILOT_CLI=1, no transcript_path): one guardian decision per call where its own entry is in place; its call, recorded as its own, where not', async () => {
    const ws = await tmpdir();
    await cli(['init', 'claude', '--workspace', ws]);
    // As Copilot CLI 1.0.102 sent it to the hooks of .claude/settings.local.json (seen live).
    const fromCopilot = { hook_event_name: 'PreToolUse', session_id: 'cp-9', timestamp: '2026-11-25T22:34:09.209Z', cwd: ws, tool_name: 'Bash', tool_input: { command: 'echo hi' } };
    const env = { COPILOT_CLI: '1' };
    await runHook(ws, 'claude', fromCopilot, [], { env });
    assert.deepEqual(await fs.readdir(path.join(ws, '.tmp/current/logs')), ['hook-copilot-cli-cp-9.jsonl'], 'recorded as Copilot CLI\'s');
    await cli(['init', 'copilot-cli', '--workspace', ws]);
    const again = await runHook(ws, 'claude', { ...fromCopilot, session_id: 'cp-10' }, [], { env });
    assert.deepEqual([again.code, again.stdout], [0, '']);
    assert.deepEqual(await fs.readdir(path.join(ws, '.tmp/current/logs')), ['hook-copilot-cli-cp-9.jsonl'], 'its own entry decides: nothing recorded twice');
    // Under STOP it is refused here too (STOP first, whoever calls).
    await write(ws, '.github/guardian/STOP_ALL', 'STOP 2026-11-25T10:00:00Z\n');
    assert.match((await runHook(ws, 'claude', fromCopilot, [], { env })).stdout, /STOP_ALL is set to STOP/);
    // Claude Code itself (its transcript_path), even run from a Copilot shell, is Claude Code.
    await cli(['clear', '--workspace', ws]);
    await runHook(ws, 'claude', { ...fromCopilot, session_id: 'cl-1', transcript_path: path.join(ws, 't.jsonl'), tool_use_id: 'toolu_1' }, [], { env });
    assert.ok((await fs.readdir(path.join(ws, '.tmp/current/logs'))).includes('hook-claude-cl-1.jsonl'));
  });

  it('Codex: a call whose outcome is not in the rollout yet stays open, and is settled at the turn\'s Stop', async () => {
    const ws = await tmpdir();
    const rollout = path.join(ws, 'rollout.jsonl');
    const line = (type: string, payload: unknown) => `${JSON.stringify({ timestamp: '2026-11-25T22:10:35.000Z', type, payload })}\n`;
    await fs.writeFile(rollout, line('session_meta', { id: 'cx', cwd: ws }));
    const base = { session_id: 'cx', cwd: ws, transcript_path: rollout, model: 'm', tool_name: 'Bash', tool_input: { command: 'make' }, tool_use_id: 'c1' };
    await runHook(ws, 'codex', { ...base, hook_event_name: 'PreToolUse' });
    await runHook(ws, 'codex', { ...base, hook_event_name: 'PostToolUse', tool_response: 'make: *** No rule to make target\n' });
    assert.equal((await hookLogLines(ws)).filter((e) => e.type === 'tool_result').length, 0, 'nothing recorded after the call: the rollout has not got it yet');
    await fs.appendFile(rollout, line('response_item', { type: 'function_call_output', call_id: 'c1', output: 'Process exited with code 2\nOutput:\nmake: *** No rule to make target\n' }));
    await runHook(ws, 'codex', { session_id: 'cx', cwd: ws, transcript_path: rollout, hook_event_name: 'Stop', model: 'm', stop_hook_active: false });
    const results = (await hookLogLines(ws)).filter((e) => e.type === 'tool_result');
    assert.deepEqual(results.map((r) => [r.id, r.ok]), [['c1', false]]);
  });
});

describe('what keeps a registered hook from running, from the agents\' own settings', () => {
  const scope = async (files: Record<string, string>): Promise<TrustScope> => {
    const home = await tmpdir('lg-home-');
    const root = await tmpdir();
    for (const [rel, text] of Object.entries(files)) await write(home, rel, text.replace(/ROOT/g, root));
    return { root, home, env: {}, readText: (f) => fs.readFile(f, 'utf8').catch(() => undefined), realPath: (f) => fs.realpath(f).catch(() => f), within: isWithin };
  };

  it('Codex: the project and the hook untrusted, each named with its fix; trusted in config.toml (as Codex saves it), nothing', async () => {
    const none = await codexHookTrust(await scope({}));
    assert.equal(none.length, 2);
    assert.match(none[0]?.cause ?? '', /trusted project/);
    assert.match(none[1]?.fix ?? '', /\/hooks/);
    const projectOnly = await codexHookTrust(await scope({ '.codex/config.toml': 'model = "x"\n\n[projects."ROOT"]\ntrust_level = "trusted"\n' }));
    assert.equal(projectOnly.length, 1);
    assert.match(projectOnly[0]?.cause ?? '', /not trusted/);
    const both = await scope({ '.codex/config.toml': '[projects."ROOT"]\ntrust_level = "trusted"\n\n[hooks.state."ROOT/.codex/hooks.json:pre_tool_use:0:0"]\ntrusted_hash = "sha256:abc"\n' });
    assert.deepEqual(await codexHookTrust(both), []);
    // A folder above the project, trusted, covers it.
    const parent = await scope({});
    await write(parent.home, '.codex/config.toml', `[projects."${path.dirname(parent.root)}"]\ntrust_level = "trusted"\n[hooks.state."${parent.root}/.codex/hooks.json:pre_tool_use:1:0"]\ntrusted_hash = "sha256:1"\n`);
    assert.deepEqual(await codexHookTrust(parent), []);
  });

  it('Gemini CLI: the longest rule decides (TRUST_PARENT stands for its parent); DO_NOT_TRUST and no rule are named; folder trust off needs none', async () => {
    assert.equal((await geminiHookTrust(await scope({}))).length, 1);
    assert.deepEqual(await geminiHookTrust(await scope({ '.gemini/trustedFolders.json': '{"ROOT": "TRUST_FOLDER"}' })), []);
    assert.deepEqual(await geminiHookTrust(await scope({ '.gemini/trustedFolders.json': '{"ROOT/sub": "TRUST_PARENT"}' })), []);
    const denied = await geminiHookTrust(await scope({ '.gemini/trustedFolders.json': '{"/": "TRUST_FOLDER", "ROOT": "DO_NOT_TRUST"}' }));
    assert.match(denied[0]?.cause ?? '', /not trusted/);
    assert.deepEqual(await geminiHookTrust(await scope({ '.gemini/settings.json': '{"security": {"folderTrust": {"enabled": false}}}' })), []);
  });
});

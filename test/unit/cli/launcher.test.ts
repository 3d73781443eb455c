import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { HOOK_AGENTS } from '../../../src/agents';
import { hookCommand, STOP_WITHOUT_GUARDIAN } from '../../../src/agents/hookSettings';
import { hookClientPath, hookClientScript, installLauncher, launcherPath, launcherScript, refreshLauncher, windowsHookCommand } from '../../../src/state/launcher';
import { extensionLauncherTarget } from '../../../src/vscode/launcher';
import { CLI, cli, tmpdir, write } from '../helpers';

/*
 * The per-user launcher (`$LOOP_GUARDIAN_HOME/bin/loop-guardian`): what the registered hook
 * commands run, so that a committed settings file works on any machine and after any update.
 */

/** Runs a shell command line the way an agent runs a hook: stdin in, stdout, stderr and the exit code out. */
function sh(command: string, input: string, env: NodeJS.ProcessEnv, cwd: string) {
  const r = spawnSync('/bin/sh', ['-c', command], { input, env: { ...process.env, ...env }, cwd, encoding: 'utf8', timeout: 20_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, error: r.error };
}

describe('the per-user launcher', () => {
  it('init creates it (mode 0755) under $LOOP_GUARDIAN_HOME, pointing at this install; a launcher pointing at a removed install is refreshed', async () => {
    const home = await tmpdir('lg-home-');
    const ws = await tmpdir();
    const env = { LOOP_GUARDIAN_HOME: home };
    const first = await cli(['init', 'codex', '--workspace', ws], { env });
    assert.equal(first.code, 0, first.stderr);
    const file = path.join(home, 'bin', 'loop-guardian');
    assert.match(first.stdout, new RegExp(`Created the launcher ${file}: it starts ${await fs.realpath(CLI)}`));
    assert.equal((await fs.stat(file)).mode & 0o777, 0o755);
    const version = await cli(['--version']);
    const viaLauncher = spawnSync(file, ['--version'], { encoding: 'utf8' });
    assert.equal(viaLauncher.stdout, version.stdout);
    // An extension update (or a moved checkout) left it pointing at an install that is gone.
    await installLauncher({ cli: '/nowhere/old-version/dist/cli.js' }, env);
    const again = await cli(['init', 'codex', '--workspace', ws], { env });
    assert.match(again.stdout, /already runs the hook/);
    assert.match(again.stdout, /Updated the launcher/);
    assert.match(await fs.readFile(file, 'utf8'), new RegExp(`cli='${(await fs.realpath(CLI)).replace(/[/.]/g, '\\$&')}'`));
    assert.match((await cli(['init', 'codex', '--workspace', ws], { env })).stdout, /Checked the launcher/);
  });

  it('the extension refreshes an existing launcher and creates none; an unchanged one is not rewritten', async () => {
    const home = await tmpdir('lg-home-');
    const env = { LOOP_GUARDIAN_HOME: home };
    const target = extensionLauncherTarget('/ext/loop-guardian-0.2.0');
    assert.deepEqual(target, { cli: '/ext/loop-guardian-0.2.0/dist/cli.js', node: process.execPath });
    assert.equal(await refreshLauncher(target, env), undefined);
    await assert.rejects(fs.stat(launcherPath(env)));
    await installLauncher(extensionLauncherTarget('/ext/loop-guardian-0.1.0'), env);
    const refreshed = await refreshLauncher(target, env);
    assert.deepEqual([refreshed?.changed, refreshed?.created], [true, false]);
    assert.equal(await fs.readFile(launcherPath(env), 'utf8'), launcherScript({ ...target, client: hookClientPath(env) }));
    assert.equal(await fs.readFile(hookClientPath(env), 'utf8'), hookClientScript());
    const before = (await fs.stat(launcherPath(env))).mtimeMs;
    await new Promise((r) => setTimeout(r, 20));
    assert.equal((await refreshLauncher(target, env))?.changed, false);
    assert.equal((await fs.stat(launcherPath(env))).mtimeMs, before);
  });

  it('where the launcher is missing (a teammate without the guardian, a fresh clone), every agent\'s registered command lets the call run with its own "no decision", but STOP still wins: the agent\'s own refusal', async function () {
    // About 60 shells, each reading STOP_ALL with head, tr and grep: seconds on a loaded machine.
    this.timeout(120_000);
    const ws = await tmpdir();
    const empty = await tmpdir('lg-home-');
    const payload = (agent: (typeof HOOK_AGENTS)[number]) => JSON.stringify({ hook_event_name: agent.hook.events.pre, tool_name: 'Bash', tool_input: { command: 'ls' }, session_id: 's' });
    for (const [text, stops] of [
      ['STOP 2026-11-23T10:00:00Z\nreason: the team stopped\n', true],
      ['\uFEFF\n  stop\r\n', true],
      ['CLEAR 2026-11-23T10:00:00Z\n', false],
      ['PAUSE 2026-11-23T10:00:00Z\n', false],
      ['STOPPED\n', false],
      ['CLEAR x\nSTOP y\n', false],
    ] as const) {
      await write(ws, '.github/guardian/STOP_ALL', text);
      for (const agent of HOOK_AGENTS) {
        const r = sh(hookCommand(agent.id, agent.hook), payload(agent), { LOOP_GUARDIAN_HOME: empty, CLAUDE_PROJECT_DIR: ws }, ws);
        const expected = stops ? (agent.hook.halt?.(STOP_WITHOUT_GUARDIAN) ?? agent.hook.deny(STOP_WITHOUT_GUARDIAN)) : agent.hook.allow();
        assert.deepEqual([r.code, r.stdout], [expected.exitCode, expected.stdout], `${agent.id} under ${JSON.stringify(text)}`);
      }
    }
    // From a subfolder: the STOP_ALL at the top of the repository.
    await write(ws, '.github/guardian/STOP_ALL', 'STOP 2026-11-23T10:00:00Z\n');
    spawnSync('git', ['init', '-q'], { cwd: ws });
    await fs.mkdir(path.join(ws, 'pkg', 'a'), { recursive: true });
    const deep = sh(hookCommand('claude', HOOK_AGENTS[0]!.hook), '{}', { LOOP_GUARDIAN_HOME: empty }, path.join(ws, 'pkg', 'a'));
    assert.match(deep.stdout, /STOP_ALL is set to STOP/);
    // From a nested repository (its own git, a STOP_ALL of its own saying CLEAR): the enclosing project's STOP (issue 32 item 9).
    await fs.mkdir(path.join(ws, 'vendor', 'lib'), { recursive: true });
    spawnSync('git', ['init', '-q'], { cwd: path.join(ws, 'vendor', 'lib') });
    await write(path.join(ws, 'vendor', 'lib'), '.github/guardian/STOP_ALL', 'CLEAR 2026-11-23T10:00:00Z\n');
    const nested = sh(hookCommand('claude', HOOK_AGENTS[0]!.hook), '{}', { LOOP_GUARDIAN_HOME: empty }, path.join(ws, 'vendor', 'lib'));
    assert.match(nested.stdout, /STOP_ALL is set to STOP/);
    await write(ws, '.github/guardian/STOP_ALL', 'CLEAR 2026-11-23T10:00:00Z\n');
    assert.equal(sh(hookCommand('claude', HOOK_AGENTS[0]!.hook), '{}', { LOOP_GUARDIAN_HOME: empty }, path.join(ws, 'vendor', 'lib')).stdout, '');
    // The call is read to its end before the exit: an agent writing a large one never meets a closed pipe (EPIPE).
    const large = JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Write', tool_input: { content: 'x'.repeat(2 * 1024 * 1024) } });
    const big = sh(hookCommand('claude', HOOK_AGENTS[0]!.hook), large, { LOOP_GUARDIAN_HOME: empty }, ws);
    assert.deepEqual([big.code, big.error], [0, undefined]);
    // Without the variable, the default place under $HOME: missing there too.
    const r = sh(hookCommand('claude', HOOK_AGENTS[0]!.hook), '{}', { LOOP_GUARDIAN_HOME: '', HOME: empty }, ws);
    assert.deepEqual([r.code, r.stdout], [0, '']);
  });

  it('a launcher whose install is gone lets every hook call run (exit 0, the agent\'s idle answer); used as a CLI it says what to do', async () => {
    const home = await tmpdir('lg-home-');
    const env = { LOOP_GUARDIAN_HOME: home };
    await installLauncher({ cli: '/nowhere/dist/cli.js', node: process.execPath }, env);
    const ws = await tmpdir();
    for (const agent of HOOK_AGENTS) {
      const r = sh(hookCommand(agent.id, agent.hook), JSON.stringify({ tool_name: 'Bash', tool_input: { content: 'x'.repeat(1024 * 1024) } }), env, ws);
      assert.deepEqual([r.code, r.stdout, r.error], [0, agent.hook.allow().stdout, undefined], agent.id);
    }
    const direct = spawnSync(launcherPath(env), ['scan'], { encoding: 'utf8' });
    assert.equal(direct.status, 1);
    assert.match(direct.stderr, /cannot start \/nowhere\/dist\/cli\.js.*run loop-guardian init again/);
  });

  it('finds a runtime where the agent has no node on its PATH: the recorded node, else the editor run as Node', async () => {
    const home = await tmpdir('lg-home-');
    const env = { LOOP_GUARDIAN_HOME: home };
    const ws = await tmpdir();
    const noNode = await tmpdir('lg-path-');
    const cli = await fs.realpath(CLI);
    const expect = spawnSync(process.execPath, [cli, '--version'], { encoding: 'utf8' }).stdout;
    await installLauncher({ cli, node: process.execPath }, env);
    assert.equal(sh(`/bin/sh ${launcherPath(env)} --version`, '', { ...env, PATH: noNode }, ws).stdout, expect);
    // The extension's target inside the editor: its Electron run with ELECTRON_RUN_AS_NODE (this Node stands in for it).
    await installLauncher({ cli, electron: process.execPath }, env);
    assert.equal(sh(`/bin/sh ${launcherPath(env)} --version`, '', { ...env, PATH: noNode }, ws).stdout, expect);
  });
});

describe('the hook where there is no POSIX shell (Windows): Node runs the Node launcher', () => {
  it('init writes bin/loop-guardian.js beside the shell launcher, and Codex\'s command_windows and Copilot\'s powershell entries that name no shell variable', async () => {
    const home = await tmpdir('lg-home-');
    const ws = await tmpdir();
    const env = { LOOP_GUARDIAN_HOME: home };
    assert.equal((await cli(['init', 'codex', '--workspace', ws], { env })).code, 0);
    assert.equal((await cli(['init', 'copilot-cli', '--workspace', ws], { env })).code, 0);
    assert.match(await fs.readFile(path.join(home, 'bin', 'loop-guardian.js'), 'utf8'), new RegExp(JSON.stringify(await fs.realpath(CLI)).replace(/[/.]/g, '\\$&')));
    const codex = JSON.parse(await fs.readFile(path.join(ws, '.codex/hooks.json'), 'utf8')) as { hooks: Record<string, { hooks: { command_windows?: string }[] }[]> };
    const windows = codex.hooks.PreToolUse?.[0]?.hooks[0]?.command_windows ?? '';
    assert.equal(windows, windowsHookCommand('codex', codexAgent().hook));
    assert.doesNotMatch(windows, /\$|`|\bsh\b|bash/);
    const copilot = JSON.parse(await fs.readFile(path.join(ws, '.github/hooks/loop-guardian.json'), 'utf8')) as { hooks: Record<string, { powershell?: string }[]> };
    assert.match(copilot.hooks.preToolUse?.[0]?.powershell ?? '', /^if \(Get-Command node -ErrorAction SilentlyContinue\) \{ node -e ".*" hook copilot-cli \} else \{ \[Console\]::In\.ReadToEnd\(\) \| Out-Null \}$/);
    // Run as Windows would (no shell: node with its arguments), here on this machine: STOP refuses.
    await write(ws, '.github/guardian/STOP_ALL', 'STOP 2026-11-25T10:00:00Z\n');
    const [, script] = /^node -e "(.*)" hook codex$/.exec(windows) ?? [];
    const pre = JSON.stringify({ session_id: 'w', cwd: ws, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 'w1' });
    const r = spawnSync(process.execPath, ['-e', script as string, 'hook', 'codex'], { input: pre, cwd: ws, env: { ...process.env, ...env }, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /STOP_ALL is set to STOP/);
    // No launcher on this machine (a teammate): the call is read and let through, exit 0, no answer.
    const empty = await tmpdir('lg-home-');
    const none = spawnSync(process.execPath, ['-e', script as string, 'hook', 'codex'], { input: pre, cwd: ws, env: { ...process.env, LOOP_GUARDIAN_HOME: empty }, encoding: 'utf8' });
    assert.deepEqual([none.status, none.stdout], [0, '']);
    // A Node launcher whose install is gone: the same, in the words of agents that expect an answer.
    await installLauncher({ cli: '/nowhere/dist/cli.js' }, { LOOP_GUARDIAN_HOME: empty });
    const gone = spawnSync(process.execPath, [path.join(empty, 'bin', 'loop-guardian.js'), 'hook', 'gemini'], { input: '{}', encoding: 'utf8' });
    assert.deepEqual([gone.status, gone.stdout], [0, '{}\n']);
  });
});

function codexAgent() {
  return HOOK_AGENTS.find((a) => a.id === 'codex') as (typeof HOOK_AGENTS)[number];
}

import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { copilot } from '../../../src/agents/copilot';
import { copilotCli } from '../../../src/agents/copilot-cli';
import { hookCommand } from '../../../src/agents/hookSettings';
import { powershellHookCommand } from '../../../src/state/launcher';
import { cli, readJsonl, tmpdir, tmpProject, write } from '../helpers';

/*
 * GitHub Copilot in VS Code (the Local harness) and Copilot CLI share `.github/hooks/*.json`:
 * one entry of the guardian serves both, and each caller is answered in its own dialect.
 * Payloads from microsoft/vscode-copilot-chat `chatHookService.ts` (Local) and docs.github.com's
 * hooks reference (CLI), as summarised in src/agents/copilotHooks.ts.
 */

const local = (ws: string, id: string, input: Record<string, unknown> = { command: 'npm test', isBackground: false }, tool = 'run_in_terminal') => ({
  timestamp: '2026-10-02T09:14:03.101Z',
  hook_event_name: 'PreToolUse',
  session_id: 'vs-9',
  transcript_path: '/home/u/.config/Code/User/workspaceStorage/9d1/GitHub.copilot-chat/transcripts/vs-9.jsonl',
  cwd: ws,
  tool_name: tool,
  tool_input: input,
  tool_use_id: `${id}__vscode-1`,
});
/** `init copilot-cli` and `stop` in a project; then each event's registered command, run by bash as Copilot runs it: its stdout. */
async function hookedUnderStop(ws: string): Promise<(event: string, input: unknown) => string> {
  await cli(['init', 'copilot-cli', '--workspace', ws]);
  await cli(['stop', '--workspace', ws]);
  const entry = JSON.parse(await fs.readFile(path.join(ws, '.github/hooks/loop-guardian.json'), 'utf8')) as { hooks: Record<string, { bash: string }[]> };
  return (event, input) => execFileSync('bash', ['-c', entry.hooks[event]?.[0]?.bash ?? ''], { input: JSON.stringify(input), cwd: ws }).toString();
}

const cliPre = (ws: string, toolName: string, toolArgs: unknown) => ({ sessionId: 'cp-1', timestamp: 1774039625016, cwd: ws, toolName, toolArgs });

type Nested = { hookSpecificOutput?: { hookEventName: string; permissionDecision: string; permissionDecisionReason: string }; permissionDecision?: string };

function hook(ws: string, input: unknown, agent = 'copilot') {
  return cli(['hook', agent], { input: JSON.stringify(input), cwd: ws });
}

describe('loop-guardian hook copilot (VS Code agent mode, a real process)', () => {
  it('refuses the third identical call in hookSpecificOutput (no failure event in this harness: the repetition is the signal), recorded as its own session', async () => {
    const ws = await tmpProject();
    for (const id of ['c1', 'c2']) {
      const allowed = await hook(ws, local(ws, id));
      assert.equal(allowed.code, 0);
      assert.equal(allowed.stdout, '');
      // PostToolUse fires on success only, with the tool's text.
      await hook(ws, { ...local(ws, id), hook_event_name: 'PostToolUse', tool_response: 'FAIL src/a.test.ts\n  Cannot find module' });
    }
    const third = await hook(ws, local(ws, 'c3'));
    assert.equal(third.code, 0);
    const out = JSON.parse(third.stdout) as Nested;
    assert.deepEqual([out.hookSpecificOutput?.hookEventName, out.hookSpecificOutput?.permissionDecision], ['PreToolUse', 'deny']);
    assert.equal(out.permissionDecision, undefined, 'the Local answer only');
    assert.match(out.hookSpecificOutput?.permissionDecisionReason ?? '', /Loop Guardian refused this call.*run_in_terminal/);
    const lines = await readJsonl(path.join(ws, '.tmp/current/logs/hook-copilot-vs-9.jsonl'));
    assert.equal(lines[0]?.agent, 'copilot-vscode');
    assert.equal(lines[0]?.id, 'c1__vscode-1');
  });

  it("reads VS Code's `Command exited with code N` line at the end of a terminal result as a failure (its output, the exit code once); a result without it, whatever its words, as returned", async () => {
    const ws = await tmpProject();
    const output = '\n> app@1.0.0 db:migrate\n> node migrate.js\n\nError: connect ECONNREFUSED 127.0.0.1:5432';
    await hook(ws, local(ws, 'e1', { command: 'npm run db:migrate' }));
    await hook(ws, { ...local(ws, 'e1', { command: 'npm run db:migrate' }), hook_event_name: 'PostToolUse', tool_response: `${output}\n\nCommand exited with code 1` });
    await hook(ws, local(ws, 'e2', { command: 'npm run db:migrate 2>&1' }));
    await hook(ws, { ...local(ws, 'e2', { command: 'npm run db:migrate 2>&1' }), hook_event_name: 'PostToolUse', tool_response: output });
    await hook(ws, local(ws, 'e3', { command: 'npm test' }));
    await hook(ws, { ...local(ws, 'e3', { command: 'npm test' }), hook_event_name: 'PostToolUse', tool_response: 'tests pass\n\nCommand exited with code 0' });
    assert.deepEqual(
      await outcomes(ws),
      [
        ['e1__vscode-1', false, `${output.trimEnd()}\n(exit code 1)`],
        ['e2__vscode-1', true, undefined],
        ['e3__vscode-1', true, undefined],
      ],
    );
  });

  it("settles a terminal call VS Code reported with no exit line from the exit code its terminal's shell integration gave (the extension's record): only the command the call ran, ended after the call was recorded, non-zero", async () => {
    const ws = await tmpProject();
    const output = '\n> app@1.0.0 db:migrate\n> node migrate.js\n\nError: connect ECONNREFUSED 127.0.0.1:5432';
    const exits = path.join(ws, '.tmp/guardian/terminal-exits.jsonl');
    const exit = (command: string, exitCode: number, agent = 'copilot', ts = new Date().toISOString()) => fs.appendFile(exits, `${JSON.stringify({ v: 1, ts, agent, command, exitCode })}\n`);
    await fs.mkdir(path.dirname(exits), { recursive: true });
    // An earlier run of the same command, before the call was recorded: never this call's.
    await exit('npm run db:migrate', 1, 'copilot', '2020-01-01T00:00:00.000Z');
    const run = async (id: string, command: string, response: string, recorded?: () => Promise<void>) => {
      await hook(ws, local(ws, id, { command }));
      await recorded?.();
      await hook(ws, { ...local(ws, id, { command }), hook_event_name: 'PostToolUse', tool_response: response });
    };
    // e1: the shell reported exit 1 for the command (Copilot prepends a space to keep it out of the history).
    await run('e1', 'npm run db:migrate', output, () => exit(' npm run db:migrate', 1));
    // e2: only the stale record above, and a corrupt line: no outcome but the text.
    await fs.appendFile(exits, '{"v":1,"ts":\n');
    await run('e2', 'npm run db:migrate', output);
    // e3: exit 0; e4: another command's exit; e5: a terminal of another agent.
    await run('e3', 'npm test', 'tests pass', () => exit('npm test', 0));
    await run('e4', 'npm run lint', output, () => exit('npm run build', 2));
    await run('e5', 'npm run lint', output, () => exit('npm run lint', 2, 'cursor'));
    // e6: VS Code ran another command instead and says so at the top of its result (runInTerminalTool.ts).
    const instead = 'Note: The tool simplified the command to ` npm run db:migrate` (terminal ID=f673159f-884c-433e-a638-a9038a590b5d). This is the output of running that command instead:\n' + output;
    await run('e6', 'cd /w && npm run db:migrate', instead, () => exit('npm run db:migrate', 1));
    assert.deepEqual(
      await outcomes(ws),
      [
        ['e1__vscode-1', false, `${output.trimEnd()}\n(exit code 1)`],
        ['e2__vscode-1', true, undefined],
        ['e3__vscode-1', true, undefined],
        ['e4__vscode-1', true, undefined],
        ['e5__vscode-1', true, undefined],
        ['e6__vscode-1', false, `${instead.trimEnd()}\n(exit code 1)`],
      ],
    );
    // Copilot CLI's calls are never settled so: their payload carries the exit code.
    assert.deepEqual(copilot.hook?.terminalCommands?.({ phase: 'post', event: 'postToolUse', session: 's', tool: 'bash', input: { command: 'npm run lint' }, caller: 'copilot-cli' }), []);
  });

  it("a call that failed gets no PostToolUse: its failure is read from Copilot's transcript at the next hook call (by the model's id), and the 3rd failing read is refused; a `success: true` with no result settles nothing", async () => {
    const ws = await tmpProject();
    const transcript = path.join(ws, 'transcript.jsonl');
    const line = (type: string, data: Record<string, unknown>) => `${JSON.stringify({ type, data, id: `${type}-${String(data.toolCallId)}`, timestamp: '2026-10-02T09:14:03.101Z', parentId: null })}\n`;
    await fs.writeFile(transcript, line('session.start', { sessionId: 'vs-9', version: 1, producer: 'copilot-agent', copilotVersion: '0.67.0', vscodeVersion: '1.139.1' }));
    const read = (id: string) => ({ ...local(ws, id, { filePath: path.join(ws, 'missing.json'), startLine: 1, endLine: 50 }, 'read_file'), transcript_path: transcript });
    for (const id of ['r1', 'r2']) {
      assert.equal((await hook(ws, read(id))).stdout, '');
      await fs.appendFile(transcript, line('tool.execution_start', { toolCallId: id, toolName: 'read_file', arguments: {} }) + line('tool.execution_complete', { toolCallId: id, success: false }));
    }
    const third = JSON.parse((await hook(ws, read('r3'))).stdout) as Nested;
    assert.equal(third.hookSpecificOutput?.permissionDecision, 'deny');
    const log = await readJsonl(path.join(ws, '.tmp/current/logs/hook-copilot-vs-9.jsonl'));
    assert.deepEqual(log.filter((e) => e.type === 'tool_result').map((e) => [e.id, e.ok]), [['r1__vscode-1', false], ['r2__vscode-1', false]]);
    // A call the transcript says only returned (`success: true`, no result: also a command that exited 1) stays without an outcome.
    const ws2 = await tmpProject();
    const t2 = path.join(ws2, 'transcript.jsonl');
    await fs.writeFile(t2, line('session.start', { sessionId: 'vs-9', version: 1, producer: 'copilot-agent', copilotVersion: '0.67.0', vscodeVersion: '1.139.1' }));
    await hook(ws2, { ...local(ws2, 's1'), transcript_path: t2 });
    await fs.appendFile(t2, line('tool.execution_start', { toolCallId: 's1', toolName: 'run_in_terminal', arguments: {} }) + line('tool.execution_complete', { toolCallId: 's1', success: true }));
    await hook(ws2, { ...local(ws2, 's2', { command: 'ls' }), transcript_path: t2 });
    assert.equal((await readJsonl(path.join(ws2, '.tmp/current/logs/hook-copilot-vs-9.jsonl'))).filter((e) => e.type === 'tool_result').length, 0);
  });

  it('accepts the camelCase common keys of the 2026-02 builds (hookEventName, sessionId)', async () => {
    const ws = await tmpProject();
    const { hook_event_name: _e, session_id: _s, transcript_path: _t, ...rest } = local(ws, 'k1');
    assert.equal((await hook(ws, { ...rest, hookEventName: 'PreToolUse', sessionId: 'vs-feb' })).stdout, '');
    assert.match(await fs.readFile(path.join(ws, '.tmp/current/logs/hook-copilot-vs-feb.jsonl'), 'utf8'), /"tool":"run_in_terminal"/);
  });

  it('STOP refuses every call; PAUSE refuses its subagent tool (runSubagent) only', async () => {
    const ws = await tmpProject();
    await cli(['stop', '--workspace', ws, '--reason', 'runaway']);
    const stopped = JSON.parse((await hook(ws, local(ws, 's1', { filePath: 'a.ts' }, 'read_file'))).stdout) as Nested;
    assert.equal(stopped.hookSpecificOutput?.permissionDecision, 'deny');
    assert.match(stopped.hookSpecificOutput?.permissionDecisionReason ?? '', /STOP_ALL is set to STOP \(runaway/);
    await cli(['pause', '--workspace', ws]);
    assert.match((await hook(ws, local(ws, 'p1', { prompt: 'explore', description: 'look' }, 'runSubagent'))).stdout, /"permissionDecision":"deny".*PAUSE/);
    assert.equal((await hook(ws, local(ws, 'p2', { filePath: 'a.ts' }, 'read_file'))).stdout, '');
  });

  it('fails open on broken state: a log folder that is a file, stdin that is not JSON', async () => {
    const ws = await tmpProject();
    await write(ws, '.tmp/current/logs', 'a file');
    const r = await hook(ws, local(ws, 'f1'));
    assert.equal(r.code, 0);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /fail-open/);
    const garbage = await cli(['hook', 'copilot'], { input: '{"tool_name":', cwd: ws });
    assert.equal(garbage.code, 0);
    assert.equal(garbage.stdout, '');
  });

  it('one file, one entry for both: init copilot then init copilot-cli adds nothing; an older install\'s two entries become one; the foreign hooks stay', async () => {
    const ws = await tmpdir();
    const theirs = { type: 'command', bash: './scripts/audit.sh', timeoutSec: 5 };
    await write(
      ws,
      '.github/hooks/loop-guardian.json',
      JSON.stringify({ version: 1, hooks: { sessionStart: [theirs], preToolUse: [theirs, { type: 'command', bash: 'node "/old/dist/cli.js" hook copilot-cli', timeoutSec: 10 }, { type: 'command', bash: 'node "/old/dist/cli.js" hook copilot', timeoutSec: 10 }] } }),
    );
    const first = await cli(['init', 'copilot', '--workspace', ws]);
    assert.equal(first.code, 0, first.stderr);
    const read = async () => JSON.parse(await fs.readFile(path.join(ws, '.github/hooks/loop-guardian.json'), 'utf8')) as { version: number; hooks: Record<string, Record<string, unknown>[]> };
    const file = await read();
    const command = hookCommand('copilot', copilot.hook!);
    assert.equal(file.version, 1);
    assert.deepEqual(file.hooks.sessionStart, [theirs]);
    // The Windows command beside it, under Copilot's `powershell` key.
    const powershell = powershellHookCommand('copilot', copilot.hook!);
    assert.deepEqual(file.hooks.preToolUse, [theirs, { type: 'command', timeoutSec: 10, bash: command, powershell }]);
    for (const event of ['postToolUse', 'postToolUseFailure']) assert.deepEqual(file.hooks[event], [{ type: 'command', timeoutSec: 10, bash: command, powershell }]);
    for (const agent of ['copilot-cli', 'copilot']) {
      const again = await cli(['init', agent, '--workspace', ws]);
      assert.match(again.stdout, /already runs the hook: nothing to change/, agent);
    }
    assert.deepEqual(await read(), file);
  });

  it('the registered entry answers each caller in its dialect: VS Code in hookSpecificOutput, the CLI at the top level', async () => {
    const ws = await tmpProject();
    await cli(['init', 'copilot-cli', '--workspace', ws]);
    await cli(['stop', '--workspace', ws]);
    const entry = JSON.parse(await fs.readFile(path.join(ws, '.github/hooks/loop-guardian.json'), 'utf8')) as { hooks: { preToolUse: { bash: string }[] } };
    const run = (input: unknown) => JSON.parse(execFileSync('bash', ['-c', entry.hooks.preToolUse[0]?.bash ?? ''], { input: JSON.stringify(input), cwd: ws }).toString()) as Nested;
    const fromVsCode = run(local(ws, 'd1'));
    assert.equal(fromVsCode.hookSpecificOutput?.permissionDecision, 'deny');
    assert.equal(fromVsCode.permissionDecision, undefined);
    const fromCli = run(cliPre(ws, 'view', { path: 'README.md' }));
    assert.equal(fromCli.permissionDecision, 'deny');
    assert.equal(fromCli.hookSpecificOutput, undefined);
    // The CLI's PascalCase dialect, whose accepted answer is not documented: both forms.
    const pascal = run({ hook_event_name: 'PreToolUse', session_id: 'cp-2', timestamp: '2026-10-02T09:14:03Z', cwd: ws, tool_name: 'Bash', tool_input: { command: 'ls' } });
    assert.deepEqual([pascal.permissionDecision, pascal.hookSpecificOutput?.permissionDecision], ['deny', 'deny']);
    assert.equal(copilotCli.hook?.registration.settingsFile, copilot.hook?.registration.settingsFile);
  });

  it("Copilot CLI under STOP: a shell call gets no decision before it, and its permission request refuses it and ends the run (Copilot ends a run only there); other calls are refused at once", async () => {
    const ws = await tmpProject();
    const sh = await hookedUnderStop(ws);
    assert.equal(sh('preToolUse', cliPre(ws, 'bash', { command: 'npm run build' })), '', 'no decision before the call');
    // As Copilot CLI 1.0.102 sends it (seen live): after preToolUse gave no decision.
    const permission = { hookName: 'permissionRequest', sessionId: 'cp-1', timestamp: 1795644762763, cwd: ws, toolName: 'bash', toolInput: { command: 'npm run build' }, permissionSuggestions: [] };
    const answer = JSON.parse(sh('permissionRequest', permission)) as { behavior: string; message: string; interrupt: boolean };
    assert.deepEqual([answer.behavior, answer.interrupt], ['deny', true]);
    assert.match(answer.message, /STOP_ALL is set to STOP/);
    assert.match(await fs.readFile(path.join(ws, '.tmp/guardian/guardian.log'), 'utf8'), /refused bash in session cp-1 and ended the run/);
    assert.equal((JSON.parse(sh('preToolUse', cliPre(ws, 'view', { path: 'a.ts' }))) as Nested).permissionDecision, 'deny');
    // Without STOP, a permission request for a call nobody refused gets no decision (Copilot's own rules apply).
    await cli(['clear', '--workspace', ws]);
    assert.equal(sh('permissionRequest', permission), '');
    // A call handed over and refused at its permission request is settled: a later run of the same tool is no failed handover.
    const post = { sessionId: 'cp-1', timestamp: 1795644763000, cwd: ws, toolName: 'bash', toolArgs: { command: 'npm run build' }, toolResult: { resultType: 'success', textResultForLlm: 'ok\n<shellId: 1 completed with exit code 0>' } };
    sh('preToolUse', cliPre(ws, 'bash', { command: 'npm run build' }));
    sh('postToolUse', post);
    assert.doesNotMatch(await fs.readFile(path.join(ws, '.tmp/guardian/guardian.log'), 'utf8'), /ran without the permission request/);
  });

  it('Copilot CLI, a non-shell call (view, which asks no permission): refused at once, and said as it is: its run is not ended (the model is asked to end its turn), under STOP and in a loop it keeps retrying', async () => {
    const ws = await tmpProject();
    const sh = await hookedUnderStop(ws);
    const underStop = JSON.parse(sh('preToolUse', cliPre(ws, 'view', { path: 'a.ts' }))) as Nested & { permissionDecisionReason: string };
    assert.equal(underStop.permissionDecision, 'deny');
    assert.match(underStop.permissionDecisionReason, /STOP_ALL is set to STOP.*cannot end this run from its hook: end your turn now/s);
    await cli(['clear', '--workspace', ws]);
    const missing = { path: path.join(ws, 'src/missing.js') };
    const failure = { sessionId: 'cp-1', timestamp: 2, cwd: ws, toolName: 'view', toolArgs: missing, error: { message: `Path ${missing.path} does not exist. Please provide a valid path.` } };
    for (let i = 0; i < 2; i++) {
      assert.equal(sh('preToolUse', cliPre(ws, 'view', missing)), '');
      sh('postToolUseFailure', failure);
    }
    const first = JSON.parse(sh('preToolUse', cliPre(ws, 'view', missing))) as { permissionDecisionReason: string };
    assert.match(first.permissionDecisionReason, /Loop Guardian refused this call \(failing-call/);
    assert.doesNotMatch(first.permissionDecisionReason, /cannot end this run/, 'a first refusal asks nothing more');
    const again = JSON.parse(sh('preToolUse', cliPre(ws, 'view', missing))) as { permissionDecision: string; permissionDecisionReason: string };
    assert.equal(again.permissionDecision, 'deny');
    assert.match(again.permissionDecisionReason, /cannot end this run from its hook/);
    const log = await fs.readFile(path.join(ws, '.tmp/guardian/guardian.log'), 'utf8');
    assert.doesNotMatch(log, /ended the run/);
    assert.match(log, /refused view in session cp-1 \(the run goes on: copilot-cli does not end it from its preToolUse hook for view; the model is asked to end its turn\)/);
  });

  it('Copilot CLI under STOP: where a handed-over shell call runs without asking (no permission request came), that session\'s later calls are refused before they run', async () => {
    const ws = await tmpProject();
    const sh = await hookedUnderStop(ws);
    assert.equal(sh('preToolUse', cliPre(ws, 'bash', { command: 'make' })), '', 'handed over to its permission request');
    // Copilot ran it without asking (a rule of its own pre-approved it): its after-call event comes.
    sh('postToolUse', { sessionId: 'cp-1', timestamp: 1, cwd: ws, toolName: 'bash', toolArgs: { command: 'make' }, toolResult: { resultType: 'success', textResultForLlm: 'built\n<shellId: 0 completed with exit code 0>' } });
    assert.match(await fs.readFile(path.join(ws, '.tmp/guardian/guardian.log'), 'utf8'), /ran without the permission request its refusal was handed to/);
    const next = JSON.parse(sh('preToolUse', cliPre(ws, 'bash', { command: 'make' }))) as Nested;
    assert.equal(next.permissionDecision, 'deny', 'refused at once from now on');
  });
});

/** Each call's outcome as the hook recorded it for session vs-9: its id, ok, and error. */
async function outcomes(ws: string): Promise<unknown[][]> {
  const results = (await readJsonl(path.join(ws, '.tmp/current/logs/hook-copilot-vs-9.jsonl'))).filter((e) => e.type === 'tool_result');
  return results.map((e) => [e.id, e.ok, e.error]);
}

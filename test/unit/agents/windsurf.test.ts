import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { hookCommand } from '../../../src/agents/hookSettings';
import { windsurf } from '../../../src/agents/windsurf';
import { cli, readJsonl, tmpdir, tmpProject, write } from '../helpers';

/*
 * Windsurf's Cascade hook, end to end as Cascade runs it: a child process started in the
 * workspace root, the documented stdin (docs.windsurf.com/windsurf/cascade/hooks), and only exit
 * codes for an answer: 2 blocks, with the reason on stderr for the agent.
 */

const envelope = (event: string, info: Record<string, unknown>) => ({ agent_action_name: event, trajectory_id: 'tr-1', execution_id: 'ex-1', timestamp: '2026-10-02T09:14:03Z', tool_info: info });

function hook(ws: string, input: unknown) {
  return cli(['hook', 'windsurf'], { input: typeof input === 'string' ? input : JSON.stringify(input), cwd: ws });
}

function log(ws: string): Promise<Record<string, unknown>[]> {
  return readJsonl(path.join(ws, '.tmp/current/logs/hook-windsurf-tr-1.jsonl'));
}

describe('loop-guardian hook windsurf (a real process)', () => {
  it('refuses the sixth identical command with exit 2 and the reason on stderr (Cascade tells no outcome: the repetition alone is the evidence, so it takes twice the run)', async () => {
    const ws = await tmpProject();
    const run = envelope('pre_run_command', { command_line: 'npm test', cwd: ws });
    for (let i = 0; i < 5; i++) {
      const allowed = await hook(ws, run);
      assert.equal(allowed.code, 0, `call ${i + 1}: ${allowed.stderr}`);
      assert.equal(allowed.stdout, '');
      // The after-event carries the command again and nothing of how it ended: not an outcome.
      assert.equal((await hook(ws, envelope('post_run_command', { command_line: 'npm test', cwd: ws }))).code, 0);
    }
    const sixth = await hook(ws, run);
    assert.equal(sixth.code, 2);
    assert.equal(sixth.stdout, '');
    assert.match(sixth.stderr, /Loop Guardian refused this call \(identical-calls, 6\/3\).*run_command.*npm test/);
    const lines = await log(ws);
    assert.deepEqual(lines.map((l) => `${String(l.type)}:${String(l.tool)}:${String(l.ok ?? '')}`), [...Array.from({ length: 5 }, () => 'tool:run_command:'), 'tool:run_command:false']);
    assert.equal(lines[0]?.agent, 'windsurf');
  });

  it('an MCP result is an outcome, paired with its call by tool and arguments; an exit code, when a build sends one, is too', async () => {
    const ws = await tmpProject();
    const args = { owner: 'o', repo: 'r', sha: 'main' };
    const preMcp = envelope('pre_mcp_tool_use', { mcp_server_name: 'github', mcp_tool_name: 'list_commits', mcp_tool_arguments: args });
    assert.equal((await hook(ws, preMcp)).code, 0);
    await hook(ws, envelope('post_mcp_tool_use', { mcp_server_name: 'github', mcp_tool_name: 'list_commits', mcp_tool_arguments: args, mcp_result: '[{"sha":"abc"}]' }));
    await hook(ws, envelope('pre_run_command', { command_line: 'make', cwd: ws }));
    await hook(ws, envelope('post_run_command', { command_line: 'make', cwd: ws, exit_code: 2, output: 'make: *** No rule to make target' }));
    const lines = await log(ws);
    const [mcpCall, mcpResult, makeCall, makeResult] = lines;
    assert.equal(mcpCall?.tool, 'mcp:github/list_commits');
    assert.deepEqual(mcpCall?.args, args);
    assert.deepEqual([mcpResult?.type, mcpResult?.id, mcpResult?.ok], ['tool_result', mcpCall?.id, true]);
    assert.deepEqual([makeResult?.type, makeResult?.id, makeResult?.ok, makeResult?.error], ['tool_result', makeCall?.id, false, 'make: *** No rule to make target']);
  });

  it('STOP refuses every kind of call with exit 2; PAUSE refuses none (Cascade has no subagent tool), and after-events are never refused', async () => {
    const ws = await tmpProject();
    await cli(['stop', '--workspace', ws, '--reason', 'runaway']);
    for (const [event, info] of [
      ['pre_run_command', { command_line: 'ls', cwd: ws }],
      ['pre_read_code', { file_path: path.join(ws, 'a.ts') }],
      ['pre_write_code', { file_path: path.join(ws, 'a.ts'), edits: [{ old_string: 'a', new_string: 'b' }] }],
      ['pre_mcp_tool_use', { mcp_server_name: 's', mcp_tool_name: 't', mcp_tool_arguments: {} }],
    ] as const) {
      const r = await hook(ws, envelope(event, info));
      assert.equal(r.code, 2, event);
      assert.match(r.stderr, /STOP_ALL is set to STOP \(runaway/);
    }
    assert.equal((await hook(ws, envelope('post_run_command', { command_line: 'ls', cwd: ws }))).code, 0);
    await cli(['pause', '--workspace', ws]);
    assert.equal((await hook(ws, envelope('pre_run_command', { command_line: 'ls', cwd: ws }))).code, 0);
  });

  it('fails open on broken state: a log folder that is a file, stdin that is not JSON, a payload with no event name — never exit 2', async () => {
    const ws = await tmpProject();
    await write(ws, '.tmp/current/logs', 'a file');
    const r = await hook(ws, envelope('pre_run_command', { command_line: 'ls', cwd: ws }));
    assert.equal(r.code, 0);
    assert.match(r.stderr, /fail-open/);
    for (const input of ['not json', { tool_info: { command_line: 'ls' } }]) {
      const odd = await hook(ws, input);
      assert.equal(odd.code, 0, JSON.stringify(input));
      assert.equal(odd.stdout, '');
    }
  });

  it('init windsurf writes .windsurf/hooks.json in its flat shape, keeps the team\'s hooks, replaces an older install\'s entry, and changes nothing the second time', async () => {
    const ws = await tmpdir();
    const theirs = { command: 'python3 /opt/hooks/block.py', show_output: true };
    await write(ws, '.windsurf/hooks.json', JSON.stringify({ hooks: { pre_run_command: [theirs, { command: 'node "/old/dist/cli.js" hook windsurf', show_output: false }], post_write_code: [theirs] } }));
    const r = await cli(['init', 'windsurf', '--workspace', ws]);
    assert.equal(r.code, 0, r.stderr);
    const file = JSON.parse(await fs.readFile(path.join(ws, '.windsurf/hooks.json'), 'utf8')) as Record<string, unknown> & { hooks: Record<string, unknown[]> };
    const command = hookCommand('windsurf', windsurf.hook!);
    assert.equal(file.version, undefined, 'Windsurf documents no version field');
    assert.deepEqual(file.hooks.post_write_code, [theirs]);
    assert.deepEqual(file.hooks.pre_run_command, [theirs, { show_output: false, command }]);
    assert.deepEqual(Object.keys(file.hooks).sort(), ['post_mcp_tool_use', 'post_run_command', 'post_write_code', 'pre_mcp_tool_use', 'pre_read_code', 'pre_run_command', 'pre_write_code']);
    assert.match((await cli(['init', 'windsurf', '--workspace', ws])).stdout, /already runs the hook/);
  });
});

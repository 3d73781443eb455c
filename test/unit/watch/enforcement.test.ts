import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { cli, tmpdir, tmpProject } from '../helpers';

/*
 * `loop-guardian status`: whether each agent's hook runs, from the hooks' heartbeats and the
 * agents' registrations (src/watch/enforcement.ts).
 */

type Status = { agents: { id: string; state: string; hookFile?: string; lastCall?: { event: string; session: string } }[] };

async function status(ws: string, home: string): Promise<Status> {
  const r = await cli(['status', '--workspace', ws, '--json'], { env: { HOME: home } });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Status;
}

/** Runs a hook file as Cline runs it: an executable, stdin the call. */
function runScript(file: string, input: unknown): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, [], { cwd: '/' });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', () => resolve(out));
    child.stdin.end(JSON.stringify(input));
  });
}

describe('status: is each agent protected', function () {
  this.timeout(60_000);

  it('Cline, whose hook is a folder of executable files: installed once init wrote them, enforced once its hook ran (its 3.x payload: hookName "tool_call", taskId)', async () => {
    const ws = await tmpProject();
    const home = await tmpdir();
    assert.equal((await cli(['init', 'cline', '--workspace', ws], { env: { HOME: home } })).code, 0);
    const before = (await status(ws, home)).agents.find((a) => a.id === 'cline');
    assert.equal(before?.state, 'installed', JSON.stringify(before));
    // As Cline CLI 3.0.65 sends it (seen live, src/agents/cline/hook.ts).
    const call = { clineVersion: '3.0.65', hookName: 'tool_call', timestamp: '1795644762763', taskId: 'task-7', workspaceRoots: [ws], tool_call: { id: 'call_1', name: 'run_commands', input: { commands: ['npm run build-missing'] } } };
    assert.equal(await runScript(path.join(ws, '.clinerules/hooks/PreToolUse'), call), '{"cancel":false}\n');
    const after = (await status(ws, home)).agents.find((a) => a.id === 'cline');
    assert.equal(after?.state, 'enforced', JSON.stringify(after));
    assert.deepEqual([after?.lastCall?.session, after?.lastCall?.event], ['task-7', 'PreToolUse']);
  });
});

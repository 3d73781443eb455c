import * as assert from 'node:assert/strict';
import { Canonicalizer } from '../../../src/core/canonical';
import { resolveConfig } from '../../../src/core/config';
import { gate } from '../../../src/core/gate';
import { config, located, only, run } from '../helpers';

/** Claude Code's Bash: the model writes a new `description` on every retry of the same command. */
const build = (description: string) => ({
  type: 'tool',
  session: 's',
  agent: 'claude-code',
  tool: 'Bash',
  args: { command: 'npm run build', description },
  ok: false,
  error: 'npm error Missing script: "build"',
});

describe('volatileArgs: commentary is not an argument', () => {
  it('four identical failing builds whose descriptions differ are one call repeated (halt)', () => {
    const events = ['Build the app', 'Build the TODO app from correct directory', 'Build from todo-app directory', 'Build from correct directory path'].map(build);
    const found = only(run(events).findings, 'identical-calls');
    assert.deepEqual(found.map((f) => f.action), ['halt']);
    assert.ok(!/description/.test(found[0]?.subject ?? ''), 'the subject leaves the commentary out');
  });

  it('defaults cover the agents read (Claude Code Bash, Copilot, Gemini, Codex) and a tool named in the config replaces its list', () => {
    const c = config();
    assert.deepEqual(c.volatileArgs.Bash, ['description']);
    assert.deepEqual(c.volatileArgs.run_shell_command, ['description']);
    assert.deepEqual(c.volatileArgs.run_in_terminal, ['explanation']);
    const own = config({ volatileArgs: { Bash: [], deploy: ['note'] } });
    assert.deepEqual(own.volatileArgs.Bash, []);
    assert.deepEqual(own.volatileArgs.deploy, ['note']);
    assert.deepEqual(own.volatileArgs.powershell, ['description']);
    const events = ['a', 'b', 'c'].map(build);
    assert.equal(only(run(events, own).findings, 'identical-calls').length, 0, 'Bash: [] makes the description count again');
  });

  it('only the named tool and only top-level keys; `*` names every tool', () => {
    const canon = new Canonicalizer(undefined, { Bash: ['description'], '*': ['note'] });
    assert.equal(canon.args('Bash', { command: 'ls', description: 'x' }), canon.args('Bash', { command: 'ls', description: 'y' }));
    assert.notEqual(canon.args('Other', { command: 'ls', description: 'x' }), canon.args('Other', { command: 'ls', description: 'y' }));
    assert.equal(canon.args('Other', { command: 'ls', note: 'x' }), canon.args('Other', { command: 'ls', note: 'y' }));
    assert.notEqual(canon.args('Bash', { command: { description: 'x' } }), canon.args('Bash', { command: { description: 'y' } }));
  });

  it('a bad entry is dropped alone and the defaults stay', () => {
    const { config: c, problems } = resolveConfig({ volatileArgs: { Bash: ['description', 3], Write: 'content' } });
    assert.deepEqual(c.volatileArgs.Bash, ['description']);
    assert.equal(c.volatileArgs.Write, undefined);
    assert.deepEqual(c.volatileArgs.powershell, ['description']);
    assert.ok(problems.some((p) => p.path.startsWith('volatileArgs')));
  });

  it('the hook refuses the fourth build although its description is new', () => {
    const history = located(['Build the app', 'Build the TODO app', 'Build from todo-app directory'].map(build));
    const verdict = gate({
      history,
      call: { tool: 'Bash', args: { command: 'npm run build', description: 'Build from correct directory path' }, session: 's', agent: 'claude-code', ts: '2025-01-01T00:00:00Z' },
      stop: { status: 'CLEAR' } as never,
      config: config(),
    });
    assert.equal(verdict.allow, false);
  });
});

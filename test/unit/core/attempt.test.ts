import * as assert from 'node:assert/strict';
import { attemptKey, attemptMayOccurIn } from '../../../src/core/attempt';
import { Canonicalizer } from '../../../src/core/canonical';
import { gate } from '../../../src/core/gate';
import { filteredPipeline, shellAttempt } from '../../../src/core/intent';
import { config, located, run } from '../helpers';

/**
 * Issue 36: a retry with trivial variations is the same attempt, and the hook refuses it once the
 * engine halts the loop, as `scan` does; a call that changes what runs is a new attempt, never
 * refused for the loop before it.
 */

const FAILING = 'npm run db:migrate';
/** How models retry a failing command (seen with the agents' own CLIs: issue 36). */
const VARIATIONS = [FAILING, `${FAILING} 2>&1`, `cd /work/project && ${FAILING}`, `sleep 1 && ${FAILING}`, `${FAILING} --verbose`, `${FAILING} 2>&1 | tail -20`, `${FAILING} > /dev/null 2>&1`, `echo "retrying" && ${FAILING}`, `${FAILING} --loglevel verbose`, `time ${FAILING}`];
/** What changes what runs: a new attempt each. */
const NEW_ATTEMPTS = ['npm install && npm run db:migrate', 'cd backend && npm run db:migrate', 'DATABASE_URL=postgres://localhost/dev npm run db:migrate', 'npm run db:migrate -- --create', 'npm run db:seed', 'docker compose up -d db && npm run db:migrate', `${FAILING} | sh`, 'echo "x" > .env && npm run db:migrate'];

describe('a call\'s attempt (intent.ts, attempt.ts)', () => {
  it('every trivial variation of a retried command is the same attempt', () => {
    for (const v of VARIATIONS) assert.equal(shellAttempt(v), shellAttempt(FAILING), v);
  });

  it('a command that changes what runs is a new attempt', () => {
    for (const v of NEW_ATTEMPTS) assert.notEqual(shellAttempt(v), shellAttempt(FAILING), v);
  });

  it('a shell call\'s other arguments stay part of it; its description does not', () => {
    const cfg = config();
    const canon = new Canonicalizer(cfg.volatileKeys, cfg.volatileArgs);
    const key = (args: Record<string, unknown>, tool = 'Bash') => attemptKey(canon, tool, args);
    assert.equal(key({ command: `${FAILING} 2>&1`, description: 'try again' }), key({ command: FAILING, description: 'migrate' }));
    assert.notEqual(key({ command: FAILING, timeout: 600000 }), key({ command: FAILING }), 'another time-out');
    assert.notEqual(key({ command: FAILING, dir_path: 'backend' }, 'run_shell_command'), key({ command: FAILING }, 'run_shell_command'), 'another folder');
    assert.equal(key({ command: ['bash', '-lc', `${FAILING} | tail -5`] }, 'shell'), key({ command: ['bash', '-lc', FAILING] }, 'shell'), 'an argument vector through a shell');
    assert.equal(key({ file_path: 'a.ts', old_string: 'x', new_string: 'y' }, 'Edit'), key({ new_string: 'y', file_path: 'a.ts', old_string: 'x' }, 'Edit'), 'other calls: their signature');
    assert.notEqual(key({ file_path: 'a.ts', old_string: 'x2', new_string: 'y' }, 'Edit'), key({ file_path: 'a.ts', old_string: 'x', new_string: 'y' }, 'Edit'));
  });

  it('the log text never rules out a call whose attempt is in it', () => {
    const cfg = config();
    const canon = new Canonicalizer(cfg.volatileKeys, cfg.volatileArgs);
    for (const earlier of VARIATIONS) {
      const text = JSON.stringify({ v: 1, type: 'tool', tool: 'Bash', args: { command: earlier, description: 'x' }, ok: false, error: 'Exit code 1' });
      for (const now of VARIATIONS) assert.equal(attemptMayOccurIn(canon, 'Bash', { command: now }, text), true, `${now} after ${earlier}`);
      assert.equal(attemptMayOccurIn(canon, 'Bash', { command: 'npm run db:seed' }, text), false);
      assert.equal(attemptMayOccurIn(canon, 'Bash', { cmd: FAILING }, text), false, 'the command\'s argument is part of the call');
    }
  });

  it('a pipeline through filters only is told apart', () => {
    assert.equal(filteredPipeline(`${FAILING} 2>&1 | tail -20`), true);
    assert.equal(filteredPipeline(`cd x && ${FAILING} | grep -v warn | head`), true);
    assert.equal(filteredPipeline(`${FAILING} | sh`), false);
    assert.equal(filteredPipeline(FAILING), false);
  });
});

/** A Claude Code-style session as the hook records it: each call, then its outcome. */
function retries(commands: readonly string[], error: (i: number) => string): Record<string, unknown>[] {
  return commands.flatMap((command, i) => [
    { type: 'tool', tool: 'Bash', args: { command, description: `attempt ${i + 1}` }, id: `c${i}`, session: 's', agent: 'claude-code', ts: new Date(Date.UTC(2026, 10, 27, 12, 0, i)).toISOString() },
    { type: 'tool_result', id: `c${i}`, ok: false, error: error(i), session: 's', agent: 'claude-code', ts: new Date(Date.UTC(2026, 10, 27, 12, 0, i, 500)).toISOString() },
  ]);
}

const NPM_ERROR = (i: number) => `Exit code 1\n\n> app@1.0.0 db:migrate\n> node migrate.js\n\nError: Cannot find module './db/schema.sql'\nnpm error A complete log of this run can be found in: /root/.npm/_logs/2026-11-27T19_3${i}_00_000Z-debug-0.log`;

function ask(history: readonly Record<string, unknown>[], command: string) {
  return gate({ history: located(history), call: { tool: 'Bash', args: { command, description: 'once more' }, session: 's', agent: 'claude-code', ts: '2026-11-27T12:01:00Z' }, stop: { status: 'CLEAR' }, config: config() });
}

describe('the gate refuses what the engine halts (issue 36, one judgement)', () => {
  it('a failing command retried with trivial variations: halted by the engine at the 3rd failure, the 4th try refused, whichever variation', () => {
    const history = retries(VARIATIONS.slice(0, 3), NPM_ERROR);
    assert.ok(run(history).findings.some((f) => f.action === 'halt' && f.signal === 'repeated-error'), 'the engine halts the loop');
    for (const v of VARIATIONS) {
      const verdict = ask(history, v);
      assert.equal(verdict.allow, false, v);
      assert.match((verdict as { reason: string }).reason, /Loop Guardian refused this call \(repeated-error, 3\/3\)/);
    }
  });

  it('before the halt, and for a new attempt after it, the call runs', () => {
    assert.equal(ask(retries(VARIATIONS.slice(0, 2), NPM_ERROR), VARIATIONS[3] as string).allow, true, 'two failures are no loop yet');
    const history = retries(VARIATIONS.slice(0, 3), NPM_ERROR);
    for (const v of NEW_ATTEMPTS) assert.equal(ask(history, v).allow, true, v);
  });

  it('something else that ended in a new way since the halt is recovery: the retry runs', () => {
    const history = [...retries(VARIATIONS.slice(0, 3), NPM_ERROR), { type: 'tool', tool: 'Read', args: { file_path: 'db/schema.sql' }, ok: true, output: 'CREATE TABLE t (id int);', session: 's', agent: 'claude-code', ts: '2026-11-27T12:00:30Z' }];
    assert.equal(ask(history, FAILING).allow, true);
  });

  it('a command piped through a filter that prints the same error failed again, for the engine and the gate alike', () => {
    const piped = `${FAILING} 2>&1 | tail -20`;
    const history = [
      ...retries([FAILING, `cd /work/project && ${FAILING}`], NPM_ERROR),
      { type: 'tool', tool: 'Bash', args: { command: piped }, id: 'p', session: 's', agent: 'claude-code', ts: '2026-11-27T12:00:10Z' },
      { type: 'tool_result', id: 'p', ok: true, output: NPM_ERROR(7).replace(/^Exit code 1\n/, ''), session: 's', agent: 'claude-code', ts: '2026-11-27T12:00:11Z' },
    ];
    const halts = run(history).findings.filter((f) => f.action === 'halt');
    assert.deepEqual(halts.map((f) => [f.signal, f.count]), [['repeated-error', 3]]);
    assert.equal(ask(history, FAILING).allow, false);
  });

  it('the same, its result handed over as its streams ({stdout, stderr}: Claude Code\'s Bash)', () => {
    const history = [
      ...retries([FAILING, `cd /work/project && ${FAILING}`], NPM_ERROR),
      { type: 'tool', tool: 'Bash', args: { command: `${FAILING} 2>&1 | tail -20` }, id: 'p', session: 's', agent: 'claude-code', ts: '2026-11-27T12:00:10Z' },
      { type: 'tool_result', id: 'p', ok: true, output: { stdout: NPM_ERROR(7).replace(/^Exit code 1\n/, ''), stderr: '', interrupted: false, isImage: false }, session: 's', agent: 'claude-code', ts: '2026-11-27T12:00:11Z' },
    ];
    assert.deepEqual(run(history).findings.filter((f) => f.action === 'halt').map((f) => [f.signal, f.count]), [['repeated-error', 3]]);
    assert.equal(ask(history, FAILING).allow, false);
  });

  it('a piped command whose output is not that error ended well: no loop', () => {
    const history = [
      ...retries([FAILING, `cd /work/project && ${FAILING}`], NPM_ERROR),
      { type: 'tool', tool: 'Bash', args: { command: `${FAILING} 2>&1 | tail -20` }, ok: true, output: 'migrated 3 tables', session: 's', agent: 'claude-code', ts: '2026-11-27T12:00:10Z' },
    ];
    assert.deepEqual(run(history).findings.filter((f) => f.action === 'halt'), []);
    assert.equal(ask(history, FAILING).allow, true);
  });
});

describe('what a piped command printed, however the agent hands it over', () => {
  for (const [shape, output] of [
    ['a hook\'s text of its result (Gemini CLI: llmContent)', { llmContent: `<untrusted_context>\nOutput: ${NPM_ERROR(3).replace(/^Exit code 1\n/, '')}\nProcess Group PGID: 17230\n</untrusted_context>`, returnDisplay: 'x' }],
    ['result items as JSON text (Cline)', JSON.stringify([{ query: `${FAILING} 2>&1 | tail -20`, result: NPM_ERROR(3).replace(/^Exit code 1\n/, ''), success: true }])],
    ['a text with the agent\'s own status line (Copilot CLI)', `${NPM_ERROR(3).replace(/^Exit code 1\n/, '')}\n<shellId: 1 completed with exit code 0>`],
  ] as const) {
    it(`${shape}: the same error printed is the same failure`, () => {
      const history = [
        ...retries([FAILING, `cd /work/project && ${FAILING}`], NPM_ERROR),
        { type: 'tool', tool: 'Bash', args: { command: `${FAILING} 2>&1 | tail -20` }, id: 'p', session: 's', agent: 'a', ts: '2026-11-27T12:00:10Z' },
        { type: 'tool_result', id: 'p', ok: true, output, session: 's', agent: 'a', ts: '2026-11-27T12:00:11Z' },
      ];
      assert.deepEqual(run(history).findings.filter((f) => f.action === 'halt').map((f) => f.signal), ['repeated-error']);
    });
  }
});

import * as assert from 'node:assert/strict';
import { intentOf, searchFoundNothing, shellIntent } from '../../../src/core/intent';
import { run } from '../helpers';

/**
 * Issue 25's six classes of healthy sessions a guardian halted, each built as a synthetic session
 * from its description (the real ones are not shared), judged before the guardian ran: none is a
 * loop a person would halt. Beside each, the loop it must still catch.
 */

const s = 'a25';
let n = 0;
const call = (tool: string, args: Record<string, unknown>, outcome: Record<string, unknown>) => ({ type: 'tool', session: s, tool, args, ...outcome, id: `c${n++}` });
const pending = (tool: string, args: Record<string, unknown>) => ({ type: 'tool', session: s, tool, args, id: `c${n++}` });
const result = (id: string, outcome: Record<string, unknown>) => ({ type: 'tool_result', session: s, id, ...outcome });
const ok = (output: string) => ({ ok: true, output });
const fail = (error: string) => ({ ok: false, error });
const halts = (events: readonly Record<string, unknown>[]) =>
  run(events)
    .findings.filter((f) => f.action === 'halt')
    .map((f) => `${f.signal}: ${f.message}`);
const signals = (events: readonly Record<string, unknown>[]) => run(events).findings.map((f) => `${f.signal} ${f.action}`);

/** One assistant message issuing `k` calls at once, then their `k` results (as transcripts write them). */
function batch(k: number, tool: string, args: (i: number) => Record<string, unknown>, outcome: Record<string, unknown>): Record<string, unknown>[] {
  const calls = Array.from({ length: k }, (_, i) => pending(tool, args(i)));
  return [...calls, ...calls.map((c) => result(c.id, outcome))];
}

describe('issue 25: retries told from new attempts, as a person reads a session', () => {
  it('1. five parallel Task calls that all fail "No such tool available" are one attempt, and the agent recovers: no halt', () => {
    const events = [
      { type: 'prompt', session: s, text: 'Review the three packages and fix what is broken' },
      ...batch(5, 'Task', (i) => ({ description: `review part ${i}`, prompt: `Review part ${i} of the code` }), fail('No such tool available: Task')),
      call('Read', { file_path: 'src/a.ts' }, ok('export const a = 1;')),
      call('Edit', { file_path: 'src/a.ts', old_string: 'a = 1', new_string: 'a = 2' }, ok('updated')),
    ];
    assert.deepEqual(halts(events), []);
    assert.ok(!signals(events).some((x) => x.startsWith('repeated-error')), 'one attempt: no "same error in a row" at all');
  });

  it('1b. but three rounds of that batch, nothing between, are three attempts: the loop halts', () => {
    const round = () => batch(5, 'Task', (i) => ({ description: `review part ${i}`, prompt: `Review part ${i}` }), fail('No such tool available: Task'));
    assert.ok(halts([...round(), ...round(), ...round()]).some((h) => /^repeated-error/.test(h)));
  });

  it('2. three different probes whose search finds nothing (rg exit 1, no output) have answered: no finding', () => {
    const probes = ['git ls-remote --heads origin | rg -n feature-x', 'git branch -a | rg -n feature-x', 'ls specs | rg -n feature-x'];
    // As three agents say it: a bare "Error", "Exit code: 1" with a wall time, a shell result block.
    const errors = ['Error', 'Exit code: 1\nWall time: 0.1 seconds\nOutput:\n', `Command: ${probes[2]}\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 1\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 4242`];
    const events = probes.map((command, i) => call('Bash', { command }, fail(errors[i] as string)));
    assert.deepEqual(signals(events), []);
    assert.equal(searchFoundNothing({ command: 'rg -n X src' }, 'Exit code 2\nrg: src: No such file or directory'), false, 'a search that failed for real is an error');
    assert.equal(searchFoundNothing({ command: 'make | grep error' }, 'make: *** No rule to make target'), false, 'something was said: an error');
  });

  it('2b. different commands ending with the same real error warn (what they share may be the cause), never halt', () => {
    const events = ['git log -1', 'git status', 'git diff HEAD'].map((command) => call('Bash', { command }, fail('fatal: not a git repository (or any of the parent directories): .git')));
    assert.deepEqual(halts(events), []);
    assert.ok(signals(events).includes('repeated-error warn'));
  });

  it('3. polls of three different running processes, each failed once the same way: no halt', () => {
    const events = [79625, 54066, 69324].map((id) => call('write_stdin', { session_id: id, chars: '' }, fail('curl: (6) Could not resolve host: registry.example.com')));
    assert.deepEqual(halts(events), []);
    assert.notEqual(intentOf('write_stdin', { session_id: 79625 }), intentOf('write_stdin', { session_id: 54066 }));
  });

  it('3b. polls of the same process failing the same way are a loop: halt', () => {
    const events = [1, 2, 3].map(() => call('write_stdin', { session_id: 79625, chars: '' }, fail('curl: (6) Could not resolve host: registry.example.com')));
    assert.ok(halts(events).length > 0);
  });

  it('4. two different tools each missing a required parameter, then a good write: no halt', () => {
    const events = [
      call('ask_followup_question', {}, fail("Missing value for required parameter 'question'. Please retry with complete response.")),
      call('execute_command', {}, fail("Missing value for required parameter 'command'. Please retry with complete response.")),
      call('write_to_file', { path: 'src/app.ts', content: 'export {}' }, ok('written')),
    ];
    assert.deepEqual(halts(events), []);
  });

  it('5. an edit → build cycle of 19 edits whose errors change (one of them four times while different code was edited), ending green: no halt', () => {
    const errors = [
      'Error occurred prerendering page "/": ReferenceError: document is not defined',
      'SyntaxError: Unexpected token (12:4)',
      ...Array.from({ length: 4 }, () => 'ReferenceError: window is not defined'),
      "Type error: Property 'items' does not exist on type 'Props'.",
      "Type error: Argument of type 'string' is not assignable to parameter of type 'number'.",
    ];
    const events: Record<string, unknown>[] = [];
    for (let i = 0; i < 19; i++) {
      events.push(call('Edit', { file_path: `src/page${i % 5}.tsx`, old_string: `v${i}`, new_string: `v${i + 1}` }, ok(`The file src/page${i % 5}.tsx has been updated.`)));
      const error = errors[Math.min(i, errors.length - 1)] as string;
      events.push(call('Bash', { command: 'pnpm run build' }, i === 18 ? ok('Compiled successfully') : fail(error)));
    }
    assert.deepEqual(halts(events), []);
  });

  it('5b. the same build re-run with nothing changed between is the loop: halt', () => {
    const events = [1, 2, 3].map(() => call('Bash', { command: 'pnpm run build' }, fail('ReferenceError: window is not defined')));
    assert.ok(halts(events).length > 0);
  });

  it('6. a tic: today\'s date checked 8 times in a row between real work, each a new clock time: no halt', () => {
    const events: Record<string, unknown>[] = [call('Read', { file_path: 'README.md' }, ok('# app'))];
    for (let i = 0; i < 8; i++) events.push(call('Bash', { command: 'date -Iseconds' }, ok(`2026-11-26T10:0${i}:1${i}+00:00`)));
    events.push(call('Edit', { file_path: 'CHANGELOG.md', old_string: '## Unreleased', new_string: '## 2026-11-26' }, ok('updated')));
    assert.deepEqual(halts(events), []);
  });

  it('reads a shell command\'s intent: its main command, cd and preparations aside, a pipeline by its source', () => {
    assert.equal(shellIntent('cd /w/ponyc && make'), 'make');
    assert.equal(shellIntent('cd /w/ponyc && make clean && make'), 'make');
    assert.equal(shellIntent('rm -rf /w/ponyc/build && cd /w/ponyc && make'), 'make');
    assert.equal(shellIntent('git branch -a | rg -n x'), 'git branch');
    assert.equal(shellIntent('FOO=1 timeout 30 npm run build -- --watch'), 'npm run build');
    assert.equal(intentOf('exec_command', { cmd: ['bash', '-lc', 'cd x && make'] }), intentOf('Bash', { command: 'make' }));
    assert.equal(intentOf('Edit', { file_path: 'a.ts', old_string: 'x' }), intentOf('Write', { file_path: 'a.ts', content: 'y' }), 'one file, whichever tool');
  });
});

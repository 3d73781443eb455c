import * as assert from 'node:assert/strict';
import { config, only, run, times } from '../helpers';

const edit = (extra: Record<string, unknown> = {}) => ({ type: 'tool', session: 's', tool: 'apply_code_edit', args: { file: 'a.py', search: 'x = 1' }, error: 'Error: search string not found in file a.py', ...extra });

describe('identical-calls (seed 001)', () => {
  it('halts on the 3rd identical call in a row, and not before', () => {
    assert.equal(only(run(times(2, () => edit())).findings, 'identical-calls').length, 0);
    const [f, ...rest] = only(run(times(3, () => edit())).findings, 'identical-calls');
    assert.equal(rest.length, 0);
    assert.ok(f);
    assert.equal(f.action, 'halt');
    assert.equal(f.count, 3);
    assert.equal(f.threshold, 3);
    assert.equal(f.at.line, 3);
    assert.deepEqual(f.evidence.map((r) => r.line), [1, 2, 3]);
    assert.equal(f.status, 'STALLED');
    assert.match(f.recommendation, /re-read/i, "seed 001's actionable advice for a failed search");
  });

  it('is broken by any other call', () => {
    const events = [edit(), edit(), { type: 'tool', session: 's', tool: 'read_file', args: { file: 'a.py' }, ok: true, output: 'x = 2' }, edit(), edit()];
    assert.equal(only(run(events).findings, 'identical-calls').length, 0);
  });

  it('ignores argument key order and volatile keys', () => {
    const events = [
      { type: 'tool', tool: 'grep', args: { pattern: 'foo', path: 'src', id: 'call_1', timestamp: 1 } },
      { type: 'tool', tool: 'grep', args: { path: 'src', pattern: 'foo', id: 'call_2', timestamp: 2 } },
      { type: 'tool', tool: 'grep', args: { id: 'call_3', pattern: 'foo', path: 'src', task_progress: '3/9' } },
    ];
    assert.equal(only(run(events).findings, 'identical-calls').length, 1);
  });

  it('treats different array order as different calls', () => {
    const events = [
      { type: 'tool', tool: 'run', args: { argv: ['a', 'b'] } },
      { type: 'tool', tool: 'run', args: { argv: ['b', 'a'] } },
      { type: 'tool', tool: 'run', args: { argv: ['a', 'b'] } },
    ];
    assert.equal(only(run(events).findings, 'identical-calls').length, 0);
  });

  it('only warns when every repetition succeeded with a new output (polling with progress)', () => {
    const events = times(5, (i) => ({ type: 'tool', tool: 'check_job', args: { job: 7 }, ok: true, output: `progress ${i * 20}%` }));
    const found = only(run(events).findings, 'identical-calls');
    assert.equal(found.length, 1);
    assert.equal(found[0]?.action, 'warn');
  });

  it('halts polling whose output stops changing', () => {
    const outputs = ['10%', '20%', '20%'];
    const found = only(run(outputs.map((o) => ({ type: 'tool', tool: 'check_job', args: { job: 7 }, ok: true, output: o }))).findings, 'identical-calls');
    assert.deepEqual(found.map((f) => f.action), ['halt']);
  });

  it('escalates a polling warning to a halt once the output repeats', () => {
    const outputs = ['1', '2', '3', '3'];
    const found = only(run(outputs.map((o) => ({ type: 'tool', tool: 'poll', args: {}, ok: true, output: o }))).findings, 'identical-calls');
    assert.deepEqual(found.map((f) => [f.action, f.count]), [['warn', 3], ['halt', 4]]);
  });

  it('with no outcome recorded, warns at 3 saying what cannot be known, and halts at twice that (issue 25)', () => {
    const found = only(run(times(6, () => ({ type: 'tool', tool: 'ls', args: { dir: '.' } }))).findings, 'identical-calls');
    assert.deepEqual(found.map((f) => [f.action, f.count]), [['warn', 3], ['halt', 6]]);
    assert.match(found[0]?.message ?? '', /not recorded, so whether they get anywhere cannot be known/);
  });

  it('counts an unrecorded outcome among recorded ones as no progress', () => {
    const events = [{ type: 'tool', tool: 'ls', args: { dir: '.' }, ok: true, output: 'a' }, ...times(2, () => ({ type: 'tool', tool: 'ls', args: { dir: '.' } }))];
    assert.equal(only(run(events).findings, 'identical-calls')[0]?.action, 'halt');
  });

  it('judges the outcome from a later tool_result with the same id', () => {
    const events = times(3, (i) => [
      { type: 'tool', tool: 'poll', args: {}, id: `c${i}` },
      { type: 'tool_result', id: `c${i}`, ok: true, output: `n=${i}` },
    ]).flat();
    const [f] = only(run(events).findings, 'identical-calls');
    assert.equal(f?.action, 'warn');
    assert.equal(f?.at.line, 6, 'fires on the result that settled the 3rd call');
    assert.deepEqual(f?.evidence.map((r) => r.line), [1, 3, 5]);
  });

  it('restarts counting after a user message', () => {
    const events = [edit(), edit(), { type: 'user', session: 's', text: 'try again' }, edit(), edit()];
    assert.equal(only(run(events).findings, 'identical-calls').length, 0);
  });

  it('counts per session', () => {
    const events = [edit({ session: 'a' }), edit({ session: 'b' }), edit({ session: 'a' }), edit({ session: 'b' }), edit({ session: 'a' })];
    const found = only(run(events).findings, 'identical-calls');
    assert.deepEqual(found.map((f) => f.session), ['a']);
  });

  it('honours a custom threshold and exempt tools', () => {
    assert.equal(only(run(times(4, () => edit()), config({ signals: { 'identical-calls': { threshold: 5 } } })).findings, 'identical-calls').length, 0);
    assert.equal(only(run(times(5, () => edit()), config({ exemptTools: ['apply_code_edit'] })).findings, 'identical-calls').length, 0);
  });

  it('raises a finding once per episode, and again for a new episode', () => {
    const other = { type: 'tool', session: 's', tool: 'read_file', args: {} };
    const events = [...times(5, () => edit()), other, ...times(3, () => edit())];
    const found = only(run(events).findings, 'identical-calls');
    assert.deepEqual(found.map((f) => f.at.line), [3, 9]);
  });

  it('is no longer active once the chain breaks', () => {
    const { engine } = run([edit(), edit(), edit()]);
    assert.equal(only(engine.active(), 'identical-calls').length, 1);
    const { engine: after } = run([edit(), edit(), edit(), { type: 'tool', session: 's', tool: 'read_file', args: {} }]);
    assert.equal(only(after.active(), 'identical-calls').length, 0);
  });

  it('polling a running process (a wait tool) with the same "still running" answer is waiting, not a loop; the same call of an ordinary tool still halts', () => {
    const poll = (i: number) => ({ type: 'tool', session: 's', tool: 'read_powershell', args: { delay: 120, shellId: '7' }, id: `w${i}`, ok: true, output: '<command with shellId: 7 is still running after 120 seconds.>' });
    assert.deepEqual(run(times(8, poll)).findings.map((f) => f.signal), []);
    const other = (i: number) => ({ ...poll(i), tool: 'read_file' });
    assert.ok(run(times(3, other)).findings.some((f) => f.action === 'halt'));
    assert.ok(run(times(3, poll), config({ waitTools: [] })).findings.some((f) => f.action === 'halt'), 'waitTools: [] judges them like any tool');
  });
});

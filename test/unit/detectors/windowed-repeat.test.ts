import * as assert from 'node:assert/strict';
import { config, only, run } from '../helpers';

const t = (tool: string, extra: Record<string, unknown> = {}) => ({ type: 'tool', session: 's', tool, args: { f: 'a.ts' }, ...extra });

describe('windowed-repeat (seed 002)', () => {
  it('halts when the same call comes 3 times within 10 steps and nothing between changed anything (the edits failed)', () => {
    const events = [t('read'), t('edit', { args: { n: 1 }, ok: false, error: 'no match' }), t('read'), t('edit', { args: { n: 2 }, ok: false, error: 'no match' }), t('read')];
    const found = only(run(events).findings, 'windowed-repeat');
    assert.equal(found.length, 1);
    assert.equal(found[0]?.action, 'halt');
    assert.deepEqual(found[0]?.evidence.map((r) => r.line), [1, 3, 5]);
  });

  it('only warns when a new call that did not fail came between (an edit went through, or may have: the workspace changed)', () => {
    for (const edit of [{ ok: true, output: 'applied' }, {}]) {
      const events = [t('read'), t('edit', { args: { n: 1 }, ...edit }), t('read'), t('edit', { args: { n: 2 }, ...edit }), t('read')];
      assert.deepEqual(only(run(events).findings, 'windowed-repeat').map((f) => f.action), ['warn'], JSON.stringify(edit));
    }
  });

  it('does not fire when the repeats are spread over more than the window', () => {
    const filler = (n: number) => Array.from({ length: n }, (_, i) => t('edit', { args: { n: i } }));
    const events = [t('read'), ...filler(5), t('read'), ...filler(5), t('read')];
    assert.equal(only(run(events).findings, 'windowed-repeat').length, 0);
    assert.equal(only(run(events, config({ signals: { 'windowed-repeat': { window: 13 } } })).findings, 'windowed-repeat').length, 1);
  });

  it('lets edit→test work that changes the failures go on: progress, no finding (issue 9; it used to warn)', () => {
    const events = [1, 2, 3].flatMap((i) => [
      t('edit', { args: { patch: `p${i}` }, ok: true, output: 'applied' }),
      t('test', { args: { cmd: 'npm test' }, ok: false, error: `${4 - i} tests failing` }),
    ]);
    assert.deepEqual(only(run(events).findings, 'windowed-repeat'), []);
  });

  it('edit→test work whose test fails the same way each time: a new edit each time is a new attempt (warn, issue 25); the same edit each time is the loop (halt)', () => {
    const work = (patch: (i: number) => string) =>
      [1, 2, 3].flatMap((i) => [
        t('edit', { args: { patch: patch(i) }, ok: true, output: 'applied' }),
        t('test', { args: { cmd: 'npm test' }, ok: false, error: '2 tests failing' }),
      ]);
    assert.deepEqual(only(run(work((i) => `p${i}`)).findings, 'windowed-repeat').map((f) => f.action), ['warn']);
    // The same edit and the same test, round after round: both repeat, both halt.
    const same = only(run(work(() => 'p')).findings, 'windowed-repeat');
    assert.ok(same.length > 0 && same.every((f) => f.action === 'halt'), JSON.stringify(same.map((f) => f.action)));
  });

  it('a call between the last two repeats that ends as the one before it did is nothing new, however new that end was', () => {
    const read = (output: string) => t('read', { ok: true, output });
    const look = (output: string) => t('look', { args: { q: 'y' }, ok: true, output });
    // The third read's end is new (no finding then); the look after it ends the same way: the fourth read is a loop.
    const events = [read('a'), look('z'), read('a'), look('z'), read('b'), look('b'), read('a')];
    assert.deepEqual(only(run(events).findings, 'windowed-repeat').map((f) => [f.action, f.evidence.map((r) => r.line)]), [['halt', [1, 3, 5, 7]]]);
    // Ending in a way nothing before it did is something new: a warning.
    const changed = [...events.slice(0, 5), look('c'), read('a')];
    assert.deepEqual(only(run(changed).findings, 'windowed-repeat').map((f) => f.action), ['warn']);
  });

  it('lets paging through results go on: different arguments are different calls', () => {
    const events = Array.from({ length: 8 }, (_, i) => t('list', { args: { page: i }, ok: true, output: `page ${i}` }));
    assert.equal(run(events).findings.length, 0);
  });
});

describe('windowed-repeat beside identical-calls', () => {
  it('stays quiet on back-to-back repeats that identical-calls reports', () => {
    const events = [t('read'), t('read'), t('read')];
    const signals = run(events).findings.map((f) => f.signal);
    assert.deepEqual(signals, ['identical-calls']);
  });

  it('reports back-to-back repeats itself when identical-calls is off or not yet at its threshold', () => {
    const events = [t('read'), t('read'), t('read')];
    assert.equal(only(run(events, config({ signals: { 'identical-calls': { enabled: false } } })).findings, 'windowed-repeat').length, 1);
    assert.equal(only(run(events, config({ signals: { 'identical-calls': { threshold: 5 } } })).findings, 'windowed-repeat').length, 1);
  });
});

const fail = (error: string) => ({ ok: false, error });
const edit = (extra: Record<string, unknown>) => t('Edit', { args: { file_path: 'page.tsx', old_string: 'a', new_string: 'b' }, ...extra });
const read = t('Read', { args: { file_path: 'page.tsx' }, ok: true, output: '1→import Image' });

describe('windowed-repeat: recovery and edit→verify (issue 9)', () => {
  it('an Edit that failed twice ("File has not been read yet"), then a Read, then the same Edit succeeding is recovery: no halt', () => {
    const events = [edit(fail('File has not been read yet. Read it first before writing to it.')), edit(fail('File has not been read yet. Read it first before writing to it.')), read, edit({ ok: true, output: 'The file page.tsx has been updated.' })];
    const { findings, engine } = run(events);
    assert.deepEqual(findings.filter((f) => f.action === 'halt'), []);
    assert.deepEqual(only(findings, 'windowed-repeat'), []);
    assert.deepEqual(engine.active().filter((f) => f.action === 'halt'), []);
  });

  it('the same failing Edit retried after a Read that changed nothing, a third time, is the loop (halt)', () => {
    const err = fail('String to replace not found in file.');
    const events = [edit(err), read, edit(err), read, edit(err)];
    assert.deepEqual(only(run(events).findings, 'windowed-repeat').map((f) => f.action), ['halt']);
  });

  it('re-running the reproduction after an edit: one unchanged output is information, not a loop', () => {
    const events = [
      t('run', { args: { cmd: 'python repro.py' }, ok: true, output: 'TypeError' }),
      t('edit', { args: { patch: 'p1' }, ok: true, output: 'edited 1' }),
      t('run', { args: { cmd: 'python repro.py' }, ok: true, output: 'ValueError' }),
      t('edit', { args: { patch: 'p2' }, ok: true, output: 'edited 2' }),
      t('run', { args: { cmd: 'python repro.py' }, ok: true, output: 'ValueError' }),
    ];
    assert.deepEqual(only(run(events).findings, 'windowed-repeat'), []);
  });

  it('several edit→run rounds with the same outcome are a finding: a warning while the edits differ, a halt when the rounds are identical', () => {
    const run3 = (edits: (i: number) => Record<string, unknown>) =>
      [0, 1, 2].flatMap((i) => [t('edit', edits(i)), t('run', { args: { cmd: 'python repro.py' }, ok: true, output: 'still broken' })]);
    const differing = only(run(run3((i) => ({ args: { patch: `p${i}` }, ok: true, output: `snippet ${i}` }))).findings, 'windowed-repeat');
    assert.deepEqual(differing.map((f) => f.action), ['warn']);
    const identical = only(run(run3(() => ({ args: { patch: 'p' }, ok: false, error: 'old_str not found' }))).findings, 'windowed-repeat');
    // The run and the identical failing edit both repeat: both halt.
    assert.ok(identical.length > 0);
    assert.ok(identical.every((f) => f.action === 'halt'));
  });
});

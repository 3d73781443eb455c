import * as assert from 'node:assert/strict';
import { config, only, run } from '../helpers';

const t = (tool: string, extra: Record<string, unknown> = {}) => ({ type: 'tool', session: 's', tool, args: { f: 'a.ts' }, ...extra });

describe('windowed-repeat (seed 002)', () => {
  it('halts when the same call comes 3 times within 10 steps', () => {
    const events = [t('read'), t('edit', { args: { n: 1 } }), t('read'), t('edit', { args: { n: 2 } }), t('read')];
    const found = only(run(events).findings, 'windowed-repeat');
    assert.equal(found.length, 1);
    assert.equal(found[0]?.action, 'halt');
    assert.deepEqual(found[0]?.evidence.map((r) => r.line), [1, 3, 5]);
  });

  it('does not fire when the repeats are spread over more than the window', () => {
    const filler = (n: number) => Array.from({ length: n }, (_, i) => t('edit', { args: { n: i } }));
    const events = [t('read'), ...filler(5), t('read'), ...filler(5), t('read')];
    assert.equal(only(run(events).findings, 'windowed-repeat').length, 0);
    assert.equal(only(run(events, config({ signals: { 'windowed-repeat': { window: 13 } } })).findings, 'windowed-repeat').length, 1);
  });

  it('lets edit→test work that changes the failures go on (warn only)', () => {
    const events = [1, 2, 3].flatMap((i) => [
      t('edit', { args: { patch: `p${i}` }, ok: true, output: 'applied' }),
      t('test', { args: { cmd: 'npm test' }, ok: false, error: `${4 - i} tests failing` }),
    ]);
    const found = only(run(events).findings, 'windowed-repeat');
    assert.deepEqual(found.map((f) => f.action), ['warn']);
  });

  it('halts edit→test work whose test fails the same way each time', () => {
    const events = [1, 2, 3].flatMap((i) => [
      t('edit', { args: { patch: `p${i}` }, ok: true, output: 'applied' }),
      t('test', { args: { cmd: 'npm test' }, ok: false, error: '2 tests failing' }),
    ]);
    assert.deepEqual(only(run(events).findings, 'windowed-repeat').map((f) => f.action), ['halt']);
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

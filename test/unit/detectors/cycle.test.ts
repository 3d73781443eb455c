import * as assert from 'node:assert/strict';
import { config, only, run } from '../helpers';

const call = (tool: string, extra: Record<string, unknown> = {}) => ({ type: 'tool', session: 's', tool, args: { x: 1 }, ...extra });
const seq = (tools: string) => tools.split('').map((c) => call(c));

describe('cycle', () => {
  it('fires A-B-A-B-A-B on its 6th call', () => {
    assert.equal(only(run(seq('ABABA')).findings, 'cycle').length, 0);
    const found = only(run(seq('ABABAB')).findings, 'cycle');
    assert.equal(found.length, 1);
    assert.equal(found[0]?.at.line, 6);
    assert.equal(found[0]?.action, 'halt');
    assert.equal(found[0]?.count, 3);
    assert.match(found[0]?.subject ?? '', /A → B \(period 2\)/);
  });

  it('fires A-B-C repeated on its 9th call', () => {
    assert.equal(only(run(seq('ABCABCAB')).findings, 'cycle').length, 0);
    const found = only(run(seq('ABCABCABC')).findings, 'cycle');
    assert.deepEqual(found.map((f) => f.at.line), [9]);
  });

  it('finds periods up to maxPeriod only', () => {
    const six = 'ABCDEF'.repeat(3);
    assert.equal(only(run(seq(six)).findings, 'cycle').length, 0);
    assert.equal(only(run(seq(six), config({ signals: { cycle: { maxPeriod: 6 } } })).findings, 'cycle').length, 1);
  });

  it('leaves a single repeated call to identical-calls', () => {
    assert.equal(only(run(seq('AAAAAAAA')).findings, 'cycle').length, 0);
  });

  it('grows the same finding while the cycle goes on, and ends it when it breaks', () => {
    const { findings, engine } = run(seq('ABABABABAB'));
    assert.equal(only(findings, 'cycle').length, 1);
    assert.equal(only(engine.active(), 'cycle')[0]?.count, 5);
    const broken = run(seq('ABABABC'));
    assert.equal(only(broken.engine.active(), 'cycle').length, 0);
  });

  it('only warns when every round succeeded with new results', () => {
    const events = [0, 1, 2].flatMap((i) => [call('edit', { ok: true, output: `v${i}` }), call('test', { ok: true, output: `${i} passed` })]);
    assert.deepEqual(only(run(events).findings, 'cycle').map((f) => f.action), ['warn']);
  });

  it('halts when the rounds end the same way', () => {
    const events = [0, 1, 2].flatMap(() => [call('edit', { ok: true, output: 'same' }), call('test', { ok: false, error: '1 failed' })]);
    assert.deepEqual(only(run(events).findings, 'cycle').map((f) => f.action), ['halt']);
  });

  it('takes its threshold from the config', () => {
    assert.equal(only(run(seq('ABAB'), config({ signals: { cycle: { threshold: 2 } } })).findings, 'cycle').length, 1);
  });
});

import * as assert from 'node:assert/strict';
import { gate } from '../../../src/core/gate';
import { config, located, only, run } from '../helpers';

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

/** The shape issue 9 found: view, grep, view, view, view, a failing str_replace — round after round, until the cost limit. */
const sixRound = (outputs: (step: number) => string | undefined) =>
  [
    { tool: 'str_replace_editor', args: { command: 'view', path: 'src/a.py' } },
    { tool: 'bash', args: { command: 'grep -n "def load" src/a.py' } },
    { tool: 'str_replace_editor', args: { command: 'view', path: 'src/a.py', view_range: [1, 40] } },
    { tool: 'str_replace_editor', args: { command: 'view', path: 'src/a.py', view_range: [40, 80] } },
    { tool: 'str_replace_editor', args: { command: 'view', path: 'src/b.py' } },
    { tool: 'str_replace_editor', args: { command: 'str_replace', path: 'src/a.py', old_str: 'def load(', new_str: 'def load(self, ' } },
  ].map((c, i) => {
    const out = outputs(i);
    if (i === 5) return { type: 'tool', session: 's', ...c, ok: false, error: 'No replacement was performed, old_str did not appear verbatim in src/a.py' };
    return { type: 'tool', session: 's', ...c, ...(out === undefined ? {} : { ok: true, output: out }) };
  });

describe('cycle: longer cycles whose outcomes repeat (issue 9)', () => {
  it('a six-call cycle (view, grep, view, view, view, failing str_replace) repeated 3 times with identical outcomes halts on its 18th call', () => {
    const round = () => sixRound((i) => `output ${i}`);
    assert.deepEqual(only(run([...round(), ...round(), ...round().slice(0, 5)]).findings, 'cycle'), []);
    const found = only(run([...round(), ...round(), ...round()]).findings, 'cycle');
    assert.deepEqual(found.map((f) => [f.action, f.at.line, f.count]), [['halt', 18, 3]]);
    assert.match(found[0]?.subject ?? '', /period 6/);
  });

  it('a long cycle whose outcomes change, or are not recorded, is left alone', () => {
    const changing = [0, 1, 2].flatMap((r) => sixRound((i) => `output ${i} round ${r}`));
    assert.deepEqual(only(run(changing).findings, 'cycle'), []);
    const unknown = [0, 1, 2].flatMap(() => sixRound(() => undefined)).map((e, i) => (i % 6 === 5 ? { ...e, ok: undefined, error: undefined } : e));
    assert.deepEqual(only(run(unknown).findings, 'cycle'), []);
  });

  it('catches up to the history kept: period 20 with the default 60, not period 21', () => {
    const unit = (p: number) => Array.from({ length: p }, (_, i) => call(`T${i}`, { ok: true, output: `o${i}` }));
    const rounds = (p: number) => [...unit(p), ...unit(p), ...unit(p)];
    assert.equal(only(run(rounds(20)).findings, 'cycle').length, 1);
    assert.equal(only(run(rounds(21)).findings, 'cycle').length, 0);
    assert.equal(only(run(rounds(21), config({ signals: { cycle: { history: 63 } } })).findings, 'cycle').length, 1);
  });

  it('edit→test rounds whose failure changes are moving (warn), the same failure each round halts', () => {
    const moving = [0, 1, 2].flatMap((i) => [call('edit', { ok: true, output: 'applied' }), call('test', { ok: false, error: `${3 - i} failed` })]);
    assert.deepEqual(only(run(moving).findings, 'cycle').map((f) => f.action), ['warn']);
  });
});

describe('the hook on a long cycle (issue 9)', () => {
  it('once the six-call cycle halted, the hook refuses the call that would start its next round', () => {
    const rounds = [0, 1, 2].flatMap(() => sixRound((i) => `output ${i}`));
    const pending = (i: number) => {
      const next = sixRound(() => 'x')[i] as { tool: string; args: Record<string, unknown> };
      return gate({ history: located(rounds), call: { tool: next.tool, args: next.args, session: 's', agent: 'a', ts: '2025-01-01T00:00:00Z' }, stop: { status: 'CLEAR' }, config: config() });
    };
    assert.equal(pending(0).allow, false);
    assert.equal(pending(1).allow, true, 'a call that is not the next one of the cycle is the agent breaking out');
  });
});

import * as assert from 'node:assert/strict';
import { MAX_PENDING } from '../../../src/core/engine';
import { config, located, only, run, times } from '../helpers';
import { Engine } from '../../../src/core/engine';

describe('engine', () => {
  it('waits for a call\'s result before judging it', () => {
    const engine = new Engine(config());
    const events = located([
      ...times(3, (i) => ({ type: 'tool', tool: 'poll', args: {}, id: `c${i}` })),
      ...times(3, (i) => ({ type: 'tool_result', id: `c${i}`, ok: true, output: `${i}` })),
    ]);
    const raised = events.slice(0, 3).flatMap((e) => engine.push(e));
    assert.equal(raised.length, 0, 'nothing is judged before the outcomes are known');
    const after = events.slice(3).flatMap((e) => engine.push(e));
    assert.deepEqual(only(after, 'identical-calls').map((f) => f.action), ['warn']);
  });

  it('stops waiting for a result that never comes after a few more calls', () => {
    const events = [
      ...times(3, () => ({ type: 'tool', tool: 'edit', args: { a: 1 }, id: 'never' })),
      ...times(MAX_PENDING, (i) => ({ type: 'tool', tool: 'other', args: { i } })),
    ];
    const engine = new Engine(config());
    const raised = located(events).flatMap((e) => engine.push(e));
    assert.equal(only(raised, 'identical-calls').length, 1);
  });

  it('settles waiting calls at the end of a replay', () => {
    const events = times(3, () => ({ type: 'tool', tool: 'edit', args: { a: 1 }, id: 'x' }));
    assert.equal(only(run(events).findings, 'identical-calls').length, 1);
  });

  it('counts results that match no call', () => {
    const { engine } = run([{ type: 'tool_result', id: 'ghost', ok: true }]);
    assert.equal(engine.stats.unmatchedResults, 1);
  });

  it('ends a session\'s active findings at a user message', () => {
    const { engine } = run([...times(3, () => ({ type: 'tool', session: 's', tool: 'ls', args: {} })), { type: 'user', session: 's', text: 'stop that' }]);
    assert.equal(engine.active().length, 0);
  });

  it('lists active findings most severe first', () => {
    const events = [
      ...times(3, (i) => ({ type: 'tool', session: 'a', tool: 'poll', args: {}, ok: true, output: `${i}` })),
      ...times(3, () => ({ type: 'tool', session: 'b', tool: 'ls', args: {} })),
    ];
    const actions = run(events).engine.active().map((f) => f.action);
    assert.equal(actions[0], 'halt');
    assert.ok(actions.includes('warn'));
  });

  it('turns a signal off when the config disables it', () => {
    const events = times(3, () => ({ type: 'tool', tool: 'ls', args: {} }));
    assert.equal(only(run(events, config({ signals: { 'identical-calls': { enabled: false } } })).findings, 'identical-calls').length, 0);
  });
});

import * as assert from 'node:assert/strict';
import { MAX_ACTIVE, MAX_PENDING, MAX_SESSIONS } from '../../../src/core/engine';
import { Canonicalizer } from '../../../src/core/canonical';
import { SessionSlot } from '../../../src/core/detector';
import { createDetectors } from '../../../src/core/detectors';
import { EVENT_TYPES } from '../../../src/core/events';
import { config, located, only, run, times } from '../helpers';
import { Engine } from '../../../src/core/engine';

describe('engine', () => {
  it('waits for a call\'s result before judging it', () => {
    const engine = new Engine(config());
    // Three polls, each after a word of the agent's (not one batch), their results written later.
    const events = located([
      ...times(3, (i) => [{ type: 'output', text: `polling, try ${i}` }, { type: 'tool', tool: 'poll', args: {}, id: `c${i}` }]).flat(),
      ...times(3, (i) => ({ type: 'tool_result', id: `c${i}`, ok: true, output: `${i}` })),
    ]);
    const raised = events.slice(0, 6).flatMap((e) => engine.push(e));
    assert.equal(raised.length, 0, 'nothing is judged before the outcomes are known');
    const after = events.slice(6).flatMap((e) => engine.push(e));
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

  it('pairs a result with the latest call of its id still waiting; an id given up on settles nothing later', () => {
    const call = (id: string, n: number) => ({ type: 'tool', session: 's', tool: 'edit', args: { n }, id });
    // Two calls with one id: its result settles the later one, and a second result for it matches nothing.
    const twice = run([call('x', 1), call('x', 2), { type: 'tool_result', session: 's', id: 'x', ok: true }, { type: 'tool_result', session: 's', id: 'x', ok: true }]);
    assert.equal(twice.engine.stats.unmatchedResults, 1);
    // The first call with id y is given up on (more than MAX_PENDING calls behind it): no result with id y settles anything after.
    const givenUp = run([call('y', 1), call('y', 2), ...times(MAX_PENDING, (i) => call(`z${i}`, i)), { type: 'tool_result', session: 's', id: 'y', ok: true }]);
    assert.equal(givenUp.engine.stats.unmatchedResults, 1);
    // Another session's result never settles this one's call.
    const other = run([call('w', 1), { type: 'tool_result', session: 't', id: 'w', ok: true }, { type: 'tool_result', session: 's', id: 'w', ok: true }]);
    assert.equal(other.engine.stats.unmatchedResults, 1);
  });

  it('settles the sessions\' waiting calls at the end of a replay in the order their waits began', () => {
    // Session a is seen first (a call judged at once), but b's calls began waiting before a's: b's loop is raised first at the end.
    const waits = (session: string) => times(3, (i) => ({ type: 'tool', session, tool: 'ls', args: {}, id: `${session}${i}` }));
    const { findings } = run([{ type: 'tool', session: 'a', tool: 'cat', args: {} }, ...waits('b'), ...waits('a')]);
    assert.deepEqual(only(findings, 'identical-calls').map((f) => f.session), ['b', 'a']);
    const reversed = run([...waits('a'), ...waits('b')]).findings;
    assert.deepEqual(only(reversed, 'identical-calls').map((f) => f.session), ['a', 'b']);
  });

  it('ends a session\'s active findings at a user message', () => {
    const { engine } = run([...times(3, () => ({ type: 'tool', session: 's', tool: 'ls', args: {} })), { type: 'user', session: 's', text: 'stop that' }]);
    assert.equal(engine.active().length, 0);
  });

  it('a user message ends that session\'s findings only, and not those of the signals that span turns', () => {
    const loop = (session: string) => times(3, () => ({ type: 'tool', session, tool: 'ls', args: {} }));
    // Three model requests of session s failing the same way after its loop: a storm, which spans turns.
    const storm = times(3, () => ({ type: 'api_error', session: 's', status: 400, error: 'messages.3: tool_use ids were found without tool_result blocks' }));
    const before = run([...loop('t'), ...loop('s'), ...storm]).engine.active().map((f) => `${f.session} ${f.signal}`).sort();
    assert.deepEqual(before, ['s api-error-storm', 's identical-calls', 't identical-calls']);
    const { engine } = run([...loop('t'), ...loop('s'), ...storm, { type: 'user', session: 's', text: 'stop that' }]);
    const left = engine.active().map((f) => `${f.session} ${f.signal}`).sort();
    assert.deepEqual(left, ['s api-error-storm', 't identical-calls']);
  });

  it('lists active findings most severe first', () => {
    const events = [
      ...times(3, (i) => ({ type: 'tool', session: 'a', tool: 'poll', args: {}, ok: true, output: `${i}` })),
      ...times(3, () => ({ type: 'tool', session: 'b', tool: 'ls', args: {}, ok: true, output: 'same' })),
    ];
    const actions = run(events).engine.active().map((f) => f.action);
    assert.equal(actions[0], 'halt');
    assert.ok(actions.includes('warn'));
  });

  it('turns a signal off when the config disables it', () => {
    const events = times(3, () => ({ type: 'tool', tool: 'ls', args: {} }));
    assert.equal(only(run(events, config({ signals: { 'identical-calls': { enabled: false } } })).findings, 'identical-calls').length, 0);
  });

  it('routes every kind of event a detector reads to it: a detector that reads events names their kinds', () => {
    const ctx = { config: config(), canon: new Canonicalizer(), slot: <T>(make: () => T) => new SessionSlot(0, make), window: () => undefined };
    for (const d of createDetectors(ctx)) {
      if (d.event === undefined) continue;
      assert.ok((d.events ?? []).length > 0, `${d.signal} reads events but names no kind of event`);
      for (const kind of d.events ?? []) assert.ok(EVENT_TYPES.includes(kind), `${d.signal}: ${kind}`);
    }
  });

  it('forgets the session seen first past MAX_SESSIONS, with every detector\'s state for it', () => {
    const engine = new Engine(config());
    // Two identical calls in session s0, then MAX_SESSIONS other sessions, then a third call in s0:
    // s0 was forgotten, so its run starts again (no finding); without the bound it would be three in a row.
    const call = (session: string) => ({ type: 'tool', session, tool: 'ls', args: { path: '.' } });
    const events = located([call('s0'), call('s0'), ...times(MAX_SESSIONS, (i) => call(`other${i}`)), call('s0')]);
    const raised = events.flatMap((e) => engine.push(e)).filter((f) => f.session === 's0');
    assert.deepEqual(raised, []);
    const kept = new Engine(config());
    const near = located([call('s0'), call('s0'), ...times(MAX_SESSIONS - 2, (i) => call(`other${i}`)), call('s0')]);
    assert.ok(near.flatMap((e) => kept.push(e)).some((f) => f.session === 's0' && f.signal === 'identical-calls'), 'within the bound it is remembered');
  });

  it('keeps at most MAX_ACTIVE findings active: a log whose sessions come and go, each ending in a loop, does not grow it without end', () => {
    const engine = new Engine(config());
    const sessions = MAX_ACTIVE + 50;
    let raised = 0;
    for (let s = 0; s < sessions; s++) {
      for (const e of located(times(3, () => ({ type: 'tool', session: `s${s}`, tool: 'ls', args: { path: '.' } })))) raised += engine.push(e).length;
    }
    assert.ok(raised >= sessions, 'every session raised its loop');
    const active = engine.active();
    assert.equal(active.length, MAX_ACTIVE);
    assert.ok(active.every((f) => Number(f.session.slice(1)) >= 50), 'the ones raised first went first');
  });

  it('one loop, one alarm, with thousands going on at once: a loop that left the active list for its bound is not raised again, unless it grows more severe; failing-call sees every session', () => {
    // 1,500 sessions (a receiver's), interleaved, each running the same failing build four times:
    // about three loops each (identical-calls, repeated-error, failing-call), past MAX_ACTIVE.
    const engine = new Engine(config());
    const sessions = 1_500;
    const raised = new Map<string, number>();
    let line = 0;
    for (let round = 0; round < 4; round++) {
      for (let s = 0; s < sessions; s++) {
        const event = { v: 1 as const, type: 'tool' as const, session: `s${s}`, tool: 'Bash', args: { command: 'npm run build' }, ok: false, error: "src/a.ts(1,1): error TS1005: ';' expected." };
        for (const f of engine.push({ event, ref: { file: 'log', line: ++line, event: line } })) {
          const key = `${f.session} ${f.signal} ${f.action}`;
          raised.set(key, (raised.get(key) ?? 0) + 1);
        }
      }
    }
    assert.equal(engine.active().length, MAX_ACTIVE, 'loops left the active list for its bound');
    assert.deepEqual([...raised].filter(([, n]) => n > 1), [], 'no loop raised twice at one action');
    for (const [signal, action] of [['identical-calls', 'halt'], ['repeated-error', 'warn'], ['repeated-error', 'halt'], ['failing-call', 'halt']]) {
      assert.equal([...raised.keys()].filter((k) => k.endsWith(` ${signal} ${action}`)).length, sessions, `${signal} ${action} for every session`);
    }
  });
});


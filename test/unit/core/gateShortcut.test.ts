import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { gate, judgeByReplay } from '../../../src/core/gate';
import { Canonicalizer } from '../../../src/core/canonical';
import { mayRepeatIn, stopGate } from '../../../src/core/verdict';
import { config, located } from '../helpers';

/**
 * The hook's gate answers a call that repeats none of the session's recent calls without
 * replaying them (issue 10). On generated sessions, with loops in them and every signal denied,
 * its verdict is the replay's.
 */

const TOOLS = ['Bash', 'Read', 'Edit'];
const ARGS = [{ command: 'npm test' }, { command: 'npm test', description: 'run the tests again' }, { file_path: 'a.ts' }, { file_path: 'b.ts' }, { command: 'ls' }];

/** One step of a session: a call with its outcome inline or as a later result, or a person's turn. */
const step = fc.oneof(
  { weight: 8, arbitrary: fc.record({ tool: fc.constantFrom(...TOOLS), args: fc.constantFrom(...ARGS), outcome: fc.constantFrom('ok-same', 'ok-new', 'error', 'none', 'result-ok', 'result-error') }) },
  { weight: 1, arbitrary: fc.constant({ user: true as const }) },
);

function session(steps: readonly ({ tool: string; args: Record<string, unknown>; outcome: string } | { user: true })[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  steps.forEach((s, i) => {
    const common = { session: 's', agent: 'a', ts: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() };
    if ('user' in s) return out.push({ ...common, type: 'user', text: 'go on' });
    const call = { ...common, type: 'tool', tool: s.tool, args: s.args };
    if (s.outcome === 'ok-same') out.push({ ...call, ok: true, output: 'same' });
    else if (s.outcome === 'ok-new') out.push({ ...call, ok: true, output: `output ${i}` });
    else if (s.outcome === 'error') out.push({ ...call, ok: false, error: 'ENOENT: no such file' });
    else if (s.outcome === 'none') out.push({ ...call, id: `c${i}` });
    else {
      out.push({ ...call, id: `c${i}` });
      out.push({ ...common, type: 'tool_result', id: `c${i}`, ...(s.outcome === 'result-ok' ? { ok: true, output: 'same' } : { ok: false, error: 'exit 1' }) });
    }
    return out.length;
  });
  return out;
}

type Step = { tool: string; args: Record<string, unknown>; outcome: string } | { user: true };

/** Sessions that wander, and sessions that loop: a few steps, then a round of one to three calls repeated. */
const sessionSteps: fc.Arbitrary<Step[]> = fc.oneof(
  fc.array(step, { maxLength: 40 }),
  fc
    .tuple(fc.array(step, { maxLength: 10 }), fc.array(step, { minLength: 1, maxLength: 3 }), fc.integer({ min: 2, max: 6 }))
    .map(([before, round, times]) => [...before, ...Array.from({ length: times }, () => round).flat()]),
);

/** The call a loop would make next: the one a round before the last call, else the last call again. */
function loopNext(steps: readonly Step[]): { tool: string; args: Record<string, unknown> } | undefined {
  const calls = steps.filter((st): st is Exclude<Step, { user: true }> => !('user' in st));
  for (let p = 1; p <= 3; p++) {
    const back = calls[calls.length - p];
    if (back !== undefined && calls.length >= 2 * p && calls.slice(-p).every((c, i) => c.tool === calls[calls.length - 2 * p + i]?.tool && c.args === calls[calls.length - 2 * p + i]?.args)) return back;
  }
  return calls[calls.length - 1];
}

describe('the gate answers a new call without a replay, as the replay would', () => {
  it('on generated sessions, every signal denied, STOP_ALL clear or paused', () => {
    const cfg = config({ hooks: { deny: ['identical-calls', 'failing-call', 'windowed-repeat', 'cycle', 'repeated-error', 'identical-output', 'budget', 'oscillation'] } });
    let refused = 0;
    let shortcut = 0;
    fc.assert(
      fc.property(sessionSteps, fc.constantFrom(...TOOLS), fc.constantFrom(...ARGS), fc.boolean(), fc.constantFrom('CLEAR', 'PAUSE'), (steps, anyTool, anyArgs, next, status) => {
        // Half the time the call is the one a loop in the session would make next.
        const { tool, args } = (next ? loopNext(steps) : undefined) ?? { tool: anyTool, args: anyArgs };
        const history = located(session(steps));
        const input = { history, call: { tool, args, session: 's', agent: 'a', ts: '2026-01-02T00:00:00Z' }, stop: { status } as const, config: cfg };
        const expected = stopGate(input.stop, tool, cfg.hooks.delegationTools) ?? judgeByReplay(input);
        const verdict = gate(input);
        assert.deepEqual({ ...verdict, finding: undefined }, { ...expected, finding: undefined });
        if (!verdict.allow) refused++;
        if (verdict.allow && !history.some((e) => e.event.type === 'tool' && e.event.tool === tool)) shortcut++;
      }),
      { numRuns: 3000 },
    );
    assert.ok(refused > 100, `only ${refused} refusals: the sessions must loop`);
    assert.ok(shortcut > 100, `only ${shortcut} calls new to the session`);
  });
});

/**
 * Before it parses the session's log, the hook asks whether the log's text may hold the call at
 * all (`mayRepeatIn`): where it says no, the call must be one the replay allows. The log's lines
 * as the hook writes them: `JSON.stringify` of each event.
 */
describe('a call none of whose signature strings is in the log text is one the replay allows', () => {
  const logText = (events: readonly Record<string, unknown>[]) => events.map((e) => JSON.stringify({ v: 1, ...e })).join('\n');

  it('on generated sessions, every signal denied: where the text rules the call out, the replay allows it', () => {
    const cfg = config({ hooks: { deny: ['identical-calls', 'failing-call', 'windowed-repeat', 'cycle', 'repeated-error', 'identical-output', 'budget', 'oscillation'] } });
    let ruledOut = 0;
    let refused = 0;
    fc.assert(
      fc.property(sessionSteps, fc.constantFrom(...TOOLS), fc.constantFrom(...ARGS), fc.boolean(), (steps, anyTool, anyArgs, next) => {
        const { tool, args } = (next ? loopNext(steps) : undefined) ?? { tool: anyTool, args: anyArgs };
        const events = session(steps);
        const input = { history: located(events), call: { tool, args, session: 's', agent: 'a', ts: '2026-01-02T00:00:00Z' }, stop: { status: 'CLEAR' } as const, config: cfg };
        const verdict = judgeByReplay(input);
        if (!verdict.allow) refused++;
        if (mayRepeatIn(logText(events), { tool, args }, cfg)) return;
        ruledOut++;
        assert.deepEqual(verdict, { allow: true }, `ruled out, yet the replay refuses ${tool} ${JSON.stringify(args)}`);
      }),
      { numRuns: 3000 },
    );
    assert.ok(refused > 100, `only ${refused} refusals: the sessions must loop`);
    assert.ok(ruledOut > 300, `only ${ruledOut} calls ruled out by the text`);
  });

  // Any arguments, and a call with the same signature written in another order, with volatile
  // keys added anywhere and the tool's volatile argument changed: the text never rules it out.
  const key = fc.string({ minLength: 1, maxLength: 5 });
  const args = fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 });
  const VOLATILE = ['id', 'Timestamp', 'tool_use_id', 'elapsed_ms'];
  const reorder = (value: unknown, salt: number): unknown => {
    if (Array.isArray(value)) return value.map((v) => reorder(v, salt));
    if (typeof value !== 'object' || value === null) return value;
    const keys = Object.keys(value);
    const order = salt % 2 === 0 ? keys.reverse() : keys.sort();
    const out: Record<string, unknown> = {};
    if (salt % 3 === 0) out[VOLATILE[salt % VOLATILE.length] as string] = `v${salt}`;
    // As JSON.parse makes them: own keys, `__proto__` too.
    for (const k of order) Object.defineProperty(out, k, { value: reorder((value as Record<string, unknown>)[k], salt + 1), enumerable: true, writable: true, configurable: true });
    return out;
  };
  for (const tool of ['Bash', 'Read', 'a "quoted" \\ tool ✓']) {
    it(`${tool}: an equal call, however written, is never ruled out`, () => {
      const cfg = config();
      const canon = new Canonicalizer(cfg.volatileKeys, cfg.volatileArgs);
      fc.assert(
        fc.property(args, fc.nat(), fc.string(), (a, salt, description) => {
          const earlier = { ...(reorder(a, salt) as Record<string, unknown>), ...(tool === 'Bash' ? { description } : {}) };
          assert.equal(canon.signatureHash(tool, earlier), canon.signatureHash(tool, a), 'the same signature, written another way');
          const text = logText([{ type: 'tool', tool: 'Other', args: { x: 1 } }, { type: 'tool', tool, args: earlier, id: 'c1' }, { type: 'tool_result', id: 'c1', ok: true, output: 'done' }]);
          assert.equal(mayRepeatIn(text, { tool, args: a }, cfg), true);
        }),
        { numRuns: 2000 },
      );
    });
  }

  it('rules out a call whose tool, or any string of whose signature, is in no line', () => {
    const cfg = config();
    const text = logText([
      { type: 'tool', tool: 'Bash', args: { command: 'npm test', description: 'run the tests' }, id: 'c1' },
      { type: 'tool_result', id: 'c1', ok: false, error: 'exit 1' },
      { type: 'tool', tool: 'Read', args: { file_path: 'src/a.ts', limit: 10 }, ok: true, output: 'npm run build' },
    ]);
    const may = (tool: string, args: Record<string, unknown>) => mayRepeatIn(text, { tool, args }, cfg);
    assert.equal(may('Bash', { command: 'npm test' }), true);
    assert.equal(may('Bash', { command: 'npm test', description: 'once more' }), true, 'the description of a shell call is no part of it');
    assert.equal(may('Bash', { command: 'npm run build' }), true, 'a string in an output is there too: it cannot tell, and the log is parsed');
    assert.equal(may('Bash', { command: 'npm run lint' }), false);
    assert.equal(may('Bash', { cmd: 'npm test' }), false, 'a key is part of the signature too');
    assert.equal(may('Edit', { file_path: 'src/a.ts', limit: 10 }), false, 'another tool');
    assert.equal(may('Read', { file_path: 'src/a.ts', limit: 20 }), true, 'numbers are not looked for');
    assert.equal(may('Read', { file_path: 'src/a.ts', offset: 10 }), false, 'nor is a key in no line');
    assert.equal(may('Read', { file_path: 'src/b.ts' }), false);
  });
});

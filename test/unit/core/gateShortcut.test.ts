import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { gate, judgeByReplay } from '../../../src/core/gate';
import { stopGate } from '../../../src/core/verdict';
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

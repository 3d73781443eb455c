import * as assert from 'node:assert/strict';
import { config, only, run } from '../helpers';

const attempt = (fields: Record<string, unknown>) => ({ type: 'attempt', session: 's', task: 'abc12345', ok: false, ...fields });
const status = (s: string) => ({ type: 'status', session: 's', task: 'T-1', status: s });

describe('retry-exhaustion (seed 002)', () => {
  it('blocks a task after 3 failed attempts with the same failure class', () => {
    const events = [
      attempt({ error: 'ENOENT: no such file a.ts' }),
      attempt({ error: 'File not found: b.ts' }),
      attempt({ error: 'no such file or directory c.ts' }),
    ];
    const found = only(run(events).findings, 'retry-exhaustion');
    assert.equal(found.length, 1);
    assert.equal(found[0]?.status, 'BLOCKED');
    assert.equal(found[0]?.action, 'halt');
    assert.match(found[0]?.message ?? '', /file_not_found/);
  });

  it('starts again when the failure class changes or an attempt succeeds', () => {
    const changing = [attempt({ error: 'ENOENT' }), attempt({ error: 'HTTP 429' }), attempt({ error: 'ENOENT' })];
    assert.equal(only(run(changing).findings, 'retry-exhaustion').length, 0);
    const recovered = [attempt({ error: 'ENOENT' }), attempt({ error: 'ENOENT' }), attempt({ ok: true }), attempt({ error: 'ENOENT' })];
    assert.equal(only(run(recovered).findings, 'retry-exhaustion').length, 0);
  });
});

describe('oscillation (seed 002)', () => {
  it('blocks a task whose status comes back for the 3rd time', () => {
    const events = ['IN_PROGRESS', 'REVIEW', 'REJECTED', 'IN_PROGRESS', 'REVIEW', 'REJECTED', 'IN_PROGRESS'].map(status);
    const found = only(run(events).findings, 'oscillation');
    assert.equal(found.length, 1);
    assert.equal(found[0]?.at.line, 7);
    assert.equal(found[0]?.status, 'BLOCKED');
    assert.match(found[0]?.message ?? '', /IN_PROGRESS → REVIEW → REJECTED → IN_PROGRESS/);
  });

  it('fires on A-B-A-B-A between two states', () => {
    assert.equal(only(run(['A', 'B', 'A', 'B', 'A'].map(status)).findings, 'oscillation')[0]?.at.line, 5);
  });

  it('leaves a normal workflow, one rework and repeated reports of one status alone', () => {
    const events = ['TODO', 'IN_PROGRESS', 'IN_PROGRESS', 'REVIEW', 'IN_PROGRESS', 'REVIEW', 'DONE'].map(status);
    assert.equal(only(run(events).findings, 'oscillation').length, 0);
  });

  it('evidence and path start at the task\'s first status; case does not make a status new', () => {
    const found = only(run(['open', 'REVIEW', 'Open', 'review', 'OPEN'].map(status)).findings, 'oscillation');
    assert.deepEqual(found.map((f) => [f.count, f.evidence.map((r) => r.line)]), [[3, [1, 2, 3, 4, 5]]]);
    assert.match(found[0]?.message ?? '', /\(OPEN → REVIEW → OPEN → REVIEW → OPEN\)/);
  });

  it('a task of endless new statuses keeps counting the latest 64: memory stays bounded, and a loop among them is still found', () => {
    const many = Array.from({ length: 5_000 }, (_, i) => `S${i}`);
    const events = [...many, 'A', 'B', 'A', 'B', 'A'].map(status);
    const found = only(run(events).findings, 'oscillation');
    assert.deepEqual(found.map((f) => [f.count, f.at.line]), [[3, 5_005]]);
  });
});

describe('stuck-tier (seed 003)', () => {
  it('asks to force-escalate after 3 failed attempts at the same tier', () => {
    const events = [1, 2, 3].map((i) => attempt({ tier: 2, error: `a different error each time: ${"x".repeat(i * 7)}` }));
    const found = only(run(events).findings, 'stuck-tier');
    assert.equal(found[0]?.action, 'escalate');
    assert.match(found[0]?.recommendation ?? '', /tier 2 → 4/);
    assert.equal(found[0]?.details?.suggested_tier, 4);
  });

  it('is reset by a tier change', () => {
    const events = [attempt({ tier: 2 }), attempt({ tier: 2 }), attempt({ tier: 4 }), attempt({ tier: 4 })];
    assert.equal(only(run(events).findings, 'stuck-tier').length, 0);
  });

  it('halts for a person from the human-review tier on', () => {
    const events = [1, 2, 3].map(() => attempt({ tier: 6 }));
    const found = only(run(events).findings, 'stuck-tier');
    assert.equal(found[0]?.action, 'halt');
    assert.equal(found[0]?.status, 'BLOCKED');
    const lower = only(run(events, config({ tiers: { humanReviewFrom: 7 } })).findings, 'stuck-tier');
    assert.equal(lower[0]?.action, 'escalate');
  });
});

describe('quality-gate-loop (seed 003)', () => {
  it('breaks the circuit when the same gate fails twice in a row', () => {
    const events = [attempt({ tier: 2, gate: 'lint', error: 'lint error on line 45' }), attempt({ tier: 2, gate: 'lint', error: 'lint error on line 48' })];
    const found = only(run(events).findings, 'quality-gate-loop');
    assert.equal(found.length, 1);
    assert.equal(found[0]?.action, 'halt');
    assert.equal(found[0]?.status, 'BLOCKED');
  });

  it('does not fire for different gates or after a pass', () => {
    assert.equal(only(run([attempt({ gate: 'lint' }), attempt({ gate: 'types' })]).findings, 'quality-gate-loop').length, 0);
    assert.equal(only(run([attempt({ gate: 'lint' }), attempt({ ok: true }), attempt({ gate: 'lint' })]).findings, 'quality-gate-loop').length, 0);
  });
});

describe('budget (seed 002)', () => {
  const usage = (used: number, extra: Record<string, unknown> = {}) => ({ type: 'usage', session: 's', task: 'T', used, budget: 1000, ...extra });

  it('walks the per-task table: WARNING, RESTRICT, URGENT warn; HARD STOP, VIOLATION halt', () => {
    const found = only(run([100, 690, 700, 750, 800, 900, 949, 950, 1000, 1001].map((u) => usage(u))).findings, 'budget');
    assert.deepEqual(
      found.map((f) => [f.details?.level, f.action, f.count]),
      [
        ['WARNING', 'warn', 700],
        ['RESTRICT', 'warn', 800],
        ['URGENT', 'warn', 900],
        ['HARD STOP', 'halt', 950],
        ['VIOLATION', 'halt', 1001],
      ],
    );
  });

  it('says a budget in plain words: how much of it is used, not the level in capitals; its count is tokens', () => {
    const [f] = only(run([usage(1001)]).findings, 'budget');
    assert.match(f?.subject ?? '', /: 100% of its token budget$/);
    assert.match(f?.message ?? '', /has used 100% of its token budget \(1001 of 1000 tokens\): violation$/);
    assert.doesNotMatch(`${f?.subject} ${f?.message}`, /VIOLATION/);
    assert.equal(f?.details?.level, 'VIOLATION', "seed 002's level name kept in the details");
  });

  it('reports a level crossed in one jump once, at the highest level', () => {
    const found = only(run([usage(960), usage(970)]).findings, 'budget');
    assert.deepEqual(found.map((f) => f.details?.level), ['HARD STOP']);
  });

  it('applies the session rules: notify at 70%, no new delegations at 80%, wrap up at 95%', () => {
    const s = (used: number) => ({ type: 'usage', session: 's', session_used: used, session_budget: 100 });
    const found = only(run([s(69), s(70), s(85), s(96)]).findings, 'budget');
    assert.deepEqual(found.map((f) => [f.details?.level, f.action]), [['SESSION NOTIFY', 'warn'], ['NO NEW DELEGATIONS', 'warn'], ['WRAP UP', 'halt']]);
  });

  it('takes its levels from the config', () => {
    const found = only(run([usage(500)], config({ signals: { budget: { task: { warning: 50 } } } })).findings, 'budget');
    assert.equal(found[0]?.details?.level, 'WARNING');
  });
});

describe('repeated-invocation (seed 000) in the event log', () => {
  const inv = (agent: string, cfg: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'invocation', session: 'orch', agent, config: cfg, result: 'failed', reason: 'Type-check failed', ...extra });

  it("halts on the 3rd identical invocation, carrying seed 000's JSON", () => {
    const found = only(run([inv('bug-fixer', { priority: 'critical' }), inv('bug-fixer', { priority: 'critical' }), inv('bug-fixer', { priority: 'critical' })]).findings, 'repeated-invocation');
    assert.equal(found.length, 1);
    const details = found[0]?.details as { loop_detected: boolean; action: string; diagnostic_info: { suspected_cause: string; recent_invocations: unknown[] } };
    assert.equal(details.loop_detected, true);
    assert.equal(details.action, 'halt');
    assert.equal(details.diagnostic_info.suspected_cause, 'Worker fails type-check repeatedly - bug fixes introduce type errors');
    assert.equal(details.diagnostic_info.recent_invocations.length, 3);
  });

  it('is broken by another agent and restarted by a changed config', () => {
    const events = [inv('bug-fixer', { p: 1 }), inv('bug-fixer', { p: 1 }), inv('security-fixer', {}), inv('bug-fixer', { p: 1 }), inv('bug-fixer', { p: 2 })];
    assert.equal(only(run(events).findings, 'repeated-invocation').length, 0);
  });
});

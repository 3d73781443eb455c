import * as assert from 'node:assert/strict';
import { renderBlockedStatus, renderBlockedSummary, type BlockedTask } from '../../../src/core/blockedSummary';
import type { AttemptEvent } from '../../../src/core/events';
import { analyzeTask, FORCE_ESCALATE, forceEscalate } from '../../../src/core/taskAnalysis';
import { config } from '../helpers';

const a = (fields: Partial<AttemptEvent>): AttemptEvent => ({ v: 1, type: 'attempt', task: 'abc12345', ok: false, ...fields });
const mapError = "TypeError: Cannot read property 'map' of undefined";

describe('task analysis (seed 003)', () => {
  it("reproduces seed 003's analyze example", () => {
    const attempts = [1, 2, 3, 4].map(() => a({ tier: 2, error: mapError }));
    assert.deepEqual(analyzeTask('abc12345', attempts, undefined, config()), {
      task_id: 'abc12345',
      pattern_type: 'repeated_error',
      attempt_count: 4,
      current_tier: 2,
      repeated_error_count: 4,
      latest_error: mapError,
      suggested_action: FORCE_ESCALATE,
    });
  });

  it('sees a quality-gate loop before a repeated error (seed 003, case 2)', () => {
    const attempts = [45, 48, 45].map((line) => a({ tier: 2, gate: 'lint', error: `lint error on line ${line}` }));
    const r = analyzeTask('ghi11111', attempts, undefined, config());
    assert.equal(r.pattern_type, 'quality_gate_loop');
    assert.match(r.suggested_action, /^Circuit break/);
  });

  it('sees a stuck tier when every error is new (seed 003, case 3)', () => {
    const attempts = ['disk quota exceeded on /var', 'unexpected token < in JSON', 'segmentation fault in worker'].map((error) => a({ tier: 2, error }));
    const r = analyzeTask('def67890', attempts, undefined, config());
    assert.equal(r.pattern_type, 'stuck_tier');
    assert.equal(r.suggested_action, FORCE_ESCALATE);
  });

  it('uses the escalated tier from the task state, which ends the stuck tier', () => {
    const attempts = [1, 2, 3].map((i) => a({ tier: 2, error: `error number ${'z'.repeat(i)} of a kind ${i}` }));
    const state = { version: 1 as const, task_id: 'x', tier: 4, status: 'active' as const, tier_history: [] };
    const r = analyzeTask('x', attempts, state, config());
    assert.equal(r.current_tier, 4);
    assert.notEqual(r.pattern_type, 'stuck_tier');
  });

  it('asks for a person at the top tiers', () => {
    const attempts = [1, 2].map(() => a({ tier: 6, error: mapError }));
    assert.match(analyzeTask('x', attempts, undefined, config()).suggested_action, /human review required/);
  });

  it('finds no pattern in a healthy task', () => {
    const r = analyzeTask('ok', [a({ tier: 1, error: 'flaky' }), a({ tier: 1, ok: true })], undefined, config());
    assert.equal(r.pattern_type, 'none');
    assert.equal(r.attempt_count, 2);
  });
});

describe('force-escalate (seed 003)', () => {
  it('jumps 2 tiers and records the change', () => {
    const r = forceEscalate('t', 2, undefined, 'Repeated error at tier 2', '2026-01-01T00:00:00Z', config());
    assert.equal(r.outcome, 'escalated');
    if (r.outcome === 'escalated') {
      assert.equal(r.to, 4);
      assert.deepEqual(r.state.tier_history, [{ from: 2, to: 4, at: '2026-01-01T00:00:00Z', reason: 'Repeated error at tier 2' }]);
    }
  });

  it('stops at the top tier and answers HUMAN_INTERVENTION_REQUIRED from the human-review tier', () => {
    const five = forceEscalate('t', 5, undefined, 'r', 'now', config());
    assert.ok(five.outcome === 'escalated' && five.to === 7);
    assert.equal(forceEscalate('t', 6, undefined, 'r', 'now', config()).outcome, 'HUMAN_INTERVENTION_REQUIRED');
    assert.equal(forceEscalate('t', 3, undefined, 'r', 'now', config({ tiers: { max: 3, humanReviewFrom: 3 } })).outcome, 'HUMAN_INTERVENTION_REQUIRED');
  });
});

describe('blocked-task summaries (seed 003)', () => {
  const task: BlockedTask = {
    task_id: 'abc12345',
    blocked_at: '2025-12-06T04:15:32Z',
    pattern: 'repeated_error',
    attempts: 4,
    tier: 2,
    reason: 'Same error appearing 4 times',
    latest_error: mapError,
    repeated_error_count: 4,
    suggested_action: FORCE_ESCALATE,
    summary_file: '.tmp/guardian/blocked/abc12345-summary.txt',
    description: 'Implement React component with data fetching',
  };

  it("has the seed's sections", () => {
    const text = renderBlockedSummary(task, 'loop-guardian cleanup abc12345');
    for (const part of ['TASK BLOCKED', 'Task ID: abc12345', 'Implement React component', 'Loop Pattern: repeated_error', 'Attempts: 4', 'Current Tier: 2', 'REPEATED ERROR', mapError, 'SUGGESTED ACTION', FORCE_ESCALATE, 'NEXT STEPS', 'loop-guardian cleanup abc12345']) {
      assert.ok(text.includes(part), part);
    }
  });

  it("lists blocked tasks as the seed's status does", () => {
    const text = renderBlockedStatus([task], '.tmp/guardian/blocked');
    assert.match(text, /Blocked Tasks: 1/);
    assert.match(text, /abc12345\s+\| Attempts: 4\s+\| Tier: 2\s+\| Pattern: repeated_error/);
  });
});

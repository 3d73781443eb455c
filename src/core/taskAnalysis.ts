import type { GuardianConfig } from './config';
import { sameError } from './errorMatch';
import type { AttemptEvent } from './events';

/** Seed 003's per-task state, kept in `.tmp/guardian/tasks/<task>.json`. */
export interface TierChange {
  readonly from: number;
  readonly to: number;
  readonly at: string;
  readonly reason: string;
}

export interface TaskState {
  readonly version: 1;
  readonly task_id: string;
  readonly tier?: number;
  readonly status: 'active' | 'blocked';
  readonly tier_history: readonly TierChange[];
}

export type PatternType = 'repeated_error' | 'stuck_tier' | 'quality_gate_loop' | 'none';

/** Seed 003's `analyze` output. */
export interface TaskAnalysis {
  task_id: string;
  pattern_type: PatternType;
  attempt_count: number;
  current_tier: number;
  repeated_error_count: number;
  latest_error: string | null;
  suggested_action: string;
  description?: string;
}

export const FORCE_ESCALATE = 'Force escalate 2 tiers (skip ineffective middle tier)';

function errorOf(a: AttemptEvent): string | undefined {
  return a.error ?? (a.gate !== undefined ? `quality gate ${a.gate} failed` : undefined);
}

/** Trailing run of failed attempts for which `same` holds against the last one. */
function trailing(attempts: readonly AttemptEvent[], same: (a: AttemptEvent, last: AttemptEvent) => boolean): number {
  const last = attempts[attempts.length - 1];
  if (!last || last.ok) return 0;
  let n = 0;
  for (let i = attempts.length - 1; i >= 0; i--) {
    const a = attempts[i] as AttemptEvent;
    if (a.ok || !same(a, last)) break;
    n++;
  }
  return n;
}

export function currentTier(attempts: readonly AttemptEvent[], state: TaskState | undefined): number {
  if (state?.tier !== undefined) return state.tier;
  for (let i = attempts.length - 1; i >= 0; i--) {
    const tier = (attempts[i] as AttemptEvent).tier;
    if (tier !== undefined) return tier;
  }
  return 1;
}

export function analyzeTask(taskId: string, attempts: readonly AttemptEvent[], state: TaskState | undefined, config: GuardianConfig): TaskAnalysis {
  const tier = currentTier(attempts, state);
  const failed = attempts.filter((a) => !a.ok);
  const latest = [...failed].reverse().map(errorOf).find((e) => e !== undefined);
  const repeated = latest === undefined ? 0 : failed.filter((a) => {
    const e = errorOf(a);
    return e !== undefined && sameError(e, latest) !== undefined;
  }).length;
  const gateRun = trailing(attempts, (a, last) => a.gate !== undefined && a.gate === last.gate);
  const lastTier = attempts[attempts.length - 1]?.tier;
  // Attempts made at the tier the task is at now; an escalation since then is a tier change.
  const tierRun = lastTier === undefined || lastTier !== tier ? 0 : trailing(attempts, (a, last) => a.tier === last.tier);

  const s = config.signals;
  let pattern: PatternType = 'none';
  if (s['quality-gate-loop'].enabled && gateRun >= s['quality-gate-loop'].threshold) pattern = 'quality_gate_loop';
  else if (s['repeated-error'].enabled && repeated >= s['repeated-error'].warnAt) pattern = 'repeated_error';
  else if (s['stuck-tier'].enabled && tierRun >= s['stuck-tier'].threshold) pattern = 'stuck_tier';

  const description = [...attempts].reverse().find((a) => a.description !== undefined)?.description;
  return {
    task_id: taskId,
    pattern_type: pattern,
    attempt_count: attempts.length,
    current_tier: tier,
    repeated_error_count: repeated,
    latest_error: latest ?? null,
    suggested_action: suggestedAction(pattern, tier, config),
    ...(description !== undefined ? { description } : {}),
  };
}

export function suggestedAction(pattern: PatternType, tier: number, config: GuardianConfig): string {
  if (pattern === 'none') return 'Continue - no loop detected';
  if (pattern === 'quality_gate_loop') return 'Circuit break - the quality-gate issue is fundamental; have a person fix the underlying check';
  if (tier >= config.tiers.humanReviewFrom) return `Circuit break - tier ${tier} is at the top of escalation; human review required`;
  return FORCE_ESCALATE;
}

export type EscalationResult =
  | { readonly outcome: 'escalated'; readonly from: number; readonly to: number; readonly state: TaskState }
  | { readonly outcome: 'HUMAN_INTERVENTION_REQUIRED'; readonly tier: number };

/** Seed 003's force-escalate: +2 tiers, or a person once the human-review tier is reached. */
export function forceEscalate(taskId: string, tier: number, state: TaskState | undefined, reason: string, at: string, config: GuardianConfig): EscalationResult {
  const { max, humanReviewFrom } = config.tiers;
  if (tier >= humanReviewFrom || tier >= max) return { outcome: 'HUMAN_INTERVENTION_REQUIRED', tier };
  const to = Math.min(tier + 2, max);
  const base: TaskState = state ?? { version: 1, task_id: taskId, status: 'active', tier_history: [] };
  return {
    outcome: 'escalated',
    from: tier,
    to,
    state: { ...base, tier: to, tier_history: [...base.tier_history, { from: tier, to, at, reason }] },
  };
}

import { DEFAULT_VOLATILE_ARGS, DEFAULT_VOLATILE_KEYS } from './canonical';
import type * as ConfigSchema from './configSchema';
import type { GuardianConfig } from './configSchema';
import { DEFAULT_DELEGATION_TOOLS, DEFAULT_DENY_SIGNALS, DEFAULT_WAIT_TOOLS } from './defaults';

/*
 * The configuration (`.github/guardian/config.json`): its defaults, and a file's values checked
 * against its schema. The schema (zod) is in configSchema.ts, loaded only when there is a file to
 * validate: a command that reads none (a replay without a config file) never loads zod.
 */

export { SIGNAL_IDS, type SignalId } from './defaults';
export type { GuardianConfig, SignalsConfig } from './configSchema';

export interface ConfigProblem {
  readonly level: 'error' | 'warning';
  /** Dotted path of the offending key, e.g. `signals.cycle.threshold`. */
  readonly path: string;
  readonly message: string;
}

/**
 * The configuration when no file says otherwise: what the schema makes of `{}`, written out so that
 * no schema is loaded for it (test/unit/core/config-events.test.ts holds the two equal). A fresh
 * object on each call: callers change theirs.
 */
export function defaultConfig(): GuardianConfig {
  const enabled = true;
  return {
    signals: {
      'repeated-invocation': { enabled, threshold: 3 },
      'identical-calls': { enabled, threshold: 3 },
      'repeated-error': { enabled, threshold: 3, warnAt: 2 },
      'failing-call': { enabled, retries: { transient: 3, deterministic: 1, unknown: 2 }, windowMinutes: 120 },
      'windowed-repeat': { enabled, threshold: 3, window: 10 },
      cycle: { enabled, threshold: 3, maxPeriod: 5, history: 60 },
      'identical-output': { enabled, threshold: 2 },
      'retry-exhaustion': { enabled, threshold: 3 },
      oscillation: { enabled, threshold: 3 },
      'stuck-tier': { enabled, threshold: 3 },
      'quality-gate-loop': { enabled, threshold: 2 },
      'repeated-prompt': { enabled, threshold: 5, warnAt: 3 },
      'api-error-storm': { enabled, threshold: 5, warnAt: 3, retryBudget: 10 },
      're-delegation': { enabled, threshold: 3, warnAt: 2 },
      'stuck-target': { enabled, threshold: 3 },
      'compaction-thrash': { enabled, threshold: 3, warnAt: 2 },
      budget: {
        enabled,
        task: { warning: 70, restrict: 80, urgent: 90, hardStop: 95, violation: 100 },
        session: { notify: 70, noDelegation: 80, wrapUp: 95 },
      },
    },
    volatileKeys: [...DEFAULT_VOLATILE_KEYS],
    volatileArgs: defaultVolatileArgs(),
    exemptTools: [],
    waitTools: [...DEFAULT_WAIT_TOOLS],
    sources: { events: ['.tmp/**/logs/*.jsonl'], invocationHistory: '.tmp/current/logs/invocation-history.json' },
    tiers: { max: 7, humanReviewFrom: 6 },
    // The schema's type for `agents` (a catch-all of agents beside `maxAgeDays`) has no literal of its own.
    agents: { maxAgeDays: 7 } as GuardianConfig['agents'],
    hooks: { deny: [...DEFAULT_DENY_SIGNALS], delegationTools: [...DEFAULT_DELEGATION_TOOLS] },
  };
}

/** Per tool, the arguments left out of its signature by default (a copy). */
export function defaultVolatileArgs(): Record<string, string[]> {
  return Object.fromEntries(Object.entries(DEFAULT_VOLATILE_ARGS).map(([tool, keys]) => [tool, [...keys]]));
}

let loadedSchema: typeof ConfigSchema | undefined;

/**
 * Validates a parsed config file leniently (configSchema.ts's `validateConfig`): every invalid
 * value is reported by its key and replaced by its default, an invalid list entry is dropped
 * alone, unknown keys are reported and ignored; the rest of the file applies. No file (undefined,
 * null): the defaults, without loading the schema.
 */
export function resolveConfig(raw: unknown): { config: GuardianConfig; problems: ConfigProblem[] } {
  if (raw === undefined || raw === null) return { config: defaultConfig(), problems: [] };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  loadedSchema ??= require('./configSchema') as typeof ConfigSchema;
  return loadedSchema.validateConfig(raw);
}

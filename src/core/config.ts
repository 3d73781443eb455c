import { z } from 'zod';
import { DEFAULT_VOLATILE_KEYS } from './canonical';
import { DEFAULT_DELEGATION_TOOLS, DEFAULT_DENY_SIGNALS } from './defaults';

/** Stable signal ids: config keys, finding ids and documentation all use these. */
export const SIGNAL_IDS = [
  'repeated-invocation',
  'identical-calls',
  'repeated-error',
  'failing-call',
  'windowed-repeat',
  'cycle',
  'identical-output',
  'retry-exhaustion',
  'oscillation',
  'stuck-tier',
  'quality-gate-loop',
  'budget',
] as const;
export type SignalId = (typeof SIGNAL_IDS)[number];

const count = z.number().int().min(1);
const percent = z.number().min(0).max(1000);
const enabled = z.boolean().default(true);

const thresholdSignal = (threshold: number) => z.strictObject({ enabled, threshold: count.default(threshold) }).prefault({});

const signalsSchema = z
  .strictObject({
    'repeated-invocation': thresholdSignal(3),
    'identical-calls': thresholdSignal(3),
    'repeated-error': z.strictObject({ enabled, threshold: count.default(3), warnAt: count.default(2) }).prefault({}),
    'failing-call': z
      .strictObject({
        enabled,
        retries: z
          .strictObject({
            transient: z.number().int().min(0).default(3),
            deterministic: z.number().int().min(0).default(1),
            unknown: z.number().int().min(0).default(2),
          })
          .prefault({}),
        windowMinutes: z.number().positive().default(120),
      })
      .prefault({}),
    'windowed-repeat': z.strictObject({ enabled, threshold: count.default(3), window: count.default(10) }).prefault({}),
    cycle: z.strictObject({ enabled, threshold: z.number().int().min(2).default(3), maxPeriod: z.number().int().min(2).max(50).default(5) }).prefault({}),
    'identical-output': z.strictObject({ enabled, threshold: z.number().int().min(2).default(2) }).prefault({}),
    'retry-exhaustion': thresholdSignal(3),
    oscillation: z.strictObject({ enabled, threshold: z.number().int().min(2).default(3) }).prefault({}),
    'stuck-tier': thresholdSignal(3),
    'quality-gate-loop': thresholdSignal(2),
    budget: z
      .strictObject({
        enabled,
        task: z
          .strictObject({
            warning: percent.default(70),
            restrict: percent.default(80),
            urgent: percent.default(90),
            hardStop: percent.default(95),
            violation: percent.default(100),
          })
          .prefault({}),
        session: z
          .strictObject({ notify: percent.default(70), noDelegation: percent.default(80), wrapUp: percent.default(95) })
          .prefault({}),
      })
      .prefault({}),
  })
  .prefault({});


const agentSource = z.strictObject({ enabled: z.boolean().default(false), home: z.string().min(1).optional() }).prefault({});

export const configSchema = z
  .strictObject({
    $schema: z.string().optional(),
    signals: signalsSchema,
    volatileKeys: z.array(z.string().min(1)).default([...DEFAULT_VOLATILE_KEYS]),
    exemptTools: z.array(z.string().min(1)).default([]),
    sources: z
      .strictObject({
        events: z.array(z.string().min(1)).min(1).default(['.tmp/**/logs/*.jsonl']),
        invocationHistory: z.string().min(1).default('.tmp/current/logs/invocation-history.json'),
      })
      .prefault({}),
    tiers: z.strictObject({ max: z.number().int().min(1).default(7), humanReviewFrom: z.number().int().min(1).default(6) }).prefault({}),
    // One entry per agent whose transcripts to read, by its id in the agents' registry (which the
    // file layer checks: the core knows no agent by name).
    agents: z.object({ maxAgeDays: z.number().positive().default(7) }).catchall(agentSource).prefault({}),
    hooks: z
      .strictObject({
        deny: z.array(z.enum(SIGNAL_IDS)).default([...DEFAULT_DENY_SIGNALS]),
        delegationTools: z.array(z.string().min(1)).default([...DEFAULT_DELEGATION_TOOLS]),
      })
      .prefault({}),
  })
  .prefault({});

export type GuardianConfig = z.infer<typeof configSchema>;
export type SignalsConfig = GuardianConfig['signals'];

export interface ConfigProblem {
  readonly level: 'error' | 'warning';
  /** Dotted path of the offending key, e.g. `signals.cycle.threshold`. */
  readonly path: string;
  readonly message: string;
}

export function defaultConfig(): GuardianConfig {
  return configSchema.parse({});
}

function dotted(path: readonly PropertyKey[]): string {
  return path.map(String).join('.') || '(root)';
}

function removeAt(root: unknown, path: readonly PropertyKey[]): boolean {
  if (path.length === 0) return false;
  let node: unknown = root;
  for (const key of path.slice(0, -1)) {
    if (typeof node !== 'object' || node === null) return false;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  if (typeof node !== 'object' || node === null) return false;
  const last = path[path.length - 1] as PropertyKey;
  if (Array.isArray(node) && typeof last === 'number') node.splice(last, 1);
  else delete (node as Record<PropertyKey, unknown>)[last];
  return true;
}

/**
 * Validates a parsed config file leniently: every invalid value is reported by its key and
 * replaced by its default, unknown keys are reported and ignored; the rest of the file applies.
 */
export function resolveConfig(raw: unknown): { config: GuardianConfig; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  if (raw === undefined || raw === null) return { config: defaultConfig(), problems };
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push({ level: 'error', path: '(root)', message: 'the configuration must be a JSON object; defaults used' });
    return { config: defaultConfig(), problems };
  }
  const input: unknown = structuredClone(raw);
  for (let round = 0; round < 100; round++) {
    const parsed = configSchema.safeParse(input);
    if (parsed.success) {
      const config = parsed.data;
      if (config.tiers.humanReviewFrom > config.tiers.max) {
        problems.push({ level: 'error', path: 'tiers.humanReviewFrom', message: `must not exceed tiers.max (${config.tiers.max}); ${config.tiers.max} used` });
        config.tiers.humanReviewFrom = config.tiers.max;
      }
      const re = config.signals['repeated-error'];
      if (re.warnAt > re.threshold) {
        problems.push({ level: 'warning', path: 'signals.repeated-error.warnAt', message: `is above threshold (${re.threshold}): no warning comes before the halt` });
      }
      return { config, problems };
    }
    let progressed = false;
    for (const issue of parsed.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) {
          problems.push({ level: 'warning', path: dotted([...issue.path, key]), message: 'unknown key, ignored' });
          progressed = removeAt(input, [...issue.path, key]) || progressed;
        }
      } else {
        problems.push({ level: 'error', path: dotted(issue.path), message: `${issue.message}; the default is used` });
        progressed = removeAt(input, issue.path) || progressed;
      }
    }
    if (!progressed) break;
  }
  problems.push({ level: 'error', path: '(root)', message: 'the configuration could not be repaired; defaults used' });
  return { config: defaultConfig(), problems };
}

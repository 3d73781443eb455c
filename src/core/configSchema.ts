import { z } from 'zod';
import { DEFAULT_VOLATILE_KEYS } from './canonical';
import { defaultConfig, defaultVolatileArgs, type ConfigProblem } from './config';
import { DEFAULT_DELEGATION_TOOLS, DEFAULT_DENY_SIGNALS, DEFAULT_WAIT_TOOLS, SIGNAL_IDS } from './defaults';
import { MAX_JSON_DEPTH, tooDeepReason } from './json';

/*
 * The configuration's schema (zod), and the lenient validation of a config file. Loaded only when
 * there is a file to validate (config.ts: without one, the defaults need no schema), so that a
 * command reading no config file never loads zod.
 */

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
    cycle: z
      .strictObject({
        enabled,
        threshold: z.number().int().min(2).default(3),
        maxPeriod: z.number().int().min(2).max(50).default(5),
        // Calls kept per session: longer cycles, up to history / threshold calls, are caught when their outcomes repeat.
        history: z.number().int().min(4).max(1000).default(60),
      })
      .prefault({}),
    'identical-output': z.strictObject({ enabled, threshold: z.number().int().min(2).default(2) }).prefault({}),
    'retry-exhaustion': thresholdSignal(3),
    oscillation: z.strictObject({ enabled, threshold: z.number().int().min(2).default(3) }).prefault({}),
    'stuck-tier': thresholdSignal(3),
    'quality-gate-loop': thresholdSignal(2),
    // The turn-level signals (issue 14): warn at `warnAt`, halt at `threshold` (see each detector for when).
    'repeated-prompt': z.strictObject({ enabled, threshold: count.default(5), warnAt: count.default(3) }).prefault({}),
    'api-error-storm': z
      .strictObject({
        enabled,
        threshold: count.default(5),
        warnAt: count.default(3),
        // Automatic retries of failing model requests, in a row, past which the storm is reported whatever the errors.
        retryBudget: count.default(10),
      })
      .prefault({}),
    're-delegation': z.strictObject({ enabled, threshold: count.default(3), warnAt: count.default(2) }).prefault({}),
    // Issue 34: changes to one file failing with the same one or two errors, round after round.
    'stuck-target': z.strictObject({ enabled, threshold: z.number().int().min(2).default(3) }).prefault({}),
    // Issue 34: compactions, each followed by the same work with the same outcomes.
    'compaction-thrash': z.strictObject({ enabled, threshold: z.number().int().min(2).default(3), warnAt: count.default(2) }).prefault({}),
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
    // Per tool, the arguments the model writes as commentary; a tool named here replaces its default list.
    volatileArgs: z
      .record(z.string().min(1), z.array(z.string().min(1)))
      .default({})
      .transform((own) => ({ ...defaultVolatileArgs(), ...own })),
    exemptTools: z.array(z.string().min(1)).default([]),
    waitTools: z.array(z.string().min(1)).default([...DEFAULT_WAIT_TOOLS]),
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

function dotted(path: readonly PropertyKey[]): string {
  return path.map(String).join('.') || '(root)';
}

/** A dotted path short enough for a message: a value cut deep inside a nest is named by its first keys. */
function shortPath(path: readonly PropertyKey[]): string {
  return path.length <= 4 ? dotted(path) : `${dotted(path.slice(0, 4))}.…`;
}

/** A value named in a message: strings quoted and clipped, arrays and objects by their kind. */
function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 39)}…` : value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let node: unknown = root;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

function removeAt(root: unknown, path: readonly PropertyKey[]): boolean {
  if (path.length === 0) return false;
  const node = valueAt(root, path.slice(0, -1));
  if (typeof node !== 'object' || node === null) return false;
  const last = path[path.length - 1] as PropertyKey;
  if (!(last in node)) return false;
  delete (node as Record<PropertyKey, unknown>)[last];
  return true;
}

/**
 * A copy of the parsed file that the repair can change, made without recursion (the file may nest
 * thousands of levels deep, which `structuredClone` and the schema could not take): an array or
 * object deeper than `MAX_JSON_DEPTH` is left out and reported; the schema then reports the key.
 */
function copyWithinDepth(raw: object, problems: ConfigProblem[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  const stack: Array<{ from: object; to: Record<PropertyKey, unknown>; path: PropertyKey[] }> = [{ from: raw, to: root, path: [] }];
  while (stack.length > 0) {
    const { from, to, path } = stack.pop() as (typeof stack)[number];
    const entries: Array<[PropertyKey, unknown]> = Array.isArray(from) ? from.map((v, i) => [i, v]) : Object.entries(from);
    for (const [key, value] of entries) {
      if (typeof value !== 'object' || value === null) {
        to[key] = value;
        continue;
      }
      const childPath = [...path, key];
      if (childPath.length >= MAX_JSON_DEPTH) {
        problems.push({ level: 'error', path: shortPath(childPath), message: `${tooDeepReason()}; left out` });
        continue;
      }
      const copy: Record<PropertyKey, unknown> = Array.isArray(value) ? ([] as unknown as Record<PropertyKey, unknown>) : {};
      to[key] = copy;
      stack.push({ from: value, to: copy, path: childPath });
    }
  }
  return root;
}

/**
 * One round of repair: every issue the schema found is fixed at once. An invalid array entry is
 * dropped alone (all of an array's drops are applied from the last index down, so that none
 * shifts another); a list that repair leaves empty is removed, so its default applies; any other
 * invalid value is removed, so its default applies. False when nothing could be changed.
 */
function repairOnce(input: Record<string, unknown>, issues: readonly z.core.$ZodIssue[], problems: ConfigProblem[]): boolean {
  const drops = new Map<string, { path: PropertyKey[]; list: unknown[]; indexes: Set<number> }>();
  const removals: PropertyKey[][] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        problems.push({ level: 'warning', path: dotted([...issue.path, key]), message: 'unknown key, ignored' });
        removals.push([...issue.path, key]);
      }
      continue;
    }
    const listPath = issue.path.slice(0, -1);
    const index = issue.path[issue.path.length - 1];
    const list = valueAt(input, listPath);
    if (Array.isArray(list) && typeof index === 'number' && index < list.length) {
      const at = dotted(listPath);
      const drop = drops.get(at) ?? { path: listPath, list, indexes: new Set<number>() };
      drops.set(at, drop);
      if (drop.indexes.has(index)) continue;
      drop.indexes.add(index);
      problems.push({ level: 'error', path: dotted(issue.path), message: `${issue.message}; ${describe(list[index])} dropped` });
      continue;
    }
    problems.push({ level: 'error', path: dotted(issue.path), message: `${issue.message}; the default is used` });
    removals.push(issue.path);
  }
  for (const { path, list, indexes } of drops.values()) {
    for (const i of [...indexes].sort((a, b) => b - a)) list.splice(i, 1);
    if (list.length > 0) continue;
    problems.push({ level: 'error', path: dotted(path), message: `no valid entry left; the default ${JSON.stringify(valueAt(defaultConfig(), path))} is used` });
    removeAt(input, path);
  }
  let removed = false;
  for (const path of removals) removed = removeAt(input, path) || removed;
  return removed || drops.size > 0;
}

/**
 * Validates a parsed config file leniently: every invalid value is reported by its key and
 * replaced by its default, an invalid list entry is dropped alone, unknown keys are reported and
 * ignored; the rest of the file applies.
 */
export function validateConfig(raw: unknown): { config: GuardianConfig; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  if (raw === undefined || raw === null) return { config: defaultConfig(), problems };
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push({ level: 'error', path: '(root)', message: 'the configuration must be a JSON object; defaults used' });
    return { config: defaultConfig(), problems };
  }
  const input = copyWithinDepth(raw, problems);
  for (let round = 0; round < 100; round++) {
    const parsed = configSchema.safeParse(input);
    if (parsed.success) {
      const config = parsed.data;
      if (config.tiers.humanReviewFrom > config.tiers.max) {
        problems.push({ level: 'error', path: 'tiers.humanReviewFrom', message: `must not exceed tiers.max (${config.tiers.max}); ${config.tiers.max} used` });
        config.tiers.humanReviewFrom = config.tiers.max;
      }
      for (const id of ['repeated-error', 'repeated-prompt', 'api-error-storm', 're-delegation', 'compaction-thrash'] as const) {
        const sig = config.signals[id];
        if (sig.warnAt > sig.threshold) {
          problems.push({ level: 'warning', path: `signals.${id}.warnAt`, message: `is above threshold (${sig.threshold}): no warning comes before the halt` });
        }
      }
      return { config, problems };
    }
    if (!repairOnce(input, parsed.error.issues, problems)) break;
  }
  problems.push({ level: 'error', path: '(root)', message: 'the configuration could not be repaired; defaults used' });
  return { config: defaultConfig(), problems };
}

import { AGENTS, isWatchable } from '../agents';
import { defaultConfig, resolveConfig, type ConfigProblem, type GuardianConfig } from '../core/config';
import { isObject } from '../core/guards';
import { jsonWhere, parseJson } from '../core/json';
import { readTextIfExists, withFileLock } from './atomicFile';
import { PATHS, type Workspace } from './workspace';

export interface LoadedConfig {
  readonly config: GuardianConfig;
  /** Problems found in the file, each naming its key; the defaults stand in for what was wrong. */
  readonly problems: readonly ConfigProblem[];
  readonly file: string;
  readonly exists: boolean;
}

export function formatProblem(file: string, p: ConfigProblem): string {
  return `${file}: ${p.level}: ${p.path}: ${p.message}`;
}

/** Reads `.github/guardian/config.json` (or another file); never throws on bad content. */
export async function loadConfig(ws: Workspace, rel: string = PATHS.config): Promise<LoadedConfig> {
  let text: string | undefined;
  try {
    text = await readTextIfExists(ws.path(rel));
  } catch (err) {
    const { config } = resolveConfig(undefined);
    return { config, problems: [{ level: 'error', path: '(file)', message: `cannot read: ${(err as Error).message}; defaults used` }], file: rel, exists: true };
  }
  return parseConfigText(text, rel);
}

export function parseConfigText(text: string | undefined, file: string): LoadedConfig {
  if (text === undefined || text.trim() === '') return { ...resolveConfig(undefined), file, exists: text !== undefined };
  // The BOM some editors write is dropped. No depth limit here: resolveConfig replaces a value
  // nested too deep by its default, and the rest of the file applies.
  const parsed = parseJson(text, Number.POSITIVE_INFINITY);
  if (!parsed.ok) {
    const where = parsed.at ? jsonWhere(parsed.at) : '(file)';
    const { config } = resolveConfig(undefined);
    return { config, problems: [{ level: 'error', path: where, message: `not valid JSON (${parsed.error}); defaults used` }], file, exists: true };
  }
  const resolved = resolveConfig(parsed.value);
  return { config: resolved.config, problems: [...resolved.problems, ...unknownAgents(resolved.config)], file, exists: true };
}

/** The agents whose transcripts can be watched: the keys `agents` takes besides `maxAgeDays`. */
const DISCOVERABLE = AGENTS.filter(isWatchable).map((a) => a.id);

/** Entries of `agents` that name no agent the guardian can watch: reported, and removed. */
function unknownAgents(config: GuardianConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const key of Object.keys(config.agents)) {
    if (key === 'maxAgeDays' || DISCOVERABLE.includes(key)) continue;
    problems.push({ level: 'warning', path: `agents.${key}`, message: `unknown agent, ignored (the agents whose transcripts can be watched: ${DISCOVERABLE.join(', ')})` });
    delete config.agents[key];
  }
  return problems;
}

/** The default configuration as written: every agent that can be watched is listed, off, so that what can be switched on is there to see. */
function defaultConfigObject(): Record<string, unknown> {
  const config = defaultConfig();
  for (const id of DISCOVERABLE) config.agents[id] = { enabled: false };
  const { maxAgeDays, ...agents } = config.agents;
  return { ...config, agents: { ...agents, maxAgeDays } };
}

/** Writes the default configuration, unless a config file is there already; true when it wrote. */
export async function createDefaultConfig(ws: Workspace): Promise<boolean> {
  const file = await ws.resolveForWrite(PATHS.config);
  return withFileLock(file, async () => {
    if ((await readTextIfExists(file)) !== undefined) return false;
    await ws.writeAtomic(PATHS.config, `${JSON.stringify(defaultConfigObject(), null, 2)}\n`);
    return true;
  });
}

class ConfigEditError extends Error {}

/**
 * Switches watching an agent's transcripts on or off (`agents.<id>.enabled`), keeping everything
 * else in the file as it is. Where there is no config file, it writes only that setting: the file
 * lives in a folder teams commit, and every value left out is the default anyway. A file that is
 * not a JSON object is never overwritten: the error names it and where it stops being JSON.
 */
export async function setAgentWatched(ws: Workspace, id: string, enabled: boolean): Promise<void> {
  if (!DISCOVERABLE.includes(id)) throw new ConfigEditError(`${id} cannot be watched (the agents whose transcripts can be: ${DISCOVERABLE.join(', ')})`);
  const file = await ws.resolveForWrite(PATHS.config);
  // One lock, one read: no file yet starts empty (what differs from the defaults only).
  await withFileLock(file, async () => {
    const text = await readTextIfExists(file);
    let root: unknown = {};
    if (text !== undefined) {
      const parsed = parseJson(text.trim() === '' ? '{}' : text, Number.POSITIVE_INFINITY);
      if (!parsed.ok) throw new ConfigEditError(`${PATHS.config}: ${parsed.at ? `${jsonWhere(parsed.at)}: ` : ''}not valid JSON (${parsed.error}); fix it, then try again`);
      root = parsed.value;
    }
    if (!isObject(root)) throw new ConfigEditError(`${PATHS.config}: not a JSON object; fix it, then try again`);
    const agents = isObject(root.agents) ? root.agents : {};
    const entry = isObject(agents[id]) ? agents[id] : {};
    root.agents = { ...agents, [id]: { ...entry, enabled } };
    await ws.writeAtomic(PATHS.config, `${JSON.stringify(root, null, 2)}\n`);
  });
}

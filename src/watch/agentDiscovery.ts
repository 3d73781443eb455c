import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AGENTS, type Agent, type DiscoveryFs, type SessionDatabase, type TranscriptDiscovery, type TranscriptLocator } from '../agents';
import type { Adapter } from '../agents/transcript';
import type { GuardianConfig } from '../core/config';
import { isWithin } from '../state/workspace';
import { readRegularBounded } from '../state/regularFile';
import { globalStorageFolders } from './editorStorage';
import { databaseFile, type DatabaseReadScope } from './sessionDatabase';

/** A transcript an agent is writing (or wrote) for this workspace, with the agent that writes it. */
export interface Transcript {
  readonly agent: Agent;
  /** A JSONL log the agent appends to, or a JSON document it rewrites whole. */
  readonly adapter: Adapter;
  /** Absolute path: transcripts live in the agents' own folders, outside the workspace. */
  readonly file: string;
  /** The session id its name carries, when it carries one. */
  readonly session?: string;
  /** The file is the agent's database of sessions: those of this workspace active since then are read. */
  readonly database?: { readonly store: SessionDatabase } & DatabaseReadScope;
}

/** The most of a marker file or of a first line that is read. */
const SMALL_READ = 64 * 1024;

function expandHome(p: string, home: string): string {
  return p === '~' ? home : p.startsWith('~/') ? path.join(home, p.slice(2)) : path.resolve(p);
}

/** The first `maxBytes` of a regular file (never a blocking open: a FIFO is passed over); undefined when it cannot be read. */
async function head(file: string, maxBytes: number = SMALL_READ): Promise<string | undefined> {
  const read = await readRegularBounded(file, maxBytes);
  return read.kind === 'text' ? read.text : undefined;
}

interface Watched {
  readonly agent: Agent;
  readonly adapter: Adapter;
  /** One of the places the agent's transcripts live; the first (`primary`) is the one `agents.<id>.home` moves. */
  readonly discovery: TranscriptDiscovery;
  readonly primary: boolean;
  readonly locator: TranscriptLocator;
}

/**
 * Finds the transcripts of the agents the configuration opts in to (`agents.<id>.enabled`),
 * modified within `agents.maxAgeDays`, each agent's locator saying where they live. Locators
 * keep what they learnt between polls, so a poll reads only what is new.
 */
export class AgentDiscovery {
  private readonly watched: readonly Watched[];
  /** The agents opted in whose sessions are in a database. */
  private readonly databases: readonly Agent[];

  /**
   * `editorStorage`: the editor window's storage folder (`workspaceStorage/<id>`), and
   * `editorGlobalStorage` the editor's global storage folder (`User/globalStorage`), when the
   * guardian runs in the editor.
   */
  constructor(
    private readonly root: string,
    private readonly config: GuardianConfig,
    private readonly env: NodeJS.ProcessEnv = process.env,
    private readonly editorStorage?: string,
    private readonly editorGlobalStorage?: string,
  ) {
    this.watched = AGENTS.flatMap((agent) => {
      const adapter = agent.transcript;
      if (agent.discovery === undefined || adapter === undefined || config.agents[agent.id]?.enabled !== true) return [];
      return [agent.discovery, ...(agent.otherDiscovery ?? [])].map((discovery, i) => ({ agent, adapter, discovery, primary: i === 0, locator: discovery.locator() }));
    });
    this.databases = AGENTS.filter((a) => a.database !== undefined && config.agents[a.id]?.enabled === true);
  }

  get enabled(): boolean {
    return this.watched.length > 0 || this.databases.length > 0;
  }

  /** The transcripts not in `known` (those already being read are not even stat-ed again). */
  async discover(known: { has(file: string): boolean } = new Set<string>(), now = Date.now()): Promise<Transcript[]> {
    const userHome = this.env.HOME ?? os.homedir();
    const since = now - this.config.agents.maxAgeDays * 86_400_000;
    const io: DiscoveryFs = {
      list: (dir) => fs.readdir(dir, { withFileTypes: true }).catch(() => []),
      isNew: async (file) => {
        if (known.has(file)) return false;
        const st = await fs.stat(file).catch(() => undefined);
        return st !== undefined && st.isFile() && st.mtimeMs >= since;
      },
      firstLine: async (file) => {
        const text = await head(file);
        const nl = text?.indexOf('\n') ?? -1;
        return text === undefined || nl < 0 ? undefined : text.slice(0, nl);
      },
      readText: (file, maxBytes) => head(file, maxBytes),
    };
    const out: Transcript[] = [];
    const seen = new Set<string>();
    for (const w of this.watched) {
      for (const home of this.homes(w, userHome)) {
        const found = await w.locator.find({ root: this.root, home, since, fs: io, contains: (p) => isWithin(this.root, p) });
        for (const t of found) {
          if (seen.has(t.file)) continue;
          seen.add(t.file);
          out.push({ agent: w.agent, ...t, adapter: t.adapter ?? w.adapter });
        }
      }
    }
    for (const agent of this.databases) {
      const store = agent.database!;
      // `agents.<id>.home` is the database's folder for an agent with no other place of transcripts.
      const configured = agent.discovery === undefined ? this.config.agents[agent.id]?.home : undefined;
      const file = databaseFile(store, this.env, userHome, configured !== undefined ? expandHome(configured, userHome) : undefined);
      if (seen.has(file) || known.has(file)) continue;
      const st = await fs.stat(file).catch(() => undefined);
      if (st === undefined || !st.isFile()) continue;
      seen.add(file);
      out.push({ agent, adapter: store.adapter, file, database: { store, since, wanted: (dir) => dir !== '' && isWithin(this.root, dir) } });
    }
    return out;
  }

  /**
   * Where one place of an agent's transcripts is: the configured home, the editor's own storage
   * folder, the global storage folder (the editor's, else each standard one), the agent's
   * environment variable, or its default.
   */
  private homes({ agent, discovery: d, primary }: Watched, userHome: string): string[] {
    const configured = primary ? this.config.agents[agent.id]?.home : undefined;
    if (configured !== undefined) return [expandHome(configured, userHome)];
    if (d.inEditorStorage === true && this.editorStorage !== undefined) return [this.editorStorage];
    if (d.inGlobalStorage === true) return this.editorGlobalStorage !== undefined ? [this.editorGlobalStorage] : globalStorageFolders(this.env, userHome);
    const fromEnv = d.homeEnv !== undefined ? this.env[d.homeEnv] : undefined;
    return [expandHome(fromEnv ?? d.defaultHome, userHome)];
  }
}

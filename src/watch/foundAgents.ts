import { AGENTS, HOOK_AGENTS, isWatchable } from '../agents';
import { registrationFiles } from '../agents/hook';
import type { GuardianConfig } from '../core/config';
import { promises as fs } from 'node:fs';
import { readRegularBounded } from '../state/regularFile';
import { databaseSessions } from './sessionDatabase';
import type { Workspace } from '../state/workspace';
import { AgentDiscovery } from './agentDiscovery';

/** An agent that has worked in this folder, as far as its files tell. */
export interface FoundAgent {
  readonly id: string;
  readonly label: string;
  /** Its transcripts for this folder, changed within `agents.maxAgeDays`. */
  readonly transcripts: number;
  /** Its transcripts are watched (`agents.<id>.enabled`). */
  readonly watched: boolean;
  /** It can be watched (its transcripts are found by the guardian). */
  readonly watchable: boolean;
  /** The project's settings file its hook is registered in, when the agent has a hook. */
  readonly hookFile?: string;
  /** That file (or one of the files it is shared with) runs the guardian's hook. */
  readonly hooked: boolean;
  /** Its hook settings file exists in the folder (the agent is set up here). */
  readonly configured: boolean;
  /** When its newest transcript for this folder last changed (ms since the epoch): when it last worked here, as far as its files tell. */
  readonly lastWork?: number;
  /** When its hook settings file last changed (ms since the epoch), when it runs the guardian's hook: about when the hook was installed. */
  readonly hookedSince?: number;
  /** Its newest transcripts for this folder (at most 3), newest first, with the session each holds where one file is one session. */
  readonly recent?: readonly { readonly file: string; readonly session?: string }[];
}

/** Settings files are small: this much of one is read to see whether it runs the guardian's hook. */
const SETTINGS_READ = 256 * 1024;

async function mentionsGuardian(ws: Workspace, rel: string): Promise<{ exists: boolean; hooked: boolean; mtime?: number }> {
  const read = await readRegularBounded(ws.path(rel), SETTINGS_READ).catch(() => undefined);
  if (read?.kind !== 'text') return { exists: read !== undefined && read.kind !== 'missing', hooked: false };
  const hooked = /loop-guardian/.test(read.text);
  const mtime = hooked ? (await fs.stat(ws.path(rel)).catch(() => undefined))?.mtimeMs : undefined;
  return { exists: true, hooked, ...(mtime !== undefined ? { mtime } : {}) };
}

/**
 * The agents that have worked in a workspace folder: those whose transcripts name it (looked for
 * whether or not they are watched), and those whose hook settings file is in it. Nothing is read
 * but the agents' folders' listings, their transcripts' first lines and the settings files' heads.
 */
export async function findAgents(ws: Workspace, config: GuardianConfig, env: NodeJS.ProcessEnv = process.env, editorStorage?: string): Promise<FoundAgent[]> {
  const everyone: GuardianConfig = { ...config, agents: { ...config.agents } };
  for (const a of AGENTS) if (isWatchable(a)) everyone.agents[a.id] = { ...(config.agents[a.id] ?? {}), enabled: true };
  const transcripts = await new AgentDiscovery(ws.root, everyone, env, editorStorage).discover();
  const out: FoundAgent[] = [];
  for (const agent of AGENTS) {
    const own = transcripts.filter((t) => t.agent.id === agent.id);
    // A database holds every folder's sessions: it counts for the sessions it has of this one.
    let found = 0;
    for (const t of own) found += t.database === undefined ? 1 : await databaseSessions(t.file, t.database.store, t.database).catch(() => 0);
    const hook = HOOK_AGENTS.find((a) => a.id === agent.id)?.hook.registration;
    const files = hook ? registrationFiles(hook) : [];
    let configured = false;
    let hooked = false;
    let hookedSince: number | undefined;
    for (const f of files) {
      const m = await mentionsGuardian(ws, f);
      configured ||= m.exists;
      hooked ||= m.hooked;
      if (m.mtime !== undefined) hookedSince = Math.max(hookedSince ?? 0, m.mtime);
    }
    if (found === 0 && !configured) continue;
    let lastWork: number | undefined;
    const dated: { file: string; session?: string; mtime: number }[] = [];
    for (const t of own) {
      const st = await fs.stat(t.file).catch(() => undefined);
      if (st !== undefined) lastWork = Math.max(lastWork ?? 0, st.mtimeMs);
      if (st !== undefined && t.database === undefined) dated.push({ file: t.file, ...(t.session !== undefined ? { session: t.session } : {}), mtime: st.mtimeMs });
    }
    const recent = dated.sort((a, b) => b.mtime - a.mtime).slice(0, 3).map(({ file, session }) => ({ file, ...(session !== undefined ? { session } : {}) }));
    out.push({
      id: agent.id,
      label: agent.label,
      transcripts: found,
      watched: config.agents[agent.id]?.enabled === true,
      watchable: isWatchable(agent),
      ...(hook ? { hookFile: hook.settingsFile } : {}),
      hooked,
      configured,
      ...(lastWork !== undefined ? { lastWork } : {}),
      ...(hookedSince !== undefined ? { hookedSince } : {}),
      ...(recent.length > 0 ? { recent } : {}),
    });
  }
  return out;
}

/**
 * The agents whose sessions here nobody reads: sessions found, not watched, not hooked. Until they
 * are read, no "No loops" may be said of the folder: they may hold one.
 */
export function unreadAgents(found: readonly FoundAgent[]): { agents: FoundAgent[]; sessions: number } {
  const agents = found.filter((a) => a.transcripts > 0 && !a.watched && !a.hooked && a.watchable);
  return { agents, sessions: agents.reduce((n, a) => n + a.transcripts, 0) };
}

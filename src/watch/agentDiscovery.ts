import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { JsonlAdapter } from '../adapters';
import { claudeCode } from '../adapters/claudeCode';
import { codex } from '../adapters/codex';
import { gemini } from '../adapters/gemini';
import type { GuardianConfig } from '../core/config';
import { isWithin } from '../state/workspace';

/** A transcript an agent is writing (or wrote) for this workspace. */
export interface Transcript {
  readonly adapter: JsonlAdapter;
  /** Absolute path: transcripts live in the agents' own folders, outside the workspace. */
  readonly file: string;
  /** The session id its name carries, when it carries one. */
  readonly session?: string;
}

/** Claude Code's folder name for a project: its path with every non-alphanumeric character a '-'. */
export function claudeProjectDir(root: string): string {
  return root.replace(/[^A-Za-z0-9]/g, '-');
}

/** Gemini CLI's id of a project: the SHA-256 of its root path. */
export function geminiProjectHash(root: string): string {
  return createHash('sha256').update(root).digest('hex');
}

function expandHome(p: string, home: string): string {
  return p === '~' ? home : p.startsWith('~/') ? path.join(home, p.slice(2)) : path.resolve(p);
}

async function list(dir: string): Promise<import('node:fs').Dirent[]> {
  return fs.readdir(dir, { withFileTypes: true }).catch(() => []);
}

const UUID = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

/**
 * Finds the transcripts of the agents the configuration opts in to (`agents.<name>.enabled`),
 * modified within `agents.maxAgeDays`: Claude Code's project folder for this workspace, Codex
 * rollouts whose session_meta cwd lies inside it, Gemini CLI chats of this project. Keeps what it
 * learnt of each rollout, so that a poll reads only new ones' first line.
 */
export class AgentDiscovery {
  private readonly codexCwd = new Map<string, string | null>();
  private known: { has(file: string): boolean } = new Set<string>();

  constructor(
    private readonly root: string,
    private readonly config: GuardianConfig,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  get enabled(): boolean {
    const a = this.config.agents;
    return a.claude.enabled || a.codex.enabled || a.gemini.enabled;
  }

  /** The transcripts not in `known` (those already being read are not even stat-ed again). */
  async discover(known: { has(file: string): boolean } = new Set<string>(), now = Date.now()): Promise<Transcript[]> {
    this.known = known;
    const home = this.env.HOME ?? os.homedir();
    const a = this.config.agents;
    const since = now - a.maxAgeDays * 86_400_000;
    const out: Transcript[] = [];
    if (a.claude.enabled) out.push(...(await this.claude(expandHome(a.claude.home ?? this.env.CLAUDE_CONFIG_DIR ?? '~/.claude', home), since)));
    if (a.codex.enabled) out.push(...(await this.codex(expandHome(a.codex.home ?? this.env.CODEX_HOME ?? '~/.codex', home), since)));
    if (a.gemini.enabled) out.push(...(await this.gemini(expandHome(a.gemini.home ?? '~/.gemini', home), since)));
    return out;
  }

  /** A transcript not read yet, changed since `since`. */
  private async isNew(file: string, since: number): Promise<boolean> {
    if (this.known.has(file)) return false;
    const st = await fs.stat(file).catch(() => undefined);
    return st !== undefined && st.isFile() && st.mtimeMs >= since;
  }

  private async claude(home: string, since: number): Promise<Transcript[]> {
    const dir = path.join(home, 'projects', claudeProjectDir(this.root));
    const out: Transcript[] = [];
    for (const d of await list(dir)) {
      const file = path.join(dir, d.name);
      if (d.isFile() && d.name.endsWith('.jsonl')) {
        if (await this.isNew(file, since)) out.push({ adapter: claudeCode, file, session: d.name.slice(0, -'.jsonl'.length) });
      } else if (d.isDirectory()) {
        // <session>/subagents/agent-*.jsonl
        const sub = path.join(file, 'subagents');
        for (const s of await list(sub)) {
          const f = path.join(sub, s.name);
          if (s.isFile() && s.name.endsWith('.jsonl') && (await this.isNew(f, since))) out.push({ adapter: claudeCode, file: f });
        }
      }
    }
    return out;
  }

  private async codex(home: string, since: number): Promise<Transcript[]> {
    const sessions = path.join(home, 'sessions');
    const out: Transcript[] = [];
    const sinceDay = new Date(since).toISOString().slice(0, 10);
    for (const y of await list(sessions)) {
      if (!y.isDirectory() || y.name < sinceDay.slice(0, 4)) continue;
      for (const m of await list(path.join(sessions, y.name))) {
        if (!m.isDirectory() || `${y.name}-${m.name}` < sinceDay.slice(0, 7)) continue;
        for (const d of await list(path.join(sessions, y.name, m.name))) {
          if (!d.isDirectory() || `${y.name}-${m.name}-${d.name}` < sinceDay) continue;
          const dir = path.join(sessions, y.name, m.name, d.name);
          for (const f of await list(dir)) {
            if (!f.isFile() || !f.name.startsWith('rollout-') || !f.name.endsWith('.jsonl')) continue;
            const file = path.join(dir, f.name);
            if (!(await this.isNew(file, since))) continue;
            const cwd = await this.rolloutCwd(file);
            if (cwd !== null && isWithin(this.root, path.resolve(cwd))) out.push({ adapter: codex, file, ...(UUID.test(f.name) ? { session: UUID.exec(f.name)?.[1] as string } : {}) });
          }
        }
      }
    }
    return out;
  }

  /** The cwd in a rollout's session_meta (its first line); null when it has none. */
  private async rolloutCwd(file: string): Promise<string | null> {
    const known = this.codexCwd.get(file);
    if (known !== undefined) return known;
    let cwd: string | null = null;
    const handle = await fs.open(file, 'r').catch(() => undefined);
    if (!handle) return null;
    try {
      const buf = Buffer.alloc(64 * 1024);
      const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
      const text = buf.toString('utf8', 0, bytesRead);
      const nl = text.indexOf('\n');
      // No whole first line yet (a rollout being started): asked again next time.
      if (nl < 0) return null;
      const first = JSON.parse(nl < 0 ? text : text.slice(0, nl)) as { type?: unknown; payload?: { cwd?: unknown } };
      if (first.type === 'session_meta' && typeof first.payload?.cwd === 'string') cwd = first.payload.cwd;
    } catch {
      // Not a rollout we can read: not ours.
    } finally {
      await handle.close();
    }
    // A file still being started (no first line yet) is asked again next time.
    this.codexCwd.set(file, cwd);
    if (this.codexCwd.size > 20_000) this.codexCwd.clear();
    return cwd;
  }

  private async gemini(home: string, since: number): Promise<Transcript[]> {
    const tmp = path.join(home, 'tmp');
    const hash = geminiProjectHash(this.root);
    const dirs: string[] = [];
    for (const d of await list(tmp)) {
      if (!d.isDirectory()) continue;
      const dir = path.join(tmp, d.name);
      if (d.name === hash) dirs.push(dir);
      else {
        // Newer versions name the folder after the project and note its root in .project_root.
        const marker = await fs.readFile(path.join(dir, '.project_root'), 'utf8').catch(() => undefined);
        if (marker !== undefined && path.resolve(marker.trim()) === this.root) dirs.push(dir);
      }
    }
    const out: Transcript[] = [];
    for (const dir of dirs) {
      const chats = path.join(dir, 'chats');
      for (const f of await list(chats)) {
        const file = path.join(chats, f.name);
        if (f.isFile() && f.name.startsWith('session-') && f.name.endsWith('.jsonl') && (await this.isNew(file, since))) out.push({ adapter: gemini, file });
      }
    }
    return out;
  }
}

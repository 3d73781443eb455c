import * as path from 'node:path';
import type { Database, SqlJsStatic } from 'sql.js';
import { AGENTS, type SessionDatabase, type SessionRow } from '../agents';
import { DocumentReporting } from './agentDocument';
import type { EventSink } from './eventLog';
import type { TailRead } from './logTail';
import { imageSignature, readDatabaseImage, sameSignature, type ImageSignature } from './sqliteImage';

/*
 * Agents' sessions kept in SQLite databases (`Agent.database`), read without SQLite's locking:
 * the database and its log are read into an image (./sqliteImage.ts) and opened by SQLite built
 * to WebAssembly (sql.js: no native addon, so it runs wherever the editor does), in memory, read
 * only, closed after each reading. It is loaded on first use only: a workspace with no such agent
 * never pays for it.
 */

let engine: Promise<SqlJsStatic> | undefined;

function sqlite(): Promise<SqlJsStatic> {
  // Bundled apart (dist/sqlite.js, with its .wasm beside it): required only here.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  engine ??= (require('sql.js') as (config?: object) => Promise<SqlJsStatic>)();
  return engine;
}

function rows(db: Database, sql: string, params: readonly (string | number)[]): SessionRow[] {
  const stmt = db.prepare(sql);
  try {
    stmt.bind([...params]);
    const out: SessionRow[] = [];
    while (stmt.step()) out.push(stmt.getAsObject());
    return out;
  } finally {
    stmt.free();
  }
}

/** One session as read: its id and its document. */
export interface DatabaseSession {
  readonly id: string;
  readonly document: unknown;
}

/** An image of the database, opened (`known`: its files' signature as just taken); `use` runs with it, and it is closed after. */
export async function withDatabase<T>(file: string, use: (db: Database, signature: ImageSignature) => T, known?: ImageSignature): Promise<T> {
  const [SQL, image] = await Promise.all([sqlite(), readDatabaseImage(file, known)]);
  const db = new SQL.Database(image.bytes);
  try {
    return use(db, image.signature);
  } finally {
    db.close();
  }
}

/** The rows of the sessions `scope` wants: active since its time, in a folder it accepts. */
function wantedSessions(db: Database, store: SessionDatabase, scope: DatabaseReadScope): SessionRow[] {
  return rows(db, store.sessionsSql, [scope.since]).filter((s) => scope.wanted(typeof s.directory === 'string' ? s.directory : ''));
}

/** The sessions `scope` wants, each as its document. */
function sessionsOf(db: Database, store: SessionDatabase, scope: DatabaseReadScope): DatabaseSession[] {
  return wantedSessions(db, store, scope).map((s) => {
    const id = String(s.id);
    return { id, document: store.document(s, rows(db, store.messagesSql, [id]), rows(db, store.partsSql, [id])) };
  });
}

/** How many sessions of the database `scope` wants. */
export async function databaseSessions(file: string, store: SessionDatabase, scope: DatabaseReadScope): Promise<number> {
  return withDatabase(file, (db) => wantedSessions(db, store, scope).length);
}

/** Where an agent's database is: `home` given (its configured folder), else its environment variable's folder or its default. */
export function databaseFile(store: SessionDatabase, env: NodeJS.ProcessEnv, userHome: string, home?: string): string {
  if (home !== undefined) return path.join(home, store.file);
  const base = env[store.homeEnv];
  const root = base !== undefined && base !== '' && path.isAbsolute(base) ? base : store.defaultHome.replace(/^~(?=$|\/)/, userHome);
  const named = store.fileEnv !== undefined ? env[store.fileEnv] : undefined;
  if (named !== undefined && named !== '' && named !== ':memory:') return path.isAbsolute(named) ? named : path.join(root, store.folder, named);
  return path.join(root, store.folder, store.file);
}

/** The agent whose database this is: the one `format` names, else the one whose file name it has, else the first that reads it. */
export function databaseAgent(file: string, format: string | undefined): { id: string; store: SessionDatabase } | undefined {
  const stores = AGENTS.flatMap((a) => (a.database !== undefined ? [{ id: a.id, store: a.database }] : []));
  if (format !== undefined && format !== 'auto') return stores.find((s) => s.id === format);
  return stores.find((s) => path.basename(file) === s.store.file) ?? stores[0];
}

export interface DatabaseReadScope {
  /** Sessions last active before this (ms since the epoch) are not read. */
  readonly since: number;
  /** Whether a session's folder is one to read (the workspace or inside it). */
  readonly wanted: (directory: string) => boolean;
}

/**
 * An agent's database, read as it changes: each reading takes an image of it when its file or its
 * log changed, and decodes each wanted session afresh, reporting only what no earlier reading
 * reported (./agentDocument.ts `DocumentReporting`, one per session). A record's line is the
 * message's number in its session, in the order the agent's own export lists them.
 */
export class SessionDatabaseReader {
  private last: ImageSignature | undefined;
  private readonly sessions = new Map<string, DocumentReporting>();
  private readonly counter = { events: 0 };

  constructor(
    readonly absPath: string,
    readonly name: string,
    private readonly store: SessionDatabase,
    private readonly scope: DatabaseReadScope,
  ) {}

  async read(sink: EventSink): Promise<TailRead> {
    const now = await imageSignature(this.absPath);
    if (now === undefined) return { reset: false, bytes: 0, missing: true };
    if (sameSignature(now, this.last)) return { reset: false, bytes: 0, missing: false };
    const { sessions, signature } = await withDatabase(this.absPath, (db, signature) => ({ sessions: sessionsOf(db, this.store, this.scope), signature }), now);
    this.last = signature;
    for (const s of sessions) {
      let reporting = this.sessions.get(s.id);
      if (reporting === undefined) {
        reporting = new DocumentReporting(this.name, this.store.adapter, s.id, this.counter);
        this.sessions.set(s.id, reporting);
      }
      reporting.decode(s.document, undefined, sink);
    }
    return { reset: false, bytes: 0, missing: false };
  }

  finish(sink: EventSink): void {
    for (const r of this.sessions.values()) r.finish(sink);
  }
}

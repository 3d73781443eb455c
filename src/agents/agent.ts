import type { GuardianEvent } from '../core/events';
import type { RecordScope } from './eventBuilders';
import type { TelemetryRecord } from './otlpLogs';
import type { HookProtocol } from './hook';
import type { Adapter, DocumentAdapter, JsonlAdapter } from './transcript';

/**
 * Everything the guardian knows of one agent, from its folder under `src/agents/`: how to read its
 * transcripts, where they live for a workspace, and its hook contract with how the hook is
 * registered. An agent has the parts it has: SWE-agent writes trajectories but takes no hook.
 */
export interface Agent {
  /** Its name on the command line and in config.json: `replay --format claude`, `hook claude`, `agents.claude`. */
  readonly id: string;
  /** How people call it: "Claude Code". */
  readonly label: string;
  /** The `agent` its events carry ("claude-code"). */
  readonly eventAgent: string;
  /** How to read its transcripts (the shape discovery watches as the agent writes it). */
  readonly transcript?: Adapter;
  /**
   * Other shapes its logs take (a headless run's output, an evaluation's results, an older
   * version's files): read by `replay`, which tells them apart by their first record or document.
   */
  readonly otherTranscripts?: readonly Adapter[];
  /** Where its transcripts for a workspace live. */
  readonly discovery?: TranscriptDiscovery;
  /** A transcript that is a folder of files, one record each, which `replay` reads given the folder. */
  readonly folderTranscript?: FolderTranscript;
  /**
   * Other places its transcripts live (another version's or bundle's store), searched as well;
   * `agents.<id>.home` moves only the first, `discovery`.
   */
  readonly otherDiscovery?: readonly TranscriptDiscovery[];
  /** Its OpenTelemetry log events (OTLP), as the guardian's events: `loop-guardian otlp` reads them. */
  readonly telemetry?: TelemetryMapping;
  /** Its sessions kept in an SQLite database, and how they are read from it. */
  readonly database?: SessionDatabase;
  /** Its hook contract, and how its hook is registered. */
  readonly hook?: HookProtocol;
  /**
   * Whether a terminal of the editor is one its harness created, told by the environment the
   * terminal was created with: the exit codes of the commands run there are recorded for its hook
   * (`HookProtocol.terminalCommands`).
   */
  readonly ownsTerminal?: (env: Readonly<Record<string, string | null | undefined>> | undefined) => boolean;
  /**
   * Why its hook, registered in a project, would not run there: the trust the agent asks for
   * before it runs a project's hooks, read from its own settings. Empty when nothing stands in the
   * way that its files tell.
   */
  readonly hookTrust?: (scope: TrustScope) => Promise<readonly NotRunning[]>;
}

/** What a trust check may read: the agent's own settings, outside the workspace (the watch layer answers). */
export interface TrustScope {
  /** The workspace folder, absolute. */
  readonly root: string;
  /** The user's home folder. */
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  /** A small file's text; undefined when it is missing or cannot be read. */
  readText(file: string): Promise<string | undefined>;
  /** A path with its links resolved, as the agent compares paths; the path itself when it cannot be. */
  realPath(file: string): Promise<string>;
  /** Whether `p` is the folder `dir` or inside it. */
  within(dir: string, p: string): boolean;
}

/**
 * A folder holding one record per file: which files (in the folder or its `subfolder`), and each
 * one's index in the record list from its name. `replay FOLDER` reads them into one document (an
 * array, record i on line i + 1, a missing or unreadable file a string that says why) for the
 * agent's document adapter.
 */
export interface FolderTranscript {
  readonly subfolder?: string;
  /** The index of the record a file holds, or undefined when the file is none of them. */
  index(name: string): number | undefined;
}

/** How an agent's OpenTelemetry log records become the guardian's events. */
export interface TelemetryMapping {
  /** Whether a record is this agent's (by its resource's `service.name`). */
  owns(record: TelemetryRecord): boolean;
  /** The session a record belongs to; undefined when it names none (it is not read). */
  session(record: TelemetryRecord): string | undefined;
  /** The order of a record in its session, when the agent numbers them (a batch may hold them out of order). */
  sequence?(record: TelemetryRecord): number | undefined;
  /** The events one record becomes (none for those the signals do not read), in its scope: its session, the agent's `eventAgent`, its time. */
  events(record: TelemetryRecord, scope: RecordScope): GuardianEvent[];
}

/** A row of a query, column by column. */
export type SessionRow = Readonly<Record<string, unknown>>;

/**
 * An SQLite database that holds an agent's sessions (the watch layer opens it read-only, as an
 * image, and runs these queries): where it is, which sessions were active since a time, and each
 * session as one document for `adapter`.
 */
export interface SessionDatabase {
  /** The environment variable of the folder its data folder is in (`XDG_DATA_HOME`). */
  readonly homeEnv: string;
  /** That folder otherwise (`~` is the user's home). */
  readonly defaultHome: string;
  /** Its data folder in it, and the database's file name there. */
  readonly folder: string;
  readonly file: string;
  /** The environment variable that names the database itself (an absolute path, or a name in its data folder). */
  readonly fileEnv?: string;
  /** One parameter, a time in ms since the epoch; rows with `id` and `directory` (the folder the session works in). */
  readonly sessionsSql: string;
  /** One parameter, a session id: its messages in order, and their parts. */
  readonly messagesSql: string;
  readonly partsSql: string;
  /** A session's rows as one document. */
  document(session: SessionRow, messages: readonly SessionRow[], parts: readonly SessionRow[]): unknown;
  readonly adapter: DocumentAdapter;
}

/** Why a registered hook does not run, and what the person does about it, in plain words. */
export interface NotRunning {
  readonly cause: string;
  readonly fix: string;
}

/** A transcript an agent is writing (or wrote) for a workspace. */
export interface FoundTranscript {
  /** Absolute path: transcripts live in the agents' own folders, outside the workspace. */
  readonly file: string;
  /** The session id its name carries, when it carries one. */
  readonly session?: string;
  /** Which of the agent's shapes the file is in, when it is not its `transcript` (an agent that writes two kinds of log). */
  readonly adapter?: JsonlAdapter;
}

/** A folder entry, as much of it as discovery needs. */
export interface DiscoveryEntry {
  readonly name: string;
  isFile(): boolean;
  isDirectory(): boolean;
}

/** What a locator may ask of the file system; the watch layer answers, so that agents do no I/O. */
export interface DiscoveryFs {
  /** A folder's entries; none when it cannot be read. */
  list(dir: string): Promise<readonly DiscoveryEntry[]>;
  /** Whether a file is one to read: not read yet, a regular file changed within the age limit. */
  isNew(file: string): Promise<boolean>;
  /** The first whole line of a file (within its first 64 KB); undefined while it has none. */
  firstLine(file: string): Promise<string | undefined>;
  /**
   * A small file's text (its first 64 KB, or `maxBytes`: a longer file is cut there); undefined
   * when it cannot be read.
   */
  readText(file: string, maxBytes?: number): Promise<string | undefined>;
}

export interface DiscoveryScope {
  /** The workspace folder, absolute. */
  readonly root: string;
  /** The agent's data folder, resolved (its configured home, its environment variable, or its default). */
  readonly home: string;
  /** Files changed before this (ms since the epoch) are not read: `isNew` checks each file, and a locator may skip folders dated before it. */
  readonly since: number;
  readonly fs: DiscoveryFs;
  /** Whether a path is the workspace folder or inside it. */
  contains(p: string): boolean;
}

/** Finds one agent's transcripts for one workspace; it may remember what it learnt between polls. */
export interface TranscriptLocator {
  find(scope: DiscoveryScope): Promise<FoundTranscript[]>;
}

export interface TranscriptDiscovery {
  /** The environment variable that moves the agent's data folder, if it has one. */
  readonly homeEnv?: string;
  /** Its data folder otherwise (`~` is the user's home). */
  readonly defaultHome: string;
  /**
   * Its data is in the editor's storage (an extension's transcripts): when the guardian runs inside
   * the editor, the window's own storage folder (`workspaceStorage/<id>`) is the home.
   */
  readonly inEditorStorage?: boolean;
  /**
   * Its data is in the editor's global storage (`User/globalStorage`, one folder per extension,
   * shared by every window): the home is that folder. Inside the editor it is the parent of the
   * guardian's own `globalStorageUri`; from the CLI, each of the standard user-data folders of
   * VS Code and its editions (the watch layer lists them). `defaultHome` is then unused.
   */
  readonly inGlobalStorage?: boolean;
  /** A locator for one workspace. */
  locator(): TranscriptLocator;
}

import { randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import type { HookReply } from '../agents/hook';
import { guardianHome } from '../state/guardianHome';

/*
 * The hook server: one long-lived process per user that answers hook calls, so that a tool call
 * costs the agent a small bash client (bin/loop-guardian-hook, written beside the launcher by
 * src/state/launcher.ts) instead of a Node start. Each call is answered by the very pipeline the
 * hook process runs (`runHook`, src/cli/hook.ts), with the caller's own working folder,
 * environment, arguments and stdin: one judgement, whichever way it comes.
 *
 * Safe to expose only to its user: it listens on 127.0.0.1 alone, on a port the system picks, and
 * answers only a request that opens with its token, a random 128-bit secret in a file only its
 * user can read (`run/hook-server` in the guardian's per-user folder, mode 0600 in a 0700 folder).
 * A request is bounded (its header, its payload, its time); anything else is closed unanswered, and
 * the client then asks the hook process as before.
 *
 * It goes away by itself: idle for IDLE_MS, when its run file no longer names it (another server
 * took over, or the folder was removed), or when its own install changed (the client then gets
 * "retry" and starts the hook process, which starts a new server). STOP never depends on it: the
 * client sends a call here only where no STOP_ALL file is at or above its folder.
 *
 * Request, fields ended by NUL: `LGH1`, token, the client's CLI path, cwd, argc, argv…, envc,
 * NAME=value…, the payload's length in bytes; then the payload. Reply: `<exit code>\n<bytes of
 * stdout>\n<stdout><stderr>`, or `R\n` (ask the hook process instead).
 */

/** Where the server says where it listens: `<port> <token> <pid>\n`. */
export function hookServerFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(guardianHome(env), 'run', 'hook-server');
}

const MAGIC = 'LGH1';
/** Gone after this long without a call (the next call starts it again). */
export const IDLE_MS = 5 * 60 * 1000;
/** How often it checks that it is still the server, its install unchanged, and not idle. */
const CHECK_MS = 2000;
/** A request must be in within this time. */
const REQUEST_MS = 10_000;
/** The most a request's fields may take (the environment is among them). */
const MAX_HEADER_BYTES = 1024 * 1024;
/** The most a payload may take: as the hook process reads from stdin. */
const MAX_PAYLOAD_BYTES = 16 * 1024 * 1024;
/** Connections served at once; more are closed unanswered (their clients ask the hook process). */
const MAX_CONNECTIONS = 32;

export interface HookRequestFrame {
  readonly token: string;
  readonly cli: string;
  readonly cwd: string;
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly payload: string;
}

export class FrameError extends Error {}

/**
 * A request read from the bytes received so far: the request, `undefined` while incomplete, or a
 * FrameError (not a request: closed unanswered).
 */
export function readFrame(buf: Buffer): HookRequestFrame | undefined {
  const head = readHeader(buf);
  if (head === undefined || buf.length < head.start + head.length) return undefined;
  if (buf.length > head.start + head.length) throw new FrameError('bytes past the payload');
  return { ...head.header, payload: buf.toString('utf8', head.start, head.start + head.length) };
}

/** A request's fields, where its payload starts and how long it is; `undefined` while the fields are incomplete. */
export function readHeader(buf: Buffer): { header: Omit<HookRequestFrame, 'payload'>; start: number; length: number } | undefined {
  let at = 0;
  const field = (): string | undefined => {
    const end = buf.indexOf(0, at);
    if (end < 0) {
      if (buf.length - at > MAX_HEADER_BYTES) throw new FrameError('header too long');
      return undefined;
    }
    if (end > MAX_HEADER_BYTES) throw new FrameError('header too long');
    const text = buf.toString('utf8', at, end);
    at = end + 1;
    return text;
  };
  const count = (limit: number): number | undefined => {
    const text = field();
    if (text === undefined) return undefined;
    if (!/^\d{1,9}$/.test(text) || Number(text) > limit) throw new FrameError(`bad count ${JSON.stringify(text.slice(0, 20))}`);
    return Number(text);
  };
  const magic = field();
  if (magic === undefined) return magic;
  if (magic !== MAGIC) throw new FrameError('not a hook request');
  const token = field();
  const cli = token === undefined ? undefined : field();
  const cwd = cli === undefined ? undefined : field();
  if (cwd === undefined) return undefined;
  const argc = count(64);
  if (argc === undefined) return undefined;
  const argv: string[] = [];
  for (let i = 0; i < argc; i++) {
    const a = field();
    if (a === undefined) return undefined;
    argv.push(a);
  }
  const envc = count(100_000);
  if (envc === undefined) return undefined;
  const env: NodeJS.ProcessEnv = {};
  for (let i = 0; i < envc; i++) {
    const kv = field();
    if (kv === undefined) return undefined;
    const eq = kv.indexOf('=');
    if (eq > 0) env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  const length = count(MAX_PAYLOAD_BYTES);
  if (length === undefined) return undefined;
  if (at > MAX_HEADER_BYTES) throw new FrameError('header too long');
  return { header: { token: token as string, cli: cli as string, cwd, argv, env }, start: at, length };
}

/** A reply in the wire's form. */
export function replyBytes(reply: HookReply): Buffer {
  const out = Buffer.from(reply.stdout, 'utf8');
  return Buffer.concat([Buffer.from(`${reply.exitCode}\n${out.length}\n`), out, Buffer.from(reply.stderr, 'utf8')]);
}

const RETRY = Buffer.from('R\n');

/** What identifies an install's files: a rebuilt or updated install is another one. */
function identity(files: readonly string[]): string {
  return files
    .map((f) => {
      try {
        const st = statSync(f);
        return `${st.ino}:${st.size}:${st.mtimeMs}`;
      } catch {
        return 'gone';
      }
    })
    .join(',');
}

export interface ServeOptions {
  /** The install's CLI entry (dist/cli.js): a request from another install gets "retry". */
  readonly cli: string;
  /** Its files whose change ends the server (the CLI and the hook's bundles). */
  readonly files: readonly string[];
  /** Answers one hook call (the hook's own `runHook`). */
  readonly answer: (argv: readonly string[], io: { readStdin(): Promise<string>; env: NodeJS.ProcessEnv; cwd: string }) => Promise<HookReply>;
  readonly env?: NodeJS.ProcessEnv;
  readonly idleMs?: number;
  /** How long a request may take to come in (REQUEST_MS). */
  readonly requestMs?: number;
}

/**
 * Serves hook calls until it has no reason to (see above); resolves when it has stopped. Two
 * started at once: the later run file wins, and the other is gone at its next check.
 */
export async function serveHooks(opts: ServeOptions): Promise<void> {
  const env = opts.env ?? process.env;
  const file = hookServerFile(env);
  const token = randomBytes(16).toString('hex');
  const tokenBytes = Buffer.from(token);
  const installed = identity(opts.files);
  const idleMs = opts.idleMs ?? IDLE_MS;
  let last = Date.now();
  let busy = 0;
  const sockets = new Set<Socket>();

  const server = createServer({ allowHalfOpen: false }, (socket) => {
    if (sockets.size >= MAX_CONNECTIONS) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.setTimeout(opts.requestMs ?? REQUEST_MS, () => socket.destroy());
    // Until the fields are whole, the bytes so far (at most the fields' bound and one chunk); then
    // the payload's chunks, joined once it is all in: a large payload is never copied chunk by chunk.
    let buf: Buffer = Buffer.alloc(0);
    let head: ReturnType<typeof readHeader>;
    const chunks: Buffer[] = [];
    let received = 0;
    let done = false;
    socket.on('data', (chunk: Buffer) => {
      if (done) return;
      let frame: HookRequestFrame | undefined;
      try {
        if (head === undefined) {
          buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
          head = readHeader(buf);
          if (head !== undefined) {
            chunks.push(buf);
            received = buf.length;
          }
        } else {
          chunks.push(chunk);
          received += chunk.length;
        }
        if (head !== undefined && received >= head.start + head.length) frame = readFrame(Buffer.concat(chunks, received));
      } catch {
        socket.destroy();
        return;
      }
      if (frame === undefined) return;
      done = true;
      const given = Buffer.from(frame.token);
      if (given.length !== tokenBytes.length || !timingSafeEqual(given, tokenBytes)) {
        socket.destroy();
        return;
      }
      last = Date.now();
      if (frame.cli !== opts.cli || identity(opts.files) !== installed || frame.argv[0] !== 'hook') {
        socket.end(RETRY);
        return;
      }
      const payload = frame.payload;
      busy++;
      opts
        .answer(frame.argv.slice(1), { readStdin: () => Promise.resolve(payload), env: frame.env, cwd: frame.cwd })
        .then(
          (reply) => socket.end(replyBytes(reply)),
          () => socket.end(RETRY),
        )
        .finally(() => {
          busy--;
          last = Date.now();
        });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the hook server has no port');
  const line = `${address.port} ${token} ${process.pid}\n`;
  // In the guardian's folder as it is (the launcher's): never made again where it was deleted.
  try {
    mkdirSync(dirname(file), { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, line, { mode: 0o600, flag: 'wx' });
  renameSync(temp, file);

  const ours = (): boolean => {
    try {
      return readFileSync(file, 'utf8') === line;
    } catch {
      return false;
    }
  };
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const idle = busy === 0 && Date.now() - last > idleMs;
      const changed = busy === 0 && identity(opts.files) !== installed;
      if (!ours() || idle || changed) {
        clearInterval(timer);
        if (ours()) {
          try {
            unlinkSync(file);
          } catch {
            // Gone already.
          }
        }
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }
    }, CHECK_MS);
  });
}

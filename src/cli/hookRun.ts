import { writeSync } from 'node:fs';
import { join } from 'node:path';
import { readStdin, runHook } from './hook';
import { serverModule } from '../hook/modules';

/*
 * The hook's bundle: `loop-guardian hook AGENT` (one call, answered by the hook's pipeline), and
 * `loop-guardian hook-server` (the same answers for many calls, from one process: src/hook/server.ts).
 */

const SERVER_USAGE = `Usage: loop-guardian hook-server

The hook server: answers the agents' hook calls sent by the hook client beside the launcher
(~/.loop-guardian/bin/loop-guardian-hook), so that a tool call does not start Node. Started by the
hooks themselves; gone after 5 minutes without a call. LOOP_GUARDIAN_HOOK_SERVER=off in an agent's
environment: its hook calls start Node each.
`;

if (process.argv[2] === 'hook-server' && process.argv.length > 3) {
  const help = process.argv[3] === '--help' || process.argv[3] === '-h';
  writeOut(help ? 1 : 2, help ? process.stdout : process.stderr, help ? SERVER_USAGE : `loop-guardian hook-server: unexpected argument ${JSON.stringify(process.argv[3])}\n\n${SERVER_USAGE}`);
  process.exit(help ? 0 : 2);
} else if (process.argv[2] === 'hook-server') {
  const cli = process.argv[1] ?? join(__dirname, 'cli.js');
  // Its install: the entry and the hook's bundles (loaded once, kept): a change to any ends the server.
  const files = [cli, __filename, ...['cli-gate.js', 'cli-turn.js', 'cli-hook-server.js'].map((f) => join(__dirname, f))];
  void serverModule()
    .serveHooks({ cli, files, answer: runHook })
    .then(
      () => process.exit(0),
      () => process.exit(1),
    );
} else {
  void runHook(process.argv.slice(3), { readStdin, env: process.env, cwd: process.cwd() }).then((reply) => {
    // The reply is out before the exit below. Its own files were read and written synchronously
    // too: the process ends now, whatever read is still waiting (stdin that never ends must not keep
    // the agent waiting).
    if (reply.stdout) writeOut(1, process.stdout, reply.stdout);
    if (reply.stderr) writeOut(2, process.stderr, reply.stderr);
    // The hook client found no hook server: one is started for the calls to come, after this answer.
    if (process.env.LOOP_GUARDIAN_HOOK_SERVER === 'start') startServer();
    process.exit(reply.exitCode);
  });
}

/** The hook server, started apart (its own session, no stdio): the agent never waits for it. */
function startServer(): void {
  const script = process.argv[1];
  if (script === undefined) return;
  try {
    // Required here only: loading child_process loads net, which the hook otherwise never does.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { spawn } = require('node:child_process') as typeof import('node:child_process');
    const env = { ...process.env };
    delete env.LOOP_GUARDIAN_HOOK_SERVER;
    const child = spawn(process.execPath, [script, 'hook-server'], { detached: true, stdio: 'ignore', env, cwd: '/' });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // No server: the next call starts the hook process again.
  }
}

/**
 * All of `text` to the descriptor, synchronously and without `process.stdout`: on a socket (the
 * stdout of an agent that runs on Node) that stream loads `net`, a good part of the hook's time
 * (cli/stdinHandle.ts). Whatever a write cannot take at once (a descriptor left non-blocking, a full
 * pipe: EAGAIN) goes through the stream, which is synchronous for pipes and files too. An agent
 * that stopped reading (EPIPE) gets nothing more.
 */
function writeOut(fd: 1 | 2, stream: NodeJS.WriteStream, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  let at = 0;
  try {
    while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EAGAIN') stream.write(bytes.subarray(at));
  }
}

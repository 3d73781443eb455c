import { writeSync } from 'node:fs';
import { readStdin, runHook } from './hook';

void runHook(process.argv.slice(3), { readStdin, env: process.env, cwd: process.cwd() }).then((reply) => {
  // The reply is out before the exit below. Its own files were read and written synchronously
  // too: the process ends now, whatever read is still waiting (stdin that never ends must not keep
  // the agent waiting).
  if (reply.stdout) writeOut(1, process.stdout, reply.stdout);
  if (reply.stderr) writeOut(2, process.stderr, reply.stderr);
  process.exit(reply.exitCode);
});

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

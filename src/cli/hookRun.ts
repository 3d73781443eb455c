import { HOOK_DEADLINE_MS, readStdin, runHook, settleSideWrites } from './hook';

const started = Date.now();
void runHook(process.argv.slice(3), { readStdin, env: process.env, cwd: process.cwd() }).then(async (reply) => {
  // Writes to a pipe or a file are synchronous here, so the reply is out before the exit below.
  if (reply.stdout) process.stdout.write(reply.stdout);
  if (reply.stderr) process.stderr.write(reply.stderr);
  // The guardian log gets what is left of the deadline; then the process ends, whatever read or
  // write is still blocked (a FIFO in a state file's place must not keep the agent waiting).
  await settleSideWrites(Math.min(500, HOOK_DEADLINE_MS + 500 - (Date.now() - started)));
  process.exit(reply.exitCode);
});

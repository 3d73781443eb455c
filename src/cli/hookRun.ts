import { readStdin, runHook } from './hook';

void runHook(process.argv.slice(3), { readStdin, env: process.env, cwd: process.cwd() }).then((reply) => {
  // Writes to a pipe or a file are synchronous here, so the reply is out before the exit below.
  // Its own files were read and written synchronously too: the process ends now, whatever read is
  // still waiting (stdin that never ends must not keep the agent waiting).
  if (reply.stdout) process.stdout.write(reply.stdout);
  if (reply.stderr) process.stderr.write(reply.stderr);
  process.exit(reply.exitCode);
});

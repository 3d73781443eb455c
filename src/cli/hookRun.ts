import { readStdin, runHook } from './hook';

void runHook(process.argv.slice(3), { readStdin, env: process.env, cwd: process.cwd() }).then((reply) => {
  if (reply.stdout) process.stdout.write(reply.stdout);
  if (reply.stderr) process.stderr.write(reply.stderr);
  process.exitCode = reply.exitCode;
});

import { tuneHeap } from './heap';
import { main } from './main';

tuneHeap(process.execArgv, process.env.NODE_OPTIONS);

const color = process.stdout.isTTY === true && process.env.NO_COLOR === undefined;
// A reader that went away (`scan | head -1`) ends the output, quietly: the command still finishes
// and exits with its own code.
let closed = false;
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  closed = true;
});
main(process.argv.slice(2), {
  out: (s) => {
    if (!closed) process.stdout.write(s);
  },
  err: (s) => process.stderr.write(s),
  cwd: process.cwd(),
  color,
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`loop-guardian: internal error: ${String(err)}\n`);
    process.exitCode = 3;
  },
);

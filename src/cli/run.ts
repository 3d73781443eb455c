import { setFlagsFromString } from 'node:v8';
import { main } from './main';

// Memory (issue 10): V8 lets its old generation grow to up to four times what is live before it
// collects it. A replay's old generation is mostly the signals' windows passing through (a few MB
// live, a lot promoted and dropped), so the CLI lets it grow to twice what is live: on the bench's
// stream of 1M events the peak is 17 MB lower (104 MB) for 16 more full collections (1 to 2 % of
// the CPU time), on a long log of many sessions about 90 MB lower at the same speed. A flag V8
// reads at each collection, set here for this process only (not the hook's); one given on the
// command line wins (`node --heap-growing-percent=0 dist/cli.js …`: V8's own pacing).
if (!process.execArgv.some((a) => a.startsWith('--heap-growing-percent') || a.startsWith('--heap_growing_percent'))) setFlagsFromString('--heap-growing-percent=100');

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

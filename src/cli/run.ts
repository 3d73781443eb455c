import { main } from './main';

const color = process.stdout.isTTY === true && process.env.NO_COLOR === undefined;
main(process.argv.slice(2), {
  out: (s) => process.stdout.write(s),
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

/**
 * Loaded into the CLI by the bench's `ours` phase (`node --require out/bench/phaseClock.js
 * dist/cli.js replay …`), so that the CLI runs as shipped and still reports what the other phases
 * report: when its modules were loaded and its work began (the first turn of the event loop, once
 * the bundle's synchronous loading is done), when it exited, and its peak memory; written at exit
 * to the file named by BENCH_CLOCK_REPORT (ms since the process started).
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const file = process.env.BENCH_CLOCK_REPORT;
if (file !== undefined) {
  let loaded = 0;
  setImmediate(() => {
    loaded = performance.now();
  });
  process.once('exit', () => {
    writeFileSync(file, JSON.stringify({ loaded, exited: performance.now(), maxRSS_MB: Math.round(process.resourceUsage().maxRSS / 1024) }));
  });
}

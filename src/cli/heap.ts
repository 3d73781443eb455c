import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/** The young generation (both semi-spaces) past which the CLI lets it grow no further. */
const YOUNG_GENERATION_CAP = 8 << 20;

/**
 * Memory (issue 10): V8's own pacing, tuned for the CLI's commands (not the hook's process). Both
 * are flags V8 reads as it goes, set here at start; one given on the command line or in
 * NODE_OPTIONS wins.
 *
 * - The old generation: V8 lets it grow to up to four times what is live before it collects it. A
 *   replay's old generation is mostly the signals' windows passing through (a few MB live, a lot
 *   promoted and dropped), so it may grow to twice what is live (`--heap-growing-percent=100`): on
 *   the bench's stream of 1M events the peak is 17 MB lower for 16 more full collections (1 to 2 %
 *   of the CPU time), on a long log of many sessions about 90 MB lower at the same speed.
 * - The young generation: V8 doubles it whenever much of it survives a collection, up to 2 × 16 MB
 *   on Node 20, and a replay's windows keep enough alive that it always gets there. Once it is
 *   YOUNG_GENERATION_CAP (2 × 4 MB), it grows no further (`--semi-space-growth-factor=1`, set after
 *   the collection that finds it there): the bench's 1M events peak about 20 MB lower, for about
 *   5 % more time in collections. What `--max-semi-space-size=4` does, which V8 reads only when
 *   it starts.
 */
export function tuneHeap(execArgv: readonly string[], nodeOptions = ''): void {
  const flags = [...execArgv, ...nodeOptions.split(/\s+/)].map((a) => a.replace(/_/g, '-'));
  const given = (flag: string) => flags.some((a) => a.startsWith(flag));
  if (!given('--heap-growing-percent')) setFlagsFromString('--heap-growing-percent=100');
  if (given('--semi-space-growth-factor') || given('--max-semi-space-size') || given('--min-semi-space-size')) return;
  const young = new PerformanceObserver(() => {
    const space = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    if (space === undefined || space.space_size < YOUNG_GENERATION_CAP) return;
    setFlagsFromString('--semi-space-growth-factor=1');
    young.disconnect();
  });
  young.observe({ entryTypes: ['gc'] });
}

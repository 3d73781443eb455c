import { formatSkipped } from '../../core/events';
import type { Finding } from '../../core/finding';
import { groupIncidents } from '../../core/incidents';
import { formatDescription, REPLAY_FORMATS, replayFile, replayText, type ReplayFormat, type ReplayResult } from '../../watch/replay';
import { readReplayInput } from '../../watch/replayInput';
import type { CommandContext } from '../context';
import { EXIT, findingJson, formatIncident, incidentJson, JsonList, plain, UsageError, writeJson } from '../io';

const OUT_BLOCK = 64 << 10;

/**
 * Runs the detectors over one log from its start. The text and `--json` outputs group the
 * findings into incidents, so they hold every finding until the end; `--jsonl` writes each
 * finding as it is raised and keeps none: memory stays within the signals' windows however long
 * the log.
 */
export async function replayCommand(ctx: CommandContext, file: string | undefined, opts: { format?: string; jsonl?: boolean }): Promise<number> {
  if (file === undefined) throw new UsageError('replay needs a FILE (or - for stdin)');
  const format = (opts.format ?? 'auto') as ReplayFormat | 'auto';
  if (!REPLAY_FORMATS.includes(format)) throw new UsageError(`--format must be one of ${REPLAY_FORMATS.join(', ')}`);
  if (opts.jsonl === true && ctx.json) throw new UsageError('--json and --jsonl: one or the other');
  if (file === '-' && process.stdin.isTTY) throw new UsageError('replay -: stdin is a terminal; pipe a log into it (cat log.jsonl | loop-guardian replay -)');
  const input = await readReplayInput(file, ctx.io.cwd);
  const io = ctx.io;
  let streamed = 0;
  let halted = false;
  // Written in blocks of about OUT_BLOCK characters (a write per finding was a good part of a
  // replay's time), and what is left when the replay ends.
  let pending = '';
  const onFinding =
    opts.jsonl === true
      ? (f: Finding) => {
          streamed++;
          if (f.action === 'halt') halted = true;
          pending += `${JSON.stringify(findingJson(f))}\n`;
          if (pending.length >= OUT_BLOCK) {
            io.out(pending);
            pending = '';
          }
        }
      : undefined;
  // Shown (text or --json) as they stood last: nothing else of them is held.
  const result = 'file' in input ? await replayFile(input.file, file, format, ctx.config, onFinding, 'lastly') : await replayText(input.text, file, format, ctx.config, onFinding, 'lastly');
  if (pending !== '') io.out(pending);
  for (const s of result.skippedLines) io.err(`warning: skipped ${plain(formatSkipped(s))}\n`);
  if (result.skipped > result.skippedLines.length) io.err(`warning: ${result.skipped - result.skippedLines.length} more line(s) skipped\n`);
  for (const k of result.skippedKinds) io.err(`warning: skipped ${k.count} record(s) with ${plain(`${k.field}: ${k.reason}`)}\n`);
  const nothing = nothingRead(file, format, result);
  if (nothing !== undefined) io.err(`loop-guardian replay: error: ${plain(nothing)}\n`);
  if (onFinding !== undefined) {
    // The findings went to stdout as they came; what was read is said on stderr.
    io.err(`${plain(file)}: ${result.events} event(s) (${result.format}), ${result.skipped} line(s) skipped, ${streamed} finding(s)\n`);
    if (nothing !== undefined) return EXIT.nothingRead;
    return halted ? EXIT.loop : EXIT.ok;
  }
  // Each finding once, as its pattern stood at the end (a loop found at its third repeat that went
  // on to the eleventh says 11, as the editor does).
  const findings = result.lastly;
  const incidents = groupIncidents(findings);
  const index = new Map(findings.map((f, i) => [f, i]));
  if (ctx.json) {
    // Written as it is made: the document of a long log's findings is never held whole.
    writeJson(
      (text) => io.out(text),
      {
        format: result.format,
        events: result.events,
        skipped: result.skipped,
        skipped_kinds: result.skippedKinds,
        findings: new JsonList(findings, findingJson),
        incidents: new JsonList(incidents, (inc) => incidentJson(inc, (f) => index.get(f) ?? -1)),
        error: nothing,
      },
      OUT_BLOCK,
    );
  } else {
    io.out(`${plain(file)}: ${result.events} event(s) (${result.format}), ${result.skipped} line(s) skipped, ${incidents.length} loop(s) from ${findings.length} finding(s)\n`);
    for (const inc of incidents) io.out(`${formatIncident(io, inc)}\n`);
  }
  if (nothing !== undefined) return EXIT.nothingRead;
  return result.findings.some((f) => f.action === 'halt') ? EXIT.loop : EXIT.ok;
}

/**
 * A non-blank input from which not one event came is never a silent success: what was read, as
 * what, what that format expects, and what to try.
 */
function nothingRead(file: string, format: string, result: ReplayResult): string | undefined {
  if (result.events > 0 || result.blank) return undefined;
  const how = format === 'auto' ? `recognised as ${result.format}` : `read as --format ${result.format}`;
  const skips = result.skipped > 0 ? `${result.skipped} record(s) skipped (${result.skippedKinds.slice(0, 3).map((k) => `${k.count} with ${k.field}: ${k.reason}`).join('; ')})` : 'no record skipped';
  const others = REPLAY_FORMATS.filter((f) => f !== 'auto' && f !== result.format).join(', ');
  return `${file}: nothing could be read: ${how}, expecting ${formatDescription(result.format)}; 0 events, ${skips}. If another program wrote it, name its format with --format (${others})`;
}

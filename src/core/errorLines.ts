import { boundedErrorText } from './errorClass';

/**
 * The lines of a failed command's result, as a person reads them: those that only frame it (the
 * agent's exit status and headers, a package manager's echo of the script and its trailer, stack
 * frames) and the one that says what failed. Pure.
 */

/*
 * An exit status as agents write it: "Exit code 1", "Exit Code: 1", "[Command exited with code 1]",
 * "(exit code 1)", "Command failed with exit code 1.", "returned non-zero exit status 1",
 * "<shellId: N completed with exit code 1>".
 * The status is captured.
 */
const EXIT_STATUS = [
  /^[[(]?(?:error:?\s*)?(?:process |command )?(?:failed with )?(?:exit(?:ed)?(?: with)?(?: status| code)?|exit code|returned non-zero exit status)[: ]*(\d+)\.?[\])]?$/i,
  /^<(?:shellId: ?\d+ completed|exited) with exit code (\d+)>$/i,
];

/*
 * The other lines a failed command's result carries besides what the command printed: a wall
 * time, the command and folder echoed back, empty output and error headers ("Output: (empty)",
 * "Error: (none)"), a process group, a bare "Error". Each agent's own shape is parsed where its
 * adapter reads it (src/agents/); here such lines are only set aside.
 */
const FRAME = [
  /^wall time: .*$/i,
  /^(?:command|directory):.*$/i,
  /^(?:output|stdout|stderr|error|signal|background pids):\s*(?:\(none\)|\(empty\))?$/i,
  /^process group pgid:.*$/i,
  /^(?:error|failed|command failed)\.?$/i,
];

/**
 * Whether a line (trimmed) is one an agent frames a command's result with rather than the
 * command's own: an exit status (with `status`, only that one) or a header.
 */
export function isResultFrame(line: string, status?: number): boolean {
  for (const re of EXIT_STATUS) {
    const m = re.exec(line);
    if (m) return status === undefined || Number(m[1]) === status;
  }
  return FRAME.some((re) => re.test(line));
}

/** npm's and pnpm's echo of the script they run (`> app@1.0.0 db:migrate`), yarn's (`yarn run v1.22.19`). */
const SCRIPT_HEADER = /^> (?:@[\w.-]+\/)?[\w.-]+@[^\s@]+ \S|^yarn run v\d/;
/** The lines of the echo after its header: the command (`> node migrate.js`, yarn's `$ node migrate.js`). */
const SCRIPT_ECHO = /^[>$] /;
/**
 * A package manager's trailer and warnings: where its log is, its error code, the script's path and
 * command, npm's warnings, yarn's hint.
 */
const TRAILER = /^npm (?:error|ERR!)(?:$|\s+(?:code|errno|syscall|path|workspace|location|command|signal|exit status)\b|\s+[/~]|\s+[A-Za-z]:\\)|A complete log of this run can be found in|^npm warn\b|^info Visit https?:/i;
/** A stack frame: `    at f (x.js:1:2)`, Python's `  File "x.py", line 3`. */
const STACK_FRAME = /^\s+(?:at\s|File ")/;
/** A line that names an error by its type or code: `TypeError: …`, `Error: …`, an `Exception`, `ECONNREFUSED`. */
const NAMES_ERROR = /[A-Za-z]Error\b|\bError:|Exception\b|\bE(?:CONN[A-Z]+|NOENT|ACCES|PERM|ADDRINUSE|ADDRNOTAVAIL|TIMEDOUT|NOTFOUND|AI_AGAIN|PIPE|EXIST|ISDIR|NOTDIR|MFILE|HOSTUNREACH|NETUNREACH)\b/;
/** A line that says something failed: "error", "failed", "cannot", "not found", npm's "Missing script"… */
const NAMES_FAILURE = /\berror\b|\bfail(?:ed|ure|s)?\b|\bcannot\b|\bcan't\b|\bnot found\b|\bmissing script\b|\bno such\b|\bdenied\b|\brefused\b|\bunable to\b|\bfatal\b/i;

/**
 * The line of an error that says what failed, to quote it: past the exit status, the script's
 * echo, the package manager's trailer and the stack frames, the first line naming an error by its
 * type or code ("Error: connect ECONNREFUSED 127.0.0.1:5432", "[TypeError: x is not a function]"),
 * else the first saying something failed ("npm error Missing script: \"build\"", "> Build error
 * occurred"), else the first that is not framing, else the first line. As written: noise and all.
 */
export function telltaleLine(error: string): string {
  const lines = readLines(error);
  return lines.named ?? lines.failure ?? lines.plain ?? lines.first ?? error.trim();
}

/**
 * The line of an error that says what failed, when one does (it names an error, or says something
 * failed): two errors whose such lines are the same, their run noise aside, are the same error
 * whatever else they print around it (`--verbose`, a longer trace). Undefined when no line says it.
 */
export function failureLine(error: string): string | undefined {
  const lines = readLines(error);
  return lines.named ?? lines.failure;
}

function readLines(error: string): { named?: string; failure?: string; plain?: string; first?: string } {
  let first: string | undefined;
  let failure: string | undefined;
  let plain: string | undefined;
  let echo = false;
  for (const raw of boundedErrorText(error).split('\n')) {
    const line = raw.trim();
    // Blank, or a rule of dashes.
    if (!/[\p{L}\p{N}]/u.test(line)) continue;
    first ??= line;
    if (SCRIPT_HEADER.test(line)) {
      echo = true;
      continue;
    }
    if (echo && SCRIPT_ECHO.test(line)) continue;
    echo = false;
    if (isResultFrame(line) || TRAILER.test(line) || STACK_FRAME.test(raw)) continue;
    if (NAMES_ERROR.test(line)) return { named: line, failure, plain, first };
    if (NAMES_FAILURE.test(line)) failure ??= line;
    else plain ??= line;
  }
  return { failure, plain, first };
}

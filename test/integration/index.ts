import { appendFileSync } from 'node:fs';
import * as path from 'node:path';
import * as util from 'node:util';

/**
 * The tests' own output, for the runner to print: the editor's console carries it mixed with the
 * browser's noise, which the runner keeps in a log file instead.
 */
function mirrorOutput(report: string): void {
  const console_ = console as unknown as Record<'log' | 'error' | 'warn' | 'info', (...args: unknown[]) => void>;
  for (const level of ['log', 'error', 'warn', 'info'] as const) {
    const original = console_[level].bind(console);
    console_[level] = (...args: unknown[]) => {
      appendFileSync(report, `${util.format(...args)}\n`);
      original(...args);
    };
  }
  const write = process.stdout.write.bind(process.stdout) as (chunk: unknown, ...rest: unknown[]) => boolean;
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    appendFileSync(report, typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array));
    return write(chunk, ...rest);
  }) as typeof process.stdout.write;
}

/** The extension host's test entry (extensionTestsPath): runs the suite the runner chose. */
export function run(): Promise<void> {
  // Before mocha loads: its reporter keeps the console.log it finds then.
  const report = process.env.LOOP_GUARDIAN_REPORT;
  if (report) mirrorOutput(report);
  // Mocha 12's CommonJS export is an object holding the class.
  const mochaModule = require('mocha') as { Mocha?: typeof import('mocha') } & typeof import('mocha');
  const Mocha = mochaModule.Mocha ?? mochaModule;
  // The reporter writes through Base.consoleLog, which it may have taken before the console was mirrored.
  const base = (Mocha as unknown as { reporters: { Base: { consoleLog: (...args: unknown[]) => void } } }).reporters.Base;
  if (report) {
    const original = base.consoleLog;
    base.consoleLog = (...args: unknown[]) => {
      appendFileSync(report, `${util.format(...args)}\n`);
      original(...args);
    };
  }
  const mocha = new Mocha({ ui: 'bdd', timeout: 30_000, color: false, reporter: 'spec' });
  const suite = process.env.LOOP_GUARDIAN_SUITE ?? 'single';
  mocha.addFile(path.join(__dirname, `${suite}.test.js`));
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} test(s) failed`)) : resolve()));
  });
}

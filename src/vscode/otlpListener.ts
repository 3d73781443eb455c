import * as net from 'node:net';
import * as vscode from 'vscode';
import { parseHostPort } from '../watch/otelConfig';
import type { OtlpReceiver } from '../watch/otlpReceiver';
import type { GuardianService } from './guardianService';

function isLoopback(host: string): boolean {
  return host === 'localhost' || (net.isIPv4(host) && host.startsWith('127.')) || host === '::1';
}

const SETTINGS = ['loopGuardian.otlp.listen', 'loopGuardian.otlp.allowRemote', 'loopGuardian.otlp.token'];

/**
 * The OTLP receiver run by the editor itself (`loopGuardian.otlp.listen`, machine scope, off by
 * default; loopback only unless `loopGuardian.otlp.allowRemote`): the events it maps are appended
 * to the first trusted folder's `.tmp/otlp/logs/otlp-<service>-<host>.jsonl`, which that folder's
 * guardian reads like any event log — remote agents' loops show where the local ones do. In an
 * untrusted workspace nothing is written, so it does not start.
 */
export class OtlpListener implements vscode.Disposable {
  private receiver: OtlpReceiver | undefined;
  private readonly subscription: vscode.Disposable;
  private current = '';

  constructor(private readonly service: GuardianService, private readonly log: vscode.LogOutputChannel) {
    this.subscription = vscode.workspace.onDidChangeConfiguration((e) => {
      if (SETTINGS.some((s) => e.affectsConfiguration(s))) void this.apply();
    });
    void this.apply();
  }

  private async apply(): Promise<void> {
    const c = vscode.workspace.getConfiguration('loopGuardian');
    const listen = (c.get<string>('otlp.listen') ?? '').trim();
    const allowRemote = c.get<boolean>('otlp.allowRemote') === true;
    // The shared secret clients send as `Authorization: Bearer …` (machine scope: not in a workspace's settings).
    const token = (c.get<string>('otlp.token') ?? process.env.LOOP_GUARDIAN_OTLP_TOKEN ?? '').trim();
    const wanted = `${listen}|${allowRemote}|${token}`;
    if (wanted === this.current) return;
    await this.stop();
    this.current = wanted;
    if (listen === '') return;
    const address = /^\d+$/.test(listen) ? undefined : parseHostPort(listen);
    if (address === undefined) return this.refuse(`loopGuardian.otlp.listen: "${listen}" is not HOST:PORT (for example 127.0.0.1:4318)`);
    if (!isLoopback(address.host) && !allowRemote) return this.refuse(`loopGuardian.otlp.listen: ${address.host} is not a loopback address; turn on loopGuardian.otlp.allowRemote to take other machines' events`);
    const guardian = this.service.all[0];
    if (guardian === undefined) return this.refuse('the OTLP receiver writes the events it receives into the first workspace folder: there is none');
    if (!vscode.workspace.isTrusted) return this.refuse('the OTLP receiver writes the events it receives into the workspace: not in an untrusted workspace');
    const { logsUrl, OtlpReceiver, workspaceEvents } = await import('../watch/otlpReceiver');
    // No signal runs in the receiver: the folder's guardian reads the events it writes, and judges them.
    const receiver = new OtlpReceiver({
      onEvents: workspaceEvents(
        guardian.ws,
        (rel, err) => this.log.warn(`OTLP receiver: ${rel} not written (${err.message})`),
        (what) => this.log.warn(`OTLP receiver: ${what}`),
      ),
      onDrop: (what) => this.log.warn(`OTLP receiver: ${what}`),
      ...(token !== '' ? { token } : {}),
    });
    if (!isLoopback(address.host) && token === '') this.log.warn(`OTLP receiver on ${address.host} without loopGuardian.otlp.token: anyone who reaches it is believed; set a token and put TLS in front (docs/fleet.md)`);
    try {
      const bound = await receiver.listen(address.host, address.port);
      this.receiver = receiver;
      this.log.info(`OTLP receiver listening on ${logsUrl(bound)}; events into ${guardian.folder.name}/.tmp/otlp/logs/`);
    } catch (err) {
      this.refuse(`the OTLP receiver cannot listen on ${listen}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }

  private refuse(message: string): void {
    this.log.warn(message);
    void vscode.window.showWarningMessage(`Loop Guardian: ${message}`);
  }

  private async stop(): Promise<void> {
    const r = this.receiver;
    this.receiver = undefined;
    if (r !== undefined) await r.close();
  }

  dispose(): void {
    this.subscription.dispose();
    void this.stop();
  }
}

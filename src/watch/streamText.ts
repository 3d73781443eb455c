/**
 * A stream's text to its end, at most `maxBytes` (past that it is destroyed and the promise
 * rejects, naming the stream). Read through the event loop: nothing here blocks a worker thread.
 */
export function readToEnd(stream: NodeJS.ReadableStream & { destroy(): void }, name: string, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    stream.on('data', (chunk: Buffer | string) => {
      const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      chunks.push(b);
      total += b.length;
      if (total > maxBytes) {
        stream.destroy();
        reject(new Error(`${name}: more than ${maxBytes} bytes`));
      }
    });
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', (err: Error) => reject(new Error(`${name}: cannot read (${(err as NodeJS.ErrnoException).code ?? err.message})`)));
  });
}

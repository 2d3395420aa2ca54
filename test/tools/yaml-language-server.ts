// A minimal LSP client for yaml-language-server over stdio, as VS Code's YAML extension runs it:
// JSON-RPC with `Content-Length` framing, the settings answered from `workspace/configuration`,
// and every `textDocument/publishDiagnostics` kept by URI. Written out here rather than
// pulling vscode-languageclient, which expects the VS Code API around it.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';

export interface Diagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  message: string;
  severity?: number;
  code?: string | number;
  data?: unknown;
}

type Message = { id?: number; method?: string; params?: any; result?: unknown; error?: { message: string } };

const SERVER = path.join(path.dirname(createRequire(import.meta.url).resolve('yaml-language-server/package.json')), 'bin', 'yaml-language-server');

export class YamlLanguageServer {
  private readonly child: ChildProcessWithoutNullStreams;
  private buffer = Buffer.alloc(0);
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly waiters: { test: (m: Message) => boolean; resolve: (m: Message) => void }[] = [];
  /** The latest diagnostics published for each document URI. */
  readonly diagnostics = new Map<string, Diagnostic[]>();
  private stderr = '';
  private readonly settings: Record<string, unknown>;

  /** `settings` is the `yaml` section of the editor settings (`yaml.schemas`, `yaml.schemaStore`...). */
  constructor(settings: Record<string, unknown>) {
    this.settings = settings;
    this.child = spawn(process.execPath, [SERVER, '--stdio'], { stdio: 'pipe' });
    this.child.stdout.on('data', (chunk: Buffer) => this.read(chunk));
    this.child.stderr.on('data', (chunk: Buffer) => { this.stderr += chunk; });
  }

  /** Starts the server and waits until it has applied the settings. */
  async start(rootUri: string): Promise<void> {
    await this.request('initialize', { processId: process.pid, rootUri, capabilities: { workspace: { configuration: true } } });
    this.notify('initialized', {});
    // As the VS Code extension does: the server then says when the settings are applied.
    this.notify('yaml/supportSchemaSelection', {});
    const applied = this.waitFor((m) => m.method === 'yaml/schema/store/initialized', 'the settings to be applied');
    this.notify('workspace/didChangeConfiguration', { settings: {} });
    await applied;
  }

  /** Opens a document and resolves with the first diagnostics the server publishes for it. */
  async open(uri: string, text: string): Promise<Diagnostic[]> {
    const published = this.waitFor((m) => m.method === 'textDocument/publishDiagnostics' && m.params.uri === uri, `diagnostics for ${uri}`);
    this.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'yaml', version: 1, text } });
    return (await published).params.diagnostics;
  }

  request(method: string, params: unknown): Promise<unknown> {
    const id = this.nextId++;
    this.send({ id, method, params });
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  notify(method: string, params: unknown): void {
    this.send({ method, params });
  }

  /** The next message matching `test`, or a rejection naming what was awaited after `ms`. */
  waitFor(test: (m: Message) => boolean, what: string, ms = 15_000): Promise<Message> {
    return new Promise((resolve, reject) => {
      const waiter = { test, resolve: (m: Message) => { clearTimeout(timer); resolve(m); } };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`yaml-language-server: no ${what} within ${ms} ms${this.stderr ? `; stderr: ${this.stderr}` : ''}`));
      }, ms);
      this.waiters.push(waiter);
    });
  }

  /** Shuts the server down as LSP asks; kills it if it has not exited 5 s later. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    await Promise.race([this.request('shutdown', null), exited]).catch(() => undefined);
    this.notify('exit', null);
    const timer = setTimeout(() => this.child.kill(), 5000);
    await exited;
    clearTimeout(timer);
  }

  private send(message: Message): void {
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...message }), 'utf8');
    this.child.stdin.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]));
  }

  private read(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const headerEnd = this.buffer.indexOf('\r\n\r\n');
      if (headerEnd < 0) return;
      const length = Number(/Content-Length: (\d+)/i.exec(this.buffer.subarray(0, headerEnd).toString('ascii'))?.[1]);
      if (this.buffer.length < headerEnd + 4 + length) return;
      const message = JSON.parse(this.buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString('utf8')) as Message;
      this.buffer = this.buffer.subarray(headerEnd + 4 + length);
      this.handle(message);
    }
  }

  private handle(m: Message): void {
    if (m.id !== undefined && m.method === undefined) {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.error) p?.reject(new Error(`${m.error.message}`));
      else p?.resolve(m.result);
      return;
    }
    if (m.id !== undefined) {
      // A request from the server: its settings sections, or registrations we accept silently.
      const result = m.method === 'workspace/configuration'
        ? m.params.items.map((item: { section?: string }) => (item.section === 'yaml' ? this.settings : null))
        : null;
      this.send({ id: m.id, result });
      return;
    }
    if (m.method === 'textDocument/publishDiagnostics') this.diagnostics.set(m.params.uri, m.params.diagnostics);
    const i = this.waiters.findIndex((w) => w.test(m));
    if (i >= 0) this.waiters.splice(i, 1)[0]!.resolve(m);
  }
}

// The JSON-RPC client of `symposium vscodelm`: starts the process lazily, restarts it after it exits,
// routes `lm/responsePart` notifications to their chat request. No `vscode` import, so the unit tests
// run it against the real backend in plain node.

import { ChildProcess, spawn } from 'node:child_process';
import {
  CANCELLED,
  ChatParams,
  METHOD_CANCEL,
  METHOD_CHAT,
  METHOD_PART,
  ResponsePart,
} from './wire';

export interface Log {
  /** VS Code's log level (1: trace); absent, every message is kept. */
  readonly logLevel?: number;
  trace(message: string): void;
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

const LOG_TRACE = 1; // vscode.LogLevel.Trace
export const REDACTED = '<redacted>';

/** A message as the trace log shows it: every agent env value (an API key among them) redacted. */
export function traced(message: object): string {
  return JSON.stringify(message, (key, value) =>
    key === 'env' && Array.isArray(value) ? value.map((v) => ({ name: v?.name, value: REDACTED })) : value);
}

/** The full command line of the backend, `vscodelm` included. */
export interface BackendCommand {
  command: string;
  args: string[];
  cwd?: string;
  env?: Record<string, string>;
}

export interface BackendHooks {
  /** A line the backend wrote on stderr (its log). */
  onStderr?(line: string): void;
  /** The backend could not be started, or exited before it answered anything. */
  onStartFailure?(error: BackendError): void;
  onExit?(pid: number | undefined): void;
  /** Every message, both ways (for the trace log and the tests). */
  onMessage?(direction: 'send' | 'recv', message: unknown): void;
  /** A notification about no request in particular (lm/modelsChanged). */
  onNotification?(method: string, params: unknown): void;
  /** Awaited before the first request starts the backend (a one-time setup of its venv). */
  whenReady?(): Promise<void>;
}

/** An error response from the backend. */
export class RpcError extends Error {
  constructor(message: string, readonly code: number, readonly data?: unknown) {
    super(message);
    this.name = 'RpcError';
  }
}

/** A request that could not be written as JSON (its params hold a BigInt, a cycle, ...): never sent. */
export class RequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RequestError';
  }
}

/** One JSON-RPC message as one line; a RequestError naming the method and why when it cannot be. */
function serialise(message: object, method: string): string {
  let line: string | undefined;
  try {
    line = JSON.stringify(message);
  } catch (error) {
    throw new RequestError(`Could not send ${method} to the Symposium backend: its parameters cannot be written as JSON (${(error as Error).message})`);
  }
  if (typeof line !== 'string') {
    throw new RequestError(`Could not send ${method} to the Symposium backend: its message is not JSON`);
  }
  return line;
}

/** The backend could not be started, or went away while a request was pending. */
export class BackendError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackendError';
  }
}

type Notify = (method: string, params: any) => void;

interface Pending {
  resolve(result: unknown): void;
  reject(error: Error): void;
  onNotification?: Notify;
}

interface Proc {
  child: ChildProcess;
  pending: Map<number, Pending>;
  stderrTail: string[];
  spoke: boolean; // it has written at least one message
  stopping?: string; // why we are stopping it, if we are
  gone: boolean;
  exited: Promise<void>;
}

const STDERR_TAIL = 10;
/** Bytes in one line from the backend: its own input limit. Its parts are far smaller (docs/DESIGN.md,
 * "Reliability"); a longer line is not held (a string that long cannot even be made), it fails its request. */
export const MAX_LINE = 64 * 1024 * 1024;
const HEAD = 4096; // what is kept of an overlong line, to find the request it was for
const STDERR_LINE = 64 * 1024; // a log line longer than this is kept by its head

/** A line over the limit, by its size and its first bytes. */
export interface Overlong { size: number; head: string }

/**
 * Cuts a byte stream into lines, never holding more than `maxLine` bytes of one: a longer line is
 * dropped as it comes, and reported (`Overlong`) once it ends. Lines are decoded as UTF-8 whole, so
 * a character split across reads stays whole.
 */
export class LineReader {
  private pieces: Buffer[] = [];
  private size = 0;
  private discarded = 0; // bytes of an overlong line dropped so far, 0 if none
  private head = '';

  constructor(private readonly maxLine = MAX_LINE) {}

  feed(chunk: Buffer): (string | Overlong)[] {
    const out: (string | Overlong)[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
      this.add(chunk.subarray(start, nl));
      out.push(this.end());
      start = nl + 1;
    }
    this.add(chunk.subarray(start));
    return out;
  }

  /** At the end of the stream: its last line, if it had no newline. */
  finish(): string | Overlong | undefined {
    return this.size || this.discarded ? this.end() : undefined;
  }

  private add(piece: Buffer): void {
    if (!piece.length) {
      return;
    }
    if (this.discarded) {
      this.discarded += piece.length;
    } else if (this.size + piece.length > this.maxLine) {
      this.head = Buffer.concat([...this.pieces, piece.subarray(0, HEAD)]).subarray(0, HEAD).toString('utf8');
      this.discarded = this.size + piece.length;
      this.pieces = [];
      this.size = 0;
    } else {
      this.pieces.push(piece);
      this.size += piece.length;
    }
  }

  private end(): string | Overlong {
    const line: string | Overlong = this.discarded
      ? { size: this.discarded, head: this.head }
      : Buffer.concat(this.pieces, this.size).toString('utf8').replace(/\r$/, '');
    this.pieces = [];
    this.size = this.discarded = 0;
    this.head = '';
    return line;
  }
}

/** Calls `onLine` with each line of `stream`, bounded as `LineReader` bounds them. */
function readLines(stream: NodeJS.ReadableStream, maxLine: number, onLine: (line: string | Overlong) => void): void {
  const reader = new LineReader(maxLine);
  stream.on('data', (chunk: Buffer) => reader.feed(chunk).forEach(onLine));
  stream.on('end', () => {
    const last = reader.finish();
    if (last !== undefined) {
      onLine(last);
    }
  });
}

/** How long a stopped backend is given to end by itself before it is killed. */
export const STOP_GRACE_MS = 5000;

export interface StopOptions {
  /** Whose way of stopping a process to follow (Windows has no SIGTERM). */
  platform?: NodeJS.Platform;
  graceMs?: number;
}

export class Backend {
  private proc: Proc | undefined;
  private nextId = 1; // ids grow for the life of the client, across restarts

  constructor(
    private readonly commandFor: () => BackendCommand,
    private readonly log: Log,
    private readonly hooks: BackendHooks = {},
    private readonly maxLine = MAX_LINE,
    private readonly stopping: StopOptions = {},
  ) {}

  get pid(): number | undefined {
    return this.proc?.child.pid;
  }

  /** A request; `signal` cancels it (lm/cancel: the backend answers -32800, which rejects it). */
  async request<T>(method: string, params: object, signal?: AbortSignal): Promise<T> {
    await this.ready();
    const { id, proc, result } = this.call<T>(method, params);
    if (!signal) {
      return result;
    }
    const onAbort = () => proc && this.send(proc, { jsonrpc: '2.0', method: METHOD_CANCEL, params: { requestId: id } });
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await result;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  private async ready(): Promise<void> {
    if (!this.proc && this.hooks.whenReady) {
      await this.hooks.whenReady();
    }
  }

  /**
   * One chat request: `onPart` gets each streamed part until the backend answers. Resolves 'cancelled'
   * when `signal` aborted it (lm/cancel is sent) or the backend answered -32800; rejects on an error.
   */
  async chat(params: ChatParams, onPart: (part: ResponsePart) => void, signal?: AbortSignal): Promise<'complete' | 'cancelled'> {
    if (signal?.aborted) {
      return 'cancelled';
    }
    await this.ready();
    if (signal?.aborted) {
      return 'cancelled';
    }
    let cancelled = false;
    const { id, proc, result } = this.call(METHOD_CHAT, params, (method, p) => {
      if (method === METHOD_PART && !cancelled) {
        onPart(p.part as ResponsePart);
      }
    });
    const onAbort = () => {
      cancelled = true;
      this.log.debug(`cancelling request ${id}`);
      if (proc) {
        this.send(proc, { jsonrpc: '2.0', method: METHOD_CANCEL, params: { requestId: id } });
      }
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await result;
      return 'complete';
    } catch (error) {
      if (cancelled || (error instanceof RpcError && error.code === CANCELLED)) {
        return 'cancelled';
      }
      throw error;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Stops the backend (pending requests fail with `reason`); the next request starts a new one. */
  async stop(reason = 'The Symposium backend was stopped'): Promise<void> {
    const proc = this.proc;
    if (!proc) {
      return;
    }
    this.proc = undefined;
    proc.stopping = reason;
    this.failPending(proc, new BackendError(reason)); // before its own answers to them can arrive
    // Its input ending asks the backend to stop: it answers what it read and stops its agents
    // (docs/reliability.md). SIGTERM says the same at once. Windows has no signal to send (Node's
    // kill is TerminateProcess there, which ends the backend before it can stop its agents), so
    // there the closed input alone asks, and the backend is killed only after the grace.
    const graceMs = this.stopping.graceMs ?? STOP_GRACE_MS;
    proc.child.stdin?.end();
    let timer: NodeJS.Timeout;
    if ((this.stopping.platform ?? process.platform) === 'win32') {
      timer = setTimeout(() => proc.child.kill('SIGKILL'), graceMs); // TerminateProcess, whatever the signal
    } else {
      proc.child.kill('SIGTERM');
      timer = setTimeout(() => proc.child.kill('SIGKILL'), graceMs);
    }
    await proc.exited;
    clearTimeout(timer);
  }

  /** Written out before anything else (docs/reliability.md, "The extension's edges"): a request that
   * cannot be (a BigInt, a cycle, a throwing toJSON in its params) fails alone with a RequestError,
   * before the backend is started and before it is pending, so nothing waits for an answer that cannot come. */
  private call<T>(method: string, params: object, onNotification?: Notify): { id: number; proc?: Proc; result: Promise<T> } {
    const id = this.nextId++;
    const message = { jsonrpc: '2.0', id, method, params };
    let line: string;
    let proc: Proc;
    try {
      line = serialise(message, method);
      proc = this.ensureStarted();
    } catch (error) {
      return { id, result: Promise.reject(error) };
    }
    const result = new Promise<T>((resolve, reject) => {
      proc.pending.set(id, { resolve: resolve as (r: unknown) => void, reject, onNotification });
    });
    this.write(proc, message, line);
    return { id, proc, result };
  }

  private send(proc: Proc, message: { jsonrpc: string; method?: string; [key: string]: unknown }): void {
    let line: string;
    try {
      line = serialise(message, message.method ?? 'a response');
    } catch (error) {
      this.log.error(`${(error as Error).message}; not sent`);
      return;
    }
    this.write(proc, message, line);
  }

  private write(proc: Proc, message: object, line: string): void {
    if (proc.gone || !proc.child.stdin?.writable) {
      return; // its pending requests are (or are about to be) failed by `gone`
    }
    this.hooks.onMessage?.('send', message);
    if (this.log.logLevel === undefined || this.log.logLevel === LOG_TRACE) {
      this.log.trace(`→ ${traced(message)}`); // agents' env values (their keys) never reach the log
    }
    proc.child.stdin.write(line + '\n');
  }

  private ensureStarted(): Proc {
    if (this.proc && !this.proc.gone) {
      return this.proc;
    }
    const spec = this.commandFor();
    const commandLine = [spec.command, ...spec.args].join(' ');
    this.log.info(`starting the backend: ${commandLine}`);
    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: { ...process.env, ...spec.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      windowsHide: true, // no console window on Windows
    });
    let exited!: () => void;
    const proc: Proc = {
      child,
      pending: new Map(),
      stderrTail: [],
      spoke: false,
      gone: false,
      exited: new Promise((resolve) => (exited = resolve)),
    };
    this.proc = proc;
    child.on('spawn', () => this.log.info(`backend started (pid ${child.pid})`));
    child.on('error', (error) => {
      // Spawning failed (ENOENT, EACCES, ...); 'close' may not follow.
      this.gone(proc, `could not run \`${commandLine}\`: ${error.message}`);
      exited();
    });
    child.on('close', (code, signal) => {
      this.gone(proc, `\`${commandLine}\` exited with ${code !== null ? `code ${code}` : `signal ${signal}`}`);
      exited();
    });
    child.stdin?.on('error', (error) => this.log.debug(`backend stdin: ${error.message}`));
    readLines(child.stdout!, this.maxLine, (line) => (typeof line === 'string' ? this.receive(proc, line) : this.overlong(proc, line)));
    readLines(child.stderr!, Math.min(this.maxLine, STDERR_LINE), (read) => {
      const line = typeof read === 'string' ? read : `${read.head}... (${read.size} bytes)`;
      proc.stderrTail.push(line);
      if (proc.stderrTail.length > STDERR_TAIL) {
        proc.stderrTail.shift();
      }
      this.hooks.onStderr?.(line);
    });
    return proc;
  }

  private receive(proc: Proc, line: string): void {
    if (!line.trim() || proc.stopping) {
      return;
    }
    this.log.trace(`← ${line}`);
    let message: any;
    try {
      message = JSON.parse(line);
    } catch {
      this.log.error(`the backend wrote a line that is not JSON: ${line}`);
      return;
    }
    proc.spoke = true;
    this.hooks.onMessage?.('recv', message);
    if (typeof message?.method === 'string') {
      if (message.id !== undefined) {
        // The backend sends no requests; answer anything it asks so it never waits.
        this.send(proc, { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: `Method not found: ${message.method}` } });
        return;
      }
      const pending = proc.pending.get(message.params?.requestId);
      if (pending?.onNotification) {
        pending.onNotification(message.method, message.params);
      } else if (message.params?.requestId === undefined && this.hooks.onNotification) {
        this.hooks.onNotification(message.method, message.params);
      } else {
        this.log.debug(`dropped ${message.method} for request ${JSON.stringify(message.params?.requestId)}`);
      }
      return;
    }
    const pending = proc.pending.get(message?.id);
    if (!pending) {
      this.log.warn(`a response to no pending request: ${line}`);
      return;
    }
    proc.pending.delete(message.id);
    if (message.error) {
      const { code, message: text, data } = message.error;
      pending.reject(new RpcError(String(text), Number(code), data));
    } else {
      pending.resolve(message.result);
    }
  }

  /**
   * A line too long to read: the request it was for (a part's `requestId`, or a response's `id`, read
   * from its head) fails, saying so, rather than completing with that text silently missing.
   */
  private overlong(proc: Proc, line: Overlong): void {
    const found = /"(?:requestId|id)":\s*(\d+)/.exec(line.head);
    const id = found ? Number(found[1]) : undefined;
    const pending = id !== undefined ? proc.pending.get(id) : undefined;
    const problem = `The Symposium backend sent a line of ${line.size} bytes, over the limit of ${this.maxLine}`;
    if (!pending) {
      this.log.error(`${problem}, for no pending request; dropped`);
      return;
    }
    this.log.error(`${problem}; request ${id} fails`);
    proc.pending.delete(id!);
    this.send(proc, { jsonrpc: '2.0', method: METHOD_CANCEL, params: { requestId: id } }); // its agent need not go on
    pending.reject(new BackendError(`${problem}: the reply could not be read whole.`));
  }

  /** The process is gone: fail what it still owed, once. */
  private gone(proc: Proc, what: string): void {
    if (proc.gone) {
      return;
    }
    proc.gone = true;
    if (this.proc === proc) {
      this.proc = undefined;
    }
    const stderr = proc.stderrTail.join('\n').trim();
    let error: BackendError;
    if (proc.stopping) {
      error = new BackendError(proc.stopping);
      this.log.info(`backend stopped (${what})`);
    } else if (!proc.spoke) {
      error = new BackendError(`Could not start the Symposium backend: ${what}${stderr ? `\n${stderr}` : ''}`);
      this.log.error(error.message);
      this.hooks.onStartFailure?.(error);
    } else {
      error = new BackendError(`The Symposium backend exited: ${what}${stderr ? `\n${stderr}` : ''}`);
      this.log.error(error.message);
    }
    this.failPending(proc, error);
    this.hooks.onExit?.(proc.child.pid);
  }

  private failPending(proc: Proc, error: Error): void {
    for (const pending of proc.pending.values()) {
      pending.reject(error);
    }
    proc.pending.clear();
  }
}

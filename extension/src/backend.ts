// The JSON-RPC client of `symposium vscodelm`: starts the process lazily, restarts it after it exits,
// routes `lm/responsePart` notifications to their chat request. No `vscode` import, so the unit tests
// run it against the real backend in plain node.

import { ChildProcess, spawn } from 'node:child_process';
import * as readline from 'node:readline';
import {
  CANCELLED,
  ChatParams,
  METHOD_CANCEL,
  METHOD_CHAT,
  METHOD_PART,
  ResponsePart,
} from './wire';

export interface Log {
  trace(message: string): void;
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
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

export class Backend {
  private proc: Proc | undefined;
  private nextId = 1; // ids grow for the life of the client, across restarts

  constructor(
    private readonly commandFor: () => BackendCommand,
    private readonly log: Log,
    private readonly hooks: BackendHooks = {},
  ) {}

  get pid(): number | undefined {
    return this.proc?.child.pid;
  }

  async request<T>(method: string, params: object): Promise<T> {
    await this.ready();
    return this.call<T>(method, params).result;
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
    proc.child.stdin?.end();
    proc.child.kill('SIGTERM');
    const timer = setTimeout(() => proc.child.kill('SIGKILL'), 5000);
    await proc.exited;
    clearTimeout(timer);
  }

  private call<T>(method: string, params: object, onNotification?: Notify): { id: number; proc?: Proc; result: Promise<T> } {
    const id = this.nextId++;
    let proc: Proc;
    try {
      proc = this.ensureStarted();
    } catch (error) {
      return { id, result: Promise.reject(error) };
    }
    const result = new Promise<T>((resolve, reject) => {
      proc.pending.set(id, { resolve: resolve as (r: unknown) => void, reject, onNotification });
    });
    this.send(proc, { jsonrpc: '2.0', id, method, params });
    return { id, proc, result };
  }

  private send(proc: Proc, message: object): void {
    if (proc.gone || !proc.child.stdin?.writable) {
      return; // its pending requests are (or are about to be) failed by `gone`
    }
    this.hooks.onMessage?.('send', message);
    const line = JSON.stringify(message);
    this.log.trace(`→ ${line}`);
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
    readline.createInterface({ input: child.stdout!, crlfDelay: Infinity }).on('line', (line) => this.receive(proc, line));
    readline.createInterface({ input: child.stderr!, crlfDelay: Infinity }).on('line', (line) => {
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

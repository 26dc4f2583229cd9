// Claude Code, Codex or Gemini CLI, the real agents, against their fake model API on 127.0.0.1
// (tests/support/serve_fake_agent.py), for the tests in a real VS Code. No `vscode` import: the runner's
// Chat view tests use it too.

import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';

export interface Repository {
  python: string;
  root: string;
}

/** The repository and its Python, from the backend script in its `.venv/bin`; undefined elsewhere. */
export function repositoryOf(backend: string): Repository | undefined {
  const bin = path.dirname(backend);
  const root = path.resolve(bin, '..', '..');
  return fs.existsSync(path.join(root, 'tests', 'support', 'serve_fake_agent.py')) ? { python: path.join(bin, 'python'), root } : undefined;
}

/** A model request of the agent's own turn, as the fake API received it. */
export interface ModelRequest {
  model: string;
  userTexts: string[];
  /** The text of each tool result the request carries. */
  toolResults: string[];
  /** The name of each of the model's own tool calls the request carries. */
  toolCalls: string[];
  assistantTexts: string[];
  /** The names of the tools the request offers the model (Gemini's `functionDeclarations`; absent for the others). */
  tools?: string[];
  /** Each image of the user's messages: its media type and its bytes in base64. */
  images: { mediaType: string; data: string }[];
  /** What the agent's options made of the request: the effort it asks for, Claude Code's plan mode, Codex's sandbox. */
  options: { effort?: string | null; planMode?: boolean; sandbox?: string | null };
}

/** A scripted model reply (tests/support/serve_fake_agent.py builds it with the fake API's own builders). */
export interface ScriptedReply {
  /** Only for the model request whose last user text is this. */
  answers?: string;
  text?: string[];
  /** Tool calls: JSON `input`, or a freeform tool's text (`patch`: Codex's apply_patch). */
  calls?: ({ name: string; input: object; namespace?: string } | { name: string; patch: string })[];
  /** After this many deltas the stream holds until the agent hangs up (for Stop). */
  stallAfter?: number;
  usage?: [number, number];
}

export class FakeAgent {
  readonly requests: ModelRequest[] = [];
  /** The session the agent had, run outside VS Code, when one was asked for. */
  session?: string;
  private readonly waiters: (() => void)[] = [];
  private constructor(
    private readonly child: ChildProcess,
    private readonly home: string,
    readonly entry: { command: string; args: string[]; env: Record<string, string> },
  ) {}

  /** Starts it; with `sessionIn`, the agent first has a session of its own in that folder take that prompt. */
  static async start(
    kind: 'claude' | 'codex' | 'gemini',
    repository: Repository,
    sessionIn?: { folder: string; prompt: string },
    /** Codex's `sandbox_mode` (`workspace-write`: it offers its approval presets). */
    sandbox?: string,
  ): Promise<FakeAgent> {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), `symposium-${kind}-`));
    const args = [
      '-m', 'tests.support.serve_fake_agent', kind, home,
      ...(sessionIn ? ['--session-in', sessionIn.folder, sessionIn.prompt] : []),
      ...(sandbox ? ['--sandbox', sandbox] : []),
    ];
    const child = spawn(repository.python, args, { cwd: repository.root, stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = readline.createInterface({ input: child.stdout! });
    let fake: FakeAgent | undefined;
    return new Promise((resolve, reject) => {
      child.on('exit', (code) => (fake?.session || (fake && !sessionIn) ? undefined : reject(new Error(`tests/support/serve_fake_agent.py exited with ${code}`))));
      lines.on('line', (line) => {
        const message = JSON.parse(line);
        if (message.error) {
          fs.rmSync(home, { recursive: true, force: true });
          reject(new Error(message.error));
        } else if (message.agent) {
          fake = new FakeAgent(child, home, message.agent);
          if (!sessionIn) {
            resolve(fake);
          }
        } else if (message.session && fake) {
          fake.session = message.session;
          resolve(fake);
        } else if (fake && 'model' in message) {
          fake.requests.push(message);
          fake.waiters.splice(0).forEach((wake) => wake());
        }
      });
    });
  }

  /** Queues replies for the agent's next model requests (taken in order, `answers` permitting). */
  script(...replies: ScriptedReply[]): void {
    this.child.stdin!.write(JSON.stringify({ script: replies }) + '\n');
  }

  /** Resolves once the fake API has received a model request for which `predicate` holds; rejects after `ms`. */
  async request(predicate: (request: ModelRequest) => boolean, ms = 60_000): Promise<ModelRequest> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.requests.find(predicate);
      if (found !== undefined) {
        return found;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`no such model request within ${ms} ms; received: ${JSON.stringify(this.requests)}`);
      }
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((wake) => {
        this.waiters.push(wake);
        timer = setTimeout(wake, left);
      });
      clearTimeout(timer);
    }
  }

  /** Ends it, and removes the agent's home (its sessions, its configuration). */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.stdin!.end(); // it ends when its input does
      await exited;
    }
    fs.rmSync(this.home, { recursive: true, force: true });
  }
}

// Integration tests in a real VS Code: our models through `vscode.lm`, backed by the real backend and
// agents (the built-in Eliza, and `symposium eliza --deterministic` as an external ACP agent).

import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { confirmationMessage, SESSION_NOTE } from '../../agentAction';
import { FakeAgent, repositoryOf } from '../fakeAgent';
import { AGENT_ACTION_APPROVED } from '../../wire';
import type { SymposiumApi } from '../../extension';

const runtime = vscode as unknown as Record<string, (new (...args: any[]) => any) | undefined>;
const DataPart = runtime.LanguageModelDataPart!;
const ThinkingPart = runtime.LanguageModelThinkingPart;
const User = vscode.LanguageModelChatMessage.User;
const HELLO_REPLY = 'How do you do. Please state your problem.';
const ECHO_TOOL = 'symposium_test_echo'; // declared by the runner's copy of package.json

let symposium: SymposiumApi;

before(async () => {
  symposium = await vscode.extensions.getExtension('symposium-dev.symposium')!.activate();
});

async function model(id: string): Promise<vscode.LanguageModelChat> {
  const [chat] = await vscode.lm.selectChatModels({ vendor: 'symposium', id });
  assert.ok(chat, `the model ${id} is offered`);
  return chat;
}

function tool(name: string): vscode.LanguageModelChatTool {
  const info = vscode.lm.tools.find((t) => t.name === name);
  assert.ok(info, `the tool ${name} is registered`);
  return { name: info.name, description: info.description, inputSchema: info.inputSchema };
}

interface Reply {
  parts: unknown[];
  text: string;
  calls: vscode.LanguageModelToolCallPart[];
  /** The assistant message a consumer sends back, as Copilot builds it: markers, the text, the tool calls. */
  message: vscode.LanguageModelChatMessage;
}

function reply(parts: unknown[]): Reply {
  const text = parts.flatMap((p) => (p instanceof vscode.LanguageModelTextPart ? [p.value] : [])).join('');
  const calls = parts.filter((p): p is vscode.LanguageModelToolCallPart => p instanceof vscode.LanguageModelToolCallPart);
  const markers = parts.filter((p) => p instanceof DataPart && p.mimeType === 'stateful_marker');
  const content = [...markers, ...(text ? [new vscode.LanguageModelTextPart(text)] : []), ...calls];
  return { parts, text, calls, message: vscode.LanguageModelChatMessage.Assistant(content as vscode.LanguageModelTextPart[]) };
}

async function send(
  chat: vscode.LanguageModelChat,
  messages: vscode.LanguageModelChatMessage[],
  options: vscode.LanguageModelChatRequestOptions = {},
): Promise<Reply> {
  const response = await chat.sendRequest(messages, options);
  const parts: unknown[] = [];
  for await (const part of response.stream) {
    parts.push(part);
  }
  return reply(parts);
}

function toolResult(call: vscode.LanguageModelToolCallPart, result: vscode.LanguageModelToolResult): vscode.LanguageModelChatMessage {
  return User([new vscode.LanguageModelToolResultPart(call.callId, result.content)]);
}

/** Records the extension ⇄ backend traffic from now on; `wait` finds a message seen or still to come. */
function traffic() {
  const seen: { direction: string; message: any }[] = [];
  const waiters: (() => void)[] = [];
  const subscription = symposium.onDidExchange((e) => {
    seen.push(e);
    waiters.forEach((w) => w());
  });
  return {
    wait(predicate: (e: { direction: string; message: any }) => boolean): Promise<{ direction: string; message: any }> {
      return new Promise((resolve) => {
        const check = () => {
          const found = seen.find(predicate);
          if (found) {
            resolve(found);
          }
        };
        waiters.push(check);
        check();
      });
    },
    seen: () => [...seen],
    dispose: () => subscription.dispose(),
  };
}

describe('Symposium models in VS Code', () => {
  it('lists the built-in Eliza and the configured agents', async () => {
    const models = await vscode.lm.selectChatModels({ vendor: 'symposium' });
    const ids = models.map((m) => m.id);
    assert.ok(ids.includes('symposium-eliza'), `${ids}`);
    assert.ok(ids.includes('eliza-external'), `${ids}`);
    const external = models.find((m) => m.id === 'eliza-external')!;
    assert.match(external.name, /Eliza \(external\)/);
    assert.ok(external.maxInputTokens > 0);
  });

  it('holds a multi-turn conversation with Eliza, its markers going round', async () => {
    const eliza = await model('eliza-external');
    const history = [User('Hello')];
    const first = await send(eliza, history);
    assert.equal(first.text, HELLO_REPLY);
    const markers = first.parts.filter((p): p is { data: Uint8Array; mimeType: string } => p instanceof DataPart);
    assert.deepEqual(markers.map((m) => m.mimeType), ['stateful_marker'], 'one marker per response');
    const [name, token] = Buffer.from(markers[0].data).toString('utf8').split('\\');
    assert.equal(name, 'eliza-external');

    const watch = traffic();
    try {
      history.push(first.message, User('I feel sad about my computer'));
      const second = await send(eliza, history);
      assert.ok(second.text.length > 0);
      assert.notEqual(second.text, HELLO_REPLY);
      const request = await watch.wait((e) => e.direction === 'send' && e.message.method === 'lm/provideLanguageModelChatResponse');
      assert.deepEqual(request.message.params.messages[1].content[0], { type: 'marker', value: token }, 'the marker came back');
      history.push(second.message, User('Yes'));
      const third = await send(eliza, history);
      assert.ok(third.text.length > 0);
    } finally {
      watch.dispose();
    }

    const builtIn = await send(await model('symposium-eliza'), [User('Hello')]);
    assert.ok(builtIn.text.length > 0, 'the built-in Eliza answers too');
  });

  it('asks permission through symposium-agent-action, and the agent goes on once approved', async () => {
    const eliza = await model('eliza-external');
    const tools = [tool('symposium-agent-action')];
    const prompt = User('run ls -la');
    const watch = traffic();
    const asked = await send(eliza, [prompt], { tools });
    const request = (await watch.wait((e) => e.direction === 'send' && e.message.method === 'lm/provideLanguageModelChatResponse')).message;
    watch.dispose();
    assert.deepEqual(request.params.options, { tools: [{ ...tools[0] }], toolMode: 'auto' });
    assert.equal(request.params.cwd, vscode.workspace.workspaceFolders![0].uri.fsPath);
    assert.equal(request.params.agent.mcp_server.name, 'Eliza (external)');
    assert.deepEqual(request.params.agent.mcp_server.args, ['eliza', '--deterministic']);
    assert.equal(asked.calls.length, 1);
    const [call] = asked.calls;
    assert.equal(call.name, 'symposium-agent-action');
    const input = call.input as { kind: string; title: string; raw_input: { command: string } };
    assert.equal(input.kind, 'execute');
    assert.equal(input.raw_input.command, 'ls -la');
    const shown = confirmationMessage(input).value;
    assert.ok(shown.includes('ls -la') && shown.includes('execute') && shown.includes(SESSION_NOTE), shown);

    const result = await vscode.lm.invokeTool(call.name, { input: call.input, toolInvocationToken: undefined });
    assert.deepEqual(result.content.map((p) => (p as vscode.LanguageModelTextPart).value), [AGENT_ACTION_APPROVED]);
    const done = await send(eliza, [prompt, asked.message, toolResult(call, result)], { tools });
    assert.match(done.text, /I ran `ls -la`/);
  });

  it("shows an edit's card as its diff, not the agent's raw input", () => {
    const diff = '--- /work/app.py\n+++ /work/app.py\n@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 20';
    const raw_input = { file_path: '/work/app.py', old_string: 'b = 2', new_string: 'b = 20' };
    const shown = confirmationMessage({ kind: 'edit', title: 'Edit app.py', raw_input, diff }).value;
    assert.ok(shown.includes('```diff\n' + diff), shown);
    assert.ok(!shown.includes('old_string') && shown.includes('(edit)') && shown.includes(SESSION_NOTE), shown);
  });

  it("shows a title of several lines whole, each line as the agent wrote it", () => {
    const title = 'echo ok\nrm -rf build';
    const shown = confirmationMessage({ kind: 'execute', title }).value;
    assert.ok(shown.includes('```text\n' + title + '\n```'), shown);
    assert.ok(shown.startsWith('(execute)'), shown);
  });

  it('bridges a VS Code tool to the agent and back', async () => {
    const registration = vscode.lm.registerTool<{ text: string }>(ECHO_TOOL, {
      invoke: (options) => new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(`echo: ${options.input.text}`)]),
    });
    try {
      const eliza = await model('eliza-external');
      const tools = [tool('symposium-agent-action'), tool(ECHO_TOOL)];
      const prompt = User(`use tool vscode_tools::${ECHO_TOOL} with {"text": "hi"}`);
      const asked = await send(eliza, [prompt], { tools });
      const call = asked.calls.find((c) => c.name === ECHO_TOOL);
      assert.ok(call, `a call of ${ECHO_TOOL}: ${JSON.stringify(asked.parts)}`);
      assert.deepEqual(call.input, { text: 'hi' });
      const result = await vscode.lm.invokeTool(call.name, { input: call.input, toolInvocationToken: undefined });
      const done = await send(eliza, [prompt, asked.message, toolResult(call, result)], { tools });
      assert.match(done.text, /OK: echo: hi/);
    } finally {
      registration.dispose();
    }
  });

  it('cancels: lm/cancel reaches the backend, the stream ends, the next request works', async () => {
    const eliza = await model('eliza-external');
    const watch = traffic();
    try {
      const source = new vscode.CancellationTokenSource();
      const response = await eliza.sendRequest([User('count slowly to 40')], {}, source.token);
      const texts: string[] = [];
      try {
        for await (const part of response.stream) {
          if (part instanceof vscode.LanguageModelTextPart) {
            texts.push(part.value);
            source.cancel();
          }
        }
      } catch (error) {
        assert.ok(source.token.isCancellationRequested, `only a cancellation ends the stream early: ${error}`);
      }
      assert.ok(texts.length >= 1 && texts.length < 5, `stopped counting: ${JSON.stringify(texts)}`);
      const cancel = await watch.wait((e) => e.direction === 'send' && e.message.method === 'lm/cancel');
      const answer = await watch.wait((e) => e.direction === 'recv' && e.message.id === cancel.message.params.requestId);
      assert.equal(answer.message.error?.code, -32800, 'the backend answered the cancelled request "cancelled"');
    } finally {
      watch.dispose();
    }
    assert.equal((await send(eliza, [User('Hello')])).text, HELLO_REPLY);
  });

  it('restarts a backend killed between requests, transparently', async () => {
    const eliza = await model('eliza-external');
    assert.equal((await send(eliza, [User('Hello')])).text, HELLO_REPLY);
    const pid = symposium.backendPid;
    assert.ok(pid);
    const exited = new Promise<void>((resolve) => {
      const subscription = symposium.onDidBackendExit((gone) => {
        if (gone === pid) {
          subscription.dispose();
          resolve();
        }
      });
    });
    process.kill(pid, 'SIGKILL');
    await exited;
    assert.equal((await send(eliza, [User('Hello')])).text, HELLO_REPLY);
    assert.ok(symposium.backendPid && symposium.backendPid !== pid);
  });

  it('shows thoughts as thinking parts', async function () {
    if (!ThinkingPart) {
      this.skip(); // this VS Code has no LanguageModelThinkingPart
    }
    const { parts, text } = await send(await model('eliza-external'), [User('think about cheese')]);
    const thought = parts.findIndex((p) => p instanceof ThinkingPart);
    assert.ok(thought >= 0, `a thinking part: ${JSON.stringify(parts)}`);
    assert.ok(parts.findIndex((p) => p instanceof vscode.LanguageModelTextPart) > thought);
    assert.ok(text.length > 0);
  });

  it("rejects with the backend's error, once: no text part repeats it", async () => {
    const broken = await model('broken');
    const parts: unknown[] = [];
    let failure: unknown;
    try {
      const response = await broken.sendRequest([User('Hello')]);
      for await (const part of response.stream) {
        parts.push(part);
      }
    } catch (error) {
      failure = error;
    }
    assert.ok(failure instanceof vscode.LanguageModelError, `the request failed with a LanguageModelError: ${failure}`);
    assert.match(failure.message, /\/nonexistent\/agent/, 'it names what failed');
    assert.deepEqual(parts, []);
  });

  it('counts tokens without asking the backend', async () => {
    const eliza = await model('symposium-eliza');
    const watch = traffic();
    try {
      assert.equal(await eliza.countTokens('Hello, world!'), 4);
      assert.equal(await eliza.countTokens(User('Hello, world!')), 4);
      const texts = Array.from({ length: 500 }, (_, i) => `part ${i % 100} of a prompt`);
      const counts = await Promise.all(texts.map((t) => eliza.countTokens(t)));
      assert.ok(counts.every((c) => c > 0));
      assert.deepEqual(watch.seen(), [], 'no message to or from the backend');
    } finally {
      watch.dispose();
    }
  });
});

describe('An agent that reports its usage', function () {
  this.timeout(180_000);
  const ID = 'claude-usage';
  let fake: FakeAgent;
  let previous: unknown;

  before(async () => {
    const backend = vscode.workspace.getConfiguration('symposium').get<string>('backend.command', '');
    const repository = repositoryOf(backend);
    assert.ok(repository, `the repository next to the backend ${backend}`);
    fake = await FakeAgent.start('claude', repository);
    const config = vscode.workspace.getConfiguration('symposium');
    previous = config.inspect('agents')?.globalValue;
    const listed = new Promise<void>((resolve) => {
      const subscription = vscode.lm.onDidChangeChatModels(async () => {
        if ((await vscode.lm.selectChatModels({ vendor: 'symposium', id: ID })).length) {
          subscription.dispose();
          resolve();
        }
      });
    });
    await config.update('agents', [...((previous as object[] | undefined) ?? []), { id: ID, name: 'Claude (usage)', ...fake.entry }], vscode.ConfigurationTarget.Global);
    await listed;
  });

  after(async () => {
    await vscode.workspace.getConfiguration('symposium').update('agents', previous, vscode.ConfigurationTarget.Global);
    await fake?.stop();
  });

  it('hands a vscode.lm consumer the usage Claude Code reported, as a `usage` data part', async () => {
    const { parts, text } = await send(await model(ID), [User('Hello')]);
    assert.equal(text, '(unscripted)');
    const usage = parts.filter((p): p is { data: Uint8Array; mimeType: string } => p instanceof DataPart && p.mimeType === 'usage');
    assert.equal(usage.length, 1, `one usage part: ${JSON.stringify(parts)}`);
    const json = JSON.parse(Buffer.from(usage[0].data).toString('utf8'));
    assert.deepEqual(Object.keys(json).sort(), ['completion_tokens', 'prompt_tokens', 'prompt_tokens_details', 'total_tokens']);
    assert.ok(json.prompt_tokens > 0 && json.completion_tokens > 0, JSON.stringify(json));
    assert.equal(json.total_tokens, json.prompt_tokens + json.completion_tokens);
    assert.deepEqual(json.prompt_tokens_details, { cached_tokens: 0 });
  });
});

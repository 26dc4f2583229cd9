// The JSON-RPC client against the real Python backend (`symposium vscodelm`), not a mock.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { Backend, BackendCommand, BackendError, BackendHooks, LineReader, RequestError, RpcError } from '../../backend';
import { AGENT_ACTION_APPROVED, AGENT_ACTION_TOOL, Agent, ChatParams, Message, METHOD_INFO, ModelInfo, ResponsePart } from '../../wire';
import { MemoryLog } from './log';

const SYMPOSIUM = process.env.SYMPOSIUM_BACKEND ?? path.resolve(__dirname, '../../../../.venv/bin/symposium');
const ELIZA: Agent = { eliza: { deterministic: true } };
const PYTHON = path.resolve(__dirname, '../../../../.venv/bin/python');
const HOSTILE = path.resolve(__dirname, '../../../../tests/support/hostile_agent.py');
const LEGACY_OPTIONS = path.resolve(__dirname, '../../../../tests/support/legacy_options_agent.py');
const ACTION_TOOL = { name: AGENT_ACTION_TOOL, description: 'permission', inputSchema: { type: 'object' } };

const backends: Backend[] = [];
after(() => Promise.all(backends.map((b) => b.stop())));

function start(command: BackendCommand = { command: SYMPOSIUM, args: ['vscodelm'] }, hooks: BackendHooks = {}, maxLine?: number) {
  const log = new MemoryLog();
  const backend = new Backend(() => command, log, hooks, maxLine);
  backends.push(backend);
  return { backend, log };
}

const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', value: text }] });
const chatParams = (messages: Message[], tools = [ACTION_TOOL]): ChatParams =>
  ({ modelId: 'symposium-eliza', messages, agent: ELIZA, options: { tools, toolMode: 'auto' } });

async function chat(backend: Backend, params: ChatParams, signal?: AbortSignal) {
  const parts: ResponsePart[] = [];
  const outcome = await backend.chat(params, (p) => parts.push(p), signal);
  const text = parts.flatMap((p) => (p.type === 'text' ? [p.value] : [])).join('');
  return { outcome, parts, text };
}

/** The assistant message a consumer sends back: the marker, the text, then the tool calls. */
function assistant(parts: ResponsePart[]): Message {
  const text = parts.flatMap((p) => (p.type === 'text' ? [p.value] : [])).join('');
  return {
    role: 'assistant',
    content: [
      ...parts.filter((p) => p.type === 'marker'),
      ...(text ? [{ type: 'text' as const, value: text }] : []),
      ...parts.filter((p) => p.type === 'tool_call'),
    ],
  };
}

describe('the JSON-RPC client, against the real backend', () => {
  it('lists Eliza first, then the configured agents', async () => {
    const { backend } = start();
    const { models } = await backend.request<{ models: ModelInfo[] }>(METHOD_INFO, {
      silent: true,
      agents: [{ id: 'ext', name: 'External', agent: { mcp_server: { name: 'External', command: SYMPOSIUM, args: ['eliza'], env: [] } } }],
    });
    assert.deepEqual(models.map((m) => m.id), ['symposium-eliza', 'ext']);
    assert.equal(models[0].capabilities.toolCalling, true);
    assert.ok(models[1].name.includes('External'));
    assert.equal(typeof models[0].maxInputTokens, 'number');
  });

  it('streams a reply, then a second turn of the same conversation', async () => {
    const { backend } = start();
    const first = await chat(backend, chatParams([user('Hello')]));
    assert.equal(first.outcome, 'complete');
    assert.equal(first.text, 'How do you do. Please state your problem.');
    const second = await chat(backend, chatParams([user('Hello'), assistant(first.parts), user('I feel sad')]));
    assert.equal(second.outcome, 'complete');
    assert.ok(second.text.length > 0);
  });

  it('carries a permission round trip', async () => {
    const { backend } = start();
    const asked = await chat(backend, chatParams([user('run ls')]));
    const calls = asked.parts.filter((p) => p.type === 'tool_call');
    assert.equal(calls.length, 1);
    const call = calls[0] as Extract<ResponsePart, { type: 'tool_call' }>;
    assert.equal(call.toolName, AGENT_ACTION_TOOL);
    assert.deepEqual(call.parameters, { kind: 'execute', title: 'Run `ls`', raw_input: (call.parameters as any).raw_input });
    assert.equal((call.parameters as any).raw_input.command, 'ls');
    const approved: Message = { role: 'user', content: [{ type: 'tool_result', toolCallId: call.toolCallId, content: [{ type: 'text', value: AGENT_ACTION_APPROVED }] }] };
    const done = await chat(backend, chatParams([user('run ls'), assistant(asked.parts), approved]));
    assert.match(done.text, /I ran `ls`/);
  });

  it('cancels: lm/cancel is sent, the request resolves, later parts are dropped, the next request works', async () => {
    const seen: { direction: string; message: any }[] = [];
    const { backend } = start(undefined, { onMessage: (direction, message) => seen.push({ direction, message }) });
    const controller = new AbortController();
    const parts: ResponsePart[] = [];
    const outcome = await backend.chat(chatParams([user('count slowly to 40')]), (p) => {
      parts.push(p);
      if (p.type === 'text' && !controller.signal.aborted) {
        controller.abort();
      }
    }, controller.signal);
    assert.equal(outcome, 'cancelled');
    assert.equal(parts.filter((p) => p.type === 'text').length, 1);
    const cancel = seen.find((s) => s.direction === 'send' && s.message.method === 'lm/cancel');
    assert.ok(cancel, 'lm/cancel was sent');
    const answer = seen.find((s) => s.direction === 'recv' && s.message.id === cancel.message.params.requestId && s.message.error);
    assert.equal(answer?.message.error.code, -32800);
    const next = await chat(backend, chatParams([user('Hello')]));
    assert.equal(next.text, 'How do you do. Please state your problem.');
  });

  it('resolves at once for a signal already aborted', async () => {
    const { backend } = start();
    assert.equal(await backend.chat(chatParams([user('Hello')]), () => undefined, AbortSignal.abort()), 'cancelled');
    assert.equal(backend.pid, undefined, 'nothing was started for it');
  });

  it("lists an agent's options as its model's controls once it has answered, and a choice there reaches its session", async () => {
    // A state folder of its own: what the backend learns of agents is kept across runs.
    const state = fs.mkdtempSync(path.join(os.tmpdir(), 'symposium-state-'));
    const { backend } = start({ command: SYMPOSIUM, args: ['vscodelm'], env: { SYMPOSIUM_STATE_DIR: state } });
    const agent: Agent = { mcp_server: { name: 'Legacy', command: PYTHON, args: [LEGACY_OPTIONS], env: [] } };
    const entries = [{ id: 'legacy', name: 'Legacy', agent }];
    const list = async () => (await backend.request<{ models: ModelInfo[] }>(METHOD_INFO, { silent: true, agents: entries })).models.find((m) => m.id === 'legacy');
    assert.equal((await list())?.configurationSchema, undefined, 'nothing is known before the agent has started');
    const params: ChatParams = { ...chatParams([user('hello')], []), modelId: 'legacy', agent };
    assert.equal((await chat(backend, params)).text, '[default · gemini-flash] echo: hello');
    const schema = (await list())?.configurationSchema as { properties: Record<string, { group?: string; enum: string[]; enumItemLabels: string[]; default: string }> };
    assert.deepEqual(Object.keys(schema.properties), ['mode']);
    assert.equal(schema.properties.mode.group, 'navigation');
    assert.deepEqual(schema.properties.mode.enumItemLabels, ['Default', 'Plan', 'YOLO (bypasses permissions)']);
    const planned = await chat(backend, { ...params, messages: [user('plan it')], modelConfiguration: { mode: 'plan' } });
    assert.equal(planned.text, '[plan · gemini-flash] echo: plan it');
  });

  it('rejects with the backend error: invalid params name the wire path', async () => {
    const { backend } = start();
    const bad = chatParams([{ role: 'user', content: [{ type: 'tool_result', content: [] } as any] }]);
    await assert.rejects(chat(backend, bad), (e: unknown) => e instanceof RpcError && e.code === -32602 && /messages\[0\]\.content\[0\]/.test(e.message));
  });

  it('rejects with -32000 when the agent cannot start', async () => {
    const { backend } = start();
    const params = { ...chatParams([user('Hello')]), agent: { mcp_server: { name: 'Nope', command: '/nonexistent/agent', args: [], env: [] } } };
    await assert.rejects(chat(backend, params), (e: unknown) => e instanceof RpcError && e.code === -32000 && e.message.length > 0);
  });

  it('fails pending requests when the backend dies, and restarts it for the next one', async () => {
    const { backend } = start();
    let pid: number | undefined;
    const pending = backend.chat(chatParams([user('count slowly to 40')]), () => {
      if (pid === undefined) {
        pid = backend.pid;
        process.kill(pid!, 'SIGKILL');
      }
    });
    await assert.rejects(pending, (e: unknown) => e instanceof BackendError && /backend exited.*signal SIGKILL/.test(e.message));
    const next = await chat(backend, chatParams([user('Hello')]));
    assert.equal(next.text, 'How do you do. Please state your problem.');
    assert.notEqual(backend.pid, pid);
  });

  it('fails pending requests with the reason when stopped', async () => {
    const { backend } = start();
    const failed = assert.rejects(backend.chat(chatParams([user('count slowly to 40')]), () => undefined), /restarted for the test/);
    await backend.request(METHOD_INFO, { silent: true }); // it is up
    await backend.stop('restarted for the test');
    await failed;
    assert.equal(backend.pid, undefined);
  });

  it('reports a backend that cannot start: no such command', async () => {
    const failures: BackendError[] = [];
    const { backend } = start({ command: '/nonexistent/symposium', args: ['vscodelm'] }, { onStartFailure: (e) => failures.push(e) });
    await assert.rejects(backend.request(METHOD_INFO, { silent: true }), /Could not start the Symposium backend: could not run `\/nonexistent\/symposium vscodelm`: spawn .* ENOENT/);
    assert.equal(failures.length, 1);
  });

  it('reports a backend that cannot start: it exits before answering, with its stderr', async () => {
    const failures: BackendError[] = [];
    const { backend } = start({ command: 'python3', args: ['-m', 'no_such_module_symposium', 'vscodelm'] }, { onStartFailure: (e) => failures.push(e) });
    await assert.rejects(backend.request(METHOD_INFO, { silent: true }), /Could not start .*exited with code 1\n.*No module named no_such_module_symposium/s);
    assert.equal(failures.length, 1);
  });

  it('fails a request it cannot write as JSON, alone: nothing is left pending, no rejection goes unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { backend } = start();
      const circular: Record<string, unknown> = { silent: true };
      circular.self = circular;
      const clear = (e: unknown) => e instanceof RequestError && /Could not send lm\/.* to the Symposium backend: its parameters cannot be written as JSON \(.*(BigInt|circular)/i.test(e.message);
      await assert.rejects(backend.request(METHOD_INFO, { silent: true, n: 10n }), clear);
      assert.equal(backend.pid, undefined, 'a request that cannot be sent does not start the backend');
      await assert.rejects(backend.request(METHOD_INFO, circular), clear);
      const params = chatParams([user('Hello')]) as ChatParams & { extra: unknown };
      params.extra = { big: 2n ** 70n };
      await assert.rejects(backend.chat(params, () => undefined), clear);
      const next = await chat(backend, chatParams([user('Hello')]));
      assert.equal(next.text, 'How do you do. Please state your problem.');
      // A request still pending here would be failed by stop(), with nobody to hear it.
      await backend.stop('stopped by the test');
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('fails a request whose line is over its limit, saying so, and reads on', async () => {
    // The backend's parts are at most 256 Ki characters; this reader's limit is set below that.
    const { backend, log } = start(undefined, {}, 64 * 1024);
    const hostile: Agent = { mcp_server: { name: 'hostile', command: PYTHON, args: [HOSTILE], env: [] } };
    const params = { ...chatParams([user('huge 200000')]), agent: hostile };
    const parts: ResponsePart[] = [];
    await assert.rejects(backend.chat(params, (p) => parts.push(p)), (e: unknown) => e instanceof BackendError && /line of \d+ bytes, over the limit of 65536/.test(e.message));
    assert.ok(!parts.some((p) => p.type === 'text' && p.value.includes('h')), 'no part of the text was passed on as if whole');
    assert.ok(log.lines.some((l) => /over the limit/.test(l)));
    const next = await chat(backend, chatParams([user('Hello')]));
    assert.equal(next.text, 'How do you do. Please state your problem.');
  });
});

describe('the line reader', () => {
  it('cuts lines across reads, a character split between reads kept whole', () => {
    const reader = new LineReader(100);
    const bytes = Buffer.from('{"a":"é"}\n{"b":1}\r\nrest');
    assert.deepEqual([...reader.feed(bytes.subarray(0, 8)), ...reader.feed(bytes.subarray(8))], ['{"a":"é"}', '{"b":1}']);
    assert.equal(reader.finish(), 'rest');
    assert.equal(reader.finish(), undefined);
  });

  it('holds no more than its limit of a line, and reports it by its size and head', () => {
    const reader = new LineReader(10);
    const out = [...reader.feed(Buffer.from('{"id":7,"x":"')), ...reader.feed(Buffer.alloc(1000, 'y')), ...reader.feed(Buffer.from('"}\nok\n'))];
    assert.equal(out.length, 2);
    assert.deepEqual(out[0], { size: 13 + 1000 + 2, head: '{"id":7,"x":"' });
    assert.equal(out[1], 'ok');
  });
});

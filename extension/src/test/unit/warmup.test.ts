// Warm-up against the real backend: a model is prepared once it has answered its first request (never
// Eliza, which has nothing to start), once per backend, and the model last used is remembered.

import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { Backend } from '../../backend';
import { Warmup } from '../../warmup';
import { Agent, ChatParams, METHOD_PREPARE, PrepareResult } from '../../wire';
import { MemoryLog } from './log';

const SYMPOSIUM = process.env.SYMPOSIUM_BACKEND ?? path.resolve(__dirname, '../../../../.venv/bin/symposium');
const EXTERNAL: Agent = { mcp_server: { name: 'Eliza (external)', command: SYMPOSIUM, args: ['eliza', '--deterministic'], env: [] } };

describe('warm-up', () => {
  const sent: any[] = [];
  const answered = new Map<unknown, (message: any) => void>();
  const responses = new Map<unknown, any>();
  let onPrepare: (message: any) => void = () => undefined;
  const prepareSent = new Promise<any>((resolve) => (onPrepare = resolve));
  let last: string | undefined;
  let warmup!: Warmup;
  const backend = new Backend(() => ({ command: SYMPOSIUM, args: ['vscodelm'] }), new MemoryLog(), {
    onMessage: (direction, message: any) => {
      warmup.observe(direction, message);
      if (direction === 'send') {
        sent.push(message);
        if (message.method === METHOD_PREPARE) {
          onPrepare(message);
        }
      } else if (message.id !== undefined) {
        responses.set(message.id, message);
        answered.get(message.id)?.(message);
      }
    },
  });
  warmup = new Warmup(backend, { lastModel: () => last, setLastModel: (m) => (last = m) }, new MemoryLog());
  after(() => backend.stop());

  const chat = (modelId: string, agent: Agent, text: string): ChatParams =>
    ({ modelId, messages: [{ role: 'user', content: [{ type: 'text', value: text }] }], agent, options: { tools: [], toolMode: 'auto' } });
  /** The first prepare request sent, and its answer, once they are there. */
  const prepared = async () => {
    const request = await prepareSent;
    return new Promise<{ request: any; result: PrepareResult }>((resolve) => {
      const done = (m: any) => resolve({ request, result: m.result });
      answered.set(request.id, done);
      if (responses.has(request.id)) {
        done(responses.get(request.id));
      }
    });
  };

  it('prepares a model after its first answer, once, and never Eliza', async () => {
    await backend.chat(chat('symposium-eliza', { eliza: { deterministic: true } }, 'Hello'), () => undefined);
    assert.equal(last, 'symposium-eliza');
    await backend.chat(chat('external', EXTERNAL, 'Hello'), () => undefined);
    const { request, result } = await prepared();
    assert.deepEqual(request.params, { modelId: 'external', agent: EXTERNAL });
    assert.equal(result.ready, true);
    assert.equal(last, 'external');
    await backend.chat(chat('external', EXTERNAL, 'I feel sad'), () => undefined);
    assert.equal(sent.filter((m) => m.method === METHOD_PREPARE).length, 1);
  });
});

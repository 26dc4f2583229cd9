// An agent's sign-in as the extension shows and runs it, from what the real backend says of a real
// scripted agent (`tests/support/signin_agent.py`) that opens no session until signed in.

import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { Backend } from '../../backend';
import { buttons, signInNeeded, signInPrompt, terminalLaunch, withEnv } from '../../signInMethods';
import { Agent, ChatParams, METHOD_AUTHENTICATE, SignInMethod, SignInState } from '../../wire';
import { MemoryLog } from './log';

const SYMPOSIUM = process.env.SYMPOSIUM_BACKEND ?? path.resolve(__dirname, '../../../../.venv/bin/symposium');
const PYTHON = path.resolve(__dirname, '../../../../.venv/bin/python');
const AGENT = path.resolve(__dirname, '../../../../tests/support/signin_agent.py');
const SECRET = 'sk-kept-in-the-agents-env-0123456789';

const backends: Backend[] = [];
after(() => Promise.all(backends.map((b) => b.stop())));

function signinAgent(state: string): Agent {
  return { mcp_server: { name: 'Sign-in Agent', command: PYTHON, args: [AGENT, state], env: [{ name: 'OTHER_SECRET', value: SECRET }] } };
}

const chatParams = (agent: Agent): ChatParams =>
  ({ modelId: 'signin', messages: [{ role: 'user', content: [{ type: 'text', value: 'hello' }] }], agent, options: { tools: [], toolMode: 'auto' } });

describe('signing in to an agent', () => {
  it('reads the sign-in a failed chat asks for, and offers a button per method it can run', async () => {
    const backend = new Backend(() => ({ command: SYMPOSIUM, args: ['vscodelm'] }), new MemoryLog());
    backends.push(backend);
    const state = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'signin-')), 'state');
    const agent = signinAgent(state);
    const error = await backend.chat(chatParams(agent), () => undefined).then(() => undefined, (e: unknown) => e);
    const needed = signInNeeded(error);
    assert.ok(needed, String(error));
    assert.equal(needed.agent, 'Sign-in Agent');
    // A key is a button too: the key box asks for what the backend says the method reads.
    assert.deepEqual(buttons(needed.methods).map((m) => [m.name, m.kind, m.askFor]), [['Use SIGNIN_API_KEY', 'env_var', ['SIGNIN_API_KEY']], ['Log in', 'terminal', undefined], ['Log in with a browser', 'agent', undefined]]);
    // The agent asked its terminal sign-in to set EDITOR too: the backend refused it, and the user is told.
    assert.equal(
      signInPrompt(needed),
      'Sign-in Agent needs you to sign in: pick how (an API key is kept in VS Code\'s secret storage).'
        + ' Its sign-in asked to set EDITOR, which Symposium does not set: only API keys, tokens, base URLs and what the agent documents.',
    );
    assert.ok(!JSON.stringify(needed).includes(SECRET), 'the agent\'s env is not in the error');

    // The terminal runs the agent's own command with the method's arguments, in the agent's env.
    const login = needed.methods.find((m) => m.id === 'login')!;
    const launch = terminalLaunch('Sign-in Agent', login, agent)!;
    assert.equal(launch.name, 'Sign-in Agent: Log in');
    assert.equal(launch.shellPath, PYTHON);
    assert.deepEqual(launch.shellArgs, [AGENT, state, '--login']);
    assert.deepEqual(launch.env, { OTHER_SECRET: SECRET, SIGNIN_BASE_URL: 'terminal' });
    const out = execFileSync(launch.shellPath, launch.shellArgs, { env: { ...process.env, EDITOR: '', ...launch.env } }).toString();
    assert.match(out, /SIGNIN_BASE_URL=terminal/);
    assert.match(out, /EDITOR=\n/); // refused: the terminal never gets the agent's EDITOR
    // Then the backend starts the agent afresh, and the chat is answered.
    const signedIn = await backend.request<SignInState>(METHOD_AUTHENTICATE, { agent, methodId: 'login' });
    assert.equal(signedIn.canLogOut, true);
    assert.equal(await backend.chat(chatParams(agent), () => undefined), 'complete');
  });

  it('leaves other failures alone, and methods it cannot run out', () => {
    assert.equal(signInNeeded(new Error('boom')), undefined);
    assert.equal(signInNeeded(Object.assign(new Error('x'), { data: { kind: 'agent_exited' } })), undefined);
    const methods: SignInMethod[] = [
      { id: 'a', name: 'Browser', kind: 'agent', description: '' },
      { id: 'b', name: 'Browser', kind: 'agent', description: 'same name' },
      { id: 't', name: 'Terminal without a command', kind: 'terminal', description: '' },
      { id: 'k', name: 'Key', kind: 'env_var', description: '', vars: ['KEY'] },
    ];
    assert.deepEqual(buttons(methods).map((m) => m.id), ['a']); // a key method the backend names nothing to ask for: no box
    assert.deepEqual(buttons([{ ...methods[3], askFor: ['KEY'] }]).map((m) => m.id), ['k']);
    assert.equal(terminalLaunch('X', methods[0], { eliza: { deterministic: true } }), undefined);
    const odd = signInNeeded(Object.assign(new Error('Eve needs you to sign in'), { data: { kind: 'auth_required', methods: [null, { id: 1 }, methods[3]] } }))!;
    assert.deepEqual(odd.methods, [methods[3]]);
    assert.equal(signInPrompt(odd), 'The agent needs you to sign in.');
  });

  it('signs in with a key the keychain hands over in the agent\'s env, and the key reaches no log line', async () => {
    const log = new MemoryLog();
    const backend = new Backend(() => ({ command: SYMPOSIUM, args: ['vscodelm'] }), log);
    backends.push(backend);
    const state = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'signin-')), 'state');
    const key = 'typed-in-the-key-box-8812';
    const error = await backend.chat(chatParams(signinAgent(state)), () => undefined).then(() => undefined, (e: unknown) => e);
    const method = signInNeeded(error)!.methods.find((m) => m.id === 'key')!;
    assert.deepEqual(method.askFor, ['SIGNIN_API_KEY']);
    const agent = withEnv(signinAgent(state), { [method.askFor![0]]: key });
    const signedIn = await backend.request<SignInState>(METHOD_AUTHENTICATE, { agent, methodId: method.id });
    assert.equal(signedIn.authenticated, 'key');
    assert.equal(await backend.chat(chatParams(agent), () => undefined), 'complete');
    assert.ok(log.lines.some((l) => l.startsWith('trace: → ') && l.includes('SIGNIN_API_KEY')), 'the requests were traced');
    assert.ok(!log.lines.some((l) => l.includes(key) || l.includes(SECRET)), 'no log line holds a key');
  });
});

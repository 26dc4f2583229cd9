// Agents' keys in the keychain (`keys.ts`): kept by agent and name in one secret, listed by name,
// forgotten; carried in the agent's definition only (never in a setting); secrets found in an
// agent's `env` setting are recognised to be moved there.

import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AgentSetting, useKeys, wireAgent } from '../../config';
import { checkKey, Keychain, SECRET_KEY, secretsIn, SecretStore } from '../../keys';

class MemoryStore implements SecretStore {
  readonly values = new Map<string, string>();
  get(key: string) { return Promise.resolve(this.values.get(key)); }
  store(key: string, value: string) { this.values.set(key, value); return Promise.resolve(); }
  delete(key: string) { this.values.delete(key); return Promise.resolve(); }
}

const gemini: AgentSetting = { id: 'gemini', name: 'Gemini CLI', command: 'npx', args: ['-y', '@google/gemini-cli', '--acp'], env: {} };

describe('the keychain', () => {
  it('keeps keys per agent, lists their names only, replaces and forgets them', async () => {
    const store = new MemoryStore();
    const keychain = new Keychain(store);
    await keychain.load();
    assert.deepEqual(keychain.names('gemini'), []);
    await keychain.set('gemini', { GEMINI_API_KEY: 'AIza-first' });
    await keychain.set('codex', { OPENAI_API_KEY: 'sk-codex' });
    await keychain.set('gemini', { GEMINI_API_KEY: 'AIza-second' });
    assert.deepEqual(keychain.names('gemini'), ['GEMINI_API_KEY']);
    assert.deepEqual(keychain.of('gemini'), { GEMINI_API_KEY: 'AIza-second' });
    // Another window reads the same secret.
    const other = new Keychain(store);
    await other.load();
    assert.deepEqual(other.of('codex'), { OPENAI_API_KEY: 'sk-codex' });
    await keychain.forget('gemini', 'GEMINI_API_KEY');
    await keychain.forget('codex');
    assert.deepEqual([keychain.names('gemini'), keychain.names('codex')], [[], []]);
    assert.equal(store.values.has(SECRET_KEY), false, 'nothing left: the secret is deleted');
  });

  it('goes in the agent definition sent to the backend, over its env setting, and nowhere else', async () => {
    const keychain = new Keychain(new MemoryStore());
    await keychain.set('gemini', { GEMINI_API_KEY: 'AIza-kept' });
    useKeys((id) => keychain.of(id));
    try {
      const wire = wireAgent({ ...gemini, env: { GEMINI_API_KEY: 'old', DEBUG: '1' } });
      assert.ok('mcp_server' in wire);
      assert.deepEqual(wire.mcp_server.env, [{ name: 'GEMINI_API_KEY', value: 'AIza-kept' }, { name: 'DEBUG', value: '1' }]);
      assert.deepEqual(gemini.env, {}, 'the setting itself is untouched');
    } finally {
      useKeys(() => ({}));
    }
  });

  it('reads a damaged secret as no keys, and refuses a key that is not one line', async () => {
    const store = new MemoryStore();
    store.values.set(SECRET_KEY, '{"gemini": {"GEMINI_API_KEY": 1, "BAD NAME": "x", "OK": "v"}, "x": "y"');
    const keychain = new Keychain(store);
    await keychain.load();
    assert.deepEqual(keychain.of('gemini'), {});
    store.values.set(SECRET_KEY, '{"gemini": {"GEMINI_API_KEY": 1, "BAD NAME": "x", "OK": "v"}, "x": "y"}');
    await keychain.load();
    assert.deepEqual(keychain.of('gemini'), { OK: 'v' });
    assert.equal(checkKey('AIza-ok'), undefined);
    assert.ok(checkKey('  '));
    assert.ok(checkKey('a\nb'));
    assert.ok(checkKey('x'.repeat(5000)));
  });

  it('finds the secrets in an agent\'s env setting, by name or by shape, and leaves settings alone', () => {
    assert.deepEqual(secretsIn({
      ANTHROPIC_API_KEY: 'sk-ant-0123456789',
      GITHUB_TOKEN: 'not-shaped-but-named',
      CUSTOM: 'AIzaSyA0123456789abcdef',
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
      MY_TOKEN: 'short',
      BASE_URL: 'https://example.com/v1',
    }), ['ANTHROPIC_API_KEY', 'CUSTOM', 'GITHUB_TOKEN']);
    assert.deepEqual(secretsIn({ SIGNIN_VALUE: 'long-enough-value' }, ['SIGNIN_VALUE']), ['SIGNIN_VALUE']);
  });
});

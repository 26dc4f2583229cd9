import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
  agentForModel, agentId, backendCommand, joinCommandLine, modelRequest, optionValueItems, parseEnv, readAgents, settingKey, splitCommandLine,
  wireAgentEntries, withOption,
} from '../../config';

const claude = { id: 'claude', name: 'Claude Code', command: 'npx', args: ['-y', '@agentclientprotocol/claude-agent-acp'], env: { A: '1' } };

describe('symposium.agents', () => {
  it('keeps valid entries and says why it drops the others', () => {
    const { agents, problems } = readAgents([
      claude,
      { id: 'bare', command: 'agent' },
      { id: 'claude', name: 'again', command: 'x' },
      { id: 'symposium-eliza', command: 'x' },
      { name: 'no id', command: 'x' },
      { id: 'bad-args', command: 'x', args: 'nope' },
      { id: 'bad-env', command: 'x', env: { A: 1 } },
      null,
      { id: 'back\\slash', command: 'x' },
    ]);
    assert.deepEqual(agents, [claude, { id: 'bare', name: 'bare', command: 'agent', args: [], env: {} }]);
    assert.equal(problems.length, 7);
    assert.match(problems[0], /symposium\.agents\[2\].*already taken/);
    assert.equal(problems[6], 'symposium.agents[8]: the id "back\\slash" contains a backslash, which Copilot Chat cannot handle in a model id; ignored');
    assert.deepEqual(readAgents(undefined), { agents: [], problems: [] });
  });

  it('maps to the wire agent definitions', () => {
    assert.deepEqual(wireAgentEntries([claude]), [{
      id: 'claude',
      name: 'Claude Code',
      agent: { mcp_server: { name: 'Claude Code', command: 'npx', args: ['-y', '@agentclientprotocol/claude-agent-acp'], env: [{ name: 'A', value: '1' }] } },
    }]);
    assert.deepEqual(agentForModel('symposium-eliza', []), { eliza: { deterministic: false } });
    assert.deepEqual(agentForModel('claude', [claude]), wireAgentEntries([claude])[0].agent);
    assert.equal(agentForModel('gone', [claude]), undefined);
    // The options the settings give are the defaults the model's own controls show.
    assert.deepEqual(wireAgentEntries([{ ...claude, options: { mode: 'plan' } }])[0].options, { mode: 'plan' });
  });

  it('maps a model entry to its agent, with the model and the options from the settings', () => {
    const planning = { ...claude, options: { mode: 'plan', effort: 'high' } };
    const nested = { id: 'claude/work', name: 'Work', command: 'x', args: [], env: {} };
    const agents = [planning, nested];
    assert.deepEqual(modelRequest('claude', agents), { id: 'claude', agent: wireAgentEntries([planning])[0].agent, agentOptions: { mode: 'plan', effort: 'high' } });
    assert.deepEqual(modelRequest('claude/sonnet', agents)?.agentOptions, { mode: 'plan', effort: 'high', model: 'sonnet' });
    assert.deepEqual(modelRequest('claude/work/gpt-5', agents), { id: 'claude/work', agent: wireAgentEntries([nested])[0].agent, agentOptions: { model: 'gpt-5' } });
    assert.deepEqual(modelRequest('symposium-eliza', agents)?.agentOptions, {});
    assert.equal(modelRequest('claude/', agents), undefined);
    assert.equal(modelRequest('codex/gpt-5', agents), undefined);
  });

  it('takes an entry an older Add Agent wrote with "httpMcpOnly", and sends the backend none: it knows the agent by its agentInfo', () => {
    const { agents, problems } = readAgents([{ id: 'copilot', command: 'copilot', httpMcpOnly: true }]);
    assert.deepEqual(problems, []);
    assert.deepEqual(wireAgentEntries(agents).map((e) => e.agent), [{ mcp_server: { name: 'copilot', command: 'copilot', args: [], env: [] } }]);
  });

  it('keeps options that are strings or booleans, and drops an entry whose options are not', () => {
    const { agents, problems } = readAgents([{ ...claude, options: { mode: 'plan', fast: true } }, { id: 'odd', command: 'x', options: { effort: 3 } }]);
    assert.deepEqual(agents.map((a) => a.options), [{ mode: 'plan', fast: true }]);
    assert.match(problems[0], /symposium\.agents\[1\]: "options" must map option names to strings or booleans/);
  });
});

describe("an agent's options in Manage Agents", () => {
  // Claude Code's mode option, as lm/agentOptions lists it.
  const mode = {
    id: 'mode', name: 'Mode', category: 'mode', type: 'select' as const, current: 'default', description: 'Session permission mode',
    values: [
      { value: 'default', name: 'Manual', description: 'Always ask before making changes', bypassesPermissions: false },
      { value: 'plan', name: 'Plan', description: 'Create a plan before making changes', bypassesPermissions: false },
      { value: 'bypassPermissions', name: 'Bypass permissions', description: 'Accepts all permissions', bypassesPermissions: true },
    ],
  };

  it("offers the agent's default first, and labels a mode that bypasses permissions", () => {
    const items = optionValueItems(mode, undefined);
    assert.deepEqual(items.map((i) => i.value), [undefined, 'default', 'plan', 'bypassPermissions']);
    assert.equal(items[0].label, "The agent's default (set)");
    assert.equal(items[0].description, 'Manual');
    assert.equal(items[3].label, '$(warning) Bypass permissions');
    assert.match(items[3].description!, /bypasses permissions/);
    assert.equal(optionValueItems(mode, 'plan')[2].label, 'Plan (set)');
    assert.equal(optionValueItems({ ...mode, current: 'bypassPermissions' }, undefined)[0].description, undefined, 'never shown as the default');
  });

  it('saves mode and effort by their category, other options by id', () => {
    assert.equal(settingKey({ id: 'reasoning_effort', category: 'thought_level' }), 'effort');
    assert.equal(settingKey({ id: 'mode', category: 'mode' }), 'mode');
    assert.equal(settingKey({ id: 'fast', category: 'model_config' }), 'fast');
    assert.deepEqual(withOption({ mode: 'plan' }, 'effort', 'high'), { mode: 'plan', effort: 'high' });
    assert.deepEqual(withOption({ mode: 'plan' }, 'mode', undefined), {});
  });
});

describe('the backend command', () => {
  const none = { command: '', traceDir: '', logLevel: '' };

  it('uses the setting, split like a shell, global flags before vscodelm', () => {
    assert.deepEqual(backendCommand({ command: '"/opt/my tools/symposium"', traceDir: '/tmp/t', logLevel: 'debug' }), {
      command: '/opt/my tools/symposium',
      args: ['--log-level', 'debug', 'vscodelm', '--trace-dir', '/tmp/t'],
    });
    assert.deepEqual(backendCommand({ ...none, command: 'python3 -m symposium' }), { command: 'python3', args: ['-m', 'symposium', 'vscodelm'] });
  });

  it('finds the symposium script on PATH, else runs python3 -m symposium', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sym-path-'));
    const script = path.join(dir, 'symposium');
    fs.writeFileSync(script, '#!/bin/sh\n', { mode: 0o755 });
    assert.deepEqual(backendCommand(none, { PATH: `/nonexistent${path.delimiter}${dir}` }), { command: script, args: ['vscodelm'] });
    assert.deepEqual(backendCommand(none, { PATH: '/nonexistent' }), { command: 'python3', args: ['-I', '-m', 'symposium', 'vscodelm'] });
    fs.rmSync(dir, { recursive: true });
  });
});

describe('command lines and environments', () => {
  it('splits and joins command lines', () => {
    assert.deepEqual(splitCommandLine(`  npx -y  "a b" 'c "d"' e\\ f ""`), ['npx', '-y', 'a b', 'c "d"', 'e f', '']);
    for (const words of [['npx', '-y', 'pkg'], ['/a b/c', "it's", 'x"y', 'back\\slash', '']]) {
      assert.deepEqual(splitCommandLine(joinCommandLine(words)), words);
    }
    assert.equal(joinCommandLine(['npx', '-y', '@agentclientprotocol/claude-agent-acp']), 'npx -y @agentclientprotocol/claude-agent-acp');
  });

  it('parses NAME=VALUE environments', () => {
    assert.deepEqual(parseEnv('A=1 B="two words" C='), { A: '1', B: 'two words', C: '' });
    assert.deepEqual(parseEnv(''), {});
    assert.equal(parseEnv('A=1 oops'), '"oops" is not NAME=VALUE');
  });

  it('makes unique agent ids from names', () => {
    assert.equal(agentId('Claude Code', []), 'claude-code');
    assert.equal(agentId('Claude Code', ['claude-code']), 'claude-code-2');
    assert.equal(agentId('!!!', []), 'agent');
    assert.equal(agentId('Symposium Eliza', []), 'symposium-eliza-2');
  });
});

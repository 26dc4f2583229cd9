// Symposium as a new user gets it: the vsix installed into a clean profile, no settings, no
// `symposium` on PATH, Python on PATH. The runner (src/test/install.ts) plays the user's part in the
// UI (it picks the agent in Add Agent's list) and watches the notifications.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { SymposiumApi } from '../../extension';

const ID = 'symposium-dev.symposium';
const STORAGE = path.join(process.env.SYMPOSIUM_INSTALL_USER_DATA ?? '', 'User', 'globalStorage', ID);
const CATALOGUE = process.env.SYMPOSIUM_INSTALL_CATALOGUE ?? '';
const UI_DONE = process.env.SYMPOSIUM_INSTALL_UI_DONE ?? '';

/** Until the runner has played its part in the UI (it writes UI_DONE), so the window stays up. */
async function runnerDone(timeoutMs = 120_000): Promise<void> {
  if (!UI_DONE) {
    return;
  }
  const folder = path.dirname(UI_DONE);
  await new Promise<void>((resolve, reject) => {
    const watcher = fs.watch(folder, () => check());
    const timer = setTimeout(() => finish(new Error('the runner never finished its part in the UI')), timeoutMs);
    const finish = (error?: Error) => {
      watcher.close();
      clearTimeout(timer);
      error ? reject(error) : resolve();
    };
    const check = () => fs.existsSync(UI_DONE) && finish();
    check();
  });
}

/** The model `id`, once VS Code lists it (bounded: every change of the model list is a look). */
async function modelNamed(id: string, timeoutMs = 150_000): Promise<vscode.LanguageModelChat> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [chat] = await vscode.lm.selectChatModels({ vendor: 'symposium', id });
    if (chat) {
      return chat;
    }
    const left = deadline - Date.now();
    assert.ok(left > 0, `the model ${id} was never offered`);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, left);
      const subscription = vscode.lm.onDidChangeChatModels(() => {
        clearTimeout(timer);
        subscription.dispose();
        resolve();
      });
    });
  }
}

async function ask(chat: vscode.LanguageModelChat, text: string): Promise<string> {
  const response = await chat.sendRequest([vscode.LanguageModelChatMessage.User(text)], {});
  let answer = '';
  for await (const part of response.stream) {
    if (part instanceof vscode.LanguageModelTextPart) {
      answer += part.value;
    }
  }
  return answer;
}

function commandLine(pid: number | undefined): string[] {
  assert.ok(pid, 'the backend is running');
  return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

describe('Symposium installed from its vsix into a clean profile', () => {
  let symposium: SymposiumApi;

  it('starts with no Symposium setting and no `symposium` on PATH', () => {
    const config = vscode.workspace.getConfiguration('symposium');
    for (const key of ['backend.command', 'agents', 'python', 'catalogue.url']) {
      const set = config.inspect(key);
      assert.equal(set?.globalValue ?? set?.workspaceValue, undefined, `symposium.${key} is set`);
    }
    const onPath = (process.env.PATH ?? '').split(path.delimiter).filter((dir) => dir && fs.existsSync(path.join(dir, 'symposium')));
    assert.deepEqual(onPath, []);
    assert.ok(!fs.existsSync(path.join(STORAGE, 'venv')), 'no venv yet');
  });

  it('answers with Eliza: the one-time setup builds the backend\'s private venv', async () => {
    symposium = await vscode.extensions.getExtension(ID)!.activate();
    const eliza = await modelNamed('symposium-eliza');
    const answer = await ask(eliza, 'Hello');
    assert.ok(answer.trim().length > 0, 'Eliza answered');
    // The backend that answered runs from the venv in the extension's storage, stamped with its version.
    const venv = path.join(STORAGE, 'venv');
    assert.deepEqual(commandLine(symposium.backendPid).slice(0, 4), [path.join(venv, 'bin', 'python'), '-I', '-m', 'symposium']);
    const stamp = JSON.parse(fs.readFileSync(path.join(venv, 'symposium-stamp.json'), 'utf8'));
    assert.equal(stamp.extensionVersion, vscode.extensions.getExtension(ID)!.packageJSON.version);
    assert.match(stamp.wheel, /^symposium-.*\.whl$/);
  });

  it('adds an agent from the catalogue, installed pinned, that then answers', async () => {
    assert.ok(CATALOGUE, 'SYMPOSIUM_INSTALL_CATALOGUE names the test catalogue');
    const config = vscode.workspace.getConfiguration('symposium');
    await config.update('catalogue.url', CATALOGUE, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('symposium.addAgent'); // the runner picks "Echo Agent"

    const [agent] = vscode.workspace.getConfiguration('symposium').get<any[]>('agents') ?? [];
    assert.ok(agent, 'Add Agent added an entry to symposium.agents');
    assert.equal(agent.id, 'echo-agent');
    const folder = path.join(STORAGE, 'agents', 'echo-agent@1.0.0');
    assert.equal(path.basename(agent.command), 'node'); // never npx
    assert.equal(agent.args[0], path.join(folder, 'node_modules', '@symposium-test', 'echo-agent', 'bin', 'echo-agent.js'));
    const record = JSON.parse(fs.readFileSync(path.join(folder, 'symposium-install.json'), 'utf8'));
    assert.equal(record.version, '1.0.0');
    assert.deepEqual(record.auth.methods.map((m: { id: string }) => m.id), ['echo-key']); // what the agent said at start

    const echo = await modelNamed('echo-agent');
    assert.equal(await ask(echo, 'Hello from the catalogue'), 'Catalogue: Hello from the catalogue');
    await runnerDone();
  });
});

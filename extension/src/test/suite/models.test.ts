// An agent's own models in a real VS Code: Claude Code (its real ACP adapter, its model API faked by
// tests/support/serve_fake_agent.py on 127.0.0.1) configured as an agent. Before its first use VS Code lists
// one model for it; once it has answered, one per model it offers, and choosing one reaches its API.

import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { FakeAgent, Repository, repositoryOf } from '../fakeAgent';

const ID = 'claude-fake';
const NAME = 'Claude (fake API)';

/** The repository's Python, found from the backend the runner configured (`<repo>/.venv/bin/symposium`). */
function repository(): Repository {
  const backend = vscode.workspace.getConfiguration('symposium').get<string>('backend.command', '');
  const found = repositoryOf(backend);
  assert.ok(found, `the repository next to the backend ${backend}`);
  return found;
}

async function symposiumModels(): Promise<vscode.LanguageModelChat[]> {
  return vscode.lm.selectChatModels({ vendor: 'symposium' });
}

/** The models once `predicate` holds of them: checked now, then on each change VS Code announces. */
async function modelsWhen(predicate: (models: vscode.LanguageModelChat[]) => boolean): Promise<vscode.LanguageModelChat[]> {
  for (;;) {
    const changed = new Promise<void>((resolve) => {
      const subscription = vscode.lm.onDidChangeChatModels(() => {
        subscription.dispose();
        resolve();
      });
    });
    const models = await symposiumModels();
    if (predicate(models)) {
      return models;
    }
    await changed;
  }
}

async function answer(model: vscode.LanguageModelChat, text: string): Promise<string> {
  const response = await model.sendRequest([vscode.LanguageModelChatMessage.User(text)]);
  let reply = '';
  for await (const part of response.text) {
    reply += part;
  }
  return reply;
}

describe("An agent's own models in the model picker", function () {
  this.timeout(180_000);
  let fake: FakeAgent;
  let previous: unknown;

  before(async () => {
    fake = await FakeAgent.start('claude', repository());
    const config = vscode.workspace.getConfiguration('symposium');
    previous = config.inspect('agents')?.globalValue;
    const agents = [...((previous as object[] | undefined) ?? []), { id: ID, name: NAME, ...fake.entry }];
    await config.update('agents', agents, vscode.ConfigurationTarget.Global);
    await modelsWhen((models) => models.some((m) => m.id === ID));
  });

  after(async () => {
    await vscode.workspace.getConfiguration('symposium').update('agents', previous, vscode.ConfigurationTarget.Global);
    await fake?.stop();
  });

  it('lists the models Claude Code offers once it has been used, and a chosen one reaches it', async () => {
    const before = await symposiumModels();
    assert.deepEqual(before.filter((m) => m.id.startsWith(`${ID}/`)).map((m) => m.id), [], 'nothing known before its first use');
    const [plain] = before.filter((m) => m.id === ID);
    assert.equal(await answer(plain, 'Hello'), '(unscripted)');

    // Two changes are announced: the models the agent offers, then (once the turn is over) its context window.
    const after = await modelsWhen((models) => models.some((m) => m.id === `${ID}/sonnet`) && models.find((m) => m.id === ID)?.maxInputTokens === 1_000_000);
    const names = Object.fromEntries(after.filter((m) => m.id.startsWith(ID)).map((m) => [m.id, m.name]));
    assert.equal(names[`${ID}/sonnet`], `${NAME} · Sonnet 5.5`);
    assert.equal(names[`${ID}/haiku`], `${NAME} · Haiku 5.5`);
    assert.equal(names[ID], `${NAME} (ACP)`);
    assert.equal(after.find((m) => m.id === ID)!.maxInputTokens, 1_000_000, 'the context window Claude Code reported');

    const haiku = after.find((m) => m.id === `${ID}/haiku`)!;
    assert.equal(await answer(haiku, 'Hello again'), '(unscripted)');
    assert.match((await fake.request((r) => r.model.includes('haiku'))).model, /haiku/, 'the model API was asked for Haiku');
  });
});

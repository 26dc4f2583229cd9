// Consumers of vscode.lm other than Copilot Chat, in the real Chat view, each with Claude Code and Codex
// (their model APIs faked and scripted by tests/support/serve_fake_agent.py): Microsoft's chat sample
// built from its sources (fixtures/chat-sample: `@cat`, no history; `@tools`, prompt-tsx and its own tool
// loop; `@catTools`, @vscode/chat-extension-utils) and a plain extension calling vscode.lm with tools and
// its own loop (fixtures/plain-consumer: `@plain`, history as the API's own types). What each asserts is
// what the user reads and what the model was sent: the tool's real result as the tool result (never a
// refusal), and a follow-up that goes on in the same agent session, the first turn and its tool call
// native in the model's request (docs/how-it-works.md, "Consumers").
//
// The consumers are built and installed by `prepareConsumers` before code-server starts (runner.ts).

import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Page } from 'playwright-core';
import { Card, ChatView, retry, runViewTests, ViewTest } from './chatView';
import { FakeAgent, ModelRequest } from './fakeAgent';

const UI_MS = 20_000;
const ANSWER_MS = 60_000;
const VIEW = '.part.auxiliarybar';
const FIXTURES = path.resolve(__dirname, '../../src/test/fixtures');
const VSCE = path.resolve(__dirname, '../../node_modules/@vscode/vsce/vsce');
/** Where a build of the chat sample is kept between runs, by the digest of its sources. */
const CACHE = process.env.SYMPOSIUM_VSCODE_CACHE ?? path.join(os.homedir(), '.cache', 'symposium-vscode');
/** What the priming of a new agent session with earlier turns starts with (protocol/turn/rendering.py). */
const PRIMED = 'Earlier in this conversation';
const REFUSED = /reject|refus|denied|declin|did not run|cancel|skip/i;

function digestOf(folder: string): string {
  const hash = crypto.createHash('sha256');
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const file = path.join(dir, name);
      if (fs.statSync(file).isDirectory()) {
        walk(file);
      } else {
        hash.update(path.relative(folder, file)).update(fs.readFileSync(file));
      }
    }
  };
  walk(folder);
  return hash.digest('hex').slice(0, 16);
}

function run(command: string, args: string[], cwd: string): void {
  execFileSync(command, args, { cwd, stdio: ['ignore', 'ignore', 'inherit'], timeout: 600_000 });
}

/**
 * Builds the chat sample from its sources (`npm ci` with its own lock, from the npm registry, then its
 * own `tsc`) and packages it (kept in the cache by the digest of its sources), packages the plain
 * consumer, and installs both into code-server's extensions folder. Returns the seconds it took.
 */
export function prepareConsumers(codeServer: string, dirs: Record<string, string>, out: string): number {
  const started = Date.now();
  const source = path.join(FIXTURES, 'chat-sample');
  const built = path.join(CACHE, `chat-sample-${digestOf(source)}`);
  if (!fs.existsSync(path.join(built, '.done'))) {
    const partial = `${built}.partial-${process.pid}`;
    fs.rmSync(partial, { recursive: true, force: true });
    fs.cpSync(source, partial, { recursive: true });
    run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], partial);
    run(process.execPath, [path.join(partial, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], partial);
    // Packaged as it was built: vsce refuses the samples' publisher name, and would compile it again.
    const manifest = JSON.parse(fs.readFileSync(path.join(partial, 'package.json'), 'utf8'));
    manifest.publisher = 'symposium-tests';
    delete manifest.scripts['vscode:prepublish'];
    fs.writeFileSync(path.join(partial, 'package.json'), JSON.stringify(manifest, null, 2));
    run(process.execPath, [VSCE, 'package', '-o', path.join(partial, 'chat-sample.vsix')], partial);
    fs.writeFileSync(path.join(partial, '.done'), '');
    fs.rmSync(built, { recursive: true, force: true });
    fs.renameSync(partial, built);
  }
  const plain = path.join(out, 'plain-consumer.vsix');
  run(process.execPath, [VSCE, 'package', '--no-dependencies', '-o', plain], path.join(FIXTURES, 'plain-consumer'));
  for (const vsix of [path.join(built, 'chat-sample.vsix'), plain]) {
    run(codeServer, ['--install-extension', vsix, '--extensions-dir', dirs.extensions, '--user-data-dir', dirs['user-data']], out);
  }
  return (Date.now() - started) / 1000;
}

/** The tests' names, each agent with each consumer: the runner builds the consumers only when VIEW_TESTS selects one. */
const AGENT_LABELS = ['Claude Code', 'Codex'];
const names = {
  cat: (agent: string) => `${agent} as @cat's model (no history: each message a conversation of its own)`,
  tools: (agent: string) => `${agent} as @tools' model (prompt-tsx): the tool's real result reaches the model, and a follow-up goes on in the same session`,
  catTools: (agent: string) => `${agent} as @catTools' model (@vscode/chat-extension-utils): the tool's real result reaches the model, and a follow-up goes on in the same session`,
  plain: (agent: string) => `${agent} as a plain vscode.lm extension's model (its own tool loop, the API's types): the result reaches the model, and a follow-up goes on in the same session`,
};

export function consumersWanted(): boolean {
  const only = process.env.VIEW_TESTS ? new RegExp(process.env.VIEW_TESTS) : undefined;
  return !only || AGENT_LABELS.some((agent) => Object.values(names).some((name) => only.test(name(agent))));
}

export interface ConsumerViewOptions {
  claude: FakeAgent;
  claudeName: string;
  codex: FakeAgent;
  codexName: string;
  out: string;
  print(line: string): void;
}

export async function runConsumerViewTests(page: Page, options: ConsumerViewOptions): Promise<{ passed: number; failed: number }> {
  const chat = new ChatView(page);
  const view = page.locator(VIEW);
  const lastUser = (text: string) => (r: ModelRequest) => r.userTexts[r.userTexts.length - 1] === text;
  const agents = [
    { label: 'Claude Code', name: options.claudeName, fake: options.claude, tool: (name: string, input: object) => ({ name: `mcp__vscode_tools__${name}`, input }) },
    // Codex offers an MCP server's tools in a namespace, their names with `-` spelled `_`.
    { label: 'Codex', name: options.codexName, fake: options.codex, tool: (name: string, input: object) => ({ name: name.replace(/-/g, '_'), input, namespace: 'mcp__vscode_tools' }) },
  ];

  /** Sends `@participant prompt` in a new line of the input (a sticky participant's prefix replaced), allows
   * every card the answer shows (a consumer's own tools may ask), and resolves with the answer's text. */
  const ask = async (participant: string, prompt: string): Promise<string> => {
    const before = await view.locator('.interactive-response').count();
    const input = view.locator('.interactive-input-editor .monaco-editor').first();
    const typed = `@${participant} ${prompt}`;
    const suggestions = page.locator('.interactive-input-editor .suggest-widget.visible');
    await retry(page, UI_MS * 3, async () => {
      await input.click();
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.press('Backspace');
      // Typed "@" opens the participants' suggestions, and an Enter while they show takes one in place of
      // the whole line (a run found "@askQuestions" sent): the line goes in as a paste does, and is read
      // back, as the user sees it, with no list open, before it is sent.
      await page.keyboard.insertText(typed);
      if (await suggestions.isVisible()) {
        await page.keyboard.press('Escape');
        await suggestions.waitFor({ state: 'hidden', timeout: UI_MS });
      }
      const shown = (await input.locator('.view-lines').innerText()).replace(/\s+/g, ' ').trim();
      if (shown !== typed) {
        throw new Error(`the chat input shows "${shown}", not "${typed}"`);
      }
    });
    await page.keyboard.press('Enter');
    await view.locator('.interactive-request .value', { hasText: prompt }).last().waitFor({ timeout: UI_MS });
    const response = view.locator('.interactive-response').nth(before);
    await response.waitFor({ timeout: UI_MS });
    const card = new Card(page, view);
    const loading = view.locator('.interactive-response.chat-response-loading').first();
    for (let cards = 0; cards < 5; cards++) {
      const next = await Promise.race([
        loading.waitFor({ state: 'detached', timeout: ANSWER_MS }).then(() => 'done', () => 'timeout'),
        card.skipButton.waitFor({ timeout: ANSWER_MS }).then(() => 'card', () => 'timeout'),
      ]);
      if (next === 'timeout') {
        throw new Error(`the answer to "@${participant} ${prompt}" neither finished nor asked within ${ANSWER_MS} ms`);
      }
      if (next === 'done') {
        break;
      }
      await card.allowOnce();
    }
    return (await response.locator('.value').innerText()).trim();
  };

  /** The model's request after its tool call: the tool's real output as the tool result, never a refusal. */
  const resultReached = async (agent: FakeAgent, question: string, output: RegExp): Promise<ModelRequest> => {
    const after = await agent.request((r) => lastUser(question)(r) && r.toolResults.length > 0);
    const result = after.toolResults[after.toolResults.length - 1];
    assert.match(result, output, `the tool's real result reached the model: ${JSON.stringify(after.toolResults)}`);
    assert.doesNotMatch(result, REFUSED, 'as the result, not as a refusal');
    return after;
  };

  /** A follow-up in the same chat: the same agent session, the first turn and its tool call native. */
  const followUp = async (agent: FakeAgent, participant: string, question: string, output: RegExp) => {
    const next = `And once more, ${participant}?`;
    agent.script({ answers: next, text: ['Once ', 'more.'] });
    assert.match(await ask(participant, next), /Once more\./);
    const asked = await agent.request(lastUser(next));
    assert.ok(!asked.userTexts.some((t) => t.includes(PRIMED)), `the same session, not one primed with the history: ${JSON.stringify(asked.userTexts).slice(0, 600)}`);
    assert.ok(asked.userTexts.some((t) => t.includes(question)), 'the first turn is in the session');
    assert.ok(asked.toolResults.some((t) => output.test(t)), `the first turn's tool call and result, native: ${JSON.stringify(asked.toolResults)}`);
  };

  const tests: ViewTest[] = [];
  for (const agent of agents) {
    const { fake } = agent;
    tests.push(
      [names.cat(agent.label), async () => {
        await chat.pick(agent.name);
        await chat.newChat('Ask');
        const first = `Teach me pointers, ${agent.label}`;
        const second = `Teach me lists, ${agent.label}`;
        fake.script({ answers: first, text: ['Meow, ', 'pointers.'] }, { answers: second, text: ['Meow, ', 'lists.'] });
        assert.match(await ask('cat', first), /Meow, pointers\./);
        assert.match(await ask('cat', second), /Meow, lists\./);
        const asked = await fake.request(lastUser(second));
        assert.ok(!asked.userTexts.some((t) => t.includes(first)), '@cat sends no history: nothing of the first message');
      }],
      [names.tools(agent.label), async () => {
        await chat.pick(agent.name);
        await chat.newChat('Ask');
        const question = `Which JSON files are there, ${agent.label}?`;
        fake.script(
          { answers: question, text: ['Looking. '], calls: [agent.tool('chat-tools-sample_findFiles', { pattern: '**/*.json' })] },
          { answers: question, text: ['Found ', 'the JSON files.'] },
        );
        const answer = await ask('tools', question);
        assert.match(answer, /Found the JSON files\./);
        await resultReached(fake, question, /Found \d+ files matching \\?"\*\*\/\*\.json/); // Codex's output quotes the result as JSON
        await followUp(fake, 'tools', question, /Found \d+ files matching/);
      }],
      [names.catTools(agent.label), async () => {
        await chat.pick(agent.name);
        await chat.newChat('Ask');
        const question = `Which text files are there, ${agent.label}?`;
        fake.script(
          { answers: question, calls: [agent.tool('chat-tools-sample_findFiles', { pattern: '**/*.txt' })] },
          { answers: question, text: ['Purr, ', 'text files.'] },
        );
        assert.match(await ask('catTools', question), /Purr, text files\./);
        await resultReached(fake, question, /Found \d+ files matching \\?"\*\*\/\*\.txt/);
        await followUp(fake, 'catTools', question, /Found \d+ files matching/);
      }],
      [names.plain(agent.label), async () => {
        await chat.pick(agent.name);
        await chat.newChat('Ask');
        const question = `How many lines has notes.txt, ${agent.label}?`;
        fake.script(
          { answers: question, calls: [agent.tool('plain-consumer_lineCount', { file: 'notes.txt' })] },
          { answers: question, text: ['Three ', 'lines.'] },
        );
        assert.match(await ask('plain', question), /Three lines\./);
        await resultReached(fake, question, /notes\.txt has 3 lines\./);
        await followUp(fake, 'plain', question, /notes\.txt has 3 lines\./);
      }],
    );
  }
  return runViewTests(page, options, 'Other consumers of vscode.lm in the real Chat view', 'consumers', tests, async () => false);
}

// Real agents in the real Chat view: Claude Code, Codex and Gemini CLI (the real agents, their model APIs
// faked and scripted by tests/support/serve_fake_agent.py) picked in Copilot Chat's model picker, in a
// workspace with real files, driven as a user would. What each test asserts is what the user sees
// (the answer, the card, the "files changed" list, the context ring) or what the model was sent (the
// fake API's record), and the files on disk.
//
// They run in the window the "Continue an Agent Session" test opened (one code-server, one window more).

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Locator, Page } from 'playwright-core';
import { ChatView, pickedModel, retry, runCommand, runViewTests, ViewTest } from './chatView';
import { startCommand } from './continueView';
import { FakeAgent } from './fakeAgent';
import { signInWithKey } from './notifications';

const UI_MS = 20_000;
const ANSWER_MS = 60_000;
const VIEW = '.part.auxiliarybar';
export const CODEX_AGENT = { id: 'codex-fake', name: 'Codex (fake API)' };
/** Codex in a workspace-write sandbox: it then offers its approval presets (its mode). */
export const CODEX_PRESETS_AGENT = { id: 'codex-presets', name: 'Codex (presets)' };
export const GEMINI_AGENT = { id: 'gemini-fake', name: 'Gemini CLI (fake API)' };
/**
 * Gemini CLI as the README's hand-made entry is: its command only, no key and none of the facts it
 * needs at start in its `env` (the backend recognises what it runs); its key typed in the Sign in box.
 */
export const GEMINI_BY_HAND = { id: 'gemini-by-hand', name: 'Gemini CLI (by hand)' };
export const GEMINI_KEY = 'GEMINI_API_KEY';

export function byHand(entry: FakeAgent['entry']): FakeAgent['entry'] {
  const { [GEMINI_KEY]: _key, GEMINI_CLI_TRUST_WORKSPACE: _trust, ...env } = entry.env;
  return { ...entry, env };
}
/** Copilot's `chat.agent.maxRequests` in the agents' window (runner.ts), and a turn that goes past it. */
export const MAX_REQUESTS = 5;
const LONG_TURN_EDITS = MAX_REQUESTS + 3;
/** Claude Code under another name: a definition no chat has started yet, so nothing is known of what its prompts take. */
export const FRESH_CLAUDE = { id: 'claude-fresh', name: 'Claude Code (not yet started)' };
/** A 2x2 PNG (red, green, blue, white), as a user pastes it. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR4nGP4z8DAAMIM/4EAAB/uBfsL2WiLAAAAAElFTkSuQmCC', 'base64');
/** A long refactor: this many routed edits in one turn, through as many of Copilot's Continues as it takes. */
const SIXTY = 60;
/** Claude Code with nothing to sign in with: its fake API's entry without the key, an empty home. */
export const SIGNIN_AGENT = { id: 'claude-no-sign-in', name: 'Claude Code (no sign-in)' };

export function withoutCredentials(entry: FakeAgent['entry'], home: string): FakeAgent['entry'] {
  fs.mkdirSync(home, { recursive: true });
  return { ...entry, env: { ...entry.env, ANTHROPIC_API_KEY: '', HOME: home, CLAUDE_CONFIG_DIR: path.join(home, '.claude') } };
}

/** The workspace's files the tests read and edit, written before the window opens. */
const FILES: Record<string, string> = {
  'broken.json': '{\n  "name": "symposium"\n  "broken": true\n}\n',
  'notes.txt': 'alpha\nbeta\ngamma\n',
  'undo.txt': 'one\ntwo\nthree\n',
  'codex.txt': 'red\ngreen\n',
  'gemini.txt': 'north\nsouth\neast\nwest\n',
  'gemini-undo.txt': 'spring\nsummer\nautumn\n',
  'items.txt': Array.from({ length: LONG_TURN_EDITS }, (_, i) => `item ${i + 1}: todo`).join('\n') + '\n',
  'tasks.txt': Array.from({ length: LONG_TURN_EDITS }, (_, i) => `task ${i + 1}: todo`).join('\n') + '\n',
  'sixty.txt': Array.from({ length: SIXTY }, (_, i) => `line ${i + 1}: old`).join('\n') + '\n',
  'lint-a.json': '{\n  "a": 1\n  "b": 2\n}\n',
  'lint-b.json': '{\n  "c": 3,\n}\n',
};

/** A command of the user's own for Claude Code (`~/.claude/commands/greet.md`), which it announces:
 * written before the window starts it. */
export function writeClaudeCommand(claude: FakeAgent): void {
  const commands = path.join(claude.entry.env.CLAUDE_CONFIG_DIR ?? path.join(claude.entry.env.HOME, '.claude'), 'commands');
  fs.mkdirSync(commands, { recursive: true });
  fs.writeFileSync(path.join(commands, 'greet.md'), '---\ndescription: Greets someone\n---\nSay a warm greeting to $ARGUMENTS.\n');
}

export function prepareWorkspace(workspace: string): void {
  for (const [name, text] of Object.entries(FILES)) {
    fs.writeFileSync(path.join(workspace, name), text);
  }
}

export interface AgentViewOptions {
  /** The agent the Continue test left picked (Claude Code against its fake API), and its name there. */
  claude: FakeAgent;
  claudeName: string;
  codex: FakeAgent;
  /** Codex offering its approval presets (CODEX_PRESETS_AGENT). */
  codexPresets: FakeAgent;
  /** Gemini CLI against its fake API; undefined when it could not be installed (its tests then fail saying so). */
  gemini?: FakeAgent;
  workspace: string;
  out: string;
  /** Where the pictures for the docs go (`--screenshots`); else `out`. */
  screenshots?: string;
  /** The user settings file the window reads (no key may ever be written there). */
  settingsFile?: string;
  print(line: string): void;
}

export async function runAgentViewTests(page: Page, options: AgentViewOptions): Promise<{ passed: number; failed: number }> {
  const chat = new ChatView(page);
  const { claude, codex, workspace } = options;
  const geminiAgent = (): FakeAgent => {
    assert.ok(options.gemini, 'Gemini CLI is not installed (make agents)');
    return options.gemini;
  };
  /** Gemini CLI's edit: its own card first (it asks before each edit), then Copilot's edit tool. */
  const geminiEdits = async (name: string, ask: string, from: string, to: string): Promise<WorkingSet> => {
    const gemini = geminiAgent();
    await chat.newChat('Agent');
    gemini.script(
      { answers: ask, calls: [{ name: 'replace', input: { file_path: file(name), old_string: from, new_string: to, instruction: ask } }] },
      { answers: ask, text: ['Edited.'] },
    );
    const card = await chat.sendAndConfirm(ask);
    await card.allowOnce();
    assert.match((await chat.answer()).text, /Edited\./);
    const workingSet = new WorkingSet(page, view);
    await workingSet.shows(name);
    const asked = await gemini.request((r) => lastUser(ask)(r) && r.toolResults.length > 0);
    assert.match(asked.toolResults.join('\n'), /Successfully modified/i, `Gemini CLI heard its write succeeded: ${asked.toolResults}`);
    return workingSet;
  };
  const file = (name: string) => path.join(workspace, name);
  const view = page.locator(VIEW);
  const lastUser = (text: string) => (r: { userTexts: string[] }) => r.userTexts[r.userTexts.length - 1] === text;

  const tests: ViewTest[] = [
    ['Claude Code answers, and a follow-up goes on in the same agent session', async () => {
      await chat.pick(options.claudeName);
      await chat.newChat('Agent');
      claude.script({ answers: 'Say hello', text: ['Hello ', 'from Claude.'] }, { answers: 'And once more', text: ['Once ', 'more.'] });
      const first = await chat.send('Say hello');
      options.print(`    time to the first answer text (Claude Code, Agent mode): ${first.firstTextMs} ms`);
      assert.match(first.text, /Hello from Claude\./);
      const second = await chat.send('And once more');
      assert.match(second.text, /Once more\./);
      const asked = await claude.request(lastUser('And once more'));
      // The agent's own session kept the conversation: the model sees the first exchange.
      assert.deepEqual(asked.userTexts.slice(-2), ['Say hello', 'And once more']);
    }],
    ['Claude Code: /compact is Claude Code\'s own compaction, and the next message goes on in its compacted session', async () => {
      // docs/how-it-works.md, "Compaction": Copilot's /compact asks for a summary; Claude Code compacts its own
      // session (its model asked to summarise it) and the next message reaches that same session, unprimed.
      await chat.pick(options.claudeName);
      await chat.newChat('Agent');
      claude.script(
        { answers: 'Tell me a story', text: ['Once upon a time.'] },
        { text: ['<summary>\nThe user asked for a story; it began once upon a time.\n</summary>'] },
        { answers: 'And then?', text: ['They lived happily.'] },
      );
      assert.match((await chat.send('Tell me a story')).text, /Once upon a time\./);
      assert.match((await chat.sendCommand('/compact')).text, /Compacted conversation/);
      assert.match((await chat.send('And then?')).text, /They lived happily\./);
      const asked = await claude.request(lastUser('And then?'));
      const seen = asked.userTexts.join('\n');
      // Claude Code's own compacted session: its summary in place of the turns, in its own words.
      assert.match(seen, /continued from a previous conversation/i, `Claude Code's compacted session: ${JSON.stringify(asked.userTexts)}`);
      assert.match(seen, /it began once upon a time/);
      assert.doesNotMatch(seen, /conversation-summary|Earlier in this conversation/, 'no session primed from the summary');
      // And in the backend's transcript: the turn, the compaction and the turn after it went to one ACP session.
      const sessions = ['Tell me a story', '/compact', 'And then?'].map((text) => promptedSession(path.join(options.out, 'trace'), text));
      assert.ok(sessions[0] && sessions.every((s) => s === sessions[0]), `one ACP session: ${JSON.stringify(sessions)}`);
    }],
    ['Claude Code\'s commands: Symposium: Agent Commands lists them and puts one in the chat input, and it reaches Claude Code as its command', async () => {
      // docs/usage.md, "The agent's commands". `greet` is the user's own command (~/.claude/commands), written
      // before this window started Claude Code (`writeClaudeCommand`).
      await chat.pick(options.claudeName);
      await chat.newChat('Agent');
      const rows = page.locator('.quick-input-widget .monaco-list-row');
      await startCommand(page, 'Symposium: Agent Commands...');
      await rows.filter({ hasText: options.claudeName }).first().click({ timeout: UI_MS }); // whose commands
      const filter = page.locator('.quick-input-widget input');
      await filter.fill('compact');
      await rows.filter({ hasText: '//compact' }).first().waitFor({ timeout: UI_MS }); // Copilot's name: typed //compact
      await filter.fill('greet');
      await rows.filter({ hasText: '/greet' }).filter({ hasText: 'Greets someone' }).first().click({ timeout: UI_MS });
      await view.locator('.interactive-input-editor .view-lines', { hasText: '/greet' }).first().waitFor({ timeout: UI_MS });
      assert.match(await chat.input(), /^\/greet\s*$/);
      claude.script({ text: ['Hello, world!'] });
      const answer = await chat.sendAfterInput('world', '/greet world');
      assert.match(answer.text, /Hello, world!/);
      await claude.request((r) => r.userTexts.some((t) => t.includes('Say a warm greeting to world.')));
    }],
    ['Claude Code: a Task subagent\'s calls show as its own group under the Task, and its words are not the answer', async () => {
      // docs/usage.md, "Subagents": the subagent's Glob quoted under the Task's heading, the Task's end with its report.
      await chat.pick(options.claudeName);
      await chat.newChat('Agent');
      const task = { description: 'List the files', prompt: 'List the files here.', subagent_type: 'general-purpose', run_in_background: false };
      claude.script(
        { answers: 'Explore with a subagent', calls: [{ name: 'Task', input: task }] },
        { text: ['Looking.'], calls: [{ name: 'Glob', input: { pattern: '*.txt' } }] },
        { text: ['There are text files.'] },
        { text: ['Done: text files.'] },
      );
      const answer = await chat.send('Explore with a subagent');
      assert.match(answer.text, /List the files · subagent\n/);
      assert.match(answer.text, /List the files · subagent, 1 call/);
      assert.match(answer.text, /Done: text files\./);
      await chat.lastResponse().locator('blockquote', { hasText: /Find/ }).first().waitFor({ timeout: UI_MS }); // the subagent's call, quoted under the Task
      assert.ok(answer.text.indexOf('List the files · subagent\n') < answer.text.indexOf('List the files · subagent, 1 call'));
    }],
    ['Claude Code: Stop ends the answer, and the next message is answered in the same session', async () => {
      await chat.newChat('Agent'); // a short chat: the view drops the rows of a long one from the page
      claude.script({ answers: 'Count slowly', text: ['one ', 'two ', 'three'], stallAfter: 1 }, { answers: 'After the stop', text: ['Still ', 'here.'] });
      const stopped = await chat.sendAndStop('Count slowly', /one/);
      assert.doesNotMatch(stopped, /three/);
      const after = await chat.send('After the stop');
      assert.match(after.text, /Still here\./);
      const asked = await claude.request(lastUser('After the stop'));
      assert.ok(asked.userTexts.includes('Count slowly'), `the stopped turn is in the session: ${JSON.stringify(asked.userTexts)}`);
    }],
    ['Claude Code: after an edit of the second of three messages, its model still has turn 1\'s own tool call and result, and nothing of turns 2 and 3', async () => {
      // docs/DESIGN.md, "Forks": the edit goes on in Claude Code's own session forked after turn 1.
      await chat.pick(options.claudeName);
      await chat.newChat('Agent');
      claude.script(
        { answers: 'What files are here?', calls: [{ name: 'Bash', input: { command: `ls ${workspace}`, description: 'List the files' } }] },
        { answers: 'What files are here?', text: ['I listed them.'] },
        { answers: 'Old second question', text: ['Old second answer.'] },
        { answers: 'Old third question', text: ['Old third answer.'] },
        { answers: 'Edited second question', text: ['Edited second answer.'] },
      );
      assert.match(await chat.sendAllowingAny('What files are here?'), /I listed them\./);
      assert.match((await chat.send('Old second question')).text, /Old second answer\./);
      assert.match((await chat.send('Old third question')).text, /Old third answer\./);
      const edited = await chat.edit('Old second question', 'Edited second question');
      assert.match(edited.text, /Edited second answer\./);
      const asked = await claude.request(lastUser('Edited second question'));
      const seen = JSON.stringify(asked);
      assert.deepEqual(asked.toolCalls, ['Bash'], `turn 1's own tool call, natively: ${seen}`);
      assert.ok(asked.toolResults.some((r) => r.includes('notes.txt')), `and its result: ${seen}`);
      assert.ok(asked.assistantTexts.some((t) => t.includes('I listed them.')), seen);
      assert.doesNotMatch(seen, /Old second|Old third|Earlier in this conversation/, 'nothing of the old turns 2 and 3, and no transcript');
    }],
    ['Claude Code: its mode control in the chat input lists its modes, and Plan chosen there reaches it before the next prompt, at no extra model request', async () => {
      // docs/usage.md, "The agent's own choices": once Claude Code has started, its options are its model's controls.
      await chat.pick(options.claudeName);
      await chat.newChat('Agent');
      claude.script({ answers: 'Start the options test', text: ['Started.'] });
      assert.match((await chat.send('Start the options test')).text, /Started\./);
      // What Copilot offers a Symposium model to edit with (it picks them by the model's name; docs/DESIGN.md, "Edits VS Code can review").
      const offered = toolsOffered(path.join(options.out, 'trace'), 'Start the options test').filter((name) => EDIT_TOOLS.test(name));
      options.print(`    edit tools Copilot offers ${options.claudeName}: ${offered.join(', ')}`);
      // Measured with Copilot Chat 0.67: no multi_replace_string_in_file; the routed edits use whichever it offers.
      assert.deepEqual([...offered].sort(), ['create_file', 'edit_notebook_file', 'insert_edit_into_file', 'replace_string_in_file']);
      const control = new ModelControl(page);
      const modes = await control.open();
      for (const mode of ['Manual', 'Accept edits', 'Plan', 'Bypass permissions (bypasses permissions)']) {
        assert.ok(modes.some((row) => row.startsWith(mode)), `the control lists ${mode}: ${JSON.stringify(modes)}`);
      }
      assert.ok(modes.some((row) => /^Manual.*default/i.test(row)), `the agent's default is marked: ${JSON.stringify(modes)}`);
      await control.choose('Plan');
      const notice = view.locator('a[aria-label="Dismiss notification"]').filter({ visible: true }); // Copilot's, about utility models
      if (await notice.count()) {
        await notice.first().click();
      }
      await control.open();
      await control.picture(path.join(options.screenshots ?? options.out, 'model-options.png'));
      await page.keyboard.press('Escape');
      const before = claude.requests.length;
      claude.script({ answers: 'Plan the refactor', text: ['Here is my plan.'] });
      assert.match((await chat.send('Plan the refactor')).text, /Here is my plan\./);
      const asked = await claude.request(lastUser('Plan the refactor'));
      assert.equal(asked.options.planMode, true, `Claude Code told its model it is planning: ${JSON.stringify(asked.options)}`);
      assert.equal(claude.requests.length, before + 1, 'the switch cost no model request');
    }],
    ['Claude Code: once it leaves plan mode by itself (its plan approved), the next request does not set it back', async () => {
      await chat.newChat('Agent'); // a short chat: the view drops the rows of a long one from the page; Plan is still chosen
      claude.script(
        { answers: 'Carry out the plan', calls: [{ name: 'ExitPlanMode', input: { plan: '1. Rename the function.' } }] },
        { answers: 'Carry out the plan', text: ['Plan approved.'] },
        { answers: 'Now implement it', text: ['Implementing.'] },
      );
      const card = await chat.sendAndConfirm('Carry out the plan');
      await card.allowOnce(); // "Yes, manually approve edits": Claude Code leaves plan mode
      assert.match((await chat.answer()).text, /Plan approved\./);
      const planning = await claude.request(lastUser('Carry out the plan'));
      assert.equal(planning.options.planMode, true, 'the new chat began in the mode chosen');
      assert.match((await chat.send('Now implement it')).text, /Implementing\./);
      const asked = await claude.request(lastUser('Now implement it'));
      assert.equal(asked.options.planMode, false, `the agent's own change of mode stood: ${JSON.stringify(asked.options)}`);
      await new ModelControl(page).choose('Manual'); // the next tests start from the agent's default
    }],
    ['Claude Code: an effort chosen in Manage Language Models reaches it, and a reload of the window keeps it', async () => {
      await manageModelOption(page, `${options.claudeName} (ACP)`, 'Effort', 'High');
      await runCommand(page, 'Developer: Reload Window');
      // The window comes back with the chat it had, its requests shown once restored.
      await page.locator(`${VIEW} .interactive-request`).first().waitFor({ timeout: UI_MS * 3 });
      await chat.pick(options.claudeName);
      await chat.newChat('Agent');
      claude.script({ answers: 'Think hard', text: ['Thought hard.'] });
      assert.match((await chat.send('Think hard')).text, /Thought hard\./);
      const asked = await claude.request(lastUser('Think hard'));
      assert.equal(asked.options.effort, 'high', `Claude Code asked its model for high effort: ${JSON.stringify(asked.options)}`);
      await manageModelOption(page, `${options.claudeName} (ACP)`, 'Effort', 'Default');
    }],
    ['Claude Code: a permission card, Allow runs the command', async () => {
      await chat.newChat('Agent');
      const target = file('allowed.txt');
      claude.script(
        { answers: 'Write allowed.txt', calls: [{ name: 'Bash', input: { command: `echo allowed > ${target}`, description: 'Write allowed.txt' } }] },
        { answers: 'Write allowed.txt', text: ['Written.'] },
      );
      const card = await chat.sendAndConfirm('Write allowed.txt');
      assert.equal(fs.existsSync(target), false, 'nothing runs before the user allows it');
      await card.allowOnce();
      assert.match((await chat.answer()).text, /Written\./);
      assert.equal(fs.readFileSync(target, 'utf8'), 'allowed\n');
    }],
    ['Claude Code: a permission card, Skip runs nothing and Claude goes on', async () => {
      await chat.newChat('Agent');
      const target = file('skipped.txt');
      claude.script(
        { answers: 'Write skipped.txt', calls: [{ name: 'Bash', input: { command: `echo skipped > ${target}`, description: 'Write skipped.txt' } }] },
        { answers: 'Write skipped.txt', text: ['I left it alone.'] },
      );
      const card = await chat.sendAndConfirm('Write skipped.txt');
      await card.skip();
      assert.match((await chat.answer()).text, /I left it alone\./);
      assert.equal(fs.existsSync(target), false);
    }],
    ['Claude Code: a card for a command of several lines shows every line', async () => {
      await chat.newChat('Agent');
      const [first, second] = [file('first.txt'), file('second.txt')];
      const command = `echo one > ${first}\necho two > ${second}`;
      claude.script(
        { answers: 'Write two files', calls: [{ name: 'Bash', input: { command, description: 'Write two files' } }] },
        { answers: 'Write two files', text: ['Left alone.'] },
      );
      const card = await chat.sendAndConfirm('Write two files');
      const shown = (await card.text()).replace(/\u00a0/g, ' '); // code blocks render spaces as no-break spaces
      assert.match(shown, new RegExp(`^echo one > ${first}$`, 'm'), `each line of the command on its own: ${shown}`);
      assert.match(shown, new RegExp(`^echo two > ${second}$`, 'm'), shown);
      const lines = shown.split('\n').filter((line) => line.trim() === `echo one > ${first}`);
      assert.equal(lines.length, 1, `the command once, not again as the title: ${shown}`);
      await card.skip();
      assert.match((await chat.answer()).text, /Left alone\./);
      assert.equal(fs.existsSync(first) || fs.existsSync(second), false);
    }],
    ['Claude Code asks a question in Copilot\'s question UI, and the answer reaches its model', async () => {
      await chat.newChat('Agent');
      const question = { question: 'Which database should I use?', header: 'Database', multiSelect: false, options: [{ label: 'Postgres', description: 'relational' }, { label: 'Redis', description: 'in memory' }] };
      claude.script(
        { answers: 'Set up a database', calls: [{ name: 'AskUserQuestion', input: { questions: [question] } }] },
        { answers: 'Set up a database', text: ['Postgres it is.'] },
      );
      const carousel = await chat.sendAndQuestion('Set up a database');
      await carousel.locator('.chat-question-list-item', { hasText: 'Postgres' }).first().click({ timeout: UI_MS });
      const submit = carousel.locator('.chat-question-submit-button').filter({ visible: true });
      while ((await submit.count()) === 0) {
        await carousel.locator('.chat-question-nav-next').first().click({ timeout: UI_MS }); // past the optional "Other"
      }
      await submit.first().click({ timeout: UI_MS });
      assert.match((await chat.answer()).text, /Postgres it is\./);
      const asked = await claude.request((r) => lastUser('Set up a database')(r) && r.toolResults.length > 0);
      assert.match(asked.toolResults.join('\n'), /"Which database should I use\?"="Postgres"/, `the model has the answer: ${asked.toolResults}`);
    }],
    ['Claude Code calls VS Code\'s diagnostics (get_errors): their real result reaches the model', async () => {
      await chat.newChat('Agent');
      await openFile(page, 'broken.json');
      await page.locator('.monaco-editor .squiggly-error').first().waitFor({ timeout: ANSWER_MS }); // the JSON service has read it
      claude.script(
        { answers: 'Check broken.json', calls: [{ name: 'mcp__vscode_tools__get_errors', input: { filePaths: [file('broken.json')] } }] },
        { answers: 'Check broken.json', text: ['It lacks a comma.'] },
      );
      const answer = await chat.send('Check broken.json');
      assert.match(answer.text, /It lacks a comma\./);
      const after = await claude.request((r) => lastUser('Check broken.json')(r) && r.toolResults.length > 0);
      const [result] = after.toolResults;
      assert.match(result, /broken\.json/, `the tool result names the file: ${result}`);
      assert.match(result, /comma/i, `the tool result is VS Code's JSON diagnostic: ${result}`);
    }],
    ['Claude Code\'s edit appears under "files changed", and Keep keeps it', async () => {
      await chat.newChat('Agent');
      claude.script(
        { answers: 'Edit notes.txt', calls: [{ name: 'mcp__vscode_tools__replace_string_in_file', input: { filePath: file('notes.txt'), oldString: 'alpha\nbeta\ngamma', newString: 'alpha\nBETA\ngamma' } }] },
        { answers: 'Edit notes.txt', text: ['Done.'] },
      );
      assert.match(await chat.sendUntil('Edit notes.txt', /Done\./), /Done\./); // the final text, whatever Copilot folds before it
      const workingSet = new WorkingSet(page, view);
      await workingSet.shows('notes.txt');
      await workingSet.keep();
      await untilFile(file('notes.txt'), 'alpha\nBETA\ngamma\n');
    }],
    ['Claude Code\'s edit, and Undo restores the file on disk', async () => {
      await chat.newChat('Agent');
      claude.script(
        { answers: 'Edit undo.txt', calls: [{ name: 'mcp__vscode_tools__replace_string_in_file', input: { filePath: file('undo.txt'), oldString: 'one\ntwo\nthree', newString: 'one\nTWO\nthree' } }] },
        { answers: 'Edit undo.txt', text: ['Done.'] },
      );
      // What the user sees: the final text (Copilot may fold the round before it, text and all, into
      // "Completed N steps"), then the file changed, then Undo's result on disk.
      assert.match(await chat.sendUntil('Edit undo.txt', /Done\./), /Done\./);
      const workingSet = new WorkingSet(page, view);
      await workingSet.shows('undo.txt');
      await workingSet.undo();
      await untilFile(file('undo.txt'), FILES['undo.txt']);
      await openFile(page, 'undo.txt'); // and what the editor holds is the file as it was
      await page.locator('.editor-group-container .view-lines', { hasText: 'two' }).first().waitFor({ timeout: UI_MS });
      assert.doesNotMatch(await page.locator('.editor-group-container .view-lines').first().innerText(), /TWO/);
    }],
    ['Claude Code: a turn past Copilot\'s request limit goes on with Continue, and the next message reaches the same session unprimed', async () => {
      await chat.newChat('Agent');
      const ask = 'Mark every item done';
      const edits = Array.from({ length: LONG_TURN_EDITS }, (_, i) => ({
        answers: ask,
        calls: [{ name: 'mcp__vscode_tools__replace_string_in_file', input: { filePath: file('items.txt'), oldString: `item ${i + 1}: todo`, newString: `item ${i + 1}: done` } }],
      }));
      claude.script(...edits, { answers: ask, text: ['All items done.'] }, { answers: 'How many were there?', text: ['There were ', `${LONG_TURN_EDITS}.`] });
      await chat.sendUntilContinue(ask);
      await view.getByRole('button', { name: 'Continue' }).filter({ visible: true }).first().click({ timeout: UI_MS });
      assert.match((await chat.answer()).text, /All items done\./);
      await untilFile(file('items.txt'), FILES['items.txt'].replace(/todo/g, 'done'));
      const next = await chat.send('How many were there?');
      assert.match(next.text, /There were \d+\./);
      const asked = await claude.request(lastUser('How many were there?'));
      assert.ok(!asked.userTexts.some((t) => t.includes('Earlier in this conversation')), `not primed: ${JSON.stringify(asked.userTexts).slice(0, 500)}`);
      assert.equal(asked.toolResults.length, LONG_TURN_EDITS, 'the model still has every edit of the long turn, natively');
    }],
    ['Claude Code: a new message at Copilot\'s request limit; the agent hears the pending edit\'s real result and goes on in its session', async () => {
      await chat.newChat('Agent');
      const ask = 'Mark every task done';
      const edits = Array.from({ length: LONG_TURN_EDITS }, (_, i) => ({
        answers: ask,
        calls: [{ name: 'mcp__vscode_tools__replace_string_in_file', input: { filePath: file('tasks.txt'), oldString: `task ${i + 1}: todo`, newString: `task ${i + 1}: done` } }],
      }));
      claude.script(...edits, { answers: 'Stop there', text: ['Stopped.'] }, { answers: 'How many are done?', text: ['Some.'] });
      await chat.sendUntilContinue(ask);
      assert.match((await chat.send('Stop there')).text, /Stopped\./);
      const stopped = await claude.request(lastUser('Stop there'));
      assert.ok(!stopped.userTexts.some((t) => t.includes('Earlier in this conversation')), 'not primed');
      const pending = stopped.toolResults[stopped.toolResults.length - 1] ?? '';
      assert.doesNotMatch(pending, /did not run the tool/, `the pending call's real outcome: ${pending}`);
      const next = await chat.send('How many are done?');
      assert.match(next.text, /Some\./);
      const asked = await claude.request(lastUser('How many are done?'));
      assert.ok(!asked.userTexts.some((t) => t.includes('Earlier in this conversation')), 'still the same session');
      // The turn's "Continue to iterate?" is still there; clicked late, it starts nothing.
      const stale = view.getByRole('button', { name: 'Continue' }).filter({ visible: true });
      if ((await stale.count()) > 0) {
        const before = claude.requests.length;
        const onDisk = fs.readFileSync(file('tasks.txt'), 'utf8');
        await stale.first().dispatchEvent('click'); // scrolled under the chat's sticky title
        const said = view.locator('.interactive-response', { hasText: /continues a turn that has ended/ }).first();
        await said.waitFor({ timeout: ANSWER_MS });
        options.print(`    a late Continue: ${(await said.innerText()).trim().split('\n').pop()}`);
        assert.equal(claude.requests.length, before, 'no model request: nothing started the task over');
        assert.equal(fs.readFileSync(file('tasks.txt'), 'utf8'), onDisk);
      } else {
        options.print('    (Copilot left no stale Continue to click)');
      }
    }],
    // Long turns and rounds of Copilot's tool loop (docs/DESIGN.md, "Parallel tool calls").
    ['Claude Code: two calls of one model response cost one round of Copilot\'s tool loop', async () => {
      await chat.newChat('Agent');
      for (const name of ['lint-a.json', 'lint-b.json']) {
        await openFile(page, name); // the JSON service reads them: their diagnostics are there to get
      }
      await page.locator('.monaco-editor .squiggly-error').first().waitFor({ timeout: ANSWER_MS });
      const ask = 'Check both lint files';
      claude.script(
        { answers: ask, calls: ['lint-a.json', 'lint-b.json'].map((name) => ({ name: 'mcp__vscode_tools__get_errors', input: { filePaths: [file(name)] } })) },
        { answers: ask, text: ['Both checked.'] },
      );
      const before = claude.requests.length;
      assert.match((await chat.send(ask)).text, /Both checked\./);
      // The model's first request after its two calls carries both results: one round. Two rounds would
      // show as a request with only the first call's result. (Claude Code's own side requests may copy
      // the conversation afterwards: only the first one counts.)
      const results = claude.requests.slice(before).find((r) => r.toolResults.some((t) => /lint-[ab]\.json/.test(t)));
      assert.ok(results !== undefined, 'the calls\' results reached the model');
      assert.deepEqual(['lint-a.json', 'lint-b.json'].map((name) => results.toolResults.some((t) => t.includes(name))), [true, true], `both results in one request: ${JSON.stringify(results.toolResults).slice(0, 400)}`);
    }],
    [`Claude Code: a turn of ${SIXTY} routed edits goes through Copilot's Continue as often as it takes, and the next message reaches the same session unprimed`, async () => {
      await chat.newChat('Agent');
      const ask = `Update all ${SIXTY} lines`;
      const edits = Array.from({ length: SIXTY }, (_, i) => ({
        answers: ask,
        calls: [{ name: 'mcp__vscode_tools__replace_string_in_file', input: { filePath: file('sixty.txt'), oldString: `line ${i + 1}: old`, newString: `line ${i + 1}: new` } }],
      }));
      claude.script(...edits, { answers: ask, text: [`All ${SIXTY} lines updated.`] }, { answers: 'What did you change?', text: ['Every line.'] });
      const started = Date.now();
      const continues = await chat.sendThroughContinues(ask, new RegExp(`All ${SIXTY} lines updated\\.`), () => claude.requests.length);
      const seconds = (Date.now() - started) / 1000;
      options.print(`    ${SIXTY} routed edits in one turn: ${seconds.toFixed(1)} s, ${continues} Continue(s) at chat.agent.maxRequests=${MAX_REQUESTS}`);
      assert.ok(continues >= 1, 'Copilot\'s request limit stopped the turn along the way');
      await untilFile(file('sixty.txt'), FILES['sixty.txt'].replace(/old/g, 'new'));
      assert.match((await chat.send('What did you change?')).text, /Every line\./);
      const asked = await claude.request(lastUser('What did you change?'));
      assert.ok(!asked.userTexts.some((t) => t.includes('Earlier in this conversation')), `not primed: ${JSON.stringify(asked.userTexts).slice(0, 500)}`);
      assert.equal(asked.toolResults.length, SIXTY, 'the model still has every edit of the turn, natively');
    }],
    ['Claude Code\'s usage shows in the chat\'s context window indicator', async () => {
      await chat.newChat('Agent');
      claude.script({ answers: 'Use some context', text: ['Plenty.'], usage: [120_000, 50] });
      assert.match((await chat.send('Use some context')).text, /Plenty\./);
      const ring = view.locator('.chat-context-usage-widget').filter({ visible: true }).first();
      await ring.waitFor({ timeout: UI_MS });
      const label = (await ring.getAttribute('aria-label')) ?? '';
      assert.match(label, /Context window usage: [1-9]\d*%/, `the ring shows the agent's use: ${label}`);
    }],
    // Images, and a restart of the backend (docs/DESIGN.md, "Images" and "Identity and markers").
    ['A pasted image reaches Claude Code\'s model, even before the agent has ever started', async () => {
      await chat.pick(FRESH_CLAUDE.name); // never started: what its prompts take is not known yet
      await chat.newChat('Agent');
      const attached = await pasteImage(page, PNG);
      const label = (await attached.getAttribute('aria-label')) ?? '';
      options.print(`    the pasted image in the input, before the agent ever started: "${label.split('\n')[0]}"`);
      assert.doesNotMatch(label, /not sent|omitted/i, 'Copilot does not strike the image through');
      claude.script({ text: ['Four pixels.'] }); // Claude Code's last text names the file it saved the image in
      assert.match((await chat.send('What is in this image?')).text, /Four pixels\./);
      const asked = await claude.request((r) => r.userTexts.some((t) => t.trim() === 'What is in this image?'));
      assert.deepEqual(asked.images, [{ mediaType: 'image/png', data: PNG.toString('base64') }], 'the model has the image, byte for byte');
    }],
    ['After a restart of the backend, a chat that lost its last turn goes on without it: the model never sees that turn', async () => {
      await chat.pick(options.claudeName);
      await chat.newChat('Agent');
      const [first, second, next] = ['Remember the word apple', 'Remember the secret number 42', 'What did I ask you to remember?'];
      claude.script({ answers: first, text: ['Apple noted.'] }, { answers: second, text: ['Forty-two noted.'] }, { answers: next, text: ['The word apple.'] });
      assert.match((await chat.send(first)).text, /Apple noted\./);
      assert.match((await chat.send(second)).text, /Forty-two noted\./);
      await runCommand(page, 'Symposium: Restart Backend');
      await restoreCheckpoint(page, second); // the chat as it was before turn 2, as a window reloaded too soon shows it
      assert.match((await chat.send(next)).text, /The word apple\./);
      assert.equal(await view.locator('.interactive-request', { hasText: second }).count(), 0, 'the chat no longer shows turn 2');
      const asked = await claude.request(lastUser(next));
      const said = [...asked.userTexts, ...asked.assistantTexts].join('\n');
      assert.doesNotMatch(said, /42|Forty-two/, `turn 2 never reaches the model: ${said.slice(0, 800)}`);
      assert.match(said, /Remember the word apple/, 'turn 1 does');
      assert.match(said, /Apple noted\./);
    }],
    ['After a restart of the backend, a chat that shows every turn goes on in Claude Code\'s own session, unprimed', async () => {
      await chat.newChat('Agent');
      const [first, second, next] = ['Remember the word pear', 'Remember the secret number 7', 'What did I ask you to remember, twice?'];
      claude.script({ answers: first, text: ['Pear noted.'] }, { answers: second, text: ['Seven noted.'] }, { answers: next, text: ['Pear and 7.'] });
      assert.match((await chat.send(first)).text, /Pear noted\./);
      assert.match((await chat.send(second)).text, /Seven noted\./);
      await runCommand(page, 'Symposium: Restart Backend');
      assert.match((await chat.send(next)).text, /Pear and 7\./);
      const asked = await claude.request(lastUser(next));
      assert.ok(!asked.userTexts.some((t) => t.includes('Earlier in this conversation')), `not primed: ${JSON.stringify(asked.userTexts).slice(0, 500)}`);
      const typed = asked.userTexts.filter((t) => [first, second, next].includes(t)); // beside them, the editor's context
      assert.deepEqual(typed, [first, second, next], 'both turns, natively, in the agent\'s own session');
      assert.deepEqual(asked.assistantTexts.slice(-2), ['Pear noted.', 'Seven noted.']);
    }],
    ['Codex answers in the same window', async () => {
      await chat.pick(CODEX_AGENT.name);
      await chat.newChat('Agent');
      codex.script({ answers: 'Hello Codex', text: ['Hello ', 'from Codex.'] });
      const answer = await chat.send('Hello Codex');
      options.print(`    time to the first answer text (Codex, Agent mode): ${answer.firstTextMs} ms`);
      assert.match(answer.text, /Hello from Codex\./);
    }],
    ['Codex: its mode is its control in the chat input, and Read-only chosen there reaches its model before the next prompt', async () => {
      await chat.pick(CODEX_AGENT.name); // it answered just before: its options are known
      await chat.newChat('Agent');
      const control = new ModelControl(page);
      const modes = await control.open();
      for (const mode of ['Read-only', 'Agent']) {
        assert.ok(modes.some((row) => row.startsWith(mode)), `the control lists ${mode}: ${JSON.stringify(modes)}`);
      }
      await control.choose('Read-only');
      codex.script({ answers: 'Look around', text: ['Looked.'] });
      assert.match((await chat.send('Look around')).text, /Looked\./);
      const asked = await codex.request(lastUser('Look around'));
      assert.equal(asked.options.sandbox, 'read-only', `Codex's model was told its read-only sandbox: ${JSON.stringify(asked.options)}`);
      await control.choose('Agent'); // its default again, for the tests after
    }],
    ['Codex: Plan chosen in Manage Language Models reaches it; once its plan is approved it leaves Plan by itself, and the next request does not set it back', async () => {
      const entry = `${CODEX_AGENT.name} (ACP)`;
      await chat.pick(CODEX_AGENT.name); // before any of its model entries, whose names begin with it, is picked
      await chat.newChat('Agent');
      await manageModelOption(page, entry, 'Collaboration mode', 'Plan');
      codex.script(
        { answers: 'Plan the rename', text: ['<proposed_plan>\n1. Rename the function.\n</proposed_plan>'] },
        { answers: 'Implement the approved plan.', text: ['Renamed.'] }, // what Codex prompts itself with once the plan is approved
        { answers: 'Anything else?', text: ['Nothing else.'] },
      );
      const card = await chat.sendAndConfirm('Plan the rename'); // Codex: "Implement this plan?"
      const planning = await codex.request(lastUser('Plan the rename'));
      assert.equal(planning.options.planMode, true, `Codex told its model it is planning: ${JSON.stringify(planning.options)}`);
      await card.allowOnce();
      assert.match((await chat.answer()).text, /Renamed\./);
      assert.match((await chat.send('Anything else?')).text, /Nothing else\./);
      const asked = await codex.request(lastUser('Anything else?'));
      assert.equal(asked.options.planMode, false, `Codex's own change of mode stood: ${JSON.stringify(asked.options)}`);
      await manageModelOption(page, entry, 'Collaboration mode', 'Default'); // the tests after start from its default
    }],
    ['Codex: an effort chosen in Manage Language Models reaches it, for a model of its own list', async () => {
      // Codex offers efforts for the models of its own list; its fake API's configured model is not one.
      const entry = `${CODEX_AGENT.name} · GPT-5.5`;
      await chat.pick(entry); // and kept for the tests after: they run on a model entry
      await chat.newChat('Agent');
      codex.script({ answers: 'Switch to GPT-5.5', text: ['On GPT-5.5.'] });
      assert.match((await chat.send('Switch to GPT-5.5')).text, /On GPT-5\.5\./); // its session now offers that model's efforts
      await manageModelOption(page, entry, 'Reasoning effort', 'High');
      codex.script({ answers: 'Think hard', text: ['Thought hard.'] });
      assert.match((await chat.send('Think hard')).text, /Thought hard\./);
      const asked = await codex.request(lastUser('Think hard'));
      assert.equal(asked.model, 'gpt-5.5');
      assert.equal(asked.options.effort, 'high', `Codex asked its model for high effort: ${JSON.stringify(asked.options)}`);
    }],
    ['Codex\'s plan shows in Copilot\'s todo widget, and the turn goes on', async () => {
      await chat.newChat('Agent');
      const plan = [
        { step: 'Read the code', status: 'completed' },
        { step: 'Fix the bug', status: 'in_progress' },
        { step: 'Run the tests', status: 'pending' },
      ];
      codex.script(
        { answers: 'Plan the fix', calls: [{ name: 'update_plan', input: { plan } }] },
        { answers: 'Plan the fix', text: ['Planned.'] },
      );
      const answer = await chat.send('Plan the fix');
      assert.match(answer.text, /Planned\./);
      assert.doesNotMatch(answer.text, /\*\*Plan\*\*/, 'the plan is in the widget, not also as text');
      const widget = view.locator('.chat-todo-list-widget').filter({ visible: true }).first();
      await widget.waitFor({ timeout: UI_MS });
      await widget.locator('.todo-list-expand .monaco-button, .todo-list-expand').first().click({ timeout: UI_MS }).catch(() => undefined);
      for (const { step } of plan) {
        await widget.locator('.todo-item', { hasText: step }).first().waitFor({ state: 'attached', timeout: UI_MS });
      }
      const asked = await codex.request(lastUser('Plan the fix'));
      assert.ok(!asked.toolResults.some((r) => /todo/i.test(r)), `the widget's round never reached Codex: ${JSON.stringify(asked.toolResults)}`);
    }],
    ['Codex\'s plan as the last thing of its turn: the chat ends saying where the plan stands, not "no reply"', async () => {
      await chat.newChat('Agent');
      const plan = [{ step: 'Say done', status: 'completed' }];
      codex.script(
        { answers: 'Finish the plan', text: ['All done.'], calls: [{ name: 'update_plan', input: { plan } }] },
        { answers: 'Finish the plan', text: [] },
      );
      // Copilot folds a round that ended in a tool call into its "steps"; the last round says where the plan stands.
      const answer = await chat.sendUntil('Finish the plan', /Plan: 1 of 1 done/);
      assert.doesNotMatch(answer, /Sorry|no response|without a reply/i);
    }],
    ['Codex\'s edit on disk shows as a diff in the chat', async () => {
      await chat.newChat('Agent');
      const patch = `*** Begin Patch\n*** Update File: ${file('codex.txt')}\n@@\n-red\n+blue\n green\n*** End Patch\n`;
      codex.script(
        { answers: 'Patch codex.txt', calls: [{ name: 'apply_patch', patch }] },
        { answers: 'Patch codex.txt', text: ['Patched.'] },
      );
      const answer = await chat.sendAllowingAny('Patch codex.txt');
      assert.match(answer, /Patched\./);
      assert.match(answer, /^-red$/m, `the chat shows the removed line: ${answer}`);
      assert.match(answer, /^\+blue$/m, 'and the added one');
      assert.equal(fs.readFileSync(file('codex.txt'), 'utf8'), 'blue\ngreen\n');
    }],
    ['Review Agent Edits shows Codex\'s edit in VS Code\'s diff view, and Revert Agent Edits puts the file back', async () => {
      await runCommand(page, 'Symposium: Review Agent Edits');
      await page.locator('.tab.active', { hasText: /Edits of .*Codex/ }).first().waitFor({ timeout: UI_MS });
      await page.locator('.multiDiffEntry', { hasText: 'codex.txt' }).first().waitFor({ timeout: UI_MS });
      await runCommand(page, 'Symposium: Revert Agent Edits');
      const dialog = page.locator('.monaco-dialog-box', { hasText: 'Put 1 file(s) back' });
      await dialog.getByRole('button', { name: 'Revert' }).click({ timeout: UI_MS });
      await dialog.waitFor({ state: 'detached', timeout: UI_MS });
      await untilFile(file('codex.txt'), 'red\ngreen\n');
    }],
    ['Gemini CLI answers in the same window', async () => {
      const gemini = geminiAgent();
      await chat.pick(GEMINI_AGENT.name);
      await chat.newChat('Agent');
      gemini.script({ answers: 'Hello Gemini', text: ['Hello ', 'from Gemini.'] });
      const answer = await chat.send('Hello Gemini');
      options.print(`    time to the first answer text (Gemini CLI, Agent mode): ${answer.firstTextMs} ms`);
      assert.match(answer.text, /Hello from Gemini\./);
    }],
    ['Gemini CLI: a permission card, Allow runs the command', async () => {
      const gemini = geminiAgent();
      await chat.newChat('Agent');
      const target = file('gemini-allowed.txt');
      gemini.script(
        { answers: 'Write gemini-allowed.txt', calls: [{ name: 'run_shell_command', input: { command: `echo allowed > ${target}` } }] },
        { answers: 'Write gemini-allowed.txt', text: ['Written.'] },
      );
      const card = await chat.sendAndConfirm('Write gemini-allowed.txt');
      assert.equal(fs.existsSync(target), false, 'nothing runs before the user allows it');
      await card.allowOnce();
      assert.match((await chat.answer()).text, /Written\./);
      assert.equal(fs.readFileSync(target, 'utf8'), 'allowed\n');
    }],
    ['Gemini CLI\'s edit appears under "files changed", and Keep keeps it', async () => {
      const workingSet = await geminiEdits('gemini.txt', 'Capitalise south', 'south', 'SOUTH');
      // Copilot applied the edit in its editing session and saved it: the disk has it before Keep.
      const onDisk = fs.readFileSync(file('gemini.txt'), 'utf8');
      options.print(`    on disk before Keep: ${JSON.stringify(onDisk)}`);
      await workingSet.keep();
      await untilFile(file('gemini.txt'), 'north\nSOUTH\neast\nwest\n');
    }],
    ['Gemini CLI\'s edit, and Undo restores the file on disk', async () => {
      const workingSet = await geminiEdits('gemini-undo.txt', 'Capitalise summer', 'summer', 'SUMMER');
      await workingSet.undo();
      await untilFile(file('gemini-undo.txt'), FILES['gemini-undo.txt']);
    }],
    ['Gemini CLI configured by hand: its key typed in the Sign in box is kept in the keychain, and VS Code\'s tools reach its model', async () => {
      const gemini = geminiAgent();
      // A key of its own (the fake API takes any): the other Gemini entry's is in settings.json by design.
      const key = 'AIza-typed-in-the-sign-in-box-7741';
      // Symposium: Sign In to an Agent, the agent, then its "Gemini API key": the key box.
      await signInWithKey(page, GEMINI_BY_HAND.name, 'Gemini API key', key, ANSWER_MS);
      // A chat in Agent mode: Gemini's model is offered VS Code's tools (it started its MCP servers).
      await chat.pick(GEMINI_BY_HAND.name);
      await chat.newChat('Agent');
      const ask = 'Which tools do you have, by hand?';
      gemini.script({ answers: ask, text: ['VS Code\'s tools ', 'among mine.'] });
      assert.match((await chat.send(ask)).text, /VS Code's tools among mine\./);
      const asked = await gemini.request(lastUser(ask));
      assert.ok(asked.tools?.some((name) => name.includes('get_errors')), `VS Code's get_errors among the model's tools: ${asked.tools}`);
      // The key is in the keychain only: no settings file holds it.
      if (options.settingsFile) {
        assert.ok(!fs.readFileSync(options.settingsFile, 'utf8').includes(key), 'the key is not in settings.json');
      }
    }],
    ['The walkthrough\'s last step: Open Chat with an Agent opens the Chat view with the agent picked', async () => {
      await page.keyboard.press('F1');
      const palette = page.locator('.quick-input-widget input');
      await palette.waitFor({ timeout: UI_MS });
      await palette.fill('>Symposium: Open Chat with an Agent');
      await page.locator('.quick-input-list .monaco-list-row[aria-label^="Symposium: Open Chat with an Agent"]').first().click({ timeout: UI_MS });
      await page.locator('.quick-input-widget', { hasText: 'chat with which agent?' }).waitFor({ timeout: UI_MS });
      await page.locator('.quick-input-list .monaco-list-row', { hasText: CODEX_AGENT.name }).first().click({ timeout: UI_MS });
      await pickedModel(page, CODEX_AGENT.name).waitFor({ timeout: UI_MS });
    }],
    ['Claude Code with no credentials: the chat says it needs a sign-in, and a Sign in button opens its log-in in a terminal', async () => {
      await chat.pick(SIGNIN_AGENT.name);
      await chat.newChat('Agent');
      const failed = await chat.sendUntil('Say hello', /needs you to sign in/);
      assert.match(failed, /Claude Code \(no sign-in\) needs you to sign in: sign in with .*Anthropic Console/);
      // Beside the chat's error: a notification with a button per method the agent offers. Under the
      // test driver VS Code shows no toasts: the notification centre is opened (the status bar's bell).
      const center = page.locator('.notifications-center.visible');
      if (!(await center.isVisible())) {
        await page.locator('[id="status.notifications"]').click({ timeout: UI_MS });
        await center.waitFor({ timeout: UI_MS });
      }
      const notice = center.locator('.notification-list-item', { hasText: 'needs you to sign in' }).first();
      await notice.getByRole('button', { name: 'Anthropic Console' }).click({ timeout: UI_MS });
      // Its log-in runs in a VS Code terminal named for the agent and the method, and asks to open its
      // sign-in page (VS Code's terminal hands the browser request to the workbench): not opened here.
      await page.locator('.part.panel', { hasText: `${SIGNIN_AGENT.name}: Anthropic Console` }).first().waitFor({ timeout: UI_MS });
      const opening = page.locator('.monaco-dialog-box', { hasText: 'open the external website' });
      await opening.waitFor({ timeout: ANSWER_MS });
      assert.match(await opening.innerText(), /claude\.com\/oauth\/authorize/);
      await opening.getByRole('button', { name: 'Cancel' }).click({ timeout: UI_MS });
      await opening.waitFor({ state: 'detached', timeout: UI_MS });
      await runCommand(page, 'Terminal: Kill the Active Terminal Instance');
      // Closed before it signed in: the user is told, and can try again.
      if (!(await center.isVisible())) {
        await page.locator('[id="status.notifications"]').click({ timeout: UI_MS });
      }
      await center.locator('.notification-list-item', { hasText: 'did not finish' }).first().waitFor({ timeout: UI_MS });
    }],
  ];

  return runViewTests(page, options, 'Claude Code and Codex in the Chat view', 'agent-view', tests, async () => {
    await page.keyboard.press('Escape').catch(() => undefined); // a menu or card left open must not take the next test's keys
    return false;
  });
}

/**
 * For `make bench`: Enter -> first text of a new chat with Claude Code prepared (its process running,
 * a spare session made when the chat before it took one), in ms.
 */
export async function measureFirstText(page: Page, claude: FakeAgent, claudeName: string, out: string): Promise<number> {
  const chat = new ChatView(page);
  await chat.enableCopilotAndPick(claudeName, path.join(out, 'first-text-window.png'));
  await chat.newChat('Agent');
  claude.script({ answers: 'Warm up', text: ['Warm.'] }, { answers: 'Say hello', text: ['Hello.'] });
  await chat.send('Warm up'); // the agent runs, and its spare session is made for the next chat
  await chat.newChat('Agent');
  return (await chat.send('Say hello')).firstTextMs;
}

const EDIT_TOOLS = /^(replace_string_in_file|multi_replace_string_in_file|insert_edit_into_file|apply_patch|create_file|edit_notebook_file)$/;

/** The tools Copilot offered with the chat request whose messages hold `ask`, from the backend's trace. */
function toolsOffered(traceDir: string, ask: string): string[] {
  for (const name of fs.readdirSync(traceDir).filter((n) => n.endsWith('.jsonl'))) {
    for (const raw of fs.readFileSync(path.join(traceDir, name), 'utf8').split('\n')) {
      if (raw.includes(ask) && raw.includes('lm/provideLanguageModelChatResponse')) {
        const record = JSON.parse(raw);
        if (record.ch === 'vscode' && record.dir === 'in') {
          return (record.msg.params.options.tools as { name: string }[]).map((tool) => tool.name);
        }
      }
    }
  }
  return [];
}

/** The button beside the model's name in the chat input: the model's option VS Code shows there. */
class ModelControl {
  private readonly button: Locator;
  private readonly rows: Locator;

  constructor(private readonly page: Page) {
    this.button = page.locator(`${VIEW} .interactive-input-part .model-picker-config`).filter({ visible: true }).first();
    this.rows = page.locator('.action-widget .monaco-list-row:not(.group-header)');
  }

  /** Opens its menu; resolves with the rows a user reads there. */
  async open(): Promise<string[]> {
    await this.button.waitFor({ timeout: UI_MS }); // shown once the model's options are known
    await this.button.click();
    await this.rows.first().waitFor({ timeout: UI_MS });
    return (await this.rows.allInnerTexts()).map((row) => row.replace(/\s+/g, ' ').trim());
  }

  /** A picture of its open menu, with the chat input below it. */
  async picture(file: string): Promise<void> {
    const menu = await this.page.locator('.action-widget').filter({ visible: true }).first().boundingBox();
    const view = await this.page.locator(VIEW).boundingBox();
    assert.ok(menu && view, 'the menu and the chat are on the screen');
    const [left, top] = [Math.max(0, menu.x - 12), Math.max(0, menu.y - 12)];
    fs.mkdirSync(path.dirname(file), { recursive: true });
    await this.page.screenshot({ path: file, clip: { x: left, y: top, width: view.x + view.width - left, height: view.y + view.height - top } });
  }

  /** Chooses `label` in its menu (which stays open for more), then closes it; resolves once the button shows it. */
  async choose(label: string): Promise<void> {
    if (!(await this.rows.first().isVisible())) {
      await this.open();
    }
    await this.rows.filter({ hasText: new RegExp(`^\\s*${label}`) }).first().click({ timeout: UI_MS });
    await this.rows.filter({ hasText: new RegExp(`^\\s*${label}`) }).first().locator('.codicon-check').waitFor({ timeout: UI_MS });
    await this.page.keyboard.press('Escape');
    await this.rows.first().waitFor({ state: 'hidden', timeout: UI_MS });
    await this.page.locator(`${VIEW} .interactive-input-part .model-picker-config`, { hasText: label }).first().waitFor({ timeout: UI_MS });
  }
}

/**
 * In Chat: Manage Language Models (a dialog listing every model), the context menu of the first row
 * showing `entry` (an agent's own entry, "<name> (ACP)", comes before its models' rows, which show it
 * as their detail; a model's, "<name> · <model>"), the submenu `option`, the value `value`; the
 * dialog is closed after.
 */
async function manageModelOption(page: Page, entry: string, option: string, value: string): Promise<void> {
  await runCommand(page, 'Chat: Manage Language Models');
  const row = page.locator('.monaco-modal-editor-block .monaco-list-row', { hasText: entry }).first();
  await row.waitFor({ timeout: UI_MS });
  const menu = page.locator('.context-view .action-menu-item');
  try {
    await retry(page, UI_MS, async () => {
      await row.click({ button: 'right' });
      await menu.filter({ hasText: option }).first().hover({ timeout: 5_000 });
      await menu.filter({ hasText: new RegExp(`^\\s*${value}`) }).first().waitFor({ timeout: 5_000 });
    });
  } catch (error) {
    const seen = JSON.stringify(await menu.allInnerTexts());
    await page.keyboard.press('Escape'); // the menu, then the dialog: the tests after find the window as it was
    await page.keyboard.press('Escape');
    throw new Error(`${error instanceof Error ? error.message : error}\nthe menu: ${seen}`);
  }
  await menu.filter({ hasText: new RegExp(`^\\s*${value}`) }).first().hover();
  await page.locator('.context-view .action-menu-item:focus', { hasText: new RegExp(`^\\s*${value}`) }).waitFor({ timeout: UI_MS });
  await page.keyboard.press('Enter');
  await menu.first().waitFor({ state: 'hidden', timeout: UI_MS });
  await page.keyboard.press('Escape');
  await row.waitFor({ state: 'hidden', timeout: UI_MS });
}

/** Opens a workspace file in the editor through Quick Open, as a user would. */
async function openFile(page: Page, name: string): Promise<void> {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ timeout: UI_MS });
  await input.fill(name);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().click({ timeout: UI_MS });
  await page.locator('.tab.active', { hasText: name }).first().waitFor({ timeout: UI_MS });
}

/** Waits (bounded) for a file to hold `text`, woken by changes in its folder. */
async function untilFile(file: string, text: string): Promise<void> {
  const deadline = Date.now() + UI_MS;
  const watcher = fs.watch(path.dirname(file));
  let wake = () => {};
  watcher.on('change', () => wake());
  try {
    for (;;) {
      const seen = fs.readFileSync(file, 'utf8');
      const left = deadline - Date.now();
      if (seen === text || left <= 0) {
        assert.equal(seen, text, `${path.basename(file)} on disk`);
        return;
      }
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, left);
      });
      clearTimeout(timer);
    }
  } finally {
    watcher.close();
  }
}

/** The chat's working set above the input: "N files changed · Keep · Undo". */
export class WorkingSet {
  constructor(readonly page: Page, private readonly view: Locator) {}

  /**
   * Waits until the answer shows "Edited `name`" and the input's working set "1 file changed" with
   * its Keep and Undo, as for Copilot's own edits.
   */
  async shows(name: string): Promise<void> {
    await this.view.locator('.interactive-response', { hasText: 'Edited' }).filter({ hasText: name }).last().waitFor({ timeout: UI_MS });
    const session = this.view.locator('.chat-editing-session').filter({ hasText: /1 file changed/ }).filter({ visible: true }).first();
    await session.waitFor({ timeout: UI_MS });
    for (const label of ['Keep', 'Undo']) {
      await session.locator('.chat-editing-session-actions').getByText(label, { exact: true }).first().waitFor({ timeout: UI_MS });
    }
  }

  async keep(): Promise<void> {
    await this.click('Keep');
  }

  /** Undo, and Yes to VS Code's "This will undo changes made in FILE. Do you want to proceed?". */
  async undo(): Promise<void> {
    await this.click('Undo', async () => {
      const dialog = this.page.locator('.monaco-dialog-box', { hasText: 'undo changes' });
      await dialog.getByRole('button', { name: 'Yes' }).click({ timeout: UI_MS });
      await dialog.waitFor({ state: 'detached', timeout: UI_MS });
    });
  }

  private async click(label: string, confirm?: () => Promise<void>): Promise<void> {
    const actions = this.view.locator('.chat-editing-session-actions').filter({ visible: true }).first();
    await actions.getByText(label, { exact: true }).first().click({ timeout: UI_MS });
    await confirm?.();
    // Kept or undone, nothing is left to review.
    await actions.waitFor({ state: 'hidden', timeout: UI_MS });
  }
}

/**
 * Pastes `png` into the chat's input as the browser hands a pasted image to the page: a paste event
 * whose clipboard data holds the file. Resolves with the attachment the input then shows.
 */
async function pasteImage(page: Page, png: Buffer): Promise<Locator> {
  const view = page.locator(VIEW);
  await view.locator('.interactive-input-editor .monaco-editor').first().click();
  await page.evaluate(`(() => {
    const bytes = Uint8Array.from(atob(${JSON.stringify(png.toString('base64'))}), (c) => c.charCodeAt(0));
    const data = new DataTransfer();
    data.items.add(new File([bytes], 'image.png', { type: 'image/png' }));
    document.activeElement.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  })()`);
  const attached = view.locator('.interactive-input-part .chat-attached-context-attachment.image-attachment').first();
  await attached.waitFor({ timeout: UI_MS });
  return attached;
}

/**
 * "Restore Checkpoint" above the request that reads `text` (no edits to discard, so no confirmation):
 * the chat as it was before it ("Checkpoint Restored"). VS Code puts the request's text back in the
 * input; it is cleared, as a user who moves on clears it.
 */
async function restoreCheckpoint(page: Page, text: string): Promise<void> {
  const view = page.locator(VIEW);
  const request = view.locator('.interactive-item-container.interactive-request', { hasText: text }).last();
  await request.hover({ timeout: UI_MS });
  await request.locator('.chat-restore-checkpoint-item a.action-label:not(.chat-restore-checkpoint-cancel)').first().click({ timeout: UI_MS });
  await view.locator('.checkpoint-label-text', { hasText: 'Checkpoint Restored' }).filter({ visible: true }).first().waitFor({ timeout: UI_MS });
  const input = view.locator('.interactive-input-editor .monaco-editor').first();
  await input.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await input.locator('.view-lines', { hasText: text }).waitFor({ state: 'detached', timeout: UI_MS });
}

/** The ACP session the newest `session/prompt` whose last block is `text` went to, in the backend's transcript. */
function promptedSession(trace: string, text: string): string | undefined {
  let found: string | undefined;
  for (const file of fs.readdirSync(trace).sort()) {
    for (const line of fs.readFileSync(path.join(trace, file), 'utf8').split('\n')) {
      if (!line.includes('"session/prompt"')) {
        continue;
      }
      const params = JSON.parse(line).msg?.params;
      const blocks: { text?: string }[] = params?.prompt ?? [];
      if (blocks.length && blocks[blocks.length - 1].text === text) {
        found = params.sessionId;
      }
    }
  }
  return found;
}

/**
 * A two-folder workspace (a `.code-workspace`) in a window of its own, with Claude Code (docs/usage.md,
 * "Workspace folders"): its session gets the second folder (`additionalDirectories`, read in the
 * backend's transcript), and an edit of its in that folder lands on disk.
 */
export async function runFoldersViewTest(
  page: Page,
  options: { claude: FakeAgent; claudeName: string; second: string; trace: string; out: string; print(line: string): void },
): Promise<{ passed: number; failed: number }> {
  const name = 'Claude Code in a two-folder workspace: its session gets the second folder, and its edit there lands';
  if (process.env.VIEW_TESTS && !new RegExp(process.env.VIEW_TESTS).test(name)) {
    return { passed: 0, failed: 0 };
  }
  const started = Date.now();
  try {
    const chat = new ChatView(page);
    await chat.enableCopilotAndPick(options.claudeName, path.join(options.out, 'folders-window.png'));
    await chat.newChat('Agent');
    const target = path.join(options.second, 'lib.txt');
    options.claude.script(
      { answers: 'Edit lib.txt in the second folder', calls: [{ name: 'mcp__vscode_tools__replace_string_in_file', input: { filePath: target, oldString: 'x = 1', newString: 'x = 2' } }] },
      { answers: 'Edit lib.txt in the second folder', text: ['Done.'] },
    );
    assert.match(await chat.sendUntil('Edit lib.txt in the second folder', /Done\./), /Done\./);
    const workingSet = new WorkingSet(page, page.locator(VIEW));
    await workingSet.shows('lib.txt');
    await workingSet.keep();
    await untilFile(target, 'x = 2\n');
    // What the agent was told: its session/new, in the backend's transcript.
    const opened = fs.readdirSync(options.trace).flatMap((f) => fs.readFileSync(path.join(options.trace, f), 'utf8').split('\n'))
      .filter((line) => line.includes('"session/new"') && line.includes('additionalDirectories'));
    assert.ok(opened.some((line) => line.includes(JSON.stringify(options.second).slice(1, -1))), `a session/new with the second folder: ${opened.length} seen`);
    options.print(`    ✔ ${name} (${Date.now() - started}ms)`);
    return { passed: 1, failed: 0 };
  } catch (error) {
    const picture = path.join(options.out, 'folders-view-failed.png');
    await page.screenshot({ path: picture }).catch(() => undefined);
    options.print(`    ✖ ${name}\n      ${error instanceof Error ? error.message.split('\n').join('\n      ') : error}\n      (${picture})`);
    return { passed: 0, failed: 1 };
  }
}

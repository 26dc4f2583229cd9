// Runs the integration tests in a real VS Code: code-server (VS Code for the browser) driven by
// Chromium through playwright-core, all offline and on 127.0.0.1. First the `vscode.lm` tests (mocha,
// in the extension host), then, in the same code-server, the Chat view tests with Eliza (chatView.ts),
// which also take the README's screenshots, then, in one more window, Claude Code and Codex against
// their fake model APIs in a workspace with real files (continueView.ts, agentView.ts), and other
// consumers of `vscode.lm` with them (consumersView.ts: Microsoft's chat sample and a plain extension,
// built and installed into code-server before it starts).
//
//   node out/test/runner.js [--screenshots DIR] [--agents-only | --first-text | --edit-cost]
//
// --agents-only runs only the window of the agents with fake model APIs (agentView.ts,
// continueView.ts, consumersView.ts): for working on those tests without the rest. --first-text (for `make bench`)
// only prints "first text: N ms", Enter -> first text of a new chat with Claude Code prepared;
// --edit-cost (for `make bench`) only prints "edit cost: {...}" (editCost.ts).
//
// Environment: CODE_SERVER (the code-server script; required), CHROMIUM (default /usr/bin/chromium),
// VIEW_TESTS (a regular expression: only the view tests whose names match),
// SYMPOSIUM_BACKEND (the `symposium` script; default ../.venv/bin/symposium). code-server needs
// Node 24 first on PATH. Logs, screenshots and the Chat view's backend transcript (trace/) go to
// out/integration/; --screenshots puts the screenshots in DIR instead.

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Browser, chromium } from 'playwright-core';
import { freePort, newPage, QUIET_SETTINGS, serveArgs, stopGroup, waitForServer } from './codeServer';
import { runChatViewTests } from './chatView';
import { byHand, runFoldersViewTest, writeClaudeCommand, CODEX_AGENT, CODEX_PRESETS_AGENT, FRESH_CLAUDE, GEMINI_AGENT, GEMINI_BY_HAND, MAX_REQUESTS, measureFirstText, prepareWorkspace, runAgentViewTests, SIGNIN_AGENT, withoutCredentials } from './agentView';
import { CONTINUE_AGENT, prepareContinue, runContinueViewTest } from './continueView';
import { FakeAgent, repositoryOf } from './fakeAgent';
import { measureEditCost, OWN_EDITS_AGENT } from './editCost';
import { consumersWanted, prepareConsumers, runConsumerViewTests } from './consumersView';

const EXTENSION = path.resolve(__dirname, '../..');
const OUT = path.join(EXTENSION, 'out', 'integration');
const CODE_SERVER = process.env.CODE_SERVER ?? '';
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const SYMPOSIUM = process.env.SYMPOSIUM_BACKEND ?? path.resolve(EXTENSION, '../.venv/bin/symposium');
const TEST_TIMEOUT_MS = 5 * 60_000;

/** A tool only the tests contribute (VS Code lets an extension register only tools it declares). */
const TEST_TOOL = {
  name: 'symposium_test_echo',
  displayName: 'Echo (Symposium tests)',
  modelDescription: 'Echoes its text',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
};

async function main(): Promise<number> {
  const screenshotsArg = process.argv.indexOf('--screenshots');
  const screenshots = screenshotsArg > 0 ? path.resolve(process.argv[screenshotsArg + 1]) : OUT;
  const firstText = process.argv.includes('--first-text');
  const editCost = process.argv.includes('--edit-cost');
  const agentsOnly = firstText || editCost || process.argv.includes('--agents-only');
  if (!CODE_SERVER) {
    throw new Error('CODE_SERVER must name the code-server script');
  }
  fs.rmSync(OUT, { recursive: true, force: true });
  fs.mkdirSync(OUT, { recursive: true });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'symposium-vscode-'));
  const dirs = Object.fromEntries(
    ['user-data', 'extensions', 'config', 'data', 'cache', 'state', 'tmp', 'workspace'].map((d) => [d, path.join(root, d)]),
  );
  Object.values(dirs).forEach((d) => fs.mkdirSync(d, { recursive: true }));
  fs.writeFileSync(path.join(dirs.workspace, 'README.md'), '# A workspace for the Symposium tests\n');
  prepareWorkspace(dirs.workspace);
  const extension = prepareExtension(root);
  const settingsFile = path.join(dirs['user-data'], 'User', 'settings.json');
  writeSettings(settingsFile, TEST_AGENTS);

  // Other consumers of vscode.lm (consumersView.ts), built from their sources and installed beside us.
  let consumers: string | undefined = firstText || editCost || !consumersWanted() ? 'not selected' : undefined;
  if (consumers === undefined) {
    try {
      console.log(`the consumers of vscode.lm built and installed in ${prepareConsumers(CODE_SERVER, dirs, OUT).toFixed(1)} s`);
    } catch (error) {
      consumers = `the consumers of vscode.lm could not be built: ${error instanceof Error ? error.message : error}`;
      console.log(consumers);
    }
  }

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const log = fs.openSync(path.join(OUT, 'code-server.log'), 'w');
  const server = spawn(
    CODE_SERVER,
    serveArgs(port, dirs),
    {
      detached: true, // its own process group (setsid), so that stopping it stops its children too
      stdio: ['ignore', log, log],
      env: {
        ...process.env,
        XDG_CONFIG_HOME: dirs.config, XDG_DATA_HOME: dirs.data, XDG_CACHE_HOME: dirs.cache, XDG_STATE_HOME: dirs.state,
        TMPDIR: dirs.tmp,
      },
    },
  );
  let browser: Browser | undefined;
  try {
    await waitForServer(server, `${base}/healthz`, OUT);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    const remote = (p: string) => `vscode-remote://127.0.0.1:${port}${p}`;
    const url = (payload: [string, string][]) =>
      `${base}/?folder=${encodeURIComponent(dirs.workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;

    let started = Date.now();
    const code = agentsOnly ? 0 : await runTests(browser, url([
      ['extensionDevelopmentPath', remote(extension)],
      ['extensionTestsPath', remote(path.join(extension, 'out', 'test', 'index.js'))],
    ]));
    const report = agentsOnly ? '0 passed, 0 failed\n' : readIfThere(path.join(extension, 'test-report.txt'));
    process.stdout.write(report || '(the tests wrote no report)\n');
    console.log(`integration tests: exit code ${code} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const lm = /^(\d+) passed, (\d+) failed/m.exec(report);

    started = Date.now();
    writeSettings(settingsFile, CHAT_VIEW_AGENTS, path.join(OUT, 'trace'));
    const chat = { passed: 0, failed: 0 };
    if (!agentsOnly) {
      const page = await newPage(browser, OUT, 'chat-view');
      await page.goto(url([['extensionDevelopmentPath', remote(extension)]]));
      Object.assign(chat, await runChatViewTests(page, { screenshots, out: OUT, print: (line) => console.log(line) }));
      await page.close();
    }
    // Then, in a window opened anew, agents with fake model APIs (added once the pictures are taken):
    // Claude Code with a session of its own to continue, then Claude Code and Codex at work.
    const repository = repositoryOf(SYMPOSIUM)!;
    // Gemini CLI is the catalogue's, installed by `make agents` (or by serve_fake_agent.py on first use).
    const [fake, codex, presets, gemini] = await Promise.all([
      prepareContinue(repository, dirs.workspace),
      FakeAgent.start('codex', repository),
      FakeAgent.start('codex', repository, undefined, 'workspace-write'), // Codex offering its approval presets
      FakeAgent.start('gemini', repository).catch((error: Error) => {
        console.log(`Gemini CLI is not available, its Chat view tests fail: ${error.message}`);
        return undefined;
      }),
    ]);
    writeClaudeCommand(fake);
    const signIn = { ...SIGNIN_AGENT, ...withoutCredentials(fake.entry, path.join(root, 'no-sign-in-home')) };
    const own = { ...fake.entry, ...OWN_EDITS_AGENT };
    const geminiEntry = gemini ? [{ ...GEMINI_AGENT, ...gemini.entry }, { ...GEMINI_BY_HAND, ...byHand(gemini.entry) }] : [];
    writeSettings(settingsFile, [...CHAT_VIEW_AGENTS, { ...CONTINUE_AGENT, ...fake.entry }, { ...CODEX_AGENT, ...codex.entry }, { ...CODEX_PRESETS_AGENT, ...presets.entry }, ...geminiEntry, signIn, { ...FRESH_CLAUDE, ...fake.entry }, ...(editCost ? [own] : [])], path.join(OUT, 'trace'), editCost ? {} : {
      'chat.agent.maxRequests': MAX_REQUESTS, // a turn past Copilot's request limit, in a few rounds
    });
    const again = await newPage(browser, OUT, 'agents');
    await again.goto(url([['extensionDevelopmentPath', remote(extension)]]));
    const print = (line: string) => console.log(line);
    if (editCost) {
      const cost = await measureEditCost(again, fake, CONTINUE_AGENT.name, dirs.workspace, path.join(OUT, 'trace'));
      console.log(`edit cost: ${JSON.stringify(cost)}`);
      await again.close();
      await Promise.all([fake.stop(), codex.stop(), presets.stop()]);
      return 0;
    }
    if (firstText) {
      const ms = await measureFirstText(again, fake, CONTINUE_AGENT.name, OUT);
      console.log(`first text: ${ms} ms`);
      await again.close();
      await Promise.all([fake.stop(), codex.stop(), presets.stop(), gemini?.stop()]);
      return 0;
    }
    const continued = await runContinueViewTest(again, fake, { out: OUT, print });
    const agents = await runAgentViewTests(again, { claude: fake, claudeName: CONTINUE_AGENT.name, codex, codexPresets: presets, gemini, workspace: dirs.workspace, out: OUT, screenshots: screenshotsArg > 0 ? screenshots : undefined, settingsFile, print });
    chat.passed += continued.passed + agents.passed;
    chat.failed += continued.failed + agents.failed;
    if (consumers === undefined) {
      const consumersStarted = Date.now();
      const others = await runConsumerViewTests(again, { claude: fake, claudeName: CONTINUE_AGENT.name, codex, codexName: CODEX_AGENT.name, out: OUT, print });
      console.log(`  the consumers' tests: ${((Date.now() - consumersStarted) / 1000).toFixed(1)} s`);
      chat.passed += others.passed;
      chat.failed += others.failed;
    } else if (consumers !== 'not selected') {
      chat.failed += 1;
    }
    await again.close();
    // A two-folder workspace, in a window of its own (docs/usage.md, "Workspace folders").
    const second = path.join(root, 'second');
    fs.mkdirSync(second, { recursive: true });
    fs.writeFileSync(path.join(second, 'lib.txt'), 'x = 1\n');
    const workspaceFile = path.join(root, 'two.code-workspace');
    fs.writeFileSync(workspaceFile, JSON.stringify({ folders: [{ path: dirs.workspace }, { path: second }] }));
    const two = await newPage(browser, OUT, 'folders');
    await two.goto(`${base}/?workspace=${encodeURIComponent(workspaceFile)}&payload=${encodeURIComponent(JSON.stringify([['extensionDevelopmentPath', remote(extension)]]))}`);
    const folders = await runFoldersViewTest(two, { claude: fake, claudeName: CONTINUE_AGENT.name, second, trace: path.join(OUT, 'trace'), out: OUT, print });
    chat.passed += folders.passed;
    chat.failed += folders.failed;
    await two.close();
    await Promise.all([fake.stop(), codex.stop(), presets.stop(), gemini?.stop()]);
    console.log(`Chat view tests: ${chat.passed} passed, ${chat.failed} failed after ${((Date.now() - started) / 1000).toFixed(1)} s`);

    // The tally last, where CI looks for it.
    const passed = (lm ? Number(lm[1]) : 0) + chat.passed;
    const failed = (lm ? Number(lm[2]) : 1) + chat.failed;
    console.log(`integration: ${passed} passed, ${failed} failed${lm ? '' : ' (the vscode.lm tests wrote no report)'}`);
    return code || (chat.failed ? 1 : 0);
  } catch (error) {
    console.error(`the integration run failed: ${error instanceof Error ? error.stack : error}`);
    console.error(`logs: ${OUT}`);
    return 1;
  } finally {
    await browser?.close();
    await stopGroup(server);
    fs.closeSync(log);
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** A copy of the extension whose manifest also declares the test tool; `out/` copied, not linked, so
 * VS Code sees the test modules as part of the extension. */
function prepareExtension(root: string): string {
  const copy = path.join(root, 'extension');
  fs.mkdirSync(copy);
  const manifest = JSON.parse(fs.readFileSync(path.join(EXTENSION, 'package.json'), 'utf8'));
  manifest.contributes.languageModelTools.push(TEST_TOOL);
  fs.writeFileSync(path.join(copy, 'package.json'), JSON.stringify(manifest, null, 2));
  fs.cpSync(path.join(EXTENSION, 'out'), path.join(copy, 'out'), {
    recursive: true,
    filter: (source) => !source.startsWith(OUT),
  });
  fs.symlinkSync(path.join(EXTENSION, 'node_modules'), path.join(copy, 'node_modules')); // mocha
  return copy;
}

/** What the integration tests talk to: Eliza as an external ACP agent, and one that cannot start. */
const TEST_AGENTS = [
  { id: 'eliza-external', name: 'Eliza (external)', command: SYMPOSIUM, args: ['eliza', '--deterministic'], env: {} },
  { id: 'broken', name: 'Broken', command: '/nonexistent/agent', args: [], env: {} },
];
/** What the Chat view's model picker shows: the README's example (listing a model does not start its agent). */
const CHAT_VIEW_AGENTS = [
  { id: 'claude', name: 'Claude Code', command: 'npx', args: ['-y', '@agentclientprotocol/claude-agent-acp'], env: {} },
  TEST_AGENTS[0],
];

function writeSettings(file: string, agents: object[], traceDir = '', extra: object = {}): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const settings = {
    'symposium.backend.command': SYMPOSIUM,
    'symposium.traceDir': traceDir,
    'symposium.logLevel': 'info',
    'symposium.agents': agents,
    ...QUIET_SETTINGS,
    ...extra,
  };
  fs.writeFileSync(file, JSON.stringify(settings, null, 2));
  // code-server's window is a remote one: machine-scoped settings (the agents, the backend command) come
  // from the machine's settings, as in VS Code Remote, never from the user's.
  const machine = path.join(path.dirname(path.dirname(file)), 'Machine', 'settings.json');
  fs.mkdirSync(path.dirname(machine), { recursive: true });
  fs.writeFileSync(machine, JSON.stringify(settings, null, 2));
}

/** Opens the workbench with the tests; resolves with the code it passes to codeAutomationExit. */
async function runTests(browser: Browser, url: string): Promise<number> {
  const page = await newPage(browser, OUT, 'tests');
  let exit!: (code: number) => void;
  const exited = new Promise<number>((resolve) => (exit = resolve));
  await page.exposeFunction('codeAutomationExit', (code: number) => exit(code));
  await page.goto(url);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<number>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the tests did not finish in ${TEST_TIMEOUT_MS / 1000} s`)), TEST_TIMEOUT_MS);
  });
  try {
    return await Promise.race([exited, timeout]);
  } finally {
    clearTimeout(timer);
    await page.screenshot({ path: path.join(OUT, 'tests-window.png') }).catch(() => undefined);
    await page.close();
  }
}

function readIfThere(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
